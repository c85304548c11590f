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
# What the service asks recall about, by kind; the tables are the store's to name.
_TABLES = {"message": "memory_messages", "node": "memory_nodes"}
WINDOW_NODES = 10  # nodes read per window of time after a message (sources_of)
# A JSON array of [low, high] id windows, bound as the statement's first parameter, as rows.
_WINDOWS = ("(select json_extract(value, '$[0]') as low, json_extract(value, '$[1]') as high"
            " from json_each(?)) win")
SINCE_NODES = 30   # the newest nodes read since the recent messages (sources_of)


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
    def term_counts(self, kind: str, terms: list[str]) -> dict[str, int]:
        """Messages or nodes (`kind`) holding each index token, counted up to
        search.COMMON + 1."""
        table = _TABLES[kind] + "_fts"
        return {t: search.matches_capped(self.db, table, fts.match_term(t)) for t in terms}

    def row_estimate(self, kind: str) -> int:
        """About how many messages or nodes (`kind`) there are, in constant time (rowids
        only grow)."""
        table = _TABLES[kind]  # a fixed name, never a caller's text
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
        where, given = ["memory_messages_fts match ?"], [match]
        if session is not None:
            where.append("m.session_id = ?")
            given.append(session)
        if since is not None:
            where.append("m.created_at >= ?")
            given.append(since)
        order = "bm25(memory_messages_fts)" if rare else "memory_messages_fts.rowid desc"
        rows = self.db.all(
            f"select {_M_COLS} from memory_messages_fts cross join memory_messages m"
            f" on m.rowid = memory_messages_fts.rowid where {' and '.join(where)}"
            f" order by {order} limit ?", (*given, limit if rare else min(limit, search.WINDOW)))
        return [codec.message_from_row(r) for r in rows]

    def node_hits(self, terms: list[str], counts: dict[str, int], f: dict, *,
                  limit: int = 40, retired: list | None = None) -> list[dict]:
        """Nodes passing the filters `f` that hold any of `terms`, best weighted bm25 first.
        `retired`, when given, gets the best matches that are no longer active, as
        `sources_of` gives them, from the same search."""
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
        if retired is not None:
            retired += self._light(
                "from json_each(?) hit cross join memory_nodes n on n.rowid = hit.value"
                " where n.status != 'active' or n.expires_at <= ? order by hit.key limit ?",
                (json.dumps(rowids[:limit]), f.get("now") or "", limit))
        return [codec.node_from_row(r) for r in rows]

    # -- which messages memory was taken from -------------------------------------------------
    # No index leads from a message to the nodes citing it. Ids sort by creation time, and a
    # node is made after the messages it cites are logged, so the nodes made soon after a
    # message are found along the primary key: each window is one bounded range, and all the
    # windows of a context are read in one statement.
    def sources_of(self, windows: list[tuple[str, str]], since: str | None,
                   message_ids: list[str]) -> list[dict]:
        """{id, status, expiresAt, sourceMessageIds} of the nodes citing any of `message_ids`
        (plainly or named with a workspace, store/refs.py) among the first WINDOW_NODES whose
        ids lie in each window [low, high), and the newest SINCE_NODES from `since` on."""
        cites = ("exists (select 1 from json_each(n.source_message_ids_json) j where"
                 " substr(j.value, instr(j.value, ':') + 1) in (select value from json_each(?)))")
        wanted = json.dumps(message_ids)
        found = self._light(
            f"from {_WINDOWS} cross join memory_nodes n on n.id in (select m.id from"
            " memory_nodes m where m.id >= win.low and m.id < win.high order by m.id"
            f" limit {WINDOW_NODES}) where {cites}", (json.dumps(windows), wanted)
        ) if windows else []
        if since is not None:
            found += self._light(
                "from memory_nodes n where n.id in (select m.id from memory_nodes m where"
                f" m.id >= ? order by m.id desc limit {SINCE_NODES}) and {cites}",
                (since, wanted))
        return found

    def _light(self, tail: str, args: tuple) -> list[dict]:
        return [{"id": r[0], "status": r[1], "expiresAt": r[2],
                 "sourceMessageIds": codec.loads(r[3]) or []}
                for r in self.db.all("select n.id, n.status, n.expires_at,"
                                     f" n.source_message_ids_json {tail}", args)]

    def erased_sources(self, windows: list[tuple[str, str]]) -> list[dict]:
        """{id, status "erased", sourceMessageIds} of the erased nodes (events left, row
        gone) whose ids lie in the windows, as their hard delete recorded them. The distinct
        node ids of the audit index are walked one seek at a time, WINDOW_NODES at most per
        window: a node restated a thousand times has a thousand events, stepped over."""
        if not windows:
            return []
        rows = self.db.all(
            "with recursive walk(high, node_id, step) as ("
            " select win.high, (select e.node_id from memory_audit_events e where"
            " e.node_id >= win.low and e.node_id < win.high order by e.node_id limit 1), 1"
            f" from {_WINDOWS}"
            " union all select high, (select e.node_id from memory_audit_events e where"
            " e.node_id > walk.node_id and e.node_id < walk.high order by e.node_id limit 1),"
            f" step + 1 from walk where node_id is not null and step < {WINDOW_NODES})"
            " select distinct walk.node_id, (select json_extract(e.payload_json,"
            " '$.after.sourceMessageIds') from memory_audit_events e where e.node_id ="
            " walk.node_id and e.event_type = 'delete' and json_extract(e.payload_json,"
            " '$.after.mode') = 'hard' limit 1) from walk where walk.node_id is not null and"
            " not exists (select 1 from memory_nodes n where n.id = walk.node_id)",
            (json.dumps(windows),))
        return [{"id": node_id, "status": "erased", "expiresAt": None,
                 "sourceMessageIds": codec.loads(sources) or []}
                for node_id, sources in rows if sources]

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

    def next_messages(self, ids: list[str]) -> dict[str, dict]:
        """For each message id, the message logged right after it in its session, whatever
        its role. One statement along the session index, then the rows by id."""
        return self._beside(ids, after=True)

    def previous_messages(self, ids: list[str]) -> dict[str, dict]:
        """For each message id, the message logged right before it in its session."""
        return self._beside(ids, after=False)

    def _beside(self, ids: list[str], *, after: bool) -> dict[str, dict]:
        if not ids:
            return {}
        order, way = ("", ">") if after else (" desc", "<")
        pairs = self.db.all(
            "select m.id, (select n.id from memory_messages n where n.session_id ="
            f" m.session_id and (n.created_at, n.rowid) {way} (m.created_at, m.rowid) order by"
            f" n.created_at{order}, n.rowid{order} limit 1) from json_each(?) hit cross join"
            " memory_messages m on m.id = hit.value", (json.dumps(ids),))
        found = {m["id"]: m for m in MessageStore(self.db).get_messages(
            [other for _, other in pairs if other])}
        return {mid: found[other] for mid, other in pairs if other in found}

    def recent_summaries(self, *, limit: int = 100) -> list[dict]:
        """The newest summaries that are still current (not waiting to be regenerated)."""
        rows = self.db.all(f"select {codec.SUMMARY_COLUMNS} from memory_summaries"
                           " where needs_regeneration = 0 order by rowid desc limit ?",
                           (limit,))
        return [codec.summary_from_row(r) for r in rows]
