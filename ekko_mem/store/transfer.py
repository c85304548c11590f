"""Whole-table reads for export, in a stable order (time, then id) so exports compare equal,
each db read inside one snapshot and row by row; the write locks an import holds on both dbs
at once; and the scratch index an import keeps between its passes."""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager, suppress

from ..errors import EkkoError
from . import codec
from .connection import Connection, Part, translate

TABLES = ("memory_messages", "memory_summaries", "memory_nodes", "memory_audit_events")
FETCH = 500  # rows read at a time: an export holds a batch, never a table


class Held(list):
    """The transactions `atomic_together` holds, in the order their locks were taken."""

    def take(self, db) -> None:
        """Lock one more db (it commits after the others, and rolls back with them)."""
        transaction = db.atomic()
        transaction.__enter__()
        self.append(transaction)


@contextmanager
def atomic_together(dbs: list):
    """Write locks on every db, taken in the given order (the block may `take` more); when the
    block succeeds they are committed in that same order, and any failure before the first
    commit rolls back all.

    SQLite cannot commit two files as one, so between the first and the last COMMIT a failure
    (a full disk, a kill) still leaves the earlier dbs committed. Everything that can be
    checked runs before the first COMMIT, so that window holds nothing but the commits."""
    held = Held()
    try:
        for db in dbs:
            held.take(db)
        yield held
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

    def _rows(self, sql: str, args=()):
        """The rows of a select, FETCH at a time; a damaged page met midway is reported as
        any other store failure."""
        cursor = self.db.execute(sql, args)
        while True:
            try:
                rows = cursor.fetchmany(FETCH)
            except sqlite3.Error as exc:
                raise translate(exc, self.db.path) from exc
            if not rows:
                return
            yield from rows

    def export_messages(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self._rows(f"select {codec.MESSAGE_COLUMNS} from memory_messages {where}"
                              " order by created_at, id", args):
            yield codec.message_from_row(row)

    def export_summaries(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self._rows(f"select {codec.SUMMARY_COLUMNS} from memory_summaries {where}"
                              " order by created_at, id", args):
            yield codec.summary_from_row(row)

    @staticmethod
    def _node_filter(scopes, session_id) -> tuple[list[str], list]:
        where, args = [], []
        if scopes:
            where.append(f"scope in ({','.join('?' * len(scopes))})")
            args += scopes
        if session_id:
            where.append("(scope != 'session' or session_id = ?)")
            args.append(session_id)
        return where, args

    def export_nodes(self, scopes: list[str] | None = None, session_id: str | None = None):
        where, args = self._node_filter(scopes, session_id)
        clause = f"where {' and '.join(where)}" if where else ""
        for row in self._rows(f"select {codec.NODE_COLUMNS} from memory_nodes {clause}"
                              " order by created_at, id", args):
            yield codec.node_from_row(row)

    def export_events(self):
        """Events as recorded: one whose node copy is the node's row gets the row written in
        (store/nodes.py), so an export stands on its own."""
        from .nodes import NodeStore
        nodes, batch = NodeStore(self.db), []
        for row in self._rows(f"select {codec.EVENT_COLUMNS} from memory_audit_events"
                              " order by created_at, id"):
            batch.append(codec.event_from_row(row))
            if len(batch) >= FETCH:
                yield from nodes.resolve_events(batch)
                batch = []
        yield from nodes.resolve_events(batch)

    def nodes_among(self, ids: list[str], scopes: list[str] | None = None,
                    session_id: str | None = None) -> set[str]:
        """Which of `ids` name nodes here that an export with these filters includes."""
        where, args = self._node_filter(scopes, session_id)
        clause = "".join(f" and {w}" for w in where)
        found: set[str] = set()
        for start in range(0, len(ids), FETCH):
            chunk = ids[start:start + FETCH]
            rows = self.db.all(f"select id from memory_nodes where id in"
                               f" ({','.join('?' * len(chunk))}){clause}", (*chunk, *args))
            found |= {r[0] for r in rows}
        return found

    def existing_ids(self, table: str, ids: list[str]) -> set[str]:
        if table not in TABLES:
            raise ValueError(table)
        found: set[str] = set()
        for start in range(0, len(ids), FETCH):
            chunk = ids[start:start + FETCH]
            rows = self.db.all(f"select id from {table} where id in"
                               f" ({','.join('?' * len(chunk))})", chunk)
            found |= {r[0] for r in rows}
        return found


class ImportIndex:
    """What an import remembers of its file between passes: each record's kind, id and line
    (duplicates, and which nodes are user memory), the nodes whose history the file carries,
    references still to resolve, and the first line of each single-valued slot.

    A private temporary SQLite db that SQLite deletes when it is closed (or its process ends):
    memory stays within its page cache however long the file is."""

    def __init__(self) -> None:
        raw = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self.db = Connection(raw, "the import's scratch index")
        for sql in ("pragma journal_mode = off", "pragma cache_size = -16384",
                    "create table seen (kind text not null, id text not null,"
                    " line integer not null, user integer not null,"
                    " primary key (kind, id)) without rowid",
                    "create table history (node_id text primary key) without rowid",
                    "create table refs (line integer not null, field text not null,"
                    " ref text not null)",
                    "create table slots (slot text primary key, line integer not null)"
                    " without rowid",
                    "begin"):  # one transaction, never committed: nothing is kept
            self.db.execute(sql)

    def close(self) -> None:
        self.db.close()

    def add(self, rows: list[tuple[str, str, int, bool]]) -> tuple[int, int] | None:
        """Note (kind, id, line, user memory) rows; the first that repeats a kind and id
        already noted, as (its line, the earlier line), else None."""
        before = self.db.raw.total_changes
        self.db.executemany("insert or ignore into seen values (?, ?, ?, ?)", rows)
        if self.db.raw.total_changes - before == len(rows):
            return None
        for kind, record_id, line, _ in rows:
            first = self.db.one("select line from seen where kind = ? and id = ?",
                                (kind, record_id))[0]
            if first != line:
                return line, first
        return None

    def note_history(self, node_ids: list[str]) -> None:
        self.db.executemany("insert or ignore into history values (?)",
                            [(node_id,) for node_id in node_ids])

    def count(self) -> int:
        return self.db.one("select count(*) from seen")[0]

    def holds_user_nodes(self) -> bool:
        return self.db.one("select exists (select 1 from seen where kind = 'node'"
                           " and user)")[0] == 1

    def user_nodes_among(self, ids: list[str]) -> set[str]:
        return self._among("seen", "id", ids, "kind = 'node' and user and ")

    def with_history_among(self, ids: list[str]) -> set[str]:
        return self._among("history", "node_id", ids)

    def _among(self, table: str, column: str, ids: list[str], where: str = "") -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), FETCH):
            chunk = ids[start:start + FETCH]
            marks = ",".join("?" * len(chunk))
            found |= {r[0] for r in self.db.all(f"select {column} from {table} where {where}"
                                                f"{column} in ({marks})", chunk)}
        return found

    def defer_ref(self, line: int, field: str, ref: str) -> None:
        """A reference the db does not hold: it must name a node somewhere in the file."""
        self.db.execute("insert into refs values (?, ?, ?)", (line, field, ref))

    def first_dangling_ref(self) -> tuple[int, str] | None:
        """(line, field) of the first deferred reference to a node the file does not hold."""
        return self.db.one("select line, field from refs where ref not in (select id from"
                           " seen where kind = 'node') order by line, rowid limit 1")

    def first_in_slot(self, slot: str, line: int) -> int:
        """The line that first held `slot` (this one when none did)."""
        self.db.execute("insert or ignore into slots values (?, ?)", (slot, line))
        return self.db.one("select line from slots where slot = ?", (slot,))[0]
