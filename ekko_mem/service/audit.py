"""The audit trail: every change to a memory node is recorded with it, in its db, and
undone from it."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import new_id
from .stores import UseCase


class AuditLog(UseCase):
    needs = ("drafts",)

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
            self._slot_free(store, event, restored, now)
            store.nodes.replace_node(restored)
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

    @staticmethod
    def _undos(store, node_id: str) -> dict[str, list[dict]]:
        """The node's undo events by the event each undid, newest first."""
        found: dict[str, list[dict]] = {}
        for event in store.nodes.list_events(node_id=node_id, limit=1_000_000):
            target = ((event.get("payload") or {}).get("after") or {}).get("undoneEventId")
            if event["eventType"] == "undo" and target:
                found.setdefault(target, []).append(event)
        return found

    def _undone_by(self, event: dict, undos: dict[str, list[dict]]) -> str | None:
        """The undo in force over `event`: its latest undo that was not undone in turn."""
        for undo in undos.get(event["id"], []):
            if self._undone_by(undo, undos) is None:
                return undo["id"]
        return None

    def _reverse_change(self, store, event: dict, now: str) -> tuple[list, dict, dict]:
        kind, payload = event["eventType"], event.get("payload") or {}
        before, after = payload.get("before"), payload.get("after")
        hard = kind == "delete" and (after or {}).get("mode") == "hard"
        if kind == "purge" or hard or (before is None and kind not in ("create", "import")):
            raise _cannot_undo(event)
        current = _current(store, event)
        changed = [current["id"]]
        if kind in ("create", "import"):
            _require_status(current, "active")
            return changed, current, {**current, "status": "deleted", "updatedAt": now}
        if kind == "supersede":
            _require_status(current, "active")
            old = store.nodes.get_node(before["id"])
            if old is None or old["status"] != "superseded":
                raise Rejected(f"{before['id']} is no longer superseded", "nothing to undo")
            store.nodes.set_status(old["id"], "active", now)
            changed.append(old["id"])
            return changed, current, {**current, "status": "deleted", "updatedAt": now}
        # update, refresh, expire, delete: the node as it was
        return changed, current, {**before, "updatedAt": now}

    def _reverse_undo(self, store, undo: dict, now: str) -> tuple[list, dict, dict]:
        """Make again the change `undo` reversed: the node back as the undo found it."""
        record = (undo.get("payload") or {}).get("after") or {}
        found, left = record.get("before"), record.get("after")
        if not (isinstance(found, dict) and isinstance(left, dict)) or \
                found.get("erased") or left.get("erased"):
            raise Rejected(f"{undo['id']} cannot be undone: its record was erased",
                           "nothing to redo")
        current = _current(store, undo)
        _require_status(current, left["status"])
        changed = [current["id"]]
        root, depth = self._root(store, undo)
        if root["eventType"] == "supersede":
            # An odd number of undos put the old version back in force; one more retires it.
            old_id = ((root.get("payload") or {}).get("before") or {}).get("id")
            now_is, becomes = ("active", "superseded") if depth % 2 else ("superseded",
                                                                           "active")
            old = store.nodes.get_node(old_id) if old_id else None
            if old is None or old["status"] != now_is:
                raise Rejected(f"{old_id or 'the older version'} is no longer {now_is}",
                               "nothing to redo")
            store.nodes.set_status(old_id, becomes, now)
            changed.append(old_id)
        return changed, current, {**found, "updatedAt": now}

    @staticmethod
    def _root(store, undo: dict) -> tuple[dict, int]:
        """The first change in a chain of undos, and how many undos stand on it."""
        event, depth = undo, 0
        while event["eventType"] == "undo":
            target = ((event.get("payload") or {}).get("after") or {}).get("undoneEventId")
            found = store.nodes.get_event(target) if target else None
            if found is None:
                raise NotFound(f"the change {undo['id']} undid is no longer recorded",
                               "nothing to redo")
            event, depth = found, depth + 1
        return event, depth


def _current(store, event: dict) -> dict:
    current = store.nodes.get_node(event["nodeId"])
    if current is None:
        raise NotFound(f"node {event['nodeId']} no longer exists", "nothing to undo")
    return current


def _require_status(node: dict, status: str) -> None:
    if node["status"] != status:
        raise Rejected(f"{node['id']} is {node['status']} now, not {status}",
                       "to find the later change, and undo it first",
                       step=Step(command="audit", target=node["id"]))


def _cannot_undo(event: dict) -> Rejected:
    return Rejected(f"{event['id']} ({event['eventType']}) cannot be undone",
                    "only create, import, update, refresh, supersede, expire, soft delete and"
                    " undo can")
