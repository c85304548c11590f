"""Consistency checks for `doctor`: each returns what is wrong, as counts or ids.

Rows are fetched through `_rows`, which also translates errors met while stepping through a
result: a damaged page is often found mid-scan, after `execute` has returned.
"""
from __future__ import annotations

import functools
import json
import sqlite3

from ..errors import StoreUnavailable
from .connection import Part, translate

_WAL_MAGIC = (0x377F0682, 0x377F0683)
_WAL_FORMAT = 3007000
_SQLITE_CORRUPT = 11


def wal_header_ok(path) -> bool:
    """Whether a -wal file starts with SQLite's write-ahead log header. An empty file is fine:
    SQLite leaves one behind after a checkpoint."""
    with open(path, "rb") as handle:
        head = handle.read(32)
    if not head:
        return True
    if len(head) < 32:
        return False
    magic, version = int.from_bytes(head[:4], "big"), int.from_bytes(head[4:8], "big")
    return magic in _WAL_MAGIC and version == _WAL_FORMAT


def is_corrupt(exc: BaseException | None) -> bool:
    """SQLITE_CORRUPT (damaged pages, or an FTS index that fails its own check)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF == _SQLITE_CORRUPT
    return isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in str(exc) or "vtable constructor failed" in str(exc))


@functools.lru_cache(maxsize=1)
def reference_schema() -> frozenset:
    """(type, name) of every table, index and trigger the migrations create, read from a
    freshly migrated in-memory db so the list never drifts from the migrations."""
    from . import SqliteMemoryStore, apply_migrations
    from .connection import Connection
    store = SqliteMemoryStore(Connection(sqlite3.connect(":memory:", isolation_level=None),
                                         ":memory:"))
    try:
        apply_migrations(store)
        return frozenset(store.health.schema_objects())
    finally:
        store.close()


class HealthChecks(Part):
    def _rows(self, sql: str, params=()) -> list:
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.db.path) from exc

    def _count(self, sql: str) -> int:
        return self._rows(sql)[0][0]

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """PRAGMA integrity_check, one line per problem found; [] when the file is sound."""
        lines: list[str] = []
        for (text,) in self._rows(f"PRAGMA integrity_check({int(limit)})"):
            lines += [line.strip() for line in str(text).splitlines()
                      if line.strip() and not line.startswith("***")]
        return [] if lines == ["ok"] else lines

    def schema_objects(self) -> set[tuple[str, str]]:
        return {(kind, name) for kind, name in self._rows(
            "select type, name from sqlite_master where type in ('table', 'index', 'trigger')"
            " and name not like 'sqlite\\_%' escape '\\'")}

    def missing_schema_objects(self) -> list[str]:
        """What the migrations create that this db lacks, as 'table name' and the like."""
        return sorted(f"{kind} {name}" for kind, name in reference_schema() - self.schema_objects())

    def fts_out_of_step(self) -> dict:
        """Rows whose FTS entry is missing or left over (contentless FTS keeps a docsize row
        per indexed rowid)."""
        out = {}
        for table in ("memory_nodes", "memory_messages"):
            shadow = f"{table}_fts_docsize"
            missing = self._count(f"select count(*) from {table} where rowid not in"
                                  f" (select id from {shadow})")
            extra = self._count(f"select count(*) from {shadow} where id not in"
                                f" (select rowid from {table})")
            out[table] = {"missing": missing, "extra": extra}
        return out

    def fts_index_ok(self) -> bool:
        return not self.fts_damaged()

    def fts_damaged(self, self_check: bool = True) -> dict[str, str]:
        """{index: what is wrong} for each full-text index found damaged: one FTS5 cannot
        open (its own records corrupt), or, with `self_check`, one failing FTS5's integrity
        check, which is a write. Any other failure (busy, read-only, I/O) is raised, since it
        says nothing about the index."""
        damaged = {}
        for table in ("memory_nodes_fts", "memory_messages_fts"):
            probes = [(f"select rowid from {table} limit 0", "cannot be opened")]
            if self_check:
                probes.append((f"insert into {table} ({table}) values ('integrity-check')",
                               "fails its integrity check"))
            problem = next((p for sql, p in probes if self._corrupt(sql)), None)
            if problem:
                damaged[table] = problem
        return damaged

    def _corrupt(self, sql: str) -> bool:
        """Whether `sql` fails as SQLITE_CORRUPT; any other failure is raised."""
        try:
            self.db.execute(sql)
        except StoreUnavailable as exc:
            if is_corrupt(exc.__cause__):
                return True
            raise
        return False

    def broken_chains(self) -> dict:
        """Supersede links that point nowhere, superseded nodes with no successor, and nodes
        that are active together although one superseded the other."""
        dangling = [r[0] for r in self._rows(
            "select id from memory_nodes n where supersedes_id is not null and not exists"
            " (select 1 from memory_nodes o where o.id = n.supersedes_id)")]
        orphaned = [r[0] for r in self._rows(
            "select id from memory_nodes o where status = 'superseded' and not exists"
            " (select 1 from memory_nodes n where n.supersedes_id = o.id)")]
        double = [r[0] for r in self._rows(
            "select o.id from memory_nodes o join memory_nodes n on n.supersedes_id = o.id"
            " where o.status = 'active' and n.status = 'active'")]
        return {"dangling": dangling, "superseded_without_successor": orphaned,
                "both_active": double}

    def source_citations(self) -> list[tuple[str, str]]:
        """(node id, source reference) for every message a node cites."""
        return [(r[0], r[1]) for r in self._rows(
            "select n.id, j.value from memory_nodes n, json_each(n.source_message_ids_json) j")]

    def summaries_missing_messages(self) -> list[str]:
        rows = self._rows(
            "select s.id from memory_summaries s where not exists (select 1 from"
            " memory_messages m where m.id = s.from_message_id) or not exists (select 1 from"
            " memory_messages m where m.id = s.to_message_id)")
        return [r[0] for r in rows]

    def named_by_runs(self, ids: list[str]) -> set[str]:
        """The ids among `ids` a context run names where erasure looks for them: in the ids it
        used, and in its ranking as an item's key or the id of one it left out."""
        if not ids:
            return set()
        wanted = json.dumps(list(ids))
        return {r[0] for r in self._rows(
            "select u.value from memory_context_runs r, json_each(r.used_memory_ids_json) u"
            " where u.value in (select value from json_each(?1)) union"
            " select iif(t.key = 'id', t.value, t.key) from memory_context_runs r,"
            " json_tree(coalesce(r.ranking_json, '{}')) t where iif(t.key = 'id', t.value,"
            " t.key) in (select value from json_each(?1))", (wanted,))}

    def purged_message_ids(self) -> set[str]:
        """Messages removed on purpose (a purge of sources), from the purge audit events."""
        ids: set[str] = set()
        for (payload,) in self._rows("select payload_json from memory_audit_events"
                                     " where event_type = 'purge'"):
            after = (json.loads(payload) if payload else {}).get("after") or {}
            ids.update(after.get("messageIds") or [])
        return ids
