"""The audit trail's writer: every change to a memory node is recorded with it, in its db."""
from __future__ import annotations

from ..ids import new_id
from .stores import UseCase


class AuditLog(UseCase):
    def record(self, store, kind, node, actor, reason, *, before=None, after=None,
               notes=None) -> str:
        """Add one event to `store` (inside the caller's transaction); returns its id."""
        event_id = new_id("event")
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
        store.nodes.add_event({"id": event_id, "eventType": kind, "nodeId": node["id"],
                               "sessionId": node.get("sessionId"),
                               "workspaceId": node.get("workspaceId"),
                               "userId": node.get("userId"), "actor": actor,
                               "reason": reason or kind, "payload": payload,
                               "createdAt": self.env.now_iso()})
        return event_id
