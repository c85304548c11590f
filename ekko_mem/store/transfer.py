"""Whole-table reads for export, in a stable order (time, then id) so exports compare equal,
each db read inside one snapshot; and the write locks an import holds on both dbs at once."""
from __future__ import annotations

from contextlib import contextmanager, suppress

from ..errors import EkkoError
from . import codec
from .connection import Part

TABLES = ("memory_messages", "memory_summaries", "memory_nodes", "memory_audit_events")


@contextmanager
def atomic_together(dbs: list):
    """Write locks on every db, taken in the given order; when the block succeeds they are
    committed in that same order, and any failure before the first commit rolls back all.

    SQLite cannot commit two files as one, so between the first and the last COMMIT a failure
    (a full disk, a kill) still leaves the earlier dbs committed. Everything that can be
    checked runs before the first COMMIT, so that window holds nothing but the commits."""
    held = []
    try:
        for db in dbs:
            transaction = db.atomic()
            transaction.__enter__()
            held.append(transaction)
        yield
    except BaseException as exc:
        _roll_back(held, exc)
        raise
    for index, transaction in enumerate(held):
        try:
            transaction.__exit__(None, None, None)
        except BaseException as exc:
            _roll_back(held[index + 1:], exc)
            raise


def _roll_back(transactions: list, exc: BaseException) -> None:
    for transaction in reversed(transactions):
        transaction.__exit__(type(exc), exc, exc.__traceback__)


class TransferStore(Part):
    @contextmanager
    def snapshot(self, *, settle: bool = False):
        """One read transaction: every select inside sees the db as it was when it began,
        whatever other processes commit meanwhile (WAL readers never block writers).

        With `settle`, a write transaction in progress is waited for first (the write lock
        is taken and handed straight back), so the snapshot includes it."""
        if settle:
            with suppress(EkkoError):  # busy past the timeout or read-only: read as it is
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("ROLLBACK")
        self.db.execute("BEGIN")
        try:
            # A deferred BEGIN takes its snapshot at the first read; read now, so the
            # snapshot is taken here and callers can order snapshots across dbs.
            self.db.one("select count(*) from sqlite_master")
            yield self
        finally:
            with suppress(EkkoError):
                self.db.execute("ROLLBACK")  # nothing was written; this only ends the read

    def export_messages(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self.db.all(f"select {codec.MESSAGE_COLUMNS} from memory_messages {where}"
                               " order by created_at, id", args):
            yield codec.message_from_row(row)

    def export_summaries(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self.db.all(f"select {codec.SUMMARY_COLUMNS} from memory_summaries {where}"
                               " order by created_at, id", args):
            yield codec.summary_from_row(row)

    def export_nodes(self, scopes: list[str] | None = None, session_id: str | None = None):
        where, args = [], []
        if scopes:
            where.append(f"scope in ({','.join('?' * len(scopes))})")
            args += scopes
        if session_id:
            where.append("(scope != 'session' or session_id = ?)")
            args.append(session_id)
        clause = f"where {' and '.join(where)}" if where else ""
        for row in self.db.all(f"select {codec.NODE_COLUMNS} from memory_nodes {clause}"
                               " order by created_at, id", args):
            yield codec.node_from_row(row)

    def export_events(self):
        for row in self.db.all(f"select {codec.EVENT_COLUMNS} from memory_audit_events"
                               " order by created_at, id"):
            yield codec.event_from_row(row)

    def existing_ids(self, table: str, ids: list[str]) -> set[str]:
        if table not in TABLES:
            raise ValueError(table)
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.all(f"select id from {table} where id in"
                               f" ({','.join('?' * len(chunk))})", chunk)
            found |= {r[0] for r in rows}
        return found
