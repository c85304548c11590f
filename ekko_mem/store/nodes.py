"""Memory nodes, their FTS rows and their audit events."""
from __future__ import annotations

from . import codec, copies
from .connection import Part
from .fts_upkeep import fts_values, merge_deleted, rebuild
from .fts_upkeep import reindex_fts  # noqa: F401  (migration m005 imports it from here)
from .vectors import VectorStore, node_text

# The events that read a node's whole row, found along idx_memory_audit_events_node, which
# holds this very expression (m011), however many events the node has.
_REFERS_WHOLE = ("select rowid, payload_json from memory_audit_events where node_id = ?"
                 f" and instr(payload_json, '{codec.SAME_AS_NODE_JSON}') > 0")
_REFERS_AT_ALL = ("select rowid, payload_json from memory_audit_events where node_id = ?"
                  f" and (instr(payload_json, '{codec.SAME_AS_NODE_JSON}') > 0"
                  f" or instr(payload_json, '{copies.HEAD_JSON}') > 0)")

# bm25 column weights for (title, content, tags, entities): a hit in the title says most about
# what a memory is about, an entity next, a tag next, a word in the body least.
FTS_WEIGHTS = (4.0, 1.0, 2.0, 3.0)
# Links followed at most in one walk along stored chains (versions, parent summaries): a loop
# or an absurdly long chain written by an older ekko-mem or a crafted file ends the walk.
CHAIN_LIMIT = 10_000
_N_COLS = ", ".join("n." + c.strip() for c in codec.NODE_COLUMNS.split(","))
# Most important first. idx_memory_nodes_rank also holds each node's category and expiry
# (m014), which would order its ties: the last term keeps equal-ranked nodes in the order
# they were written, whichever index a query reads.
RANK_ORDER = "n.importance desc, n.confidence desc, n.updated_at desc, n.rowid"


def _category_range(prefix: list[str]) -> tuple[str, str]:
    # A LIKE prefix cannot use the index; this range can. '0' is the character after '/'.
    text = "/".join(prefix)
    return text, text + "0"


def weighted_fields(node: dict) -> tuple:
    """(text, weight) for each part of `node` its full-text index holds, with the weight the
    index ranks it by, so that scoring outside the store weighs the parts as the index does."""
    parts = (node["title"], node["content"], " ".join(node.get("tags") or []),
             " ".join(node.get("entities") or []))
    return tuple((text, weight) for text, weight in zip(parts, FTS_WEIGHTS) if text)


def node_filters(f: dict) -> tuple[list[str], list]:
    """WHERE clauses for an exact node query. Every value is a parameter."""
    where: list[str] = []
    args: list = []

    def within(column: str, values) -> None:
        values = list(values)
        name = column if column.startswith("+") else f"n.{column}"
        where.append(f"{name} in ({','.join('?' * len(values))})")
        args.extend(values)

    if f.get("ids"):
        within("id", f["ids"])
    # With a category prefix, or a key, that is the selective term; a plain status term
    # would tempt the planner (no ANALYZE stats) into walking every active node of the type
    # on idx_memory_nodes_rank instead. A caller that wants the walk in rank order (the few
    # keys most nodes of a type share) says so with rankWalk.
    by_key = f.get("key") is not None and not f.get("rankWalk")
    in_category = bool(f.get("categoryPrefix")) or by_key
    within("+n.status" if in_category else "status", f.get("statuses") or ["active"])
    if f.get("scopes") == ["session"] and not in_category:
        where.append("n.scope = 'session'")  # a constant: idx_memory_nodes_session is partial
    elif f.get("scopes"):
        within("+n.scope" if in_category else "scope", f["scopes"])
    if f.get("types"):
        within("+n.type" if in_category else "type", f["types"])
    for field, column in (("domain", "domain"), ("key", "key"), ("sessionId", "session_id"),
                          ("workspaceId", "workspace_id"), ("userId", "user_id"),
                          ("supersedesId", "supersedes_id")):
        if f.get(field) is not None:
            prefix = "+n." if in_category and field == "domain" else "n."
            where.append(f"{prefix}{column} = ?")
            args.append(f[field])
    if "valueJson" in f and f["valueJson"] is not None:
        where.append("n.value_json = ?")
        args.append(codec.dumps(f["valueJson"]))
    if f.get("categoryPrefix"):
        exact, high = _category_range(f["categoryPrefix"])
        # One index range [a/b, a/b0) holds a/b and a/b/...; the second term drops siblings
        # such as a/b-c that sort inside it.
        where.append("n.category_path_text >= ? and n.category_path_text < ? and"
                     " (n.category_path_text = ? or substr(n.category_path_text, ?, 1) = '/')")
        args.extend([exact, high, exact, len(exact) + 1])
    for field, column in (("tags", "tags_json"), ("entities", "entities_json")):
        for value in f.get(field) or []:
            where.append(f"exists (select 1 from json_each(n.{column}) where value = ?)")
            args.append(value)
    if f.get("sourceMessageId"):
        # Several spellings of one citation (store/refs.py): any of them matches.
        forms = f["sourceMessageId"]
        forms = [forms] if isinstance(forms, str) else list(forms)
        where.append("exists (select 1 from json_each(n.source_message_ids_json)"
                     f" where value in ({','.join('?' * len(forms))}))")
        args.extend(forms)
    if f.get("asOf") is not None:
        # As of a moment: made by then, and not replaced, expired or forgotten by then (a
        # status changes with updated_at); the caller lists the statuses it will take.
        where.append("n.created_at <= ? and (n.status = 'active' or n.updated_at > ?)")
        args.extend([f["asOf"], f["asOf"]])
    if f.get("now") is not None and not f.get("includeExpired"):
        where.append("(n.expires_at is null or n.expires_at > ?)")
        args.append(f["now"])
    return where, args


class NodeStore(Part):
    # -- reads -------------------------------------------------------------------------------
    def get_node(self, node_id: str) -> dict | None:
        row = self.db.one(f"select {codec.NODE_COLUMNS} from memory_nodes where id = ?",
                          (node_id,))
        return codec.node_from_row(row) if row else None

    def find_nodes(self, f: dict, *, limit: int = 50) -> list[dict]:
        """Nodes matching exact filters, most important first.

        With several types, each type is read on its own along idx_memory_nodes_rank and the
        results merged, so the cost follows `limit`, not the number of matching nodes.
        """
        types = f.get("types") or []
        if len(types) > 1 and not f.get("order"):
            merged = [n for kind in types for n in self.find_nodes({**f, "types": [kind]},
                                                                   limit=limit)]
            merged.sort(key=lambda n: n["updatedAt"], reverse=True)
            merged.sort(key=lambda n: (-n["importance"], -n["confidence"]))
            return merged[:limit]
        where, args = node_filters(f)
        order = f.get("order") or RANK_ORDER
        rows = self.db.all(f"select {_N_COLS} from memory_nodes n where {' and '.join(where)}"
                           f" order by {order} limit ?", (*args, limit))
        return [codec.node_from_row(r) for r in rows]

    def find_in_category(self, f: dict, *, window: int = 5000, limit: int = 20) -> list[dict]:
        """Active nodes of one type under a category, from that type's `window` highest-ranked
        nodes: a bounded read at any db size (context's topic hints use it). The window is
        walked in idx_memory_nodes_rank alone, which holds the category and expiry that decide
        a node; only the rows kept are read (on a large db, most walked nodes are elsewhere)."""
        where, args = node_filters({k: v for k, v in f.items() if k != "categoryPrefix"})
        exact, high = _category_range(f["categoryPrefix"])
        rows = self.db.all(
            f"select {_N_COLS} from (select n.rowid as hit, n.category_path_text as path"
            f" from memory_nodes n where {' and '.join(where)} order by {RANK_ORDER} limit ?) w"
            " cross join memory_nodes n on n.rowid = w.hit"
            " where w.path >= ? and w.path < ? and (w.path = ? or substr(w.path, ?, 1) = '/')"
            " limit ?", (*args, window, exact, high, exact, len(exact) + 1, limit))
        return [codec.node_from_row(r) for r in rows]

    def count_nodes(self, statuses: list[str] | None = None) -> int:
        if statuses:
            marks = ",".join("?" * len(statuses))
            return self.db.one(f"select count(*) from memory_nodes where status in ({marks})",
                               statuses)[0]
        return self.db.one("select count(*) from memory_nodes")[0]

    def successors(self, node_id: str) -> list[dict]:
        rows = self.db.all(f"select {_N_COLS} from memory_nodes n where n.supersedes_id = ?"
                           " order by n.created_at", (node_id,))
        return [codec.node_from_row(r) for r in rows]

    def version_chain(self, node: dict, limit: int = CHAIN_LIMIT) -> tuple[list[dict], dict]:
        """Every version of `node`, oldest first, each once, and where a walk stopped early:
        {} at the chain's ends, else {"at": the id whose link led back into the chain (a
        stored cycle) or past `limit` versions, "why": "cycle" or "limit"}."""
        seen, older, newer, cut = {node["id"]}, [], [], {}
        current = node
        while current.get("supersedesId"):
            prior_id = current["supersedesId"]
            if prior_id in seen or len(seen) >= limit:
                cut = {"at": current["id"], "why": "cycle" if prior_id in seen else "limit"}
                break
            prior = self.get_node(prior_id)
            if prior is None:
                break
            current = prior
            seen.add(prior_id)
            older.append(current)
        current = node
        while following := self.successors(current["id"]):
            fresh = [n for n in following if n["id"] not in seen]
            if not fresh or len(seen) >= limit:
                cut = cut or {"at": (fresh or following)[0]["id"],
                              "why": "limit" if fresh else "cycle"}
                break
            current = fresh[0]
            seen.add(current["id"])
            newer.append(current)
        return [*reversed(older), node, *newer], cut

    def due_for_expiry(self, now: str, limit: int = 1000) -> list[dict]:
        rows = self.db.all(f"select {_N_COLS} from memory_nodes n where n.status = 'active'"
                           " and n.expires_at <= ? limit ?", (now, limit))
        return [codec.node_from_row(r) for r in rows]

    def cited_sources(self, refs: list[str]) -> set[str]:
        """Which of these source references some node already cites (a scan of every node's
        sources: asked only for references that cannot be looked up in a log here)."""
        if not refs:
            return set()
        rows = self.db.all("select distinct j.value from memory_nodes n,"
                           " json_each(n.source_message_ids_json) j where j.value in"
                           f" ({','.join('?' * len(refs))})", refs)
        return {r[0] for r in rows}

    def known_values(self, column: str, limit: int = 200) -> list[str]:
        if column not in ("domain", "category_path_text", "key", "session_id"):
            raise ValueError(column)
        rows = self.db.all(f"select distinct {column} from memory_nodes where {column} is not"
                           f" null order by {column} limit ?", (limit,))
        return [r[0] for r in rows]

    # -- writes (callers hold the transaction) -----------------------------------------------
    def insert_node(self, node: dict) -> None:
        cur = self.db.execute(f"insert into memory_nodes ({codec.NODE_COLUMNS}) values"
                              f" ({','.join('?' * 26)})", codec.node_to_row(node))
        self.db.execute("insert into memory_nodes_fts (rowid, title, content, tags, entities)"
                        " values (?, ?, ?, ?, ?)", (cur.lastrowid, *fts_values(node)))
        VectorStore(self.db).index_node(node)

    def insert_rows(self, staged: list[tuple[tuple, tuple]]) -> list[dict]:
        """Insert (row, FTS texts) pairs as import staged them: two executemany with
        explicit rowids instead of four statements a node. Returns what an audit event
        needs of each node: its ids, scope and sources."""
        first = self.db.one("select coalesce(max(rowid), 0) + 1 from memory_nodes")[0]
        self.db.executemany(f"insert into memory_nodes (rowid, {codec.NODE_COLUMNS}) values"
                            f" (?, {','.join('?' * 26)})",
                            [(first + i, *row) for i, (row, _) in enumerate(staged)])
        self.db.executemany("insert into memory_nodes_fts (rowid, title, content, tags,"
                            " entities) values (?, ?, ?, ?, ?)",
                            [(first + i, *texts) for i, (_, texts) in enumerate(staged)])
        vectors = VectorStore(self.db)
        if vectors.enabled():
            vectors.put([(row[0], "node", None, node_text(codec.node_from_row(row)))
                         for row, _ in staged])
        return [{"id": row[0], "sessionId": row[3], "workspaceId": row[4], "userId": row[5],
                 "scope": row[6], "sourceMessageIds": codec.loads(row[20])}
                for row, _ in staged]

    def _drop_fts(self, node_id: str) -> int | None:
        row = self.db.one(f"select rowid, {codec.NODE_COLUMNS} from memory_nodes where id = ?",
                          (node_id,))
        if row is None:
            return None
        old = codec.node_from_row(row[1:])
        self.db.execute("insert into memory_nodes_fts (memory_nodes_fts, rowid, title, content,"
                        " tags, entities) values ('delete', ?, ?, ?, ?, ?)",
                        (row[0], *fts_values(old)))
        return row[0]

    def replace_node(self, node: dict) -> None:
        """Rewrite a node in place (same id), keeping its FTS rows in step."""
        self._keep_copies(node["id"], node.get("sourceMessageIds") or [])
        rowid = self._drop_fts(node["id"])
        values = codec.node_to_row(node)
        columns = [c.strip() for c in codec.NODE_COLUMNS.split(",")]
        sets = ", ".join(f"{c} = ?" for c in columns[1:])
        self.db.execute(f"update memory_nodes set {sets} where rowid = ?", (*values[1:], rowid))
        self.db.execute("insert into memory_nodes_fts (rowid, title, content, tags, entities)"
                        " values (?, ?, ?, ?, ?)", (rowid, *fts_values(node)))
        VectorStore(self.db).index_node(node)

    def set_status(self, node_id: str, status: str, updated_at: str) -> None:
        self._keep_copies(node_id)
        self.db.execute("update memory_nodes set status = ?, updated_at = ? where id = ?",
                        (status, updated_at, node_id))

    def hard_delete_node(self, node_id: str) -> bool:
        rowid = self._drop_fts(node_id)
        if rowid is None:
            return False
        self.db.execute("delete from memory_nodes where rowid = ?", (rowid,))
        VectorStore(self.db).drop([node_id])
        self.db.fts_deleted.add("memory_nodes_fts")
        return True

    def optimize_fts(self) -> None:
        """Drop hard-deleted rows' tokens from the pages of the indexes they were deleted
        from (store/fts_upkeep.py); an index nothing was deleted from is left as it is."""
        merge_deleted(self.db, sorted(self.db.fts_deleted))
        self.db.fts_deleted.clear()

    def rebuild_fts(self) -> int:
        """Re-index every node and message from scratch (doctor's repair), even an index
        FTS5 can no longer open."""
        return rebuild(self.db)

    # -- audit -------------------------------------------------------------------------------
    # An event's copies of its node are kept by reference to the node's row where they can be
    # (store/copies.py): the whole row as its `after`, or the head of the row's source list;
    # its `before` as what it changes of its `after`.
    # Every in-place change (replace_node, set_status, detach_successors) first writes out what
    # the events read from the row, so a reader always gets exactly what was recorded. These
    # copies were most of a node's bytes, and a restated memory's grew with each restatement.
    def add_event(self, event: dict) -> None:
        payload, node_id = event.get("payload"), event.get("nodeId")
        if node_id and copies.holds_copy(payload, node_id):
            event = {**event, "payload": copies.encode(payload, node_id, self.get_node(node_id))}
        self.db.execute(f"insert into memory_audit_events ({codec.EVENT_COLUMNS}) values"
                        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", codec.event_to_row(event))

    SAME_AS_NODE = codec.SAME_AS_NODE

    def add_events(self, events: list[dict]) -> None:
        """Events whose payload the caller settled: one that holds SAME_AS_NODE does so
        because its node's row was written from the very dict it stands for."""
        self.add_event_rows([codec.event_to_row(event) for event in events])

    def add_event_rows(self, rows: list[tuple]) -> None:
        """Events already in row form, their payload settled (see add_event)."""
        self.db.executemany(f"insert into memory_audit_events ({codec.EVENT_COLUMNS}) values"
                            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _keep_copies(self, node_id: str, new_sources: list | None = None) -> None:
        """Before a node's row changes: what its events read from the row is written out,
        except a head of sources the new row (sources `new_sources`, None: the same) keeps."""
        current = None
        sql = _REFERS_WHOLE
        if new_sources is not None:
            current = self.get_node(node_id)
            if current is not None and not copies.sources_kept(current, new_sources):
                sql = _REFERS_AT_ALL
        rows = self.db.all(sql, (node_id,))
        if not rows:
            return
        current = current or self.get_node(node_id)
        if current is None:
            return
        for rowid, payload in rows:
            data = codec.loads(payload)
            if copies.refers(data):
                kept = codec.dumps(copies.materialise(data, node_id, current, new_sources))
                if kept != payload:  # a head the new row still has is left as it is
                    self.db.execute("update memory_audit_events set payload_json = ?"
                                    " where rowid = ?", (kept, rowid))

    def resolve_events(self, events: list[dict]) -> list[dict]:
        """Events as recorded: what a payload keeps by reference is read from the node's row,
        and a `before` kept as a difference from its `after`."""
        wanted = [e["nodeId"] for e in events
                  if e.get("nodeId") and copies.refers(e.get("payload"))]
        if not any(e.get("nodeId") and copies.encoded(e.get("payload"), e["nodeId"])
                   for e in events):
            return events
        rows: dict[str, dict] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            rows.update((n["id"], n) for n in (codec.node_from_row(r) for r in self.db.all(
                f"select {codec.NODE_COLUMNS} from memory_nodes where id in"
                f" ({','.join('?' * len(chunk))})", chunk)))
        for event in events:
            if event.get("nodeId") and copies.encoded(event.get("payload"), event["nodeId"]):
                event["payload"] = copies.decode(event["payload"], event["nodeId"],
                                                 rows.get(event["nodeId"]))
        return events

    # An event and the row it reads are read in one transaction: read apart, another
    # process's change between the two would pair the event with a row it never referred to.
    def get_event(self, event_id: str) -> dict | None:
        with self.db.reading():
            row = self.db.one(f"select {codec.EVENT_COLUMNS} from memory_audit_events"
                              " where id = ?", (event_id,))
            return self.resolve_events([codec.event_from_row(row)])[0] if row else None

    def list_events(self, *, node_id: str | None = None, since: str | None = None,
                    limit: int = 50) -> list[dict]:
        where, args = ["1 = 1"], []
        if node_id:
            where.append("node_id = ?")
            args.append(node_id)
        if since:
            where.append("created_at >= ?")
            args.append(since)
        with self.db.reading():
            rows = self.db.all(f"select {codec.EVENT_COLUMNS} from memory_audit_events where"
                               f" {' and '.join(where)} order by created_at desc, rowid desc"
                               " limit ?", (*args, limit))
            return self.resolve_events([codec.event_from_row(r) for r in rows])

    def titles(self, node_ids) -> dict[str, str]:
        """The title of each of these nodes that this db holds, by id: what an audit listing
        shows beside the events that name them."""
        ids, found = list(dict.fromkeys(node_ids)), {}
        for start in range(0, len(ids), 500):  # well under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.all(f"select id, title from memory_nodes where id in ({marks})",
                                     chunk))
        return found

    def scrub_events(self, node_id: str) -> None:
        """Drop the before/after copies an erased node left in its audit trail, and the
        reasons, which a person may have written its words into."""
        self.db.execute("update memory_audit_events set payload_json = null,"
                        " reason = event_type where node_id = ?", (node_id,))

    def detach_successors(self, node_id: str) -> None:
        for (other,) in self.db.all("select id from memory_nodes where supersedes_id = ? or"
                                    " parent_id = ?", (node_id, node_id)):
            self._keep_copies(other)
        self.db.execute("update memory_nodes set supersedes_id = null where supersedes_id = ?",
                        (node_id,))
        self.db.execute("update memory_nodes set parent_id = null where parent_id = ?",
                        (node_id,))
