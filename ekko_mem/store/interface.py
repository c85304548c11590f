"""The design's MemoryStore interface (synchronous), which SqliteMemoryStore implements.

Imported for type checking and by tests, never on the command-line start-up path (typing
costs ~2 ms). The service uses the finer-grained methods of SqliteMemoryStore inside its own
transactions; these are the design's coarse operations, each one transaction.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class MemoryStore(Protocol):
    def append_message(self, message: dict) -> None: ...

    def list_recent_messages(self, session_id: str, limit: int) -> list[dict]: ...

    def append_summary(self, summary: dict) -> None: ...

    def get_latest_summary(self, session_id: str) -> dict | None: ...

    def upsert_node(self, node: dict) -> None: ...

    def supersede_node(self, old_node_id: str, new_node: dict) -> None: ...

    def delete_node(self, node_id: str, mode: str, reason: str) -> None: ...

    def list_active_nodes(self, *, user_id: str | None = None, session_id: str | None = None,
                          workspace_id: str | None = None, domain: str | None = None,
                          category_path: list[str] | None = None,
                          types: list[str] | None = None, limit: int = 50) -> list[dict]: ...

    def search_nodes_text(self, query: str, *, user_id: str | None = None,
                          session_id: str | None = None, workspace_id: str | None = None,
                          domain: str | None = None, tags: list[str] | None = None,
                          limit: int = 20) -> list[dict]: ...
