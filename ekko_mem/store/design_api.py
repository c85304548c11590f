"""The design's coarse MemoryStore operations on top of the typed reads and writes.

Each runs in one transaction. They do no policy (scope, schema, audit reasons): that is the
service's job; a caller that wants checked writes goes through MemoryService.
"""
from __future__ import annotations

from . import fts


class DesignStoreApi:
    db: object

    def append_message(self, message: dict) -> None:
        self.append_messages([message])

    def upsert_node(self, node: dict) -> None:
        with self.db.atomic():
            if self.get_node(node["id"]) is None:
                self.insert_node(node)
            else:
                self.replace_node(node)

    def supersede_node(self, old_node_id: str, new_node: dict) -> None:
        with self.db.atomic():
            self.set_status(old_node_id, "superseded", new_node["createdAt"])
            self.insert_node({**new_node, "supersedesId": old_node_id})

    def delete_node(self, node_id: str, mode: str, reason: str) -> None:
        if mode not in ("soft", "hard"):
            raise ValueError(f"mode must be soft or hard, not {mode!r}")
        with self.db.atomic():
            if mode == "hard":
                self.hard_delete_node(node_id)
                self.scrub_events(node_id)
            else:
                self.db.execute("update memory_nodes set status = 'deleted',"
                                " updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
                                " where id = ?", (node_id,))
        if mode == "hard":
            self.optimize_fts()
            self.checkpoint()

    def list_active_nodes(self, *, user_id=None, session_id=None, workspace_id=None,
                          domain=None, category_path=None, types=None, limit=50) -> list[dict]:
        return self.find_nodes({"userId": user_id, "sessionId": session_id,
                                "workspaceId": workspace_id, "domain": domain,
                                "categoryPrefix": category_path, "types": types},
                               limit=limit)

    def search_nodes_text(self, query: str, *, user_id=None, session_id=None,
                          workspace_id=None, domain=None, tags=None, limit=20) -> list[dict]:
        expression = fts.match_all(query)
        if expression is None:
            return []
        hits = self.search_nodes(expression, {"userId": user_id, "sessionId": session_id,
                                              "workspaceId": workspace_id, "domain": domain,
                                              "tags": tags}, limit=limit)
        return [node for node, _ in hits]
