"""The reads ranked retrieval asks for, each bounded whatever the db's size.

- Term counts stop at COMMON + 1 (a count past that only says "common").
- Message hits come from an OR of the informative terms, ranked by bm25 inside FTS5: every
  term in it is in at most COMMON rows, so the rows scored are bounded too. A question made
  only of common words falls back to the newest WINDOW matches.
- Time windows, pair partners and summaries are read along indexes with a LIMIT.
"""
from __future__ import annotations

import json

from . import codec, fts, search
from .connection import Part
from .messages import MessageStore

_M_COLS = ", ".join("m." + c.strip() for c in codec.MESSAGE_COLUMNS.split(","))


RANK_ROWS = 1_000  # at most this many rows are scored by bm25 for one question


def _rankable(rare: list[str], counts: dict[str, int]) -> list[str]:
    """The rarest terms whose matches add up to at most RANK_ROWS, when there are two or
    more of them; else none."""
    chosen, rows = [], 0
    for term in sorted(rare, key=lambda t: counts[t]):
        if rows + counts[term] > RANK_ROWS:
            break
        chosen.append(term)
        rows += counts[term]
    return chosen if len(chosen) >= 2 else []


class RecallStore(Part):
    def term_counts(self, table: str, terms: list[str]) -> dict[str, int]:
        """Rows of `table` holding each index token, counted up to search.COMMON + 1."""
        return {t: search.matches_capped(self.db, table, fts.match_terms([t])) for t in terms}

    def row_estimate(self, table: str) -> int:
        """About how many rows `table` has, in constant time (rowids only grow)."""
        if table not in ("memory_messages", "memory_nodes"):
            raise ValueError(table)
        return self.db.one(f"select coalesce(max(rowid), 0) from {table}")[0]

    def message_hits(self, terms: list[str], counts: dict[str, int], *, limit: int = 100,
                     session: str | None = None, since: str | None = None) -> list[dict]:
        """Messages holding any of `terms`, best bm25 first (rare terms only when there are),
        optionally only of one session or from `since` on."""
        rare = [t for t in terms if 0 < counts.get(t, 0) <= search.COMMON]
        present = rare or [t for t in terms if counts.get(t, 0)]
        if not present:
            return []
        match = fts.match_terms(present)
        if session is None and since is None:
            # bm25 reads a size record for every row it scores: it ranks only when two or more
            # rare terms together match at most RANK_ROWS rows. Otherwise the newest matches
            # are the candidates (one word's matches differ little in bm25), and the ranking
            # in retrieval/ orders them.
            ranked = _rankable(rare, counts)
            if ranked:
                sql, args = ("select rowid from memory_messages_fts where memory_messages_fts"
                             " match ? order by rank limit ?", (fts.match_terms(ranked), limit))
            else:
                sql, args = ("select rowid from memory_messages_fts where memory_messages_fts"
                             " match ? order by rowid desc limit ?",
                             (match, min(limit, search.WINDOW)))
            rowids = [r[0] for r in self.db.all(sql, args)]
            rows = self.db.all(f"select {_M_COLS} from json_each(?) hit cross join"
                               " memory_messages m on m.rowid = hit.value order by hit.key",
                               (json.dumps(rowids),))
            return [codec.message_from_row(r) for r in rows]
        where, args = ["memory_messages_fts match ?"], [match]
        if session is not None:
            where.append("m.session_id = ?")
            args.append(session)
        if since is not None:
            where.append("m.created_at >= ?")
            args.append(since)
        order = "bm25(memory_messages_fts)" if rare else "memory_messages_fts.rowid desc"
        rows = self.db.all(
            f"select {_M_COLS} from memory_messages_fts cross join memory_messages m"
            f" on m.rowid = memory_messages_fts.rowid where {' and '.join(where)}"
            f" order by {order} limit ?", (*args, limit if rare else min(limit, search.WINDOW)))
        return [codec.message_from_row(r) for r in rows]

    def node_hits(self, terms: list[str], counts: dict[str, int], f: dict, *,
                  limit: int = 40) -> list[dict]:
        """Nodes passing the filters `f` that hold any of `terms`, best weighted bm25 first."""
        from .nodes import FTS_WEIGHTS, _N_COLS, node_filters
        rare = [t for t in terms if 0 < counts.get(t, 0) <= search.COMMON]
        present = rare or [t for t in terms if counts.get(t, 0)]
        if not present:
            return []
        weights = ", ".join(str(w) for w in FTS_WEIGHTS)
        order = f"bm25(memory_nodes_fts, {weights})" if rare else "rowid desc"
        # FTS5 ranks inside its own index; the filters then read only those rows (a few
        # spare, as some fail them).
        rowids = [r[0] for r in self.db.all(
            f"select rowid from memory_nodes_fts where memory_nodes_fts match ? order by {order}"
            " limit ?", (fts.match_terms(present), 3 * limit if rare else search.WINDOW))]
        where, args = node_filters(f)
        rows = self.db.all(f"select {_N_COLS} from json_each(?) hit cross join memory_nodes n"
                           f" on n.rowid = hit.value where {' and '.join(where)}"
                           " order by hit.key limit ?", (json.dumps(rowids), *args, limit))
        return [codec.node_from_row(r) for r in rows]

    def messages_between(self, start: str, end: str, *, limit: int = 100) -> list[dict]:
        """Messages created in [start, end), the newest `limit`."""
        rows = self.db.all(f"select {codec.MESSAGE_COLUMNS} from memory_messages"
                           " where created_at >= ? and created_at < ?"
                           " order by created_at desc limit ?", (start, end, limit))
        return [codec.message_from_row(r) for r in rows]

    def message_partners(self, ids: list[str]) -> dict[str, dict]:
        """For each message id, the message next to it in its session that answers it or that
        it answers: the one after a user message, the one before an assistant message (when
        that one has the other role). Two statements, along the session index."""
        if not ids:
            return {}
        pairs = self.db.all(
            "select m.id, m.role, case m.role when 'user' then (select n.id from memory_messages n"
            " where n.session_id = m.session_id and (n.created_at, n.rowid) > (m.created_at,"
            " m.rowid) order by n.created_at, n.rowid limit 1) else (select n.id from"
            " memory_messages n where n.session_id = m.session_id and (n.created_at, n.rowid)"
            " < (m.created_at, m.rowid) order by n.created_at desc, n.rowid desc limit 1) end"
            " from json_each(?) hit cross join memory_messages m on m.id = hit.value"
            " where m.role in ('user', 'assistant')", (json.dumps(ids),))
        partners = [o for _, _, o in pairs if o]
        others = {m["id"]: m for m in MessageStore(self.db).get_messages(partners)}
        wanted = {"user": "assistant", "assistant": "user"}
        return {mid: others[o] for mid, role, o in pairs
                if o in others and others[o]["role"] == wanted[role]}

    def recent_summaries(self, *, limit: int = 100) -> list[dict]:
        """The newest summaries that are still current (not waiting to be regenerated)."""
        rows = self.db.all(f"select {codec.SUMMARY_COLUMNS} from memory_summaries"
                           " where needs_regeneration = 0 order by rowid desc limit ?",
                           (limit,))
        return [codec.summary_from_row(r) for r in rows]
