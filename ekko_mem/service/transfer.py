"""Export and import: a lossless JSON Lines round trip of messages, summaries, nodes, audit
events and the graph's entities, streamed both ways so memory stays bounded whatever the size.
An entity is merged by name; its edges are not written but read again from the imported
memories when the graph is next read, at the times those memories give.

An export reads each db inside one snapshot, a batch of rows at a time, and, to a file,
replaces the target only once the whole file is on disk. An import is idempotent by id and
all-or-nothing across the workspace and user dbs, and every new node passes the same policy
as `remember`: controlled keys, one active value per single-valued key, size limits,
confirmed secrets, the current user as owner, ids of their kind, references that resolve and
chains (supersedes, parents) that end. An untrusted file cannot write global scope or slip
long-term user memory in unconfirmed, and its history is data: an event's copies of its node
must be this user's copies of that node, never a template for a later write. Refusals name
the line and the field, never a value.

An import reads, parses and checks its file once, without the write locks: what passes is
staged as rows in a scratch db on disk beside the ids, lines and counts the checks need.
Under the locks, if another process committed meanwhile, what the file adds is looked at
again (its ids still new, what it cites still there, its slots still free), and the second
pass writes from the scratch db in batches, without parsing or validating again. Stdin or a
pipe is first copied to a private temporary file, so the file can be read again in the cases
that need it: a change the quick look cannot settle, or a user db that another process made
meanwhile, checked anew under the locks.
"""
from __future__ import annotations

import re
from contextlib import ExitStack, contextmanager

from ..errors import NeedsConfirmation, Rejected, Step
from ..ids import PREFIXES, kind_of
from ..policy.limits import check_size
from .stores import Stores, UseCase
from .transfer_files import NOTHING, line_object, readable, write_atomically

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .audit_log import AuditLog
    from .drafts import Drafts
    from .nodes import Nodes
    from .stores import Progress

FORMAT = "ekko-mem-export"
VERSION = 1
KINDS = ("message", "summary", "node", "event", "entity")
BATCH = 1000  # records checked or written at a time


def _events_of(events: list[dict], stores: dict, every: bool, scopes, session):
    if not every:
        ids = list({e["nodeId"] for e in events if e.get("nodeId")})
        kept = set().union(*(s.transfer.nodes_among(ids, scopes, session)
                             for s in stores.values()))
        events = [e for e in events if e.get("nodeId") in kept]
    for event in events:
        yield {"kind": "event", "data": event}


class Transfer(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, nodes: Nodes,
                 audit_log: AuditLog) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.nodes = nodes
        self.audit_log = audit_log

    # -- export ------------------------------------------------------------------------------
    def export_lines(self, *, scopes: list[str] | None = None,
                     session: str | None = None) -> Iterator[dict]:
        """Yield export records: a header, then messages, summaries, nodes, entities and
        events."""
        chosen = [self.drafts.check_choice("scope", s) for s in scopes or []]
        scopes = [s for s in chosen if s is not None] or None
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
        for store in stores.values():
            for node in store.transfer.export_nodes(scopes, session):
                yield {"kind": "node", "data": node}
        for name, store in stores.items():
            for entity in store.transfer.export_entities(scopes, session,
                                                         _every_node(name, scopes, session)):
                yield {"kind": "entity", "data": {**entity, "scope": name}}
        every = scopes is None and session is None
        for store in stores.values():
            # A filtered export keeps the events of the nodes it holds, whichever db holds
            # them: asked of the dbs a batch at a time rather than kept as a set of ids.
            batch: list[dict] = []
            for event in store.transfer.export_events():
                batch.append(event)
                if len(batch) == BATCH:
                    yield from _events_of(batch, stores, every, scopes, session)
                    batch = []
            yield from _events_of(batch, stores, every, scopes, session)

    def save_export(self, path: str, lines: Iterable[str]) -> None:
        """Write rendered export lines to `path` atomically (see write_atomically)."""
        write_atomically(path, lines)

    # -- import ------------------------------------------------------------------------------
    def import_lines(self, lines: Iterable[str], *, confirm: bool = False,
                     allow_erased: bool = False, progress: Progress | None = None) -> dict:
        """Import export lines: a list of them, a one-shot iterator (copied aside first) or
        what `transfer_files.open_import` opened. Nothing is held but a batch at a time.
        What a tombstone names (erased here since the export was taken) is skipped and
        counted, unless `allow_erased`. With semantic recall on, vectors are made after
        the commit (`progress(done, total)` after each batch)."""
        from ..store.transfer import atomic_together, roomy_cache
        from .semantic import hold, vectors_after
        with readable(lines) as source, ExitStack() as stack:
            stores = {"workspace": self.store}
            user = self.stores.user_store()
            if user is not None:
                stores["user"] = user
            stack.enter_context(vectors_after(stores, progress))  # left last: after commit
            # Checked without the write locks, so other processes go on writing meanwhile
            # and a refusal or a question never takes them; what they committed before the
            # locks were taken is read again under the locks (_still_holds).
            marks = {name: store.transfer.data_version() for name, store in stores.items()}
            erased = {"count": 0, "allow": allow_erased}
            index = stack.enter_context(self._checked(source, stores, confirm, erased))
            # Locks in this order, commits in this order: the workspace db first, the user db
            # last. If the last commit fails after the first succeeded, what is left half done
            # is local to this workspace, and importing again (idempotent by id) completes it;
            # the other order would leave user memory that every workspace reads pointing at
            # messages and history that never arrived.
            held = stack.enter_context(atomic_together([s.db for s in stores.values()]))
            again = False
            if "user" not in stores and index.holds_user_records():
                # Made only once the file is known good, locked last as above. Should another
                # process have made it meanwhile and written to it, it is checked again.
                stores["user"] = self.stores.for_scope("user", create=True)
                hold(stores["user"])
                held.take(stores["user"].db)
                again = bool(stores["user"].nodes.count_nodes())
            if again or not self._still_holds(index, stores, marks):
                erased["count"] = 0
                index = stack.enter_context(self._checked(source, stores, confirm, erased))
            with roomy_cache([s.db for s in stores.values()]):
                counts = self._import_write(index, stores)
            report = {"imported": counts,
                      "skipped": index.count() - sum(counts.values()) - erased["count"]}
            if erased["count"]:
                report["erased"] = erased["count"]
            return report

    @contextmanager
    def _checked(self, source, stores: dict, confirm: bool, erased: dict):
        """The first pass: every line read, every record the import would add put to the
        write policy; yields the index of the file that the second pass writes by."""
        from ..store.transfer import ImportIndex
        index = ImportIndex()
        try:
            verdict = _Verdict()
            for batch in self._import_batches(source, index):
                if not erased["allow"]:
                    batch = _without_erased(batch, stores, erased)
                if verdict.refusal is None:
                    self._import_policy(batch, stores, index, verdict)
            if not index.count():
                raise Rejected("nothing to import", "give a file written by export")
            verdict.cycle = self._first_cycle(index, stores)
            verdict.settle(index, confirm)
            yield index
        finally:
            index.close()

    def _still_holds(self, index, stores: dict, marks: dict) -> bool:
        """Under the write locks: whether what the checks read of the dbs holds still.
        Nothing committed since settles it at once; else what the file adds is looked at
        again: its records still new, those it refers to still there, the single-valued
        slots it fills still free. (A record the checks found present and skipped may have
        been removed since: skipped still, as if the import had come first.)"""
        if all(stores[name].transfer.data_version() == mark for name, mark in marks.items()):
            return True
        for kind, target, ids in index.fresh_ids():
            if stores[target].transfer.existing_ids(kind, ids):
                return False
        for target, kind, ids in index.held():
            if len(stores[target].transfer.existing_ids(kind, ids)) < len(ids):
                return False
        now = self.env.now_iso()
        return not any(self._rivals(stores[target], node, now)
                       for target, node in index.singles())

    def _import_batches(self, source, index=None):
        """Lists of (line, kind, record, whether the line escapes a NUL), in file order.

        Refused as a whole file is read: a line that is not JSON (or too long) at once, and
        only then the first record that is not a valid one (a bad header, kind or field, or
        an id seen before, found as each batch is noted in `index`)."""
        cap = self.config.get("limits.line")
        read, parse = self._import_parsers(cap)
        batch: list = []
        refusal = None
        for number, line in enumerate(source.lines(cap), start=1):
            item = read(number, line)
            if item is None or refusal is not None:
                continue
            try:
                record = parse(number, item, line)
            except Rejected as exc:
                refusal, batch = self._note(batch, index) or exc, []
                continue
            if record is not None:
                batch.append(record)
                if len(batch) == BATCH:
                    refusal = self._note(batch, index)
                    if refusal is None:
                        yield batch
                    batch = []
        refusal = refusal or self._note(batch, index)
        if refusal is not None:
            raise refusal
        if batch:
            yield batch

    def _import_parsers(self, cap: int):
        from pydantic import BaseModel, ValidationError

        from ..models import (MemoryAuditEvent, MemoryEntity, MemoryMessage, MemoryNode,
                              MemorySummary, validation_message)
        from ..store.copies import looks_stored
        models: dict[str, type[BaseModel]] = {
            "message": MemoryMessage, "summary": MemorySummary, "node": MemoryNode,
            "event": MemoryAuditEvent, "entity": MemoryEntity}

        def read(number: int, line) -> dict | None:
            """The line's object, or None for a blank line."""
            return line_object(number, line, cap, "imported")

        def parse(number: int, item: dict, line: str):
            kind = item.get("kind")
            if kind == "header":
                if item.get("format") != FORMAT or item.get("version") != VERSION:
                    raise Rejected(f"line {number}: not an {FORMAT} v{VERSION} file",
                                   "export it again with this ekko-mem")
                return None
            if kind not in models:
                raise Rejected(f"line {number}: unknown kind {kind!r}",
                               f"use one of: {', '.join(KINDS)}; {NOTHING}")
            try:
                data = models[kind].model_validate(item.get("data")).model_dump(
                    exclude_none=True)
            except ValidationError as exc:
                raise Rejected(f"line {number}: {kind} {validation_message(exc)}",
                               f"fix that line; {NOTHING}") from None
            misshapen = _misshapen(kind, data)
            if misshapen is not None:
                field, of = misshapen
                raise Rejected(f"line {number}: {kind} {field} is not a well-formed {of} id",
                               f"an id is a name like {_PREFIXES[of]}_01k: letters, digits,"
                               f" '_', '.' or '-'; fix that line; {NOTHING}")
            if kind == "event" and not isinstance(data.get("payload"), (dict, type(None))):
                raise Rejected(f"line {number}: event {data['id']} payload is not a JSON object",
                               f"give an object with before and after, or null; {NOTHING}")
            if kind == "event" and looks_stored(data.get("payload")):
                raise Rejected(f"line {number}: event {data['id']} holds a reference where a"
                               " copy of its node belongs (\"=node\", a \"=diff\", or a source"
                               " list that is not a list)", f"import what export writes; {NOTHING}")
            # JSON has no raw NUL: a NUL in the record was written as an escape in the line.
            return number, kind, data, "\\u0000" in line

        return read, parse

    @staticmethod
    def _note(batch: list, index) -> Rejected | None:
        """Note a batch's ids in the index; the refusal of the first id seen before, if any."""
        if index is None or not batch:
            return None
        repeated = index.add([(kind, data["id"], number, _target(kind, data) == "user")
                              for number, kind, data, _ in batch])
        if repeated is not None:
            number, first = repeated
            kind = next(k for n, k, *_ in batch if n == number)
            return Rejected(f"line {number}: the same {kind} id as line {first}",
                            f"each record appears once; {NOTHING}")
        index.note_history([data["nodeId"] for _, kind, data, _ in batch
                            if kind == "event" and data.get("nodeId")])
        return None

    @staticmethod
    def _fresh(batch: list, stores: dict) -> list:
        """(line, kind, record, NUL escaped, db name) for each record of `batch` that the db
        it goes to does not hold yet, in file order. An event is placed only when written,
        by _insert_events (a user node's event may come before its node): one either db
        holds is not new."""
        placed = [(number, kind, data, nul, _target(kind, data))
                  for number, kind, data, nul in batch]
        wanted: dict[tuple, list] = {}
        for _, kind, data, _, target in placed:
            wanted.setdefault((kind, target), []).append(data["id"])
        present = {}
        for (kind, target), ids in wanted.items():
            dbs = list(stores.values()) if kind == "event" else \
                [stores[target]] if target in stores else []
            present[(kind, target)] = set().union(
                *(store.transfer.existing_ids(kind, ids) for store in dbs))
        for target in ("workspace", "user"):
            if ("entity", target) in present and target in stores:
                entities = [data for _, kind, data, _, where in placed
                            if kind == "entity" and where == target]
                present[("entity", target)] |= _entities_held(entities, stores[target])
        return [item for item in placed if item[2]["id"] not in present[(item[1], item[4])]]

    # -- the write policy, applied to every record the import would add -------------------------
    def _import_policy(self, batch: list, stores: dict, index, verdict) -> None:
        """Checked in file order, up to the first refusal; what passed is staged in `index`
        as it will be written (a node's key spelling and owner settled)."""
        passed: dict[str, list] = {kind: [] for kind in KINDS}
        for number, kind, data, nul, target in self._fresh(batch, stores):
            try:
                question = self._import_check(number, kind, data, nul, target, stores,
                                              index)
            except Rejected as exc:
                verdict.refusal = (number, _at_line(number, exc))
                break
            if question and verdict.secret is None:
                verdict.secret = (number, question)
            if target == "user" and kind in ("node", "entity"):  # a file vouches for nothing
                verdict.unconfirmed[kind] += 1
                verdict.first_user = verdict.first_user or number
            passed[kind].append((number, target, data))
        self._import_links(passed, stores, index)  # an earlier line's may be the first refusal
        if verdict.refusal is not None:
            return
        index.note_fresh([(kind, target, data["id"])
                          for kind in ("message", "summary", "node", "entity")
                          for _, target, data in passed[kind]])
        index.stage_messages([(number, data) for number, _, data in passed["message"]])
        index.stage_summaries([(number, data) for number, _, data in passed["summary"]])
        index.stage_nodes(passed["node"])  # before the events, which look their nodes up
        index.stage_events([(number, data) for number, _, data in passed["event"]])
        index.stage_entities(passed["entity"])

    def _import_check(self, number: int, kind: str, data: dict, nul: bool, target: str,
                      stores: dict, index) -> str | None:
        """Refuse the record (Rejected), or the question to ask before adding it, if any."""
        if kind == "event":
            return self._import_history(data, nul, index)
        if nul:
            from ..policy.nul import refuse_nul
            refuse_nul(data, kind)
        if kind == "entity":
            return self._import_entity(data)
        if kind == "message":
            self._import_size("message content", data["content"], "limits.message")
            return self._import_text_secret("message", data)
        if kind == "summary":
            self._import_size("summary", data["summary"], "limits.content")
            return self._import_text_secret("summary", data)
        store = stores.get(target)
        self._import_fields(data)
        self._import_refs(number, data, store, target, index)
        self._import_single(number, data, store, target, index)
        return self._import_node_secret(data)

    def _import_entity(self, entity: dict) -> str | None:
        """A name and aliases as long as a title may be, never blank (the model checks the
        kind); a credential in one is asked about as in a message."""
        for field, text in [("name", entity["name"]), *(("alias", a) for a in entity["aliases"])]:
            if not text.strip():
                raise Rejected(f"entity {field} is blank", "give the name it is known by")
            self._import_size(f"entity {field}", text, "limits.title")
        return self._import_text_secret("entity", entity)

    def _import_size(self, what: str, text: str, setting: str) -> None:
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
        self._import_owner_and_key(node)

    def _import_owner_and_key(self, node: dict) -> None:
        """The owner of user memory and the controlled key, its spelling fixed in place, so
        the record is staged as it will be stored."""
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

    @staticmethod
    def _import_refs(number: int, node: dict, store, target: str, index) -> None:
        """A reference the db it goes to does not hold must name a node in the file, which
        may come later: it is settled when the whole file has been read."""
        for field in ("supersedesId", "parentId"):
            ref = node.get(field)
            if not ref:
                continue
            if store is not None and store.transfer.existing_ids("node", [ref]):
                index.hold(target, "node", [ref])
            else:
                index.defer_ref(number, f"node {field}", ref)

    def _import_single(self, number: int, node: dict, store, target: str, index) -> None:
        """One active value per single-valued key and slot, counting the file and the db."""
        key = node.get("key")
        if node["status"] != "active" or not self.drafts.schema.is_single_valued(key):
            return
        now = self.env.now_iso()
        if node.get("expiresAt") is not None and node["expiresAt"] <= now:
            return
        import json
        slot = (node["scope"], node["domain"], node["type"], key,
                node.get("sessionId") if node["scope"] == "session" else None)
        first = index.first_in_slot(json.dumps(slot, ensure_ascii=False), number)
        if first != number:
            raise Rejected(f"a second active value for the single-valued key '{key}'"
                           f" (the first is at line {first})",
                           "mark one of them superseded, or drop one")
        rivals = self._rivals(store, node, now)
        if rivals:
            raise Rejected(f"the single-valued key '{key}' already has an active value"
                           f" ({rivals[0]['id']})",
                           f"forget {rivals[0]['id']} first, or drop that line")
        index.note_single(number, target, node)

    def _rivals(self, store, node: dict, now: str) -> list[dict]:
        if store is None:
            return []
        return [old for old in self.nodes.same_kind(store, {**node, "createdAt": now})
                if old["id"] != node["id"]]

    # -- history is data: an event's copies of its node are checked, never obeyed ------------
    def _import_history(self, event: dict, nul: bool, index) -> str | None:
        """An event's copies of its node must be nodes of this user, of the event's own
        node, outside global scope; a secret in one is asked about as in a node. (`audit
        undo` puts its own checks on what it would write back.)"""
        from ..models import MemoryNode
        owner = self.env.user_id()
        if event.get("userId") not in (None, owner):
            raise Rejected(f"event {event['id']} userId is not the current user ({owner})",
                           "a file can only bring back your own history")
        question = None
        for side, copy, expected in _copies(event):
            where = f"event {event['id']} payload {side}"
            node = _checked_copy(MemoryNode, where, copy, expected, owner, index)
            if node is not None and question is None:
                found = self._import_node_secret(node)
                question = f"{where}: {found}" if found else None
        if nul:  # anywhere else in the event: its reason, a note
            from ..policy.nul import refuse_nul
            refuse_nul(event, f"event {event['id']}")
        return question

    # -- references: to records that exist, in chains that end ----------------------------------
    def _import_links(self, passed: dict, stores: dict, index) -> None:
        """The new records' references to messages (a node's sources, a summary's range),
        found in their log or left to the file; and the links that a chain of must end."""
        from ..store.refs import split_ref
        workspace = stores["workspace"]
        here = workspace.meta("store_id")
        wanted: list[tuple[int, str, str, tuple]] = []
        for number, target, node in passed["node"]:
            for ref in node.get("sourceMessageIds") or []:
                where, mid = split_ref(ref)
                if where in (None, here):  # another workspace's log is checked from there
                    own = ("user",) if target == "user" and where is None else ()
                    wanted.append((number, "node sourceMessageIds", mid, ("workspace", *own)))
        for number, _, summary in passed["summary"]:
            for field in ("fromMessageId", "toMessageId"):
                wanted.append((number, f"summary {field}", summary[field], ("workspace",)))
        logged = {name: stores[name].transfer.existing_ids(
            "message", sorted({mid for *_, mid, places in wanted if name in places}))
            for name in ("workspace", "user") if name in stores}
        for number, field, mid, places in wanted:
            place = next((p for p in places if mid in logged.get(p, ())), None)
            if place is not None:
                index.hold(place, "message", [mid])
            else:
                index.defer_ref(number, field, mid, "message")
        for link, kind, field in _LINKED:
            index.link(link, [(data["id"], data[field], number)
                              for number, _, data in passed[kind] if data.get(field)])

    def _first_cycle(self, index, stores: dict) -> tuple[int, str] | None:
        """(line, link) of the first new record whose link, followed through the file and
        the dbs, comes back to a record already passed: a node that supersedes itself, two
        that supersede each other, a summary or message that is its own ancestor."""
        for link, _, _ in _LINKED:
            for number, start in index.links(link):
                if index.settled(link, start):
                    continue
                path, here = [], start
                seen: set[str] = set()
                while here is not None and here not in seen and not index.settled(link, here):
                    seen.add(here)
                    path.append(here)
                    here = self._next_link(index, stores, link, here)
                if here is not None and here in seen:
                    return number, link
                index.settle(link, path)
        return None

    @staticmethod
    def _next_link(index, stores: dict, link: str, record_id: str) -> str | None:
        """What `record_id`'s link names: as the file gives it for a new record, else as a
        db holds it (None where it ends or points nowhere)."""
        new, ref = index.linked(link, record_id)
        if new:
            return ref
        dbs = stores.values() if link.startswith("node") else [stores["workspace"]]
        for store in dbs:
            found, ref = store.transfer.reference(link, record_id)
            if found:
                return ref
        return None

    # -- writing -------------------------------------------------------------------------------
    def _import_write(self, index, stores: dict) -> dict:
        """The second pass: what the first staged, inserted a batch at a time, kind by kind
        (nodes before the events that point at them)."""
        counts = dict.fromkeys(KINDS, 0)
        workspace = stores["workspace"]
        for messages in index.staged_messages():
            workspace.messages.append_messages(messages)
            counts["message"] += len(messages)
        for summaries in index.staged_summaries():
            for summary in summaries:
                workspace.summaries.append_summary(summary)
            counts["summary"] += len(summaries)
        for name, store in stores.items():
            for staged in index.staged_nodes(name):
                self._record_imports(store, store.nodes.insert_rows(staged), index)
                counts["node"] += len(staged)
        for batch in index.staged_events():
            counts["event"] += self._insert_events(batch, stores, index)
        for name, store in stores.items():
            for entities in index.staged_entities(name):
                for entity in entities:
                    # Merged by name: the file's kind over the one the rules guessed here.
                    found = store.graph.entity_id(entity["name"], entity["kind"],
                                                  entity["aliases"], entity["createdAt"],
                                                  entity["id"])
                    store.graph.set_kind(found, entity["kind"])
                counts["entity"] += len(entities)
        if not counts["entity"]:
            del counts["entity"]  # a file without entities reports what it always did
        return counts

    def _record_imports(self, store, nodes: list[dict], index) -> None:
        """Every new node gets an 'import' audit event in its own db and transaction. Where
        the file does not carry the node's history, that event's `after` is the node as
        imported (SAME_AS_NODE: the row just written), its only record of where it came
        from."""
        with_history = index.with_history_among([node["id"] for node in nodes])
        self.audit_log.record_all(
            store, "import", nodes, "import", "imported",
            after_of=lambda node: None if node["id"] in with_history
            else store.nodes.SAME_AS_NODE)

    @staticmethod
    def _insert_events(batch: list, stores: dict, index) -> int:
        """Events go with their node: to the user db for user memory. Those the db already
        holds are skipped; the number inserted. Where the file carries the node, its scope
        decides, even if the other db holds a node of that id: an event the import settled
        as the file's node must land beside that node."""
        user = stores.get("user")
        ids = [node_id for _, node_id, _, _ in batch if node_id]
        users = index.user_nodes_among(ids) | (
            (user.transfer.existing_ids("node", ids) if user is not None else set())
            - index.workspace_nodes_among(ids))
        placed: dict[str, list] = {}
        for item in batch:
            placed.setdefault("user" if item[1] in users else "workspace", []).append(item)
        # Held in either db, an event is already imported: one whose node was nowhere when it
        # first came in went to the workspace db, and its node may be in the user db now.
        event_ids = [event_id for event_id, *_ in batch]
        present = set().union(*(s.transfer.existing_ids("event", event_ids)
                                for s in stores.values()))
        inserted = 0
        for target, items in placed.items():
            store = stores[target]
            fresh = [item for item in items if item[0] not in present]
            store.nodes.add_event_rows([row for _, _, row, event in fresh if event is None])
            for _, _, _, event in fresh:
                if event is not None:
                    store.nodes.add_event(event)
            inserted += len(fresh)
        return inserted


class _Verdict:
    """What the first pass found about the records an import would add: its first refusal,
    and else the questions to ask. Every refusal (exit 4) comes before any question (exit 3),
    so confirming never lets a file through that would be refused anyway."""

    def __init__(self) -> None:
        self.refusal: tuple[int, Rejected] | None = None
        self.cycle: tuple[int, str] | None = None
        self.unconfirmed = {"node": 0, "entity": 0}  # bound for the user db
        self.first_user: int | None = None
        self.secret: tuple[int, str] | None = None

    def settle(self, index, confirm: bool) -> None:
        # A reference is checked before the key's slot and secrets of its own line: the
        # first refusal in file order is the one given.
        found = [(self.refusal[0], 1, self.refusal[1])] if self.refusal else []
        dangling = index.first_dangling_ref()
        if dangling is not None:
            found.append((dangling[0], 0, _at_line(dangling[0], _dangling(*dangling[1:]))))
        if self.cycle is not None:
            number, link = self.cycle
            found.append((number, 0, _at_line(number, Rejected(
                f"{link} makes a cycle: followed, it comes back to a record it passed",
                f"a chain of {link.split()[-1]} must end; fix or drop it"))))
        if found:
            raise min(found, key=lambda item: item[:2])[2]
        if confirm:
            return
        if any(self.unconfirmed.values()):
            what = " and ".join(f"{count} user-scope {plural}" for count, plural in (
                (self.unconfirmed["node"], "memories"), (self.unconfirmed["entity"], "entities"))
                if count)
            raise NeedsConfirmation(
                f"{what} (first at line {self.first_user}) would shape every workspace, and a"
                " file cannot show that you stated them", "if you trust the file",
                step=Step("confirm"))
        if self.secret is not None:
            raise NeedsConfirmation(f"line {self.secret[0]}: {self.secret[1]}",
                                    "to import sensitive data", step=Step("confirm"))


def _dangling(field: str, kind: str) -> Rejected:
    name = field.split()[-1]
    if kind == "node":
        return Rejected(f"{field} points at a node that is neither in the file nor in the"
                        " memory it goes to", f"include that node in the file, or drop {name}")
    return Rejected(f"{field} names a message that is neither in the file nor in the log"
                    " it goes to", f"include that message in the file, or drop it from {name}")


def _at_line(number: int, exc: Rejected) -> Rejected:
    hint = exc.reason_for_step.replace("nothing was written", NOTHING)
    return Rejected(f"line {number}: {exc.message}",
                    hint if NOTHING in hint else f"{hint}; {NOTHING}", step=exc.step)


# -- the shape of what a file names ----------------------------------------------------------
_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.\-]{0,127}")
# The fields of each kind that name a record, and the kind of record they name.
_ID_FIELDS = {"entity": (("id", "entity"),),
              "message": (("id", "message"), ("parentId", "message")),
              "summary": (("id", "summary"), ("parentSummaryId", "summary"),
                          ("fromMessageId", "message"), ("toMessageId", "message")),
              "node": (("id", "node"), ("supersedesId", "node"), ("parentId", "node")),
              "event": (("id", "event"), ("nodeId", "node"))}
# Links between records of one kind that a chain of must end: (name, kind, field).
_LINKED = (("node supersedesId", "node", "supersedesId"), ("node parentId", "node", "parentId"),
           ("summary parentSummaryId", "summary", "parentSummaryId"),
           ("message parentId", "message", "parentId"))


_PREFIXES = {**PREFIXES, "entity": "ent"}


def _target(kind: str, data: dict) -> str:
    return "user" if kind in ("node", "entity") and data["scope"] == "user" else "workspace"


def _every_node(db: str, scopes, session) -> bool:
    """Whether an export with these filters holds every memory of the db called `db`."""
    if db == "user":
        return scopes is None or "user" in scopes
    return session is None and (scopes is None or {"session", "workspace"} <= set(scopes))


def _entities_held(entities: list[dict], store) -> set[str]:
    """The ids of `entities` that `store` holds as they are, under another id: the same name
    and kind, every alias known."""
    known = store.transfer.entities_named([e["name"] for e in entities])
    return {e["id"] for e in entities if e["name"] in known
            and known[e["name"]][0] == e["kind"] and set(e["aliases"]) <= set(known[e["name"]][1])}


def _shaped(value, kind: str) -> bool:
    """An id of `kind`: a message id may be any plain name (`log` takes a given id) that is
    not another kind's; the others carry their kind's prefix, as ekko-mem makes them."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        return False
    if kind == "message":
        return kind_of(value) in (None, "message")
    return value.startswith(f"{_PREFIXES[kind]}_") and len(value) > len(_PREFIXES[kind]) + 1


def _misshapen(kind: str, data: dict) -> tuple[str, str] | None:
    """(field, kind it names) of the first id in `data` that is not one."""
    for field, of in _ID_FIELDS[kind]:
        if data.get(field) is not None and not _shaped(data[field], of):
            return field, of
    if kind == "node":
        from ..store.refs import split_ref
        for ref in data.get("sourceMessageIds") or []:
            where, mid = split_ref(ref)
            if (where is not None and not _ID.fullmatch(where)) or not _shaped(mid, "message"):
                return "sourceMessageIds", "message"
    return None


def _copies(event: dict):
    """(side, copy, the id it must have) for each copy of a node an event records: what
    `audit undo` would read back. A supersede's `before` is the version it replaced, named
    by its `after`; an undo keeps the node before it and both sides of what it undid."""
    payload = event.get("payload") or {}
    if event["eventType"] == "purge" or not event.get("nodeId"):
        return
    node_id = event["nodeId"]
    after = payload.get("after")
    if event["eventType"] == "undo":
        yield "before", payload.get("before"), node_id
        record = after if isinstance(after, dict) else {}
        yield "after.before", record.get("before"), node_id
        yield "after.after", record.get("after"), node_id
        return
    replaced = after.get("supersedesId") if isinstance(after, dict) else None
    yield "before", payload.get("before"), replaced if event["eventType"] == "supersede" \
        else node_id
    yield "after", after, node_id


def _without_erased(batch: list, stores: dict, erased: dict) -> list:
    """The batch without what a tombstone names (an export taken before a hard erase brings
    none of it back), and without references to such records in what is kept."""
    from .erasure import erased_records
    named = erased_records([(kind, data) for _, kind, data, _ in batch], stores.values())
    erased["count"] += len(named)
    kept = [item for item in batch if item[2]["id"] not in named]
    cited = {ref for _, kind, data, _ in kept if kind == "node"
             for ref in [*data.get("sourceMessageIds", []), data.get("supersedesId"),
                         data.get("parentId")] if ref}
    gone = named | set().union(*(store.erasure.erased(sorted(cited))
                                 for store in stores.values())) if cited else named
    for _, kind, data, _ in kept:
        if kind == "node" and gone:
            data["sourceMessageIds"] = [m for m in data.get("sourceMessageIds", [])
                                        if m not in gone and m.rpartition(":")[2] not in gone]
            for link in ("supersedesId", "parentId"):
                if data.get(link) in gone:
                    data.pop(link)
    return kept


def _checked_copy(model, where: str, copy, expected, owner: str, index) -> dict | None:
    """The copy as a node, or None where there is nothing more to check (erased, a node
    staged as it is, or no copy: a hard delete's mode); Rejected naming the event and the
    field where it is not one this import may hold."""
    if not isinstance(copy, dict) or "id" not in copy:
        return None
    if expected is not None and copy["id"] != expected:
        raise Rejected(f"{where} names another node than the event's",
                       "an event records its own node only")
    if (copy.get("erased") is True and set(copy) == {"id", "erased"}) or \
            index.stages_as_is(copy):
        return None
    from pydantic import ValidationError

    from ..models import validation_message
    from ..policy.nul import refuse_nul
    try:
        node = model.model_validate(copy).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise Rejected(f"{where} {validation_message(exc)}", "fix that line") from None
    if node["scope"] == "global":
        raise Rejected(f"{where} is in global scope, which cannot be imported",
                       "global memory ships with ekko-mem")
    if node.get("userId") not in (None, owner):
        raise Rejected(f"{where} userId is not the current user ({owner})",
                       "a file can only bring back your own history")
    refuse_nul(node, where)
    return node
