"""Hard deletes that leave no copy behind, in one transaction per db, finishable by a rerun.

A node's text may have been copied into older versions, the FTS index, audit payloads (a
successor's `before`), context-run records, summaries and extraction bookkeeping; each db's
copies go in the same transaction as the node, so a kill leaves either all or none of them.
Source messages in another db (a user memory cites workspace messages) are recorded as
pending, by id, in the node's db, and purged next; rerunning the same command finishes them.
"""
from __future__ import annotations

import os

from ..errors import StoreUnavailable
from ..store.refs import citing_forms, split_ref
from .stores import UseCase

# Copies are found by id first (versions, summary ranges, context runs' used ids, audit
# records of the node). Text is matched only when it is distinctive: a shorter text ("note",
# 香菜) is in too many unrelated records to erase them for it.
MIN_BYTES = 16
# The pending-purge row that stands for "memories citing this purged message, in other dbs".
SWEEP = "*citing"


def _citing(message_ids, store) -> list[str]:
    """How nodes cite these messages of `store`'s log: plain, or named with its id."""
    return [form for mid in message_ids for form in citing_forms(mid, store.meta("store_id"))]


def _still_in(workspace_id: str | None, unreachable: dict) -> str:
    """Why a source not yet purged may still be on disk, or '' if it is in no db at all."""
    if workspace_id is None:  # plain: in any workspace that could not be opened
        return "maybe still in " + "; ".join(unreachable.values()) if unreachable else ""
    if workspace_id in unreachable:
        return f"still in {unreachable[workspace_id]}"
    return (f"still in workspace {workspace_id}, whose folder this user memory does not"
            " know")


def new_report() -> dict:
    # "_texts" and "_stores" stay inside the service: what verifying scans for, and where;
    # "_cited": every spelling a node may cite the purged messages by (store/refs.py).
    return {"deletedIds": [], "purgedMessageIds": [], "summariesDropped": [], "pending": [],
            "notCheckpointed": [], "_texts": [], "_stores": [], "_cited": []}


def node_texts(node: dict) -> list[str]:
    from ..canonical import canonical_json
    texts = [node.get("title") or "", node.get("content") or ""]
    if node.get("valueJson") is not None:
        texts.append(canonical_json(node["valueJson"]))
    return distinctive(texts)


def distinctive(texts) -> list[str]:
    return [t for t in dict.fromkeys(texts) if len(t.encode("utf-8")) >= MIN_BYTES]


class Erasure(UseCase):
    needs = ("audit_log",)

    def hard_delete(self, found, reason, actor, purge_sources) -> dict:
        """Erase `found` [(node, store)] and, with purge_sources, their source messages."""
        report = new_report()
        stores = list({id(s): s for _, s in found}.values())
        for store in stores:
            with store.db.atomic():
                self._erase_nodes(store, [n for n, o in found if o is store], reason, actor,
                                  purge_sources, report)
                store.nodes.optimize_fts()
            self.checkpoint(store, report)
        if purge_sources:
            self.finish_pending([(s, [n["id"] for n, o in found if o is s]) for s in stores],
                                 reason, actor, report)
        self.erase_citing(report, reason, actor)
        return report

    def _erase_nodes(self, store, nodes, reason, actor, purge_sources, report) -> None:
        """Nodes, their older versions and every copy of their text in this db; with
        purge_sources their source messages too, or a pending record when they live in
        another db. The caller holds the transaction."""
        chain = [n for n in self._chains(store, nodes) if n["id"] not in report["deletedIds"]]
        if not chain:
            return
        ids = [n["id"] for n in chain]
        texts = [t for n in chain for t in node_texts(n)]
        report["deletedIds"] += ids
        report["_texts"] += texts
        for node in chain:
            store.nodes.hard_delete_node(node["id"])
            store.nodes.scrub_events(node["id"])
            store.nodes.detach_successors(node["id"])
            self.audit_log.record(store, "delete", {"id": node["id"], "userId": node.get("userId"),
                                          "workspaceId": node.get("workspaceId")},
                        actor, reason or "hard delete", after={"mode": "hard"})
        if purge_sources:
            sources = sorted({m for n in chain for m in n.get("sourceMessageIds", [])})
            here = sorted(store.messages.message_ids_exist(sources))
            if here:
                self._purge_in(store, here, texts, reason, actor, report)
            for node in nodes:
                elsewhere = sorted({m for n in self._chains(store, [node], erased=chain)
                                    for m in n.get("sourceMessageIds", [])} - set(here))
                if elsewhere:
                    store.erasure.add_pending_purge(node["id"], elsewhere, self.env.now_iso())
        store.erasure.drop_context_runs(ids, texts)
        report["summariesDropped"] += store.erasure.drop_summaries(
            store.erasure.summaries_containing(texts))
        store.erasure.scrub_event_copies(ids, texts)

    @staticmethod
    def _chains(store, nodes, erased=None) -> list[dict]:
        """Each node with the older versions it superseded: they hold the same text."""
        known = {n["id"]: n for n in erased} if erased is not None else None
        out: dict[str, dict] = {}
        for node in nodes:
            current = node
            while current is not None and current["id"] not in out:
                out[current["id"]] = current
                prior = current.get("supersedesId")
                if not prior:
                    break
                current = known.get(prior) if known is not None else store.nodes.get_node(prior)
        return list(out.values())

    def _purge_in(self, store, message_ids, texts, reason, actor, report) -> None:
        """Remove messages and everything derived from them: summaries over them, nodes
        taken from them, context runs and audit copies (the caller holds the txn)."""
        contents = [m["content"] for m in store.messages.get_messages(message_ids)]
        report["_texts"] += distinctive(contents)
        words = distinctive(texts + contents)
        covering = store.erasure.summaries_covering(message_ids)
        store.erasure.forget_extraction_of(message_ids)
        removed = store.messages.delete_messages(message_ids)
        report["purgedMessageIds"] += message_ids
        report["_cited"] += _citing(message_ids, store)
        # Memories in the user db taken from these messages go next, in its own transaction;
        # recorded here first, so that a rerun can finish if that one never happens.
        store.erasure.add_pending_purge(SWEEP, message_ids, self.env.now_iso())
        self._erase_nodes(store, store.erasure.nodes_citing(message_ids), reason, actor, False,
                          report)
        report["summariesDropped"] += store.erasure.drop_summaries(
            covering + store.erasure.summaries_containing(words))
        store.erasure.drop_context_runs(message_ids, words)
        store.erasure.scrub_event_copies(message_ids, words)
        self.audit_log.record(store, "purge", {"id": None}, actor, reason or "purge sources",
                    after={"messagesRemoved": removed, "messageIds": message_ids})

    def purge_messages(self, message_ids: list[str], *, reason: str = "",
                       actor: str = "user") -> dict:
        """Erase logged messages by id, and what was derived from them."""
        store = self.store
        report = new_report()
        with store.db.atomic():
            present = sorted(store.messages.message_ids_exist(message_ids))
            if present:
                self._purge_in(store, present, [], reason, actor, report)
                store.nodes.optimize_fts()
        self.checkpoint(store, report)
        self.erase_citing(report, reason, actor)
        return report

    def erase_citing(self, report, reason, actor) -> None:
        """Memories taken from purged messages hold their text too: in this workspace they go
        with the messages, in the user db here. Earlier runs' unfinished sweeps are done too,
        so a rerun finishes a run that stopped between the two dbs."""
        stores = self.stores.existing()
        cited = set(report["_cited"])
        swept = set(report["purgedMessageIds"])
        for _, store in stores:
            left = store.erasure.pending_purges([SWEEP]).get(SWEEP, [])
            cited.update(_citing(left, store))
            swept.update(left)
        if not cited:
            return
        for _, store in stores:
            citing = store.erasure.nodes_citing(sorted(cited))
            if not citing:
                continue
            with store.db.atomic():
                self._erase_nodes(store, citing, reason, actor, False, report)
                store.nodes.optimize_fts()
            self.checkpoint(store, report)
        for _, store in stores:
            store.erasure.clear_pending_purges(sorted(swept), node_id=SWEEP)

    # -- the other db ----------------------------------------------------------------------
    def finish_pending(self, stores_and_ids, reason, actor, report) -> None:
        """Purge recorded source messages wherever they are: this workspace first, then
        the workspaces user memories were written from."""
        for store, node_ids in stores_and_ids:
            pending = store.erasure.pending_purges(node_ids)
            wanted = sorted({m for ids in pending.values() for m in ids})
            if not wanted:
                continue
            left = self._purge_where_found(wanted, reason, actor, report)
            for node_id, ids in pending.items():
                store.erasure.clear_pending_purges(sorted(set(ids) - set(left)), node_id=node_id)
            owner = {m: node for node, ids in pending.items() for m in ids}
            report["pending"] += [{"messageId": m, "nodeId": owner[m], "reason": why}
                                  for m, why in left.items()]

    def _purge_where_found(self, wanted, reason, actor, report) -> dict[str, str]:
        """{source reference: why it is still somewhere} after purging what could be
        reached. A reference naming its workspace is looked for there only; a plain one (a
        user memory written before references named it) in every workspace known."""
        left = set(wanted)
        unreachable: dict[str | None, str] = {}
        for workspace_id, root, opener in self._message_dbs():
            mine = {ref: mid for ref in left for where, mid in [split_ref(ref)]
                    if where in (None, workspace_id)}
            if not mine:
                continue
            try:
                store, owned = opener()
            except StoreUnavailable as exc:
                unreachable[workspace_id] = f"{root} ({exc.message})"
                continue
            try:
                with store.db.atomic():
                    here = sorted(store.messages.message_ids_exist(sorted(set(mine.values()))))
                    if here:
                        self._purge_in(store, here, [], reason, actor, report)
                        store.nodes.optimize_fts()
                    gone = set(here) | store.health.purged_message_ids()
                    # Its own workspace's log was read: purged now, before, or never there.
                    left -= {ref for ref, mid in mine.items()
                             if mid in gone or split_ref(ref)[0] == workspace_id}
                self.checkpoint(store, report)
            finally:
                if owned:
                    store.close()
        return {ref: why for ref in sorted(left)
                if (why := _still_in(split_ref(ref)[0], unreachable))}

    def _message_dbs(self):
        """(workspace id, root, opener) for this workspace, then every workspace recorded by
        the user db."""
        places = []
        current_root = current_id = None
        workspace = self.stores.workspace_or_none()
        if workspace is not None:
            current_root, current_id = self.stores.root, workspace.store_id()
            places.append((current_id, current_root, lambda: (workspace, False)))
        for workspace_id, root in self.stores.known_workspaces().items():
            if root != current_root and workspace_id != current_id:
                places.append((workspace_id, root,
                               lambda root=root: (self.stores.open_workspace(root), True)))
        return places

    def checkpoint(self, store, report) -> None:
        report["_stores"].append(store)
        if not store.erasure.checkpoint_truncate():
            report["notCheckpointed"].append(store.path)

    @staticmethod
    def verify_erasure(report: dict) -> dict:
        """Scan every db the erasure touched, bytes and index, for the erased texts."""
        from ..store.scan import scan_files
        texts = list(dict.fromkeys(t for t in report["_texts"] if t))
        stores = list({s.path: s for s in report["_stores"]}.values())
        files: dict[str, list[int]] = {}
        live = indexed = 0
        for store in stores:
            files.update(scan_files(store.path, texts))
            live += store.erasure.live_copies(texts)
            indexed += store.erasure.index_leftovers(texts)
        clean = (not files and not indexed) if texts else None  # None: nothing to look for
        return {"clean": clean, "textsChecked": len(texts),
                "filesChecked": [p + s for p in (st.path for st in stores)
                                 for s in ("", "-wal", "-shm") if os.path.isfile(p + s)],
                "filesWithText": sorted(files), "liveCopies": live, "indexLeftovers": indexed}
