"""Bounds that keep full-text ranking's cost from growing with the db.

bm25() counts, for every term, all the rows that contain it before it scores the first one,
so a common word costs time in proportion to the whole table. Such a word says almost
nothing about relevance (its weight is near zero), so it only filters (store/recall.py).
"""
from __future__ import annotations

COMMON = 2_000  # a term in more rows than this only filters
WINDOW = 500     # newest matches considered per search


def matches_capped(db, table: str, term: str) -> int:
    """Rows of `table` matching `term`, counted up to COMMON + 1."""
    return db.one(f"select count(*) from (select 1 from {table} where {table}"
                  " match ? limit ?)", (term, COMMON + 1))[0]
