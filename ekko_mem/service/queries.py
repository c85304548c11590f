"""Retrieval: MemoryQuery -> MemoryQueryResult, merged across dbs and conflict-resolved."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step, UsageError
from ..policy import conflict
from ..values import VALUES, check
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .drafts import Drafts
    from .recall import Recall

LOW_CONFIDENCE = 0.3
# MemoryQuery's fields, here without pydantic (an import on the hot path); a test keeps the
# two the same.
_QUERY_FIELDS = {"userId", "workspaceId", "sessionId", "scopes", "domain", "categoryPathPrefix",
                 "types", "key", "valueJson", "tags", "entities", "queryText", "includeExpired",
                 "includeSuperseded", "limit"}


class Queries(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, recall: Recall) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.recall = recall

    def retrieve(self, query: dict, *, as_of: str | None = None) -> dict:
        """The design's MemoryService.retrieve: exact, relevant and omitted-with-reasons.
        With `as_of`, the memories that held then, each with its status today."""
        q = self._normalise_query(query)
        then = self.as_of(as_of)
        now = then or self.env.now_iso()
        base = {"scopes": q.get("scopes"), "domain": q.get("domain"),
                "categoryPrefix": q.get("categoryPathPrefix"), "types": q.get("types"),
                "key": q.get("key"), "valueJson": q.get("valueJson"), "tags": q.get("tags"),
                "entities": q.get("entities"), "includeExpired": then is None, "now": now,
                "statuses": ["active", "superseded", "expired"], "asOf": then}
        structured = any(q.get(k) for k in ("domain", "categoryPathPrefix", "types", "key",
                                            "tags", "entities", "scopes")) or (
            q.get("valueJson") is not None)
        text = (q.get("queryText") or "").strip()
        pool = q["limit"] * 3 + 20
        exact: list[dict] = []
        stores = self.stores.readable(q.get("scopes"))
        if structured or not text:
            for _, store in stores:
                exact += store.nodes.find_nodes(base, limit=pool)
        relevant = self._search(stores, text, base, pool) if text else []
        result = self._classify(q, exact, relevant, now, then is not None)
        if then is not None:
            result["asOf"] = then
        return result

    def _search(self, stores, text: str, base: dict, pool: int
                ) -> list[tuple[dict, float, bool]]:
        """(node, score, weak) of the nodes sharing a term with `text`, single Chinese
        characters included: the terms, counts, node read and scores of `context`'s recall.
        The rows `context` would take come first, best first; the rest follow, marked weak:
        those under its relevance floor, and those no word of the text finds (see `_finds`).
        With semantic recall on, nearness in meaning adds to the scores as it does in
        recall, and a node near enough to pass the floor is not weak."""
        from ..errors import EkkoError
        from ..retrieval import analyse, by_meaning, rank, score
        from .recall import _node_candidate
        query = analyse(text, self.env.now())
        pooled: dict = {}
        df: dict[str, int] = {}
        total = 0
        for name, store in stores:
            if not query.terms:
                break
            try:
                counts = store.recall.term_counts("node", query.terms)
                hits = store.recall.node_hits(query.terms, counts, base, limit=pool)
                total += store.recall.row_estimate("node")
            except EkkoError:
                continue  # as recall does: a db that cannot be searched adds nothing
            for term, count in counts.items():
                df[term] = df.get(term, 0) + count
            for node in hits:
                pooled.setdefault(node["id"], _node_candidate(node, name))
        candidates = list(pooled.values())
        near = None
        embedder = self.stores.embedder() if stores else None
        if embedder is not None:
            from .semantic import vector_hits
            held = set(pooled)
            near = by_meaning(vector_hits(
                embedder, stores, text, kinds=("node",), pool=pooled, skip=set(),
                node_filter=base, session=None, since=None, limit=pool, warnings=None), held)
            candidates += [c for c in near if c.id not in held]
        score(_every_term_scores(query), candidates, df, total, near)
        finds = _finds(query)
        strong, _ = rank([c for c in candidates
                          if finds(c.matched) or "vector" in c.via])  # context's floor
        kept = {c.id for c in strong}
        ranked = strong + [c for c in rank(candidates, floor=0.0)[0] if c.id not in kept]
        return [(c.record, c.score, c.id not in kept)
                for c in sorted(ranked, key=lambda c: c.id not in kept)]

    def search_messages(self, text: str, *, session: str | None = None,
                        since: str | None = None, limit: int = 20) -> dict:
        """Earlier messages of every session ranked for `text`, as `context` ranks them; when
        those leave room under `limit`, the messages sharing fewer or weaker terms follow,
        marked weak."""
        limit = check("limit", limit)
        since_iso = self._since(since) if since else None
        stores = self.stores.existing()
        found = self.recall.recall(stores, text or "", kinds=("message",), session=session,
                                   since=since_iso, room=2 * limit)
        hits = [(c, False) for c in found["ranked"] if since_iso is None
                or c.record["createdAt"] >= since_iso][:limit]
        if len(hits) < limit:
            shown = {c.id for c in found["ranked"]}
            hits += [(c, True) for c in self._weak_messages(
                stores, found["query"], text or "", shown, session, since_iso,
                2 * limit)][:limit - len(hits)]
        return {"queryText": text, "sessionId": session, "since": since_iso,
                "considered": found["considered"],
                "messages": [{"message": c.record, "score": round(c.score, 4), "via": c.via,
                              "matched": c.matched, **({"weak": True} if weak else {})}
                             for c, weak in hits]}

    def _weak_messages(self, stores, query, text: str, shown: set[str], session, since,
                       room: int) -> list:
        """The messages sharing a term with the question that `context`'s ranking leaves out,
        best first: those under its relevance floor, and those sharing only single Chinese
        characters (every term counts towards their score, as `query` counts it for nodes).
        Read as recall reads its candidates, then once more with the single characters."""
        from ..errors import EkkoError
        from ..retrieval import rank, score
        from .recall import MAX_POOL, POOL, _message, repeats
        if not query.terms:
            return []
        size = max(POOL, min(MAX_POOL, room))
        reads = [query.strong_terms] + ([query.terms] if query.terms != query.strong_terms
                                        else [])
        pool: dict = {}
        df: dict[str, int] = {}
        total = 0
        for name, store in stores:
            try:
                counts = store.recall.term_counts("message", query.terms)
                for terms in reads:
                    for msg in store.recall.message_hits(terms, counts, limit=size,
                                                         session=session, since=since):
                        pool.setdefault(msg["id"], _message(msg, name))
                total += store.recall.row_estimate("message")
            except EkkoError:
                continue  # as recall does: a db that cannot be searched adds nothing
            for term, count in counts.items():
                df[term] = df.get(term, 0) + count
        candidates = [c for c in pool.values() if not repeats(c.text, text)]
        score(_every_term_scores(query), candidates, df, total)
        return [c for c in rank(candidates, floor=0.0)[0] if c.id not in shown]

    def _since(self, text: str) -> str:
        """A start time: an ISO time or date, -2d, or time words (yesterday, last week, 上周)."""
        from ..env import format_time
        from ..policy.timeexpr import parse_since
        return format_time(parse_since(text, self.env.now()))

    def _classify(self, q: dict, exact: list[dict], relevant: list, now: str,
                  past: bool = False) -> dict:
        """`past`: the nodes are those that held at `now`, a past moment (the store chose
        them); a version replaced or expired since was in force then."""
        session = q.get("sessionId") or self.session()
        omitted: list[dict] = []
        seen: set[str] = set()

        def admit(node: dict) -> bool:
            if node["id"] in seen:
                return False
            seen.add(node["id"])
            if node["scope"] == "session" and node.get("sessionId") != session:
                return False  # another session's scratch memory is not ours to see
            reason = None
            expired = not past and (node["status"] == "expired" or bool(
                node.get("expiresAt") and node["expiresAt"] <= now))
            if node["status"] == "superseded" and not past and not q.get("includeSuperseded"):
                reason = "superseded"
            elif expired and not q.get("includeExpired"):
                reason = "expired"
            elif node["confidence"] < LOW_CONFIDENCE:
                reason = "low_confidence"
            if reason:
                omitted.append({"nodeId": node["id"], "reason": reason})
            return reason is None

        exact_nodes = [n for n in exact if admit(n)]
        relevant.sort(key=lambda row: (row[2], -row[1]))  # what context would take first
        scores = {n["id"]: s for n, s, _ in relevant}
        weak = {n["id"] for n, _, under in relevant if under}
        relevant_nodes = [n for n, _, _ in relevant if admit(n)]
        single = self.drafts.schema.is_single_valued
        active = [{**n, "status": "active"} if past else n for n in exact_nodes + relevant_nodes
                  if past or n["status"] == "active"]
        _, losers = conflict.resolve(active, now, single)
        lost = {n["id"] for n in losers}
        omitted += [{"nodeId": i, "reason": "conflict_lost"} for i in sorted(lost)]
        exact_nodes = sorted((n for n in exact_nodes if n["id"] not in lost),
                             key=lambda n: conflict.rank_key(n, now))
        relevant_nodes = [n for n in relevant_nodes if n["id"] not in lost]
        room = q["limit"]
        kept_exact, kept_relevant = exact_nodes[:room], relevant_nodes[: max(0, room -
                                                                             len(exact_nodes))]
        for node in exact_nodes[room:] + relevant_nodes[len(kept_relevant):]:
            omitted.append({"nodeId": node["id"], "reason": "over_limit"})
        kept_relevant = [{**n, "weak": True} if n["id"] in weak else n for n in kept_relevant]
        return {"exact": kept_exact, "relevant": kept_relevant, "omitted": omitted,
                "scores": {n["id"]: round(scores[n["id"]], 4) for n in kept_relevant}}

    def _normalise_query(self, query: dict) -> dict:
        unknown = set(query) - _QUERY_FIELDS
        if unknown:
            raise Rejected(f"unknown query field(s): {', '.join(sorted(unknown))}",
                           f"a MemoryQuery has: {', '.join(sorted(_QUERY_FIELDS))}")
        q = {k: v for k, v in query.items() if v is not None and v != []}
        if "scopes" in q:
            q["scopes"] = [check("scope", s) for s in q["scopes"]]
        if "types" in q:
            q["types"] = [check("type", t) for t in q["types"]]
        if isinstance(q.get("categoryPathPrefix"), str):
            q["categoryPathPrefix"] = [p for p in q["categoryPathPrefix"].split("/") if p]
        if "key" in q:
            q["key"] = self.drafts.schema_key(q["key"])
        q["limit"] = check("limit", q.get("limit", VALUES["limit"].default))
        return q

    # -- lookups by id ------------------------------------------------------------------------
    def find_node(self, identifier: str) -> dict:
        if not identifier:
            raise Rejected("no target node id given", "pass the id of the memory to change")
        for _, store in self.stores.existing():
            node = store.nodes.get_node(identifier)
            if node is not None:
                return node
        full = self.resolve_id(identifier, kinds=("node",))
        return self.find_node(full)

    def resolve_id(self, prefix: str,
                   kinds: tuple[str, ...] = ("node", "message", "summary", "event")) -> str:
        """The one id that starts with `prefix`, as git resolves short commit ids."""
        matches: list[str] = []
        for name, store in self.stores.existing():
            for kind in kinds:
                if name == "user" and kind in ("message", "summary", "context"):
                    continue
                matches += store.ids_with_prefix(kind, prefix)
        matches = sorted(set(matches))
        if not matches:
            raise NotFound(f"no memory record with id {prefix!r}",
                           "to list memory ids (history lists message ids)",
                           step=Step(command="query"))
        if len(matches) > 1:
            raise UsageError(f"id prefix {prefix!r} matches {len(matches)} records"
                             f" ({', '.join(matches[:3])}…)", "give more characters")
        return matches[0]

    def memory_get(self, selector: dict) -> dict | None:
        """The design's memory_get: by id, or the winning active node for type/key/value."""
        if selector.get("id"):
            try:
                return self.find_node(selector["id"])
            except NotFound:
                return None
        query = {k: selector[k] for k in ("key", "valueJson", "domain") if
                 selector.get(k) is not None}
        if selector.get("type"):
            query["types"] = [selector["type"]]
        if selector.get("scope"):
            query["scopes"] = [selector["scope"]]
        if not query:
            raise Rejected("memory_get needs an id or a type, key, value, scope or domain",
                           "pass at least one selector")
        found = self.retrieve({**query, "limit": 1})["exact"]
        return found[0] if found else None


def _every_term_scores(query):
    """`query` with every shared term counting towards a node's score, single CJK characters
    included (recall counts them only beside a word or bigram match)."""
    from ..retrieval import Query

    class Search(Query):
        __slots__ = ()

        @property
        def strong_terms(self) -> list[str]:
            return self.terms

    return Search(query.text, query.terms, query.window, query.precise)


def _finds(query):
    """Whether a node sharing the terms `matched` is found: by a word or bigram of the text
    (as recall finds it), or by at least two, and at least half, of the characters of one
    of its Chinese words: 打 and 球 of 打球 are in 我喜欢打篮球. One character alone is too
    common to find anything (菜 of 香菜 is in 剩菜 and 蔬菜)."""
    from ..tokens import is_cjk, runs
    strong = set(query.strong_terms)
    chars = {t for t in query.terms if len(t) == 1 and is_cjk(t)}
    words = [w for w in ({ch for ch in run if ch in chars} for run in runs(query.text)
                         if is_cjk(run[0])) if len(w) >= 2]

    def finds(matched: list[str]) -> bool:
        shared = set(matched)
        return bool(shared & strong) or any(
            len(shared & word) >= max(2, (len(word) + 1) // 2) for word in words)
    return finds
