"""The audit trail: every change to a memory node is recorded with it, in its db, and
undone from it.

An event is history, never a template for a write: what an undo would put back (an event may
come from a file, or from an older version that checked less) goes through the rules
`remember` and `edit` keep (the node's shape and ranges, its scope and owner, the controlled
keys, sizes, NUL, sources, secrets), and through the chain's own: one active version per
chain, and a version once replaced comes back only by undoing what replaced it."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import new_id
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .drafts import Drafts
    from .graph import Graph

NOTHING = "nothing was changed"
CHAIN_LIMIT = 10_000  # versions a chain walk reads at most (a cycle stored by an older version)


class AuditLog(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, graph: Graph) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.graph = graph

    def record(self, store, kind, node, actor, reason, *, before=None, after=None,
               notes=None) -> str:
        """Add one event to `store` (inside the caller's transaction); returns its id."""
        event = self._event(store, kind, node, actor, reason, before, after, notes)
        store.nodes.add_event(event)
        return event["id"]

    def record_all(self, store, kind, nodes: list[dict], actor, reason, *, after_of) -> None:
        """record() for many nodes at once, in one statement; `after_of(node)` is each
        event's `after`, which the caller settles (add_events compares nothing)."""
        store.nodes.add_events([self._event(store, kind, node, actor, reason, None,
                                            after_of(node), None) for node in nodes])

    def _event(self, store, kind, node, actor, reason, before, after, notes) -> dict:
        if node.get("scope") == "user" and node.get("sourceMessageIds"):
            # Where a later purge of its sources must look (none outside any workspace);
            # written with the node, so a refused write leaves no trace of it.
            workspace = self.stores.workspace_or_none()
            if workspace is not None:
                store.erasure.note_workspace(workspace.store_id(), self.stores.root,
                                             self.env.now_iso())
        payload = {"before": before, "after": after}
        if notes:
            payload["notes"] = notes
        return {"id": new_id("event"), "eventType": kind, "nodeId": node["id"],
                "sessionId": node.get("sessionId"), "workspaceId": node.get("workspaceId"),
                "userId": node.get("userId"), "actor": actor, "reason": reason or kind,
                "payload": payload, "createdAt": self.env.now_iso()}

    # -- undo ---------------------------------------------------------------------------------
    def undo(self, event: dict, store, *, reason: str = "", actor: str = "user") -> dict:
        """Reverse one change as a new audited change, in `event`'s db. An event already
        undone is left as it is, and the answer names the undo in force (alreadyUndone);
        undoing an undo makes the change it reversed again."""
        with store.db.atomic():  # read under the write lock: two undos at once make one
            # and the event read before the lock may have been paired with an older row
            event = store.nodes.get_event(event["id"]) or event
            if not event.get("nodeId"):  # a purge of messages: about no memory
                raise _cannot_undo(event)
            done_by = self._undone_by(event, self._undos(store, event["nodeId"]))
            if done_by is not None:
                return {"undoneEventId": event["id"], "eventId": done_by, "changedIds": [],
                        "alreadyUndone": True}
            now = self.env.now_iso()
            if event["eventType"] == "undo":
                changed, current, restored = self._reverse_undo(store, event, now)
            else:
                changed, current, restored = self._reverse_change(store, event, now)
            self._one_version(store, event, current, restored)
            self._slot_free(store, event, restored, now)
            _graph_follows(store, current, restored["status"], now)
            store.nodes.replace_node(restored)
            if restored["status"] == current["status"] == "active" and any(
                    current.get(k) != restored.get(k) for k in ("title", "content", "entities")):
                self.graph.reread(store, restored, now)  # an edit in place, taken back
            undo_id = self.record(store, "undo", restored, actor,
                                  reason or f"undo {event['id']}", before=current,
                                  after={"undoneEventId": event["id"], "before": current,
                                         "after": restored})
        return {"undoneEventId": event["id"], "eventId": undo_id, "changedIds": changed}

    def _slot_free(self, store, event: dict, node: dict, now: str) -> None:
        """An undo that brings back an active value of a single-valued key must find its slot
        free: a value remembered since (after a forget, say) holds it, and one key has one
        active value (the write policy, which `remember` and `import` keep too)."""
        key = node.get("key")
        if node.get("status") != "active" or not key \
                or not self.drafts.schema.is_single_valued(key):
            return
        from .nodes import kin_filter
        rivals = [n for n in store.nodes.find_nodes({**kin_filter(node, now), "key": key},
                                                    limit=20) if n["id"] != node["id"]]
        if rivals:
            raise Rejected(f"undoing {event['id']} would make a second active value of the"
                           f" single-valued key '{key}' ({rivals[0]['id']} holds it)",
                           f"forget {rivals[0]['id']} first, then undo again")

    def _one_version(self, store, event: dict, current: dict, node: dict) -> None:
        """A chain keeps one active version, and a version another replaced stays replaced:
        only the undo of that supersede brings it back (a restore of an older state of it
        would fork the chain, or leave two versions in force)."""
        successors = store.nodes.successors(node["id"])
        if node["status"] == "superseded" and not successors:
            raise Rejected(f"undoing {event['id']} would mark {node['id']} superseded, but no"
                           " newer version replaces it", NOTHING)
        if current["status"] == "superseded" and node["status"] != "superseded":
            holder = _active_version(store, node["id"], {node["id"]}) or (
                successors[0]["id"] if successors else None)
            if holder is None:
                raise Rejected(f"undoing {event['id']} would make {node['id']}"
                               f" {node['status']} again, but it is superseded", NOTHING)
            raise Rejected(f"undoing {event['id']} would make {node['id']} {node['status']}"
                           f" again, but {holder} replaced it",
                           "to find that change, and undo it instead",
                           step=Step(f"node={holder}", command="audit"))
        if node["status"] == "active":
            _alone_in_chain(store, event, node["id"], {node["id"]})

    @staticmethod
    def _undos(store, node_id: str) -> dict[str, list[dict]]:
        """The node's undo events by the event each undid, newest first."""
        found: dict[str, list[dict]] = {}
        for event in store.nodes.list_events(node_id=node_id, limit=1_000_000):
            target = ((event.get("payload") or {}).get("after") or {}).get("undoneEventId")
            if event["eventType"] == "undo" and target:
                found.setdefault(target, []).append(event)
        return found

    def _undone_by(self, event: dict, undos: dict[str, list[dict]],
                   seen: frozenset = frozenset()) -> str | None:
        """The undo in force over `event`: its latest undo that was not undone in turn. (Undos
        that undo each other in a loop, which only a forged history holds, end the walk.)"""
        if event["id"] in seen:
            return None
        for undo in undos.get(event["id"], []):
            if self._undone_by(undo, undos, seen | {event["id"]}) is None:
                return undo["id"]
        return None

    def _reverse_change(self, store, event: dict, now: str) -> tuple[list, dict, dict]:
        kind, payload = event["eventType"], event.get("payload") or {}
        before, after = payload.get("before"), payload.get("after")
        hard = kind == "delete" and (after or {}).get("mode") == "hard"
        # An entity's kind is set again by naming it again (remember --entity NAME:KIND).
        if kind in ("purge", "entity") or hard or (
                before is None and kind not in ("create", "import")):
            raise _cannot_undo(event)
        current = _current(store, event)
        changed = [current["id"]]
        if kind in ("create", "import"):
            _require_status(current, "active")
            return changed, current, {**current, "status": "deleted", "updatedAt": now}
        if kind == "supersede":
            _require_status(current, "active")
            old_id = before.get("id") if isinstance(before, dict) else None
            _replaced(event, current, old_id)
            old = store.nodes.get_node(old_id)
            if old is None or old["status"] != "superseded":
                raise Rejected(f"{old_id} is no longer superseded", "nothing to undo")
            _graph_follows(store, old, "active", now)
            store.nodes.set_status(old["id"], "active", now)
            _alone_in_chain(store, event, old["id"], {old["id"], current["id"]})
            changed.append(old["id"])
            return changed, current, {**current, "status": "deleted", "updatedAt": now}
        # update, refresh, expire, delete: the node as it was
        return changed, current, self._restorable(store, event, current, before, now)

    def _reverse_undo(self, store, undo: dict, now: str) -> tuple[list, dict, dict]:
        """Make again the change `undo` reversed: the node back as the undo found it."""
        record = (undo.get("payload") or {}).get("after") or {}
        found, left = record.get("before"), record.get("after")
        if not (isinstance(found, dict) and isinstance(left, dict)) or \
                found.get("erased") or left.get("erased"):
            raise Rejected(f"{undo['id']} cannot be undone: its record was erased",
                           "nothing to redo")
        current = _current(store, undo)
        _require_status(current, left.get("status"))
        changed = [current["id"]]
        root, depth = self._root(store, undo)
        if root["eventType"] == "supersede":
            # An odd number of undos put the old version back in force; one more retires it.
            old_id = ((root.get("payload") or {}).get("before") or {}).get("id")
            _replaced(undo, current, old_id)
            now_is, becomes = ("active", "superseded") if depth % 2 else ("superseded",
                                                                           "active")
            old = store.nodes.get_node(old_id) if old_id else None
            if old is None or old["status"] != now_is:
                raise Rejected(f"{old_id or 'the older version'} is no longer {now_is}",
                               "nothing to redo")
            _graph_follows(store, old, becomes, now)
            store.nodes.set_status(old["id"], becomes, now)
            if becomes == "active":
                _alone_in_chain(store, undo, old["id"], {old["id"], current["id"]})
            changed.append(old["id"])
        return changed, current, self._restorable(store, undo, current, found, now)

    @staticmethod
    def _root(store, undo: dict) -> tuple[dict, int]:
        """The first change in a chain of undos, and how many undos stand on it."""
        event, depth, seen = undo, 0, set()
        while event["eventType"] == "undo":
            target = ((event.get("payload") or {}).get("after") or {}).get("undoneEventId")
            if target in seen:  # only a forged history holds undos that undo each other
                raise Rejected(f"{undo['id']} is one of undos that undo each other in a loop",
                               "nothing to redo")
            found = store.nodes.get_event(target) if target else None
            if found is None:
                raise NotFound(f"the change {undo['id']} undid is no longer recorded",
                               "nothing to redo")
            seen.add(target)
            event, depth = found, depth + 1
        return event, depth

    # -- what an undo may put back: the write policy, as remember and edit apply it ------------
    def _restorable(self, store, event: dict, current: dict, record, now: str) -> dict:
        """The node `record` describes, as the undo would write it, or Rejected (exit 4)."""
        if isinstance(record, dict) and record.get("erased"):
            raise Rejected(f"{event['id']} cannot be undone: its record was erased",
                           "nothing to undo")
        if not isinstance(record, dict):
            raise Rejected(f"{event['id']} records no state of its memory to put back",
                           NOTHING)
        if record.get("id") != current["id"]:
            raise Rejected(f"{event['id']} records another memory than {current['id']}",
                           f"an undo puts back its own memory only; {NOTHING}")
        node = {**record, "updatedAt": now}
        head = f"undoing {event['id']} would write"
        _valid(head, node)
        self._owned(head, current, node)
        self._fits_schema(head, node)
        _links_kept(store, head, current, node)
        self._sources_known(store, head, current, node)
        self._no_new_secret(head, current, node)
        return node

    def _owned(self, head: str, current: dict, node: dict) -> None:
        """An undo never moves a memory: the same scope, owner, session and predecessor."""
        fields = ["scope", "userId", "workspaceId", "supersedesId"]
        if node["scope"] == "session":
            fields.append("sessionId")
        for field in fields:
            if node.get(field) != current.get(field):
                raise Rejected(f"{head} another {field} than the memory's",
                               f"an undo never moves a memory; {NOTHING}")
        if node["scope"] == "global":
            raise Rejected(f"{head} global scope", "global memory ships with ekko-mem")
        if node["scope"] == "user" and node.get("userId") != self.env.user_id():
            raise Rejected(f"{head} another user's memory ({self.env.user_id()} is the"
                           " current user)", NOTHING)

    def _fits_schema(self, head: str, node: dict) -> None:
        """The controlled keys and value shapes, and the size limits, as `remember` checks."""
        from ..policy.limits import check_size
        for field, setting in (("title", "limits.title"), ("content", "limits.content")):
            try:
                check_size(f"the {field}", node[field], self.config.get(setting), setting,
                           instead="edit the memory instead")
            except Rejected as exc:
                raise Rejected(f"{head} a memory whose {exc.message}", exc.reason_for_step
                               .replace("nothing was written", NOTHING)) from None
        if node.get("key") is None:
            if node.get("valueJson") is not None:
                raise Rejected(f"{head} a value without a key", NOTHING)
            return
        schema = self.drafts.schema
        rule = schema.rule_for(node["domain"], node["categoryPath"], node["type"])
        problem = self.drafts.check_key(node, rule)  # the value normalised as remember does
        # An agent's memory whose key the schema does not know is kept in session scope.
        demoted = node["scope"] == "session" and node.get("actor") != "user"
        if problem is not None and not demoted:
            raise Rejected(f"{head} a memory whose {problem[0]}", f"{problem[1]}; {NOTHING}")

    def _sources_known(self, store, head: str, current: dict, node: dict) -> None:
        """A source the memory does not cite now must be in a log the memory can cite."""
        cited = set(current.get("sourceMessageIds") or [])
        new = [ref for ref in node.get("sourceMessageIds") or [] if ref not in cited]
        if not new:
            return
        from ..store.refs import split_ref
        workspace = self.stores.workspace_or_none()
        here = workspace.store_id() if workspace is not None else None
        parts = [(ref, *split_ref(ref)) for ref in new]
        logged = workspace.messages.message_ids_exist(
            [mid for _, where, mid in parts if where in (None, here)]) if workspace else set()
        if node["scope"] == "user":
            logged |= store.messages.message_ids_exist(
                [mid for _, where, mid in parts if where is None])
        rest = [ref for ref, where, mid in parts if where not in (None, here) or
                mid not in logged]
        carried = store.nodes.cited_sources(rest) if node["scope"] == "user" else set()
        for ref in rest:
            if ref not in carried:
                raise Rejected(f"{head} a source message that is not in the log ({ref})",
                               NOTHING)

    def _no_new_secret(self, head: str, current: dict, node: dict) -> None:
        """A credential (or, in lasting scopes, personal data) the memory does not hold now
        needs the confirmation `remember` asks for, which an undo cannot give."""
        policy = self.config.get("sensitive.policy")
        if policy == "allow":
            return
        from ..policy.sensitive import describe
        held = {text for text, _ in _sensitive(current)}
        new = [finding for text, finding in _sensitive(node) if text not in held]
        if not new:
            return
        what = describe(new)
        if policy == "refuse":
            raise Rejected(f"{head} {what}; sensitive.policy is 'refuse'", NOTHING)
        raise Rejected(f"{head} {what} that the memory does not hold now, and an undo cannot"
                       " confirm it", f"remember it again, confirmed, if it is meant; {NOTHING}")


def _graph_follows(store, node: dict, status: str, now: str) -> None:
    """The graph's edges from `node` (as it is before the undo writes it) follow it to
    `status`, in the undo's transaction. A memory leaving force retires its live edges; one
    coming back revives those it lost when it left, which were retired at the moment its
    status changed: its updatedAt since then. A memory the graph has not read yet has no
    edges, and is read with the status it has by then."""
    if node["status"] == "active" and status != "active":
        store.graph.retire_from([node["id"]], now)
    elif node["status"] != "active" and status == "active":
        store.graph.revive_from([node["id"]], node["updatedAt"])


def _valid(head: str, node: dict) -> None:
    """The node's shape: every field of the right type, ranges kept, no NUL byte."""
    from pydantic import ValidationError

    from ..models import MemoryNode, validation_message
    from ..policy.nul import holds_nul
    try:
        MemoryNode.model_validate(node)
    except ValidationError as exc:
        raise Rejected(f"{head} a memory that is not valid ({validation_message(exc)})",
                       NOTHING) from None
    for field, value in node.items():
        if holds_nul(value):
            raise Rejected(f"{head} a NUL byte into {field}", NOTHING)


def _links_kept(store, head: str, current: dict, node: dict) -> None:
    parent = node.get("parentId")
    if parent and parent != current.get("parentId") and (
            parent == node["id"] or store.nodes.get_node(parent) is None):
        raise Rejected(f"{head} a parentId that names no other memory here", NOTHING)


def _sensitive(node: dict) -> list[tuple[str, dict]]:
    """(matched text, finding) for what `remember` would ask about in `node`."""
    from ..canonical import canonical_json
    from ..policy.sensitive import SECRET_KINDS, find_sensitive
    text = "\n".join([node["title"], node["content"], canonical_json(node.get("valueJson")),
                      node["domain"], "/".join(node["categoryPath"]),
                      *(node.get("tags") or []), *(node.get("entities") or [])])
    lasting = node["scope"] in ("user", "workspace")
    return [(text[f["start"]:f["end"]], f) for f in find_sensitive(text)
            if lasting or f["kind"] in SECRET_KINDS]


def _chain(store, node_id: str) -> list[dict]:
    """The versions linked to `node_id` by supersedes, either way, as they are now: a walk
    with a visited set and a bound, so a cycle an older version stored ends it."""
    seen: dict[str, dict] = {}
    todo = [node_id]
    while todo and len(seen) < CHAIN_LIMIT:
        here = todo.pop()
        if here in seen:
            continue
        node = store.nodes.get_node(here)
        if node is None:
            continue
        seen[here] = node
        if node.get("supersedesId"):
            todo.append(node["supersedesId"])
        todo.extend(n["id"] for n in store.nodes.successors(here))
    return list(seen.values())


def _active_version(store, node_id: str, leaving: set[str]) -> str | None:
    """An active version in `node_id`'s chain, other than those in `leaving`."""
    return next((n["id"] for n in _chain(store, node_id)
                 if n["status"] == "active" and n["id"] not in leaving), None)


def _alone_in_chain(store, event: dict, node_id: str, leaving: set[str]) -> None:
    rival = _active_version(store, node_id, leaving)
    if rival is not None:
        raise Rejected(f"undoing {event['id']} would make {node_id} active beside {rival},"
                       f" another version in force in the same chain",
                       f"forget {rival} first, then undo again")


def _replaced(event: dict, current: dict, old_id) -> None:
    """A supersede undone or made again is the one the chain records: the node's own
    predecessor, not any node an event names."""
    if not old_id or current.get("supersedesId") != old_id:
        raise Rejected(f"{event['id']} names a predecessor that {current['id']} does not"
                       " supersede", f"an undo follows the chain as stored; {NOTHING}")


def _current(store, event: dict) -> dict:
    current = store.nodes.get_node(event["nodeId"])
    if current is None:
        raise NotFound(f"node {event['nodeId']} no longer exists", "nothing to undo")
    return current


def _require_status(node: dict, status) -> None:
    if node["status"] != status:
        raise Rejected(f"{node['id']} is {node['status']} now, not {status}",
                       "to find the later change, and undo it first",
                       step=Step(f"node={node['id']}", command="audit"))


def _cannot_undo(event: dict) -> Rejected:
    return Rejected(f"{event['id']} ({event['eventType']}) cannot be undone",
                    "only create, import, update, refresh, supersede, expire, soft delete and"
                    " undo can")
