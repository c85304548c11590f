"""The two contentless FTS5 indexes kept in step with their tables and usable.

Contentless (content=''): a row's tokens are dropped by a 'delete' that passes the very
values that were indexed, which `fts_values` and `index_text` give back from the row as it is
stored (a node's indexed text changes only through NodeStore.replace_node, which drops the old
tokens and adds the new ones in one transaction).

An erasure merges the index it deleted from ('optimize'), so the erased words leave the
index's pages too. Older SQLite (3.40 here; newer releases cap the count) writes that merged
segment one level above every level there was, and the merge after it adds another: once the
index outgrows a page or two, each erasure left it two levels taller. FTS5 refuses a
structure of more than 2,000 levels as corrupt, so after about a thousand erasures every
statement naming the table failed with "vtable constructor failed", and the table could not
even be emptied or dropped. A tall index is filled again from its table instead.
"""
from __future__ import annotations

import sqlite3

from . import codec, fts

# Each index and its columns, as migration m001 created them.
INDEXES = {"memory_nodes_fts": "title, content, tags, entities",
           "memory_messages_fts": "content"}
# From this many levels an erasure fills the index again rather than merging it: half what
# FTS5 accepts, so no run of merges gets there, and a refill comes once in ~500 erasures.
REFILL_AT = 1000
_STRUCTURE_ROWID = 10  # FTS5_STRUCTURE_ROWID: the record listing the index's levels
_STRUCTURE_V2 = b"\xff\xff\xff\xff"


def fts_values(node: dict) -> tuple:
    return (fts.index_text(node["title"]), fts.index_text(node["content"]),
            fts.index_text(" ".join(node.get("tags") or [])),
            fts.index_text(" ".join(node.get("entities") or [])))


def reindex_fts(db) -> int:
    """Empty both full-text indexes and fill them again from their tables, in the tokens of
    today's tokenizer; the number of nodes indexed. The caller holds the transaction."""
    count = refill(db, "memory_nodes_fts")
    refill(db, "memory_messages_fts")
    return count


def refill(db, table: str) -> int:
    """Empty one index and fill it from its table; how many rows it indexed."""
    _known(table)
    db.execute(f"insert into {table} ({table}) values ('delete-all')")
    count = 0
    if table == "memory_nodes_fts":
        for rows in _batches(db, "memory_nodes", codec.NODE_COLUMNS):
            db.executemany("insert into memory_nodes_fts (rowid, title, content, tags,"
                           " entities) values (?, ?, ?, ?, ?)",
                           [(r[0], *fts_values(codec.node_from_row(r[1:]))) for r in rows])
            count += len(rows)
        return count
    for rows in _batches(db, "memory_messages", "content"):
        db.executemany("insert into memory_messages_fts (rowid, content) values (?, ?)",
                       [(rowid, fts.index_text(content)) for rowid, content in rows])
        count += len(rows)
    return count


def _batches(db, table: str, columns: str, size: int = 2000):
    """(rowid, *columns) of every row of `table` in rowid order, a list at a time, so
    re-indexing a million rows never holds them all in memory."""
    last = 0
    while True:
        rows = db.all(f"select rowid, {columns} from {table} where rowid > ?"
                      " order by rowid limit ?", (last, size))
        if rows:
            yield rows
        if len(rows) < size:
            return
        last = rows[-1][0]


def merge_deleted(db, tables) -> None:
    """Drop deleted rows' tokens from the pages of these indexes: a merge of all their
    segments, or a refill of one grown tall. The caller holds the transaction."""
    for table in tables:
        if levels(db, table) >= REFILL_AT:
            refill(db, table)
        else:
            db.execute(f"insert into {table} ({table}) values ('optimize')")


def levels(db, table: str) -> int:
    """How many levels the index's structure record lists (0 when it has none).

    Read from FTS5's own table: a 4-byte cookie, a marker in the format of newer versions,
    then the number of levels as a varint."""
    _known(table)
    row = db.one(f"select block from {table}_data where id = ?", (_STRUCTURE_ROWID,))
    block = bytes(row[0]) if row and row[0] else b""
    start = 8 if block[4:8] == _STRUCTURE_V2 else 4
    return _varint(block, start)


def _known(table: str) -> None:
    if table not in INDEXES:  # the names below go into SQL text
        raise ValueError(table)


def _varint(data: bytes, at: int) -> int:
    """SQLite's varint at `at` (0 past the end): 7 bits a byte, high bit set while more
    follow, the ninth byte whole."""
    value = 0
    for i, byte in enumerate(data[at:at + 9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value


def rebuild(db) -> int:
    """Doctor's repair: both indexes filled again from their tables, an index FTS5 can no
    longer open first emptied at the level of its own tables; the number of nodes indexed.
    The caller holds the transaction and has found the db's pages sound."""
    for table in INDEXES:
        if not _opens(db, table):
            _reset(db, table)
    return reindex_fts(db)


def _opens(db, table: str) -> bool:
    """Whether FTS5 can open the index; False only for the corruption it reports as such."""
    try:
        db.raw.execute(f"select rowid from {table} limit 0").fetchall()
    except sqlite3.DatabaseError as exc:
        from .maintenance import is_corrupt
        if is_corrupt(exc):
            return False
        raise
    return True


def _reset(db, table: str) -> None:
    """An index FTS5 cannot open (not even to empty it) emptied through its shadow tables,
    with the records of a new empty index that FTS5 writes itself in a scratch table. Its
    settings (the _config table) are kept."""
    columns = INDEXES[table]
    db.execute("drop table if exists temp.ekko_fts_blank")
    db.execute(f"create virtual table temp.ekko_fts_blank using fts5({columns}, content='')")
    for shadow in ("data", "idx", "docsize"):
        db.execute(f"delete from main.{table}_{shadow}")
    db.execute(f"insert into main.{table}_data (id, block)"
               " select id, block from temp.ekko_fts_blank_data")
    db.execute("drop table temp.ekko_fts_blank")
