"""SqliteMemoryStore: one memory db, its parts composed."""
from __future__ import annotations

import os
from functools import cached_property

from .connection import Connection
from .messages import MessageStore
from .nodes import NodeStore

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .compaction import AuditCompaction
    from .erasure import ErasureStore
    from .graph import GraphStore
    from .maintenance import HealthChecks
    from .recall import RecallStore
    from .summaries import SummaryStore
    from .transfer import TransferStore
    from .vectors import VectorStore


class SqliteMemoryStore:
    """One memory db: its schema and ids here, each area's reads and writes in a part."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self.path = db.path
        self.read_only_reason: str | None = None
        self.messages = MessageStore(db)
        self.nodes = NodeStore(db)  # nodes and their audit events

    # The parts a command may not need, each built (and its module imported) on first use: a
    # free-text `remember` in a git hook loads no export, recall or health checks.
    @cached_property
    def summaries(self) -> SummaryStore:
        """Summaries, extraction marks and jobs, context runs."""
        from .summaries import SummaryStore
        return SummaryStore(self.db)

    @cached_property
    def recall(self) -> RecallStore:
        from .recall import RecallStore
        return RecallStore(self.db)

    @cached_property
    def transfer(self) -> TransferStore:
        from .transfer import TransferStore
        return TransferStore(self.db)

    @cached_property
    def erasure(self) -> ErasureStore:
        from .erasure import ErasureStore
        return ErasureStore(self.db)

    @cached_property
    def graph(self) -> GraphStore:
        """Entities and the edges between them."""
        from .graph import GraphStore
        return GraphStore(self.db)

    @cached_property
    def health(self) -> HealthChecks:
        """doctor's checks."""
        from .maintenance import HealthChecks
        return HealthChecks(self.db)

    @cached_property
    def compaction(self) -> AuditCompaction:
        """Old audit copies stored compactly, for doctor."""
        from .compaction import AuditCompaction
        return AuditCompaction(self.db)

    @cached_property
    def vectors(self) -> VectorStore:
        """Semantic recall's embeddings, in blocks."""
        from .vectors import VectorStore
        return VectorStore(self.db)

    def close(self) -> None:
        self.db.close()

    # -- schema ------------------------------------------------------------------------------
    def schema_version(self) -> int:
        return self.db.one("PRAGMA user_version")[0]

    def record_migration(self, number: int, name: str) -> None:
        self.db.execute("create table if not exists memory_schema_migrations ("
                        "version integer primary key, name text not null,"
                        " applied_at text not null)")
        self.db.execute("insert into memory_schema_migrations values"
                        " (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", (number, name))
        self.db.execute(f"PRAGMA user_version = {int(number)}")

    def applied_migrations(self) -> list[dict]:
        exists = self.db.one("select 1 from sqlite_master where name='memory_schema_migrations'")
        if not exists:
            return []
        rows = self.db.all("select version, name, applied_at from memory_schema_migrations"
                           " order by version")
        return [{"version": r[0], "name": r[1], "appliedAt": r[2]} for r in rows]

    def meta(self, key: str) -> str | None:
        row = self.db.one("select value from ekko_meta where key = ?", (key,))
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("insert or replace into ekko_meta values (?, ?)", (key, value))

    def store_id(self) -> str:
        """A stable id for this db, created once: the workspaceId of its nodes."""
        found = self.meta("store_id")
        if found is None:
            with self.db.atomic():
                found = self.meta("store_id")
                if found is None:
                    found = "ws_" + os.urandom(8).hex()
                    self.set_meta("store_id", found)
        return found

    # -- ids ---------------------------------------------------------------------------------
    def ids_with_prefix(self, kind: str, prefix: str, limit: int = 5) -> list[str]:
        """Ids of `kind` (node, message, summary, event, context) starting with `prefix`, as a
        range so the primary key index serves it."""
        table = {"node": "memory_nodes", "message": "memory_messages",
                 "summary": "memory_summaries", "event": "memory_audit_events",
                 "context": "memory_context_runs"}[kind]
        rows = self.db.all(f"select id from {table} where id >= ? and id < ? order by id"
                           " limit ?", (prefix, prefix + "\uffff", limit))
        return [r[0] for r in rows]

    # -- maintenance -------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Fold the WAL into the db and truncate it, so deleted text leaves the WAL file too."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
