"""Whole-table reads for export, in a stable order (time, then id) so exports compare equal,
each db read inside one snapshot and row by row; the write locks an import holds on both dbs
at once, and what tells it whether another process wrote meanwhile; and the scratch index an
import keeps between its passes."""
from __future__ import annotations

import json
import marshal
import sqlite3
from contextlib import contextmanager, suppress

from ..errors import EkkoError
from . import codec, copies
from .connection import Connection, Part, translate

# a record's kind -> its table
TABLES = {"message": "memory_messages", "summary": "memory_summaries", "node": "memory_nodes",
          "event": "memory_audit_events", "entity": "memory_entities"}
FETCH = 500  # rows read at a time: an export holds a batch, never a table
# The references a record makes to a record of its own kind, which a chain of must end:
# each with the table and column that hold it.
LINKS = {"node supersedesId": ("memory_nodes", "supersedes_id"),
         "node parentId": ("memory_nodes", "parent_id"),
         "summary parentSummaryId": ("memory_summaries", "parent_summary_id"),
         "message parentId": ("memory_messages", "parent_id")}


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


@contextmanager
def roomy_cache(dbs: list, kib: int = 32_768):
    """A bulk write's pages kept in memory until it commits. With SQLite's 2 MB default page
    cache, a large import spills the FTS index's pages to the write-ahead log and reads them
    back, over and over; the pages it holds are freed when the write ends."""
    before = [db.one("PRAGMA cache_size")[0] for db in dbs]
    for db in dbs:
        db.execute(f"PRAGMA cache_size = -{int(kib)}")
    try:
        yield
    finally:
        for db, size in zip(dbs, before):
            db.execute(f"PRAGMA cache_size = {int(size)}")


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
        with self.db.reading():
            # A deferred BEGIN takes its snapshot at the first read; read now, so the
            # snapshot is taken here and callers can order snapshots across dbs.
            self.db.one("select count(*) from sqlite_master")
            yield self

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

    def export_entities(self, scopes: list[str] | None = None, session_id: str | None = None,
                        every: bool = True):
        """The graph's entities (id, name, kind, aliases, createdAt): all of them when the
        export holds every memory of this db, else those an edge of a memory it holds names
        (an entity no edge names belongs to no scope)."""
        args: list = []
        clause = ""
        if not every:
            where, args = self._node_filter(scopes, session_id)
            held = " ".join(f"and {w}" for w in where)
            clause = " or ".join(
                "exists (select 1 from memory_edges g join memory_nodes n on n.id ="
                f" g.source_node_id where g.{column} = e.id {held})"
                for column in ("subject", "object_entity_id"))
            clause, args = f"where {clause}", args * 2
        for row in self._rows("select id, name, kind, aliases_json, created_at from"
                              f" memory_entities e {clause} order by created_at, id", args):
            aliases = json.loads(row[3])
            if not every:  # only what the exported memories say: another alias may come
                # from a memory the export leaves out (another session's, say)
                aliases = [a for a in aliases if self._alias_said(row[0], a, scopes,
                                                                  session_id)]
            yield {"id": row[0], "name": row[1], "kind": row[2], "aliases": aliases,
                   "createdAt": row[4]}

    def _alias_said(self, entity_id: str, alias: str, scopes, session_id) -> bool:
        where, args = self._node_filter(scopes, session_id)
        clause = " ".join(f"and {w}" for w in where)
        return self.db.one(
            "select 1 from memory_edges g join memory_nodes n on n.id = g.source_node_id"
            " where (g.subject = ? or g.object_entity_id = ?) and (instr(n.title, ?) or"
            f" instr(n.content, ?)) {clause} limit 1",
            (entity_id, entity_id, alias, alias, *args)) is not None

    def entities_named(self, names: list[str]) -> dict[str, tuple[str, list[str]]]:
        """{name: (kind, aliases)} of the entities called exactly one of `names`."""
        found: dict[str, tuple[str, list[str]]] = {}
        for start in range(0, len(names), FETCH):
            chunk = names[start:start + FETCH]
            for name, kind, aliases in self.db.all(
                    "select name, kind, aliases_json from memory_entities where name in"
                    f" ({','.join('?' * len(chunk))})", chunk):
                found[name] = (kind, json.loads(aliases))
        return found

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

    def data_version(self) -> int:
        """A number that changes whenever another connection commits to this db (SQLite's
        data_version): equal twice, nothing was committed in between."""
        return self.db.one("pragma data_version")[0]

    def reference(self, link: str, record_id: str) -> tuple[bool, str | None]:
        """(whether the record is here, what its `link` names) for one of LINKS."""
        table, column = LINKS[link]
        row = self.db.one(f"select {column} from {table} where id = ?", (record_id,))
        return (row is not None, row[0] if row else None)

    def existing_ids(self, kind: str, ids: list[str]) -> set[str]:
        """Which of `ids` this db holds, among the records of `kind` (message, summary,
        node, event)."""
        table = TABLES[kind]
        found: set[str] = set()
        for start in range(0, len(ids), FETCH):
            chunk = ids[start:start + FETCH]
            rows = self.db.all(f"select id from {table} where id in"
                               f" ({','.join('?' * len(chunk))})", chunk)
            found |= {r[0] for r in rows}
        return found


class ImportIndex:
    """What an import keeps of its file between passes: each record's kind, id and line
    (duplicates, and which nodes are user memory), the nodes whose history the file carries,
    references still to resolve, the links that a chain of must end, the first line of each
    single-valued slot, what the checks found in the dbs and what the file adds to them (read
    again under the write locks), and every record that passed its checks, staged as the rows
    the write pass inserts.

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
                    # Nodes whose events in the file copy them on both sides (a refresh, an
                    # edit): their events are stored compactly (see staged_events).
                    "create table restated (node_id text primary key) without rowid",
                    # References to settle once the whole file is read (the record named may
                    # come later), by the kind of record they must name.
                    "create table refs (line integer not null, field text not null,"
                    " ref text not null, kind text not null)",
                    # What the dbs held when the file was checked, and what it adds to them,
                    # read again under the write locks when another process wrote meanwhile.
                    "create table held (target text not null, kind text not null,"
                    " id text not null, primary key (target, kind, id)) without rowid",
                    "create table fresh (kind text not null, target text not null,"
                    " id text not null)",
                    "create table singles (line integer primary key, target text not null,"
                    " data blob not null)",
                    # The links of new records that a chain of must end (LINKS), and the
                    # records already followed to an end.
                    "create table links (link text not null, id text not null,"
                    " ref text not null, line integer not null, primary key (link, id))"
                    " without rowid",
                    "create index links_in_order on links (link, line)",
                    "create table settled (link text not null, id text not null,"
                    " primary key (link, id)) without rowid",
                    "create table slots (slot text primary key, line integer not null)"
                    " without rowid",
                    # What the write pass inserts, staged by the check pass as it passes
                    # each record, so the file is parsed and validated once: rows as they
                    # go in (marshal: our own tuples of text and numbers), a node's with its
                    # FTS texts and the digest of its JSON, an event's with the digest of the
                    # node copy it carries (see stage_events).
                    "create table nodes (line integer primary key, id text not null,"
                    " target text not null, digest blob not null, data blob not null)",
                    "create index nodes_by_id on nodes (id)",
                    "create table messages (line integer primary key, data blob not null)",
                    "create table summaries (line integer primary key, data blob not null)",
                    "create table events (line integer primary key, id text not null,"
                    " node_id text, digest blob, data blob not null, same blob)",
                    "create table entities (line integer primary key, target text not null,"
                    " data blob not null)",
                    "begin"):  # one transaction, never committed: nothing is kept
            self.db.execute(sql)

    def close(self) -> None:
        self.db.close()

    def add(self, rows: list[tuple[str, str, int, bool]]) -> tuple[int, int] | None:
        """Note (kind, id, line, bound for the user db) rows; the first that repeats a kind
        and id already noted, as (its line, the earlier line), else None."""
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

    def holds_user_records(self) -> bool:
        """Whether the file brings anything to the user db (a memory, an entity)."""
        return self.db.one("select exists (select 1 from seen where user)")[0] == 1

    def user_nodes_among(self, ids: list[str]) -> set[str]:
        return self._among("seen", "id", ids, "kind = 'node' and user and ")

    def workspace_nodes_among(self, ids: list[str]) -> set[str]:
        return self._among("seen", "id", ids, "kind = 'node' and not user and ")

    def messages_among(self, ids: list[str]) -> set[str]:
        return self._among("seen", "id", ids, "kind = 'message' and ")

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

    def defer_ref(self, line: int, field: str, ref: str, kind: str = "node") -> None:
        """A reference the db does not hold: it must name a `kind` record in the file."""
        self.db.execute("insert into refs values (?, ?, ?, ?)", (line, field, ref, kind))

    def first_dangling_ref(self) -> tuple[int, str, str] | None:
        """(line, field, kind) of the first deferred reference to a record the file does
        not hold."""
        return self.db.one("select line, field, kind from refs r where not exists (select 1"
                           " from seen s where s.kind = r.kind and s.id = r.ref)"
                           " order by line, rowid limit 1")

    # -- what the write locks must find unchanged ---------------------------------------------
    def hold(self, target: str, kind: str, ids) -> None:
        """Records of `target`'s db that the file refers to: they must still be there."""
        self.db.executemany("insert or ignore into held values (?, ?, ?)",
                            [(target, kind, record_id) for record_id in ids])

    def held(self):
        """(db name, kind, ids) for what `hold` noted, FETCH ids at a time."""
        yield from self._grouped("select target, kind, id from held"
                                 " order by target, kind, id")

    def note_fresh(self, rows: list[tuple[str, str, str]]) -> None:
        """(kind, db name, id) of records the import adds: they must still be new."""
        self.db.executemany("insert into fresh values (?, ?, ?)", rows)

    def fresh_ids(self):
        """(kind, db name, ids) for what `note_fresh` noted, FETCH ids at a time."""
        yield from self._grouped("select kind, target, id from fresh"
                                 " order by kind, target, rowid")

    def _grouped(self, sql: str):
        """(a, b, ids) for rows (a, b, id) in order, FETCH ids at a time. The caller reads
        other dbs meanwhile, never this one, so one cursor serves."""
        group: tuple = ()
        ids: list[str] = []
        cursor = self.db.execute(sql)
        while rows := cursor.fetchmany(FETCH):
            for first, second, record_id in rows:
                if (first, second) != group or len(ids) == FETCH:
                    if ids:
                        yield (*group, ids)
                    group, ids = (first, second), []
                ids.append(record_id)
        if ids:
            yield (*group, ids)

    def note_single(self, line: int, target: str, node: dict) -> None:
        """An active value of a single-valued key the import adds: its slot must stay free."""
        self.db.execute("insert into singles values (?, ?, ?)", (line, target,
                                                                 marshal.dumps(node)))

    def singles(self):
        for rows in self._staged("select line, target, data from singles where line > ?"
                                 " order by line limit ?"):
            yield from ((target, marshal.loads(data)) for _, target, data in rows)

    # -- chains that must end ------------------------------------------------------------------
    def link(self, link: str, items: list[tuple[str, str, int]]) -> None:
        """(id, ref, line) of new records whose `link` names another record."""
        self.db.executemany("insert or ignore into links values (?, ?, ?, ?)",
                            [(link, record_id, ref, line) for record_id, ref, line in items])

    def links(self, link: str):
        """(line, id) of the new records with a `link`, in file order."""
        for rows in self._staged("select line, id from links where link = ? and line > ?"
                                 " order by line limit ?", (link,)):
            yield from rows

    def linked(self, link: str, record_id: str) -> tuple[bool, str | None]:
        """(whether the record is a new one with a `link`, what it names)."""
        row = self.db.one("select ref from links where link = ? and id = ?",
                          (link, record_id))
        return (row is not None, row[0] if row else None)

    def settled(self, link: str, record_id: str) -> bool:
        return self.db.one("select 1 from settled where link = ? and id = ?",
                           (link, record_id)) is not None

    def settle(self, link: str, ids) -> None:
        """Records whose `link`, followed, was found to end."""
        self.db.executemany("insert or ignore into settled values (?, ?)",
                            [(link, record_id) for record_id in ids])

    def first_in_slot(self, slot: str, line: int) -> int:
        """The line that first held `slot` (this one when none did)."""
        self.db.execute("insert or ignore into slots values (?, ?)", (slot, line))
        return self.db.one("select line from slots where slot = ?", (slot,))[0]

    # -- staging: the write pass reads these, never the file ----------------------------------
    def stage_nodes(self, items: list[tuple[int, str, dict]]) -> None:
        """(line, target db, node) for nodes that passed the checks, as they will be stored.

        The digest is taken of the validated record itself: node_from_row gives back an
        equal dict for every record the model lets through (JSON values round-trip through
        canonical text, numbers are floats, absent is None), which is what add_event's
        comparison with the row would find."""
        from .nodes import fts_values
        rows = []
        for line, target, node in items:
            rows.append((line, node["id"], target, _digest(node),
                         marshal.dumps((codec.node_to_row(node), fts_values(node)))))
        self.db.executemany("insert into nodes values (?, ?, ?, ?, ?)", rows)

    def stage_messages(self, items: list[tuple[int, dict]]) -> None:
        self.db.executemany("insert into messages values (?, ?)", [
            (line, marshal.dumps(codec.message_to_row(msg))) for line, msg in items])

    def stage_as_given(self, items: list[tuple[int, dict]]) -> None:
        """Messages as `log` prepared them (marshal keeps their metadata's key order), for
        `log` of JSON lines: written, then printed, from here."""
        self.db.executemany("insert into messages values (?, ?)", [
            (line, marshal.dumps(msg)) for line, msg in items])

    def staged_as_given(self):
        for rows in self._staged("select line, data from messages where line > ?"
                                 " order by line limit ?"):
            yield [marshal.loads(data) for _, data in rows]

    def stage_summaries(self, items: list[tuple[int, dict]]) -> None:
        self.db.executemany("insert into summaries values (?, ?)", [
            (line, marshal.dumps(codec.summary_to_row(s))) for line, s in items])

    def stage_events(self, items: list[tuple[int, dict]]) -> None:
        """(line, event) for every event of the file. An event that records a node as it
        stands (nothing before, a copy of the node after) keeps that copy only when it is not
        the node's own row: it is SAME_AS_NODE when its digest is that of the node the import
        stages (compared here when the node came first, as in an export, else when writing),
        and when the node is already in the db, add_event compares with the row itself."""
        rows = []
        self.db.executemany("insert or ignore into restated values (?)", [
            (event["nodeId"],) for _, event in items if event.get("nodeId")
            and copies.holds_copy({"before": (event.get("payload") or {}).get("before")},
                                  event["nodeId"])])
        for line, event in items:
            digest = same = None
            if codec.copies_its_node(event):
                payload = event["payload"]
                digest = _digest(payload["after"])
                same = marshal.dumps(codec.event_to_row(
                    {**event, "payload": {**payload, "after": codec.SAME_AS_NODE}}))
            rows.append([line, event["id"], event.get("nodeId"), digest, event, same])
        staged = self._node_digests([r[2] for r in rows if r[3] is not None])
        for row in rows:
            event, same = row[4], row[5]
            if same is not None and staged.get(row[2]) == row[3]:
                row[3:] = None, same, None   # settled: the full copy is never written
            else:
                row[4] = marshal.dumps(codec.event_to_row(event))
        self.db.executemany("insert into events values (?, ?, ?, ?, ?, ?)", rows)

    def stage_entities(self, items: list[tuple[int, str, dict]]) -> None:
        """(line, target db, entity) for entities that passed the checks."""
        self.db.executemany("insert into entities values (?, ?, ?)", [
            (line, target, marshal.dumps(entity)) for line, target, entity in items])

    def staged_entities(self, target: str):
        """Lists of entities for `target`'s db, in file order."""
        for rows in self._staged("select line, data from entities where target = ?"
                                 " and line > ? order by line limit ?", (target,)):
            yield [marshal.loads(data) for _, data in rows]

    def stages_as_is(self, copy: dict) -> bool:
        """Whether `copy` is exactly a node staged already (an event's copy of the node it
        records, as an export writes it): checked then, on the node's own line."""
        row = self.db.one("select digest from nodes where id = ?", (copy["id"],))
        return row is not None and row[0] == _digest(copy)

    def _node_digests(self, ids: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(ids), FETCH):
            chunk = ids[start:start + FETCH]
            found.update(self.db.all(f"select id, digest from nodes where id in"
                                     f" ({','.join('?' * len(chunk))})", chunk))
        return found

    def _staged(self, sql: str, args=()):
        """Rows of a staged table in line order, FETCH at a time (`line` is the rowid)."""
        last = 0
        while True:
            rows = self.db.all(sql, (*args, last, FETCH))
            if rows:
                yield rows
            if len(rows) < FETCH:
                return
            last = rows[-1][0]

    def staged_messages(self):
        """Lists of messages to append, in file order."""
        for rows in self._staged("select line, data from messages where line > ?"
                                 " order by line limit ?"):
            yield [codec.message_from_row(marshal.loads(data)) for _, data in rows]

    def staged_summaries(self):
        for rows in self._staged("select line, data from summaries where line > ?"
                                 " order by line limit ?"):
            yield [codec.summary_from_row(marshal.loads(data)) for _, data in rows]

    def staged_nodes(self, target: str):
        """Lists of (row, FTS texts) for `target`'s db, in file order."""
        for rows in self._staged("select line, data from nodes where target = ?"
                                 " and line > ? order by line limit ?", (target,)):
            yield [marshal.loads(data) for _, data in rows]

    def staged_events(self):
        """Lists of (event id, node id, row, None) for events settled here, and of (event
        id, node id, None, event) for those whose node copy add_event must still compare
        with the db's node, in file order."""
        # A restated node's events go through add_event too, which stores them by reference
        # and difference against the row as imported, as `remember` would have.
        sql = ("select e.line, e.id, e.node_id, e.data, e.same, e.digest = n.digest,"
               " (e.digest is not null and n.id is null) or r.node_id is not null"
               " from events e left join nodes n on n.id = e.node_id"
               " left join restated r on r.node_id = e.node_id"
               " where e.line > ? order by e.line limit ?")
        for rows in self._staged(sql):
            batch = []
            for _, event_id, node_id, data, same, matched, check in rows:
                row = marshal.loads(same if matched else data)
                batch.append((event_id, node_id, None, codec.event_from_row(row)) if check
                             else (event_id, node_id, row, None))
            yield batch


def _digest(value) -> bytes:
    import hashlib  # only an import needs it; loading OpenSSL would cost every process
    return hashlib.blake2b(codec.dumps(value).encode("utf-8", "surrogatepass"),
                           digest_size=16).digest()
