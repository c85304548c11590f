"""Full-text ranking whose cost does not grow with the db.

bm25() counts, for every term, all the rows that contain it before it scores the first one,
so a common word costs time in proportion to the whole table. Such a word says almost
nothing about relevance (its weight is near zero), so it only filters: the newest matches of
the whole expression are the candidates, and bm25 ranks them on the informative terms alone.
"""
from __future__ import annotations

import json

from . import fts

COMMON = 2_000  # a term in more rows than this only filters
WINDOW = 500     # newest matches considered per search


class SearchStore:
    db: object

    def _matches_capped(self, table: str, term: str) -> int:
        return self.db.one(f"select count(*) from (select 1 from {table} where {table}"
                           " match ? limit ?)", (term, COMMON + 1))[0]

    def ranked_rowids(self, table: str, match: str, weights: str = "") -> list[tuple]:
        """(rowid, bm25 score) of the newest WINDOW matches of `match`; lower is better."""
        if table not in ("memory_nodes_fts", "memory_messages_fts"):
            raise ValueError(table)
        terms, joiner = fts.split_expression(match)
        rare = [t for t in terms if self._matches_capped(table, t) <= COMMON]
        bm25 = f"bm25({table}{', ' + weights if weights else ''})"
        newest = (f"select rowid from {table} where {table} match ?"
                  " order by rowid desc limit ?")
        if len(rare) == len(terms) or (joiner == " OR " and rare):
            ranked_on = match if len(rare) == len(terms) else " OR ".join(rare)
            return self.db.all(f"select rowid, {bm25} from {table} where {table} match ?"
                               " order by rowid desc limit ?", (ranked_on, WINDOW))
        candidates = [r[0] for r in self.db.all(newest, (match, WINDOW))]
        if not rare or not candidates:
            return [(rowid, 0.0) for rowid in candidates]
        scores = dict(self.db.all(
            f"select rowid, {bm25} from {table} where {table} match ? and rowid in"
            " (select value from json_each(?))", (" AND ".join(rare), json.dumps(candidates))))
        return [(rowid, scores.get(rowid, 0.0)) for rowid in candidates]
