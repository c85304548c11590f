"""Stored links that must never loop: a version's supersedes link, a summary's parent, a
message's parent. Each row names at most one other, so the rows a loop holds are found in one
pass over the linked rows, in an array indexed by rowid (a message log of a million rows
costs a few megabytes, not a dict of a million ids).

An older ekko-mem or a crafted import file could store such a loop; `doctor` finds it here
and a repair clears the link that closes it.
"""
from __future__ import annotations

import sqlite3

from .connection import Part, translate

# kind -> (table, link column, the field's name in a record)
LINKS = {"supersede": ("memory_nodes", "supersedes_id", "supersedesId"),
         "summary parent": ("memory_summaries", "parent_summary_id", "parentSummaryId"),
         "message parent": ("memory_messages", "parent_id", "parentId")}


class LinkCycles(Part):
    kinds = tuple(LINKS)   # the links a walk follows: what `cycles` takes

    def cycles(self, kind: str) -> list[list[str]]:
        """Each loop of `kind` links as its ids in link order, starting at the oldest
        member: the one whose link points at a record made no earlier, closing the loop."""
        table, _, _ = LINKS[kind]
        loops = _loops(self._links(kind))
        rowids = sorted({r for loop in loops for r in loop})
        known: dict[int, tuple[str, str]] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            known.update((r[0], (r[1], r[2])) for r in self.db.all(
                f"select rowid, id, created_at from {table} where rowid in"
                f" ({','.join('?' * len(chunk))})", chunk))
        out = []
        for loop in loops:
            first = min(range(len(loop)), key=lambda i: (known[loop[i]][1], known[loop[i]][0]))
            out.append([known[r][0] for r in loop[first:] + loop[:first]])
        return out

    def clear_link(self, kind: str, record_id: str) -> None:
        """Drop a summary's or message's parent link (a node's goes through replace_node,
        which keeps its audit copies); the caller holds the transaction."""
        if kind == "supersede":
            raise ValueError(kind)
        table, column, _ = LINKS[kind]
        self.db.execute(f"update {table} set {column} = null where id = ?", (record_id,))

    def _links(self, kind: str):
        """rowid -> the rowid it links to, for the rows whose target links on (only those
        can be in a loop): an array by rowid, or a dict where rowids lie far apart."""
        from array import array
        from collections import defaultdict
        table, column, _ = LINKS[kind]
        top, count = self.db.one(f"select coalesce(max(rowid), 0), count(*) from {table}")
        after: array[int] | defaultdict[int, int] = array("q", bytes(8 * (top + 1))) \
            if top <= 4 * count + 1024 else defaultdict(int)
        try:  # rows are stepped through after execute returns: a damaged page shows here
            cursor = self.db.execute(
                f"select c.rowid, p.rowid from {table} c join {table} p on p.id = c.{column}"
                f" where c.{column} is not null and p.{column} is not null")
            while batch := cursor.fetchmany(5000):
                for child, parent in batch:
                    after[child] = parent
        except sqlite3.Error as exc:
            raise translate(exc, self.db.path) from exc
        return after


def _loops(after) -> list[list[int]]:
    """The loops of a graph where each node has at most one successor (`after`, 0 for none),
    as lists of rowids in link order. Each node is stepped on once: a walk stops at a node an
    earlier walk settled, and a walk that meets itself has found a loop."""
    from collections import defaultdict
    dense = not isinstance(after, dict)
    starts = (i for i, target in enumerate(after) if target) if dense else list(after)
    # 1 on this walk, 2 settled
    state: bytearray | defaultdict[int, int] = bytearray(len(after)) if dense \
        else defaultdict(int)
    loops = []
    for start in starts:
        path, current = [], start
        while current and not state[current]:
            state[current] = 1
            path.append(current)
            current = after[current]
        if current and state[current] == 1:
            loops.append(path[path.index(current):])
        for rowid in path:
            state[rowid] = 2
    return loops
