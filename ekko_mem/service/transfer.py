"""Export and import: a lossless JSON Lines round trip of messages, summaries, nodes and
audit events.

An export reads each db inside one snapshot and, to a file, replaces the target only once
the whole file is on disk. An import is idempotent by id and all-or-nothing across the
workspace and user dbs, and every new node passes the same policy as `remember`: controlled
keys, one active value per single-valued key, size limits, confirmed secrets, the current
user as owner, references that resolve. An untrusted file cannot write global scope or slip
long-term user memory in unconfirmed. Refusals name the line and the field, never a value.
"""
from __future__ import annotations

import os
from contextlib import ExitStack, suppress

from ..errors import EkkoError, NeedsConfirmation, Rejected, Step
from ..policy.records import json_objects
from .stores import UseCase

FORMAT = "ekko-mem-export"
VERSION = 1
KINDS = ("message", "summary", "node", "event")
TABLES = {"message": "memory_messages", "summary": "memory_summaries", "node": "memory_nodes",
          "event": "memory_audit_events"}
NOTHING = "nothing was imported"


def write_atomically(path: str, chunks) -> None:
    """Write `chunks` to a private temp file beside `path`, then rename it over `path`.

    The target is either the complete new file (mode 0600) or exactly what it was: a failed
    read, a full disk or Ctrl-C removes the temp file. A symlink at `path` is replaced, not
    followed, so an export never writes into whatever file a link points at."""
    folder = os.path.dirname(path) or "."
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.urandom(8).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise EkkoError(f"cannot write beside {path}: {exc.strerror or exc}",
                        "check that the folder exists and is writable") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise EkkoError(f"cannot write {path}: {exc.strerror or exc}",
                            f"check the path and free disk space, then retry; {path} was"
                            " left as it was") from None
        raise
    with suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class Transfer(UseCase):
    needs = ("drafts", "nodes", "audit_log")

    # -- export ------------------------------------------------------------------------------
    def export_lines(self, *, scopes: list[str] | None = None, session: str | None = None):
        """Yield export records: a header, then messages, summaries, nodes and events."""
        scopes = [self.drafts.check_choice("scope", s) for s in scopes or []] or None
        yield {"kind": "header", "format": FORMAT, "version": VERSION}
        with ExitStack() as stack:
            stores = dict(self.stores.existing())
            # Each db is read in one snapshot. A user node can cite a workspace message, so
            # the user db's snapshot comes first and the workspace one after any workspace
            # write in progress has committed: a node is written after its source message
            # was committed, or inside the transaction that logs it, and either way the
            # message is in the later workspace snapshot.
            if "user" in stores:
                stack.enter_context(stores["user"].transfer.snapshot())
            if "workspace" in stores:
                stack.enter_context(stores["workspace"].transfer.snapshot(settle=True))
            yield from self._export_records(stores, scopes, session)

    @staticmethod
    def _export_records(stores: dict, scopes, session):
        workspace = stores.get("workspace")
        wants_log = scopes is None or "session" in scopes or "workspace" in scopes
        if workspace is not None and wants_log:
            for msg in workspace.transfer.export_messages(session):
                yield {"kind": "message", "data": msg}
            for summary in workspace.transfer.export_summaries(session):
                yield {"kind": "summary", "data": summary}
        node_ids: set[str] = set()
        for store in stores.values():
            for node in store.transfer.export_nodes(scopes, session):
                node_ids.add(node["id"])
                yield {"kind": "node", "data": node}
        for store in stores.values():
            for event in store.transfer.export_events():
                if (scopes is None and session is None) or event.get("nodeId") in node_ids:
                    yield {"kind": "event", "data": event}

    def save_export(self, path: str, lines) -> None:
        """Write rendered export lines to `path` atomically (see write_atomically)."""
        write_atomically(path, lines)

    # -- import ------------------------------------------------------------------------------
    def import_lines(self, lines, *, confirm: bool = False) -> dict:
        from ..store.transfer import atomic_together
        records = self._import_parse(lines)
        stores = {"workspace": self.store}
        user = self.stores.user_store(create=any(k == "node" and d["scope"] == "user"
                                          for _, k, d in records))
        if user is not None:
            stores["user"] = user
        # Locks in this order, commits in this order: the workspace db first, the user db
        # last. If the last commit fails after the first succeeded, what is left half done
        # is local to this workspace, and importing again (idempotent by id) completes it;
        # the other order would leave user memory that every workspace reads pointing at
        # messages and history that never arrived. Checks run under the locks, so nothing
        # another process commits meanwhile can slip between check and write.
        with atomic_together([store.db for store in stores.values()]):
            fresh = self._import_plan(records, stores)
            self._import_policy(records, fresh, stores, confirm)
            counts = self._import_write(records, fresh, stores)
        return {"imported": counts, "skipped": len(records) - sum(counts.values())}

    def _import_parse(self, lines) -> list[tuple[int, str, dict]]:
        from pydantic import ValidationError

        from ..models import (MemoryAuditEvent, MemoryMessage, MemoryNode, MemorySummary,
                              validation_message)
        models = {"message": MemoryMessage, "summary": MemorySummary, "node": MemoryNode,
                  "event": MemoryAuditEvent}
        records, seen = [], {}
        for number, item in json_objects(lines, what="imported",
                                         max_bytes=self.config.get("limits.line")):
            kind = item.get("kind")
            if kind == "header":
                if item.get("format") != FORMAT or item.get("version") != VERSION:
                    raise Rejected(f"line {number}: not an {FORMAT} v{VERSION} file",
                                   "export it again with this ekko-mem")
                continue
            if kind not in models:
                raise Rejected(f"line {number}: unknown kind {kind!r}",
                               f"use one of: {', '.join(KINDS)}; {NOTHING}")
            try:
                data = models[kind].model_validate(item.get("data")).model_dump(
                    exclude_none=True)
            except ValidationError as exc:
                raise Rejected(f"line {number}: {kind} {validation_message(exc)}",
                               f"fix that line; {NOTHING}") from None
            first = seen.setdefault((kind, data["id"]), number)
            if first != number:
                raise Rejected(f"line {number}: the same {kind} id as line {first}",
                               f"each record appears once; {NOTHING}")
            records.append((number, kind, data))
        if not records:
            raise Rejected("nothing to import", "give a file written by export")
        return records

    def _import_plan(self, records, stores: dict) -> list[tuple[int, str, dict, str]]:
        """(line, kind, record, db name) for each record not already there, in write order."""
        user_nodes = {d["id"] for _, k, d in records if k == "node" and d["scope"] == "user"}
        placed = [(n, k, d, self._import_target(k, d, user_nodes, stores.get("user")))
                  for n, k, d in records]
        fresh = []
        for kind in KINDS:
            for name, store in stores.items():
                batch = [item for item in placed if item[1] == kind and item[3] == name]
                present = store.transfer.existing_ids(TABLES[kind],
                                                      [item[2]["id"] for item in batch])
                fresh += [item for item in batch if item[2]["id"] not in present]
        return fresh

    @staticmethod
    def _import_target(kind, data, user_nodes, user_store) -> str:
        if kind == "node":
            return "user" if data["scope"] == "user" else "workspace"
        if kind == "event":
            node_id = data.get("nodeId")
            if node_id in user_nodes or (node_id and user_store is not None
                                         and user_store.nodes.get_node(node_id)):
                return "user"
        return "workspace"

    # -- the write policy, applied to every record the import would add -------------------------
    def _import_policy(self, records, fresh, stores: dict, confirm: bool) -> None:
        """Checked in file order; every refusal (exit 4) comes before any question (exit 3),
        so confirming never lets a file through that would be refused anyway."""
        in_file = {d["id"] for _, k, d in records if k == "node"}
        singles: dict[tuple, int] = {}
        unconfirmed, secret = [], []
        from ..policy.nul import refuse_nul
        for number, kind, data, target in sorted(fresh, key=lambda item: item[0]):
            try:
                refuse_nul(data, kind)
                if kind == "message":
                    self._import_size("message content", data["content"], "limits.message")
                    question = self._import_text_secret("message", data)
                elif kind == "summary":
                    self._import_size("summary", data["summary"], "limits.content")
                    question = self._import_text_secret("summary", data)
                elif kind == "node":
                    self._import_fields(data)
                    self._import_refs(data, stores[target], in_file)
                    self._import_single(number, data, stores[target], singles)
                    question = self._import_node_secret(data)
                    if data["scope"] == "user":  # the file's own "explicit" vouches nothing
                        unconfirmed.append(number)
                else:
                    continue
            except Rejected as exc:
                hint = exc.reason_for_step.replace("nothing was written", NOTHING)
                raise Rejected(f"line {number}: {exc.message}",
                               hint if NOTHING in hint else f"{hint}; {NOTHING}",
                               step=exc.step) from None
            if question:
                secret.append((number, question))
        if confirm:
            return
        if unconfirmed:
            raise NeedsConfirmation(
                f"{len(unconfirmed)} user-scope memories (first at line {unconfirmed[0]}) would"
                " shape every workspace, and a file cannot show that you stated them",
                "if you trust the file", step=Step("confirm"))
        if secret:
            raise NeedsConfirmation(f"line {secret[0][0]}: {secret[0][1]}",
                                    "to import sensitive data", step=Step("confirm"))

    def _import_size(self, what: str, text: str, setting: str) -> None:
        from ..policy.limits import check_size
        check_size(what, text, self.config.get(setting), setting)

    def _import_node_secret(self, node: dict) -> str | None:
        """The question `remember` would ask about a secret in this node, if any (the
        'refuse' policy raises instead)."""
        try:
            self.drafts.check_sensitive(node, False)
        except NeedsConfirmation as exc:
            return exc.message
        return None

    def _import_text_secret(self, kind: str, record: dict) -> str | None:
        """A credential in a message (its metadata too) or a summary: `log` masks it unless
        confirmed; an import keeps the file as it is, so it asks instead."""
        policy = self.config.get("sensitive.policy")
        if policy == "allow":
            return None
        from ..policy.sensitive import credentials_in_json, describe
        found = credentials_in_json({k: v for k, v in record.items()
                                     if k not in ("id", "createdAt")})
        if not found:
            return None
        if policy == "refuse":
            raise Rejected(f"the {kind} contains {describe(found)}; sensitive.policy is"
                           " 'refuse'", "remove it from the file")
        return f"the {kind} contains {describe(found)}"

    def _import_fields(self, node: dict) -> None:
        """Scope, owner, sizes and the controlled schema; fixes the key's spelling in place."""
        if node["scope"] == "global":
            raise Rejected("global scope cannot be imported", "global memory ships with ekko-mem")
        self._import_size("node title", node["title"], "limits.title")
        self._import_size("node content", node["content"], "limits.content")
        if node["scope"] == "user":
            owner = self.env.user_id()
            if node.setdefault("userId", owner) != owner:
                raise Rejected(f"node userId is not the current user ({owner})",
                               "a file can only bring back your own user memory")
        if node.get("key") is None:
            return
        key = self.drafts.schema_key(node["key"])
        rule = self.drafts.schema.rule_for(node["domain"], node["categoryPath"], node["type"])
        probe = {**node, "key": key}
        problem = self.drafts.check_key(probe, rule)
        if problem is None:
            node.update(key=key, valueJson=probe["valueJson"])
        elif rule is not None and key in rule["allowedKeys"]:
            shape = self.drafts.schema.key_shape(key, rule)
            raise Rejected(f"node valueJson does not fit key '{key}' ({shape})",
                           f"give a {shape} value")
        else:  # the rejected key itself is not echoed: it came from the file
            raise Rejected("node key is not allowed for its domain, category and type",
                           problem[1])

    def _import_refs(self, node: dict, store, in_file: set[str]) -> None:
        for field in ("supersedesId", "parentId"):
            ref = node.get(field)
            if (ref and ref not in in_file
                    and not store.transfer.existing_ids("memory_nodes", [ref])):
                raise Rejected(f"node {field} points at a node that is neither in the file"
                               " nor in the memory it goes to",
                               f"include that node in the file, or drop {field}")

    def _import_single(self, number: int, node: dict, store, singles: dict) -> None:
        """One active value per single-valued key and slot, counting the file and the db."""
        key, now = node.get("key"), self.env.now_iso()
        lapsed = node.get("expiresAt") is not None and node["expiresAt"] <= now
        if node["status"] != "active" or lapsed or not self.drafts.schema.is_single_valued(key):
            return
        slot = (node["scope"], node["domain"], node["type"], key,
                node.get("sessionId") if node["scope"] == "session" else None)
        first = singles.setdefault(slot, number)
        if first != number:
            raise Rejected(f"a second active value for the single-valued key '{key}'"
                           f" (the first is at line {first})",
                           "mark one of them superseded, or drop one")
        rivals = [old for old in self.nodes.same_kind(store, {**node, "createdAt": now})
                  if old["id"] != node["id"]]
        if rivals:
            raise Rejected(f"the single-valued key '{key}' already has an active value"
                           f" ({rivals[0]['id']})",
                           f"forget {rivals[0]['id']} first, or drop that line")

    # -- writing -------------------------------------------------------------------------------
    def _import_write(self, records, fresh, stores: dict) -> dict:
        """Insert the new records; every new node gets an 'import' audit event in its own db
        and transaction, holding the node itself when the file does not carry its history
        (it is then the node's only record of where it came from)."""
        with_history = {d.get("nodeId") for _, k, d in records if k == "event"}
        counts = {kind: 0 for kind in KINDS}
        for kind in KINDS:
            for name, store in stores.items():
                batch = [d for _, k, d, target in fresh if k == kind and target == name]
                if not batch:
                    continue
                if kind == "message":
                    store.messages.append_messages(batch)
                for data in batch:
                    if kind == "summary":
                        store.summaries.append_summary(data)
                    elif kind == "node":
                        store.nodes.insert_node(data)
                        self.audit_log.record(store, "import", data, "import", "imported",
                                    after=None if data["id"] in with_history else data)
                    elif kind == "event":
                        store.nodes.add_event(data)
                counts[kind] += len(batch)
        return counts
