"""Hard deletes that leave no copy behind, in one transaction per db, finishable by a rerun.

A node's text may have been copied into older versions, the FTS index, audit payloads (a
successor's `before`), context-run records, summaries and extraction bookkeeping; each db's
copies go in the same transaction as the node, so a kill leaves either all or none of them.
Source messages in another db (a user memory cites workspace messages) are recorded as
pending, by id, in the node's db, and purged next; rerunning the same command finishes them.

Each erased record leaves a tombstone in its db (its id and a keyed digest, never its text),
written in the same transaction. A user memory is read from every workspace, so each
workspace's context runs may name it: the workspaces the user db knows are swept at once, and
any other reads the user db's tombstones when `settle_runs` next runs there. Files outside the
dbs that hold erased text (an `edit` kept after a refusal, an export's temp file left by a
kill) go too (`leftover_files`).
"""
from __future__ import annotations

import os
import re
from contextlib import suppress

from ..env import DB_NAME, DIR_NAME
from ..errors import StoreUnavailable
from ..store.refs import citing_forms, split_ref
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..store import SqliteMemoryStore
    from .audit_log import AuditLog
    from .graph import Graph

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
    # Keys with "_" stay inside the service. "_texts" and "_stores": what verifying scans for
    # (every erased text, short ones too), and where; "_cited": every spelling a node may
    # cite the purged messages by (store/refs.py); "_user": the user db erased something, so
    # every workspace's context runs may name it. "deferred": workspaces that could not be
    # opened to drop theirs.
    return {"deletedIds": [], "purgedMessageIds": [], "summariesDropped": [], "pending": [],
            "notCheckpointed": [], "deferred": [], "filesRemoved": [], "_texts": [],
            "_stores": [], "_cited": [], "_user": False}


def node_texts(node: dict) -> list[str]:
    """The node's distinctive texts: what its copies elsewhere are found by."""
    return distinctive(_node_fields(node))


def node_words(node: dict) -> list[str]:
    """Every text verifying looks for: title and content whatever their length, and the
    value when it is distinctive (a short value, {"state":"open"}, is every task's)."""
    fields = _node_fields(node)
    return [t for t in dict.fromkeys(fields[:2] + distinctive(fields[2:])) if t]


def node_digest_text(node: dict) -> str:
    """What a node's tombstone digests: its words, in one string."""
    return "\x00".join(_node_fields(node))


def _node_fields(node: dict) -> list[str]:
    from ..canonical import canonical_json
    texts = [node.get("title") or "", node.get("content") or ""]
    if node.get("valueJson") is not None:
        texts.append(canonical_json(node["valueJson"]))
    return texts


def distinctive(texts) -> list[str]:
    return [t for t in dict.fromkeys(texts) if len(t.encode("utf-8")) >= MIN_BYTES]


class Erasure(UseCase):
    def __init__(self, stores: Stores, *, audit_log: AuditLog, graph: Graph) -> None:
        super().__init__(stores)
        self.audit_log = audit_log
        self.graph = graph
        # other workspaces' dbs, open until release()
        self._opened: dict[str, SqliteMemoryStore] = {}

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
        self.finish(report, reason, actor)
        return report

    def finish(self, report, reason, actor) -> None:
        """What follows every erasure: memories taken from purged messages, every workspace's
        record of an erased user memory, and the files outside the dbs."""
        self.erase_citing(report, reason, actor)
        self.sweep_workspaces(report)
        self.remove_leftovers(report)

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
        report["_texts"] += [t for n in chain for t in node_words(n)]
        report["_user"] = report["_user"] or self._is_user(store)
        now = self.env.now_iso()
        store.erasure.add_tombstones({n["id"]: node_digest_text(n) for n in chain}, now)
        entities = store.erasure.entities_of(ids, [e for n in chain
                                                   for e in n.get("entities") or []])
        self.graph.erase(store, ids)
        for node in chain:
            store.nodes.hard_delete_node(node["id"])
            store.nodes.scrub_events(node["id"])
            store.nodes.detach_successors(node["id"])
            self.audit_log.record(store, "delete", {"id": node["id"], "userId": node.get("userId"),
                                          "workspaceId": node.get("workspaceId")},
                        actor, reason or "hard delete",
                        # ids only: context leaves out the chat lines the memory came from
                        after={"mode": "hard",
                               "sourceMessageIds": node.get("sourceMessageIds") or []})
        self._settle_graph(store, entities, now)
        if purge_sources:
            sources = sorted({m for n in chain for m in n.get("sourceMessageIds", [])})
            here = sorted(store.messages.message_ids_exist(sources))
            if here:
                self._purge_in(store, here, texts, reason, actor, report)
            for node in nodes:
                elsewhere = sorted({m for n in self._chains(store, [node], erased=chain)
                                    for m in n.get("sourceMessageIds", [])} - set(here))
                if elsewhere:
                    store.erasure.add_pending_purge(node["id"], elsewhere, now)
        store.erasure.drop_context_runs(ids, texts)
        report["summariesDropped"] += store.erasure.drop_summaries(
            store.erasure.summaries_containing(texts), now)
        store.erasure.scrub_event_copies(ids, texts)

    @staticmethod
    def _settle_graph(store, entities: dict[str, str], now: str) -> None:
        """Once the memories are gone: an entity nothing names any more goes, with a
        tombstone (an older export brings it back no more than its memories); one that stays
        loses the aliases only erased words said. And the graph's reading mark steps back
        when the memories it had read last are gone, since the next memory takes their
        place (rowid) and would be taken as read."""
        gone = store.erasure.settle_entities(entities)
        store.erasure.add_tombstones(gone, now)
        from .graph import SWEPT
        read_to, last = store.graph.read_to()
        if read_to > last:
            store.set_meta(SWEPT, str(last))

    def _is_user(self, store) -> bool:
        return store is self.stores.user_store()

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
        messages = store.messages.get_messages(message_ids)
        contents = [m["content"] for m in messages]
        report["_texts"] += [c for c in contents if c]
        report["_user"] = report["_user"] or self._is_user(store)
        words = distinctive(texts + contents)
        now = self.env.now_iso()
        store.erasure.add_tombstones({m["id"]: m["content"] for m in messages}, now)
        covering = store.erasure.summaries_covering(message_ids)
        store.erasure.forget_extraction_of(message_ids)
        removed = store.messages.delete_messages(message_ids)
        report["purgedMessageIds"] += message_ids
        report["_cited"] += _citing(message_ids, store)
        # Memories in the user db taken from these messages go next, in its own transaction;
        # recorded here first, so that a rerun can finish if that one never happens.
        store.erasure.add_pending_purge(SWEEP, message_ids, now)
        self._erase_nodes(store, store.erasure.nodes_citing(message_ids), reason, actor, False,
                          report)
        report["summariesDropped"] += store.erasure.drop_summaries(
            covering + store.erasure.summaries_containing(words), now)
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
        self.finish(report, reason, actor)
        return report

    def erase_citing(self, report, reason, actor) -> None:
        """Memories taken from purged messages hold their text too: in this workspace they go
        with the messages, in the user db here. Earlier runs' unfinished sweeps are done too,
        in this workspace and in those this run opened, so a rerun finishes a run that
        stopped between the dbs."""
        stores = self.stores.existing()
        everywhere = [s for _, s in stores] + list(self._opened.values())
        cited = set(report["_cited"])
        swept = set(report["purgedMessageIds"])
        for store in everywhere:
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
        for store in everywhere:
            store.erasure.clear_pending_purges(sorted(swept), node_id=SWEEP)

    # -- every workspace's record of an erased user memory ----------------------------------
    def sweep_workspaces(self, report) -> None:
        """Context runs name the memories they used, in the workspace's own db. This
        workspace reads the user db's tombstones now; when the user db erased something, so
        does every workspace it knows (one that cannot be opened is named in "deferred")."""
        user = self.stores.user_store()
        if user is None:
            return
        texts = distinctive(report["_texts"])
        for _, root, opener in self._message_dbs():
            if opener is not None and not report["_user"]:
                continue  # another workspace: it can name only user memory
            if not os.path.exists(os.path.join(root, DIR_NAME, DB_NAME)):
                continue  # gone, and what it held with it
            try:
                store = opener() if opener is not None else self.stores.store
                settle_runs(store, user, texts if report["_user"] else ())
            except StoreUnavailable as exc:  # untrusted, locked, damaged: left as it was
                report["deferred"].append({"workspace": root, "reason": exc.message})
                continue
            self.checkpoint(store, report)

    def settle_here(self) -> int:
        """This workspace's context runs that name a record the user db has erased since it
        last looked, dropped; how many. Cheap when nothing is new (one indexed read); a db
        that cannot be written now is left for the next call."""
        workspace = self.stores.workspace_or_none()
        user = self.stores.user_store()
        if workspace is None or user is None or workspace.read_only_reason:
            return 0
        try:
            return settle_runs(workspace, user)
        except StoreUnavailable:
            return 0

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
        texts = distinctive(report["_texts"])
        for workspace_id, root, opener in self._message_dbs():
            mine = {ref: mid for ref in left for where, mid in [split_ref(ref)]
                    if where in (None, workspace_id)}
            if not mine:
                continue
            try:
                store = opener() if opener is not None else self.stores.store
            except StoreUnavailable as exc:
                unreachable[workspace_id] = f"{root} ({exc.message})"
                continue
            with store.db.atomic():
                here = sorted(store.messages.message_ids_exist(sorted(set(mine.values()))))
                if here:
                    self._purge_in(store, here, texts, reason, actor, report)
                    store.nodes.optimize_fts()
                gone = set(here) | store.health.purged_message_ids()
                # Its own workspace's log was read: purged now, before, or never there.
                left -= {ref for ref, mid in mine.items()
                         if mid in gone or split_ref(ref)[0] == workspace_id}
            self.checkpoint(store, report)
        return {ref: why for ref in sorted(left)
                if (why := _still_in(split_ref(ref)[0], unreachable))}

    def _message_dbs(self):
        """(workspace id, root, opener) for this workspace (opener None: the Stores' own),
        then every workspace recorded by the user db (opened once, kept until release)."""
        places = []
        current_root = current_id = None
        workspace = self.stores.workspace_or_none()
        if workspace is not None:
            current_root, current_id = self.stores.root, workspace.store_id()
            places.append((current_id, current_root, None))
        for workspace_id, root in self.stores.known_workspaces().items():
            if root != current_root and workspace_id != current_id:
                places.append((workspace_id, root, lambda root=root: self._open_place(root)))
        return places

    def _open_place(self, root: str):
        if root not in self._opened:
            self._opened[root] = self.stores.open_workspace(root)
        return self._opened[root]

    def release(self) -> None:
        """Close the other workspaces' dbs this erasure opened (after verifying)."""
        opened, self._opened = self._opened, {}
        for store in opened.values():
            store.close()

    def checkpoint(self, store, report) -> None:
        report["_stores"].append(store)
        if not store.erasure.checkpoint_truncate():
            report["notCheckpointed"].append(store.path)

    # -- files outside the dbs -------------------------------------------------------------
    def remove_leftovers(self, report) -> None:
        """Overwrite and remove the files that hold a record this erasure took."""
        for path in self.leftovers(report):
            if _shred(path):
                report["filesRemoved"].append(path)
            else:  # not ours to open, or gone meanwhile: said, never claimed removed
                report.setdefault("filesLeft", []).append(path)

    def leftovers(self, report) -> list[str]:
        wanted = set(report["deletedIds"] + report["purgedMessageIds"]
                     + report["summariesDropped"] + report.get("alreadyErased", []))
        return leftover_files(self.leftover_folders(), lambda found: found & wanted)

    def erased_leftovers(self) -> list[str]:
        """Files that hold a record any tombstone here names, whenever it was erased."""
        stores = [s for _, s in self.stores.existing()]
        return leftover_files(self.leftover_folders(), lambda found: set().union(
            *(s.erasure.erased(found) for s in stores)))

    def leftover_folders(self) -> list[str]:
        """Where an export's temp file may be: beside an export written in the workspace, its
        .ekko folder, EKKO_HOME, the working folder, or another workspace this run opened."""
        roots = list(self._opened)
        with suppress(StoreUnavailable):  # outside any workspace: the other folders
            roots.insert(0, self.stores.root)
        folders = [self.env.cwd, self.env.user_home()]
        for root in roots:
            folders += [root, os.path.join(root, DIR_NAME)]
        return list(dict.fromkeys(os.path.realpath(f) for f in folders))

    # -- proof -----------------------------------------------------------------------------
    def verify_erasure(self, report: dict) -> dict:
        """Scan every db the erasure touched, bytes and index, for the erased texts, short
        ones too; and count what still names an erased id (context runs) or holds its text
        outside the dbs."""
        from ..store.scan import scan_files
        texts = list(dict.fromkeys(t for t in report["_texts"] if t))
        ids = list(dict.fromkeys(report["deletedIds"] + report["purgedMessageIds"]
                                 + report["summariesDropped"] + report.get("alreadyErased", [])))
        stores = list({s.path: s for s in report["_stores"]}.values())
        files: dict[str, list[int]] = {}
        live = indexed = runs = 0
        for store in stores:
            files.update(scan_files(store.path, texts))
            live += store.erasure.live_copies(texts)
            indexed += store.erasure.index_leftovers(texts)
            runs += store.erasure.runs_citing(ids)
        outside = self.leftovers(report)
        not_checked = [d["workspace"] for d in report["deferred"]]
        clean = None if not (texts or ids) else (
            not files and not indexed and not runs and not outside and not not_checked)
        return {"clean": clean, "textsChecked": len(texts), "idsChecked": len(ids),
                "filesChecked": [p + s for p in (st.path for st in stores)
                                 for s in ("", "-wal", "-shm") if os.path.isfile(p + s)],
                "filesWithText": sorted(files) + outside, "liveCopies": live,
                "indexLeftovers": indexed, "contextRunsLeft": runs,
                "workspacesNotChecked": not_checked}


def settle_runs(workspace, user, texts=()) -> int:
    """Drop `workspace`'s context runs that name a record erased from `user` since the
    workspace last read its tombstones (or whose question holds one of `texts`); records how
    far it has read, so the next call reads only newer ones."""
    book = user.erasure.tombstone_book()
    fresh = user.erasure.tombstones_after(workspace.erasure.read_up_to(book)) if book else []
    if not fresh and not texts:
        return 0
    with workspace.db.atomic():
        removed = workspace.erasure.drop_context_runs([i for _, i in fresh], list(texts))
        if fresh:
            workspace.erasure.set_read_up_to(book, fresh[-1][0])
    return removed


def erased_records(records, stores) -> set[str]:
    """The ids among an import's `records` [(kind, data)] that a tombstone in any of `stores`
    names: by id; an event by its node's id too; a node, message or entity also by the digest
    of its words (an entity's name) when they are distinctive (the same words under a new
    id)."""
    records = list(records)
    ids = {data["id"] for _, data in records} | {
        data["nodeId"] for kind, data in records if kind == "event" and data.get("nodeId")}
    texts = {data["id"]: _record_text(kind, data) for kind, data in records
             if kind in ("node", "message", "entity")}
    wanted = [t for t in texts.values() if len(t.encode("utf-8", "surrogatepass")) >= MIN_BYTES]
    named: set[str] = set()
    same_words: set[str] = set()
    for store in stores:
        named |= store.erasure.erased(sorted(ids))
        same_words |= store.erasure.erased_texts(wanted) if wanted else set()
    return {data["id"] for kind, data in records
            if data["id"] in named or data.get("nodeId") in named and kind == "event"
            or texts.get(data["id"]) in same_words}


def _record_text(kind: str, data: dict) -> str:
    if kind == "entity":  # its tombstone digests its name (_settle_graph)
        return data["name"]
    return node_digest_text(data) if kind == "node" else data.get("content") or ""


# An `edit` keeps what a person typed after a refusal as <node id>-<random>.json in the temp
# folder (tempfile's name); an export is written as .<name>.<16 hex>.tmp beside its target.
_EDIT = r"(mem_[0-9A-Za-z]+)-[A-Za-z0-9_]+\.json"
_EXPORT_TEMP = r"\..+\.[0-9a-f]{16}\.tmp"
_QUOTED_ID = rb'"((?:mem|msg|sum)_[0-9A-Za-z_-]{1,64})"'


def leftover_files(folders, erased) -> list[str]:
    """This user's files outside the dbs that hold an erased record: `edit` recovery files
    named by one, and export temp files in `folders` naming one. `erased(ids)` says which of
    a set of ids were erased."""
    import tempfile
    found = [path for path in _own_files(tempfile.gettempdir())
             if (edit := re.fullmatch(_EDIT, os.path.basename(path))) and erased({edit[1]})]
    for folder in folders:
        found += [path for path in _own_files(folder)
                  if re.fullmatch(_EXPORT_TEMP, os.path.basename(path)) and erased(_ids_in(path))]
    return list(dict.fromkeys(found))


def _ids_in(path: str) -> set[str]:
    """Every record id quoted in a file, read a block at a time (an export may be large)."""
    ids: set[str] = set()
    tail = b""
    try:
        with open(path, "rb") as handle:
            while block := handle.read(1 << 22):
                window = tail + block
                ids.update(m.decode("ascii") for m in re.findall(_QUOTED_ID, window))
                tail = window[-80:]
    except OSError:
        return set()
    return ids


def _own_files(folder: str) -> list[str]:
    """Regular files (not links) in `folder` that this user owns."""
    import stat
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
            out.append(path)
    return out


def _shred(path: str) -> bool:
    """Zeros over the bytes, then unlink: the text does not stay in the freed blocks of a
    plain file system (a copy-on-write one or an SSD may keep older blocks regardless).
    Whether the file is gone."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return not os.path.lexists(path)
    try:
        left = os.fstat(fd).st_size
        block = bytes(min(left, 1 << 20))
        while left > 0:
            left -= os.write(fd, block[:left])
        os.fsync(fd)
    finally:
        os.close(fd)
    with suppress(FileNotFoundError):
        os.unlink(path)
    return not os.path.lexists(path)
