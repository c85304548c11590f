"""buildMemoryContext: the least memory the model needs, conflict-resolved, within budget.

A context call never writes memory and never blocks the conversation: any store that cannot
be read (missing, locked, corrupt, newer schema) is skipped with a warning, and the answer is
still a context (storeStatus degraded or disabled), unless the caller asked for strict mode.
"""
from __future__ import annotations


from ..errors import EkkoError
from ..policy import conflict, topics
from ..policy.schema import HEALTH_KEYS
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .drafts import Drafts
    from .graph import Graph
    from .recall import Recall


# Earlier messages checked for a source taken back: at most this many of the ranked list's
# head (what a budget could print), so the check's cost is bounded too.
MAX_CHECKED = 200
# The best-ranked memories looked at for the change a "before the switch" question means.
BEFORE_CHANGE_ROOM = 5
# The topics that bring health and diet limits into a context with a question.
HEALTH_TOPICS = {"food", "health"}


class Context(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, recall: Recall, graph: Graph) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.recall = recall
        self.graph = graph

    def build_context(self, text: str | None = None, *, session: str | None = None,
                      budget: int | None = None, counter: str | None = None,
                      strict: bool = False, with_input: bool = False,
                      markdown: bool = False, record: bool = True,
                      as_of: str | None = None) -> dict:
        from ..policy.budget import get_counter
        from ..values import check
        budget, counter = check("budget", budget), check("counter", counter)
        warnings: list[str] = []
        config = self.stores.config_or_defaults(warnings, strict)
        budget = config.get("context.budget") if budget is None else budget
        counter_name = counter or config.get("context.counter")
        count = get_counter(counter_name)
        sid = self.session(session)
        text = (text or "").strip()
        stores, status = self.stores.for_context(warnings, strict)
        then = self.as_of(as_of) or (self._asked_as_of(stores, text) if text else None)
        gathered = self._gather(stores, sid, text, warnings, config.get("context.recent"),
                                budget, then)
        if stores and warnings and status == "ok":
            status = "degraded"
        from ..policy.packing import pack_context
        context = pack_context(gathered, text, budget, count, counter_name, with_input,
                               markdown, config.get("context.header"))
        context["diagnostics"].update(enabled=bool(stores), storeStatus=status,
                                      warnings=warnings, asOf=then)
        if record and stores:
            self._record_run(context, sid, text, budget, warnings, dict(stores).get("user"),
                             _records_question(config))
        return context

    # -- retrieval ------------------------------------------------------------------------
    def _asked_as_of(self, stores, text: str) -> str | None:
        """The moment a question asks about: a past period it names, or just before the
        change its words find ("before the switch": the best-ranked memory that replaced
        another, as of a millisecond before it was written)."""
        from ..policy.timeexpr import asked_as_of, asks_before_change
        said = asked_as_of(text, self.env.now())
        if said is not None or not asks_before_change(text):
            return said
        # Replaced versions too: "before we switched to Postgres" means the change that
        # made the Postgres version, which a later switch has replaced in turn.
        found = self.recall.recall(stores, text, kinds=("node",), room=BEFORE_CHANGE_ROOM,
                                   node_filter={"now": self.env.now_iso(),
                                                "statuses": ["active", "superseded"]})
        change = next((c.record for c in found["ranked"][:BEFORE_CHANGE_ROOM]
                       if c.record.get("supersedesId")), None)
        if change is None:
            return None
        from datetime import timedelta

        from ..env import format_time, parse_time
        return format_time(parse_time(change["createdAt"]) - timedelta(milliseconds=1))

    def _gather(self, stores, sid, text, warnings, recent_n, budget, then=None) -> dict:
        """The design's fixed sections, then one ranked list for the rest of the budget. With
        `then`, the memories and edges are those that held then; the log is searched as
        always (it is what was said, not what held)."""
        now = self.env.now_iso()
        out: dict = {"recent": [], "summary": None, "nodes": [], "ranked": [],
                     "omitted": [], "considered": 0, "belowFloor": 0}
        base: dict = {"now": now, "statuses": ["active"]}
        if then is not None:
            base = {"now": then, "asOf": then, "statuses": ["active", "superseded", "expired"]}
        hints = topics.categories_for(text) if text else []
        # With a question, private memory waits for its topic; with none, nothing says what
        # the context is about, and it goes in as it always did.
        opened = topics.opened_by(text) if text else None
        for name, store in stores:
            try:
                if name == "workspace":
                    out["recent"] = store.messages.list_recent_messages(sid, recent_n)
                    out["summary"] = store.summaries.get_latest_summary(sid)
                out["nodes"] += self._fixed_nodes(name, store, sid, text, base, hints)
            except EkkoError as exc:
                warnings.append(f"{name} db read failed: {exc.message}; used what was read")
        retired: list[dict] = []
        if text:
            shown = [m["id"] for m in out["recent"]] + (
                [out["summary"]["id"]] if out["summary"] else [])
            found = self.recall.recall(stores, text, skip_ids=shown, node_filter=base,
                                     warnings=warnings, room=budget // 40, retired=retired)
            out["ranked"] = found["ranked"]
            out.update(considered=found["considered"], belowFloor=found["belowFloor"])
        if then is not None:
            _as_they_were(out)
        off_topic = self._keep_on_topic(out, opened) if opened is not None else []
        if opened is None or opened & HEALTH_TOPICS:
            out["nodes"] += self._health_nodes(stores, base, warnings)
        lost = self._resolve_all(out, sid, then or now)
        self._leave_out_retired(stores, out, text, retired + lost + off_topic, lost, now,
                                budget, warnings, then is not None)
        if text:
            out["entities"] = self._people(stores, sid, text, opened, then or now,
                                           then is not None, warnings)
        if opened is not None:
            out["food"] = bool(opened & HEALTH_TOPICS)
        else:
            gathered = out["nodes"] + [c.record for c in out["ranked"] if c.kind == "node"]
            out["food"] = topics.involves_food(text, [n for n in gathered
                                                      if n.get("key") not in HEALTH_KEYS])
        return out

    @staticmethod
    def _keep_on_topic(out, opened: set[str]) -> list[dict]:
        """Leave out private memory whose topic the question did not open (policy/topics.py
        GATES); a food memory the words found opens food, as a recipe brings the diet limits.
        Returns what was left out."""
        ranked = [c.record for c in out["ranked"] if c.kind == "node"]
        if any(topics.is_food(n) and topics.gate_of(n) is None for n in ranked):
            opened.add("food")
        found = {n["id"] for n in ranked}
        gone = [n for n in out["nodes"] + ranked
                if not topics.on_topic(n, opened, found_by_words=n["id"] in found)]
        gone_ids = {n["id"] for n in gone}
        out["nodes"] = [n for n in out["nodes"] if n["id"] not in gone_ids]
        out["ranked"] = [c for c in out["ranked"] if c.id not in gone_ids]
        out["omitted"] += [{"nodeId": i, "reason": "off_topic"} for i in dict.fromkeys(
            n["id"] for n in gone)]
        return gone

    def _leave_out_retired(self, stores, out, text, known, lost, now, budget,
                           warnings, past=False) -> None:
        """A message only a memory no longer active was taken from stays out: what it said
        was taken back. A question about how things were (or a context as of a past day,
        `past`) gets it, marked as earlier."""
        earlier = [c.id for c in out["ranked"] if c.kind == "message"][
            :min(MAX_CHECKED, max(20, budget // 25))]
        known = known + out["nodes"] + [c.record for c in out["ranked"] if c.kind == "node"]
        retired = self.recall.retired_sources(
            stores, [m["id"] for m in out["recent"]], earlier, known,
            {n["id"] for n in lost}, now, warnings)
        if not retired:
            return
        if past or (text and topics.asks_history(text)):
            out["earlier"] = set(retired)
            return
        out["recent"] = [m for m in out["recent"] if m["id"] not in retired]
        out["ranked"] = [c for c in out["ranked"] if c.id not in retired]
        out["omitted"] += [{"nodeId": mid, "reason": "source_retired", "sourceOf": ids}
                           for mid, ids in retired.items()]

    def _people(self, stores, sid, text, opened, moment, past, warnings) -> list[dict]:
        """A line for each person, pet, place or thing the question names (or reaches by
        roles), from edges whose memory this context could show at `moment` (a past one when
        `past`): in force then (never a forgotten one), not expired by then, not another
        session's, and not private memory off the question's topic."""
        seen: dict[str, bool] = {}

        def visible(store, node_id: str) -> bool:
            if node_id not in seen:
                node = store.nodes.get_node(node_id)
                seen[node_id] = node is not None and _held_then(node, moment, past) and not (
                    node["scope"] == "session" and node.get("sessionId") != sid) and (
                    opened is None or topics.on_topic(node, opened))
            return seen[node_id]

        try:
            return self.graph.about(stores, text, until=moment, visible=visible)
        except EkkoError as exc:
            warnings.append(f"entity graph read failed: {exc.message}; left out")
            return []

    @staticmethod
    def _health_nodes(stores, base, warnings) -> list[dict]:
        """Health and diet limits, read by key, not by type or query, so none is missed
        however many other constraints there are; packing puts them first."""
        nodes: list[dict] = []
        for name, store in stores:
            try:
                for key in sorted(HEALTH_KEYS):
                    nodes += store.nodes.find_nodes({**base, "key": key}, limit=20)
            except EkkoError as exc:
                warnings.append(f"{name} db read failed: {exc.message}; used what was read")
        return nodes

    def _fixed_nodes(self, name, store, sid, text, base, hints) -> list[dict]:
        nodes: list[dict] = []
        if name == "workspace":
            nodes += store.nodes.find_nodes({**base, "types": ["task"]}, limit=20)
            # Project rules always apply; decisions and facts when there is no input to
            # judge relevance by (with input, the ranked list brings the relevant ones).
            nodes += store.nodes.find_nodes(
                {**base, "scopes": ["workspace"], "types": ["constraint"] if text
                 else ["constraint", "decision", "fact"]}, limit=30)
            nodes += store.nodes.find_nodes({**base, "scopes": ["session"], "sessionId": sid},
                                      limit=30)
        else:
            nodes += store.nodes.find_nodes({**base, "types": ["constraint"]}, limit=20)
            if not text:
                nodes += [n for n in store.nodes.find_nodes({**base, "types": ["preference"]},
                                                      limit=20) if n["importance"] >= 0.8]
        for prefix in hints:
            for kind in ("preference", "constraint"):
                nodes += store.nodes.find_in_category(
                    {**base, "types": [kind], "categoryPrefix": prefix}, limit=20)
        return nodes

    def _resolve_all(self, out, sid, now) -> list[dict]:
        """Conflicts are settled over fixed and ranked nodes together; the fixed sections keep
        their winners, the ranked list keeps the rest of its winners. Returns the losers."""
        ranked_nodes = [c.record for c in out["ranked"] if c.kind == "node"]
        fixed_ids = {n["id"] for n in out["nodes"]}
        winners, losers = self._resolve(out["nodes"] + ranked_nodes, sid, now, out["omitted"])
        won = {n["id"] for n in winners}
        out["nodes"] = [n for n in winners if n["id"] in fixed_ids]
        out["ranked"] = [c for c in out["ranked"] if c.kind != "node" or (
            c.id in won and c.id not in fixed_ids)]
        return losers

    def _resolve(self, nodes, sid, now, omitted) -> tuple[list[dict], list[dict]]:
        unique = {}
        for node in nodes:
            if node["scope"] == "session" and node.get("sessionId") != sid:
                continue
            if node["type"] == "task" and (node.get("valueJson") or {}).get("state") == "done":
                continue
            unique[node["id"]] = node
        winners, losers = conflict.resolve(list(unique.values()), now,
                                           self.drafts.schema.is_single_valued)
        omitted += [{"nodeId": n["id"], "reason": "conflict_lost"} for n in losers]
        return winners, losers

    def _record_run(self, context, sid, text, budget, warnings, user, keep_question) -> None:
        """Remember which ids this context used, for `explain`. Never memory, never blocking.
        Runs here that name a user memory erased meanwhile go first (`settle`)."""
        store = self.stores.workspace_if_open()
        if store is None:
            return
        settle(store, user)
        try:
            with store.db.atomic():
                store.summaries.record_context_run({
                    "id": context["contextId"], "sessionId": sid,
                    "queryText": stored_question(text, keep_question),
                    "budget": budget, "usedTokens": context["diagnostics"]["usedTokens"],
                    "usedMemoryIds": context["usedMemoryIds"], "createdAt": self.env.now_iso(),
                    "ranking": _run_ranking(context)})
        except EkkoError as exc:
            warnings.append(f"context run not recorded: {exc.message}")


def _held_then(node: dict, moment: str, past: bool) -> bool:
    """Whether a memory was in force at `moment`: now, only an active one; as of a past
    moment, one made by then and not replaced or expired by then. Never a forgotten one."""
    if node["status"] == "deleted" or (node.get("expiresAt") or "\uffff") <= moment:
        return False
    if not past:
        return node["status"] == "active"
    return node["createdAt"] <= moment and (node["status"] == "active"
                                            or node["updatedAt"] > moment)


def _as_they_were(out: dict) -> None:
    """As of a past moment, a memory replaced or expired since was active then: it competes
    and resolves as it did then."""
    out["nodes"] = [{**n, "status": "active"} for n in out["nodes"]]
    for cand in out["ranked"]:
        if cand.kind == "node":
            cand.record = {**cand.record, "status": "active"}


# The most characters of a question a context run keeps for `explain`: enough to recognise
# it, never a pasted file (a 50 MB question once became a 50 MB row).
QUESTION_KEPT = 1000


def stored_question(text: str, keep: bool) -> str | None:
    """The question as a run stores it: credentials masked, cut at QUESTION_KEPT characters
    with a visible "…"; with `keep` off, only its digest ("sha256:<hex>", of the masked text)."""
    if not text:
        return None
    from ..policy.sensitive import mask_secrets
    text = mask_secrets(text)  # the question is kept for explain, its credentials not
    if not keep:
        import hashlib
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return f"sha256:{digest}"
    return text if len(text) <= QUESTION_KEPT else text[: QUESTION_KEPT - 1] + "…"


def _records_question(config) -> bool:
    """`context.record_question`: false in either config file wins. A workspace's file may
    come with a cloned repository, so it can turn the recording off but not back on."""
    return all(entry.value is not False for entry in config.entries
               if entry.key == "context.record_question" and entry.problem is None)


def settle(workspace, user) -> None:
    """The workspace's context runs naming a record `user` has erased since it last read
    the tombstones, dropped (service/erasure.py settle_runs). Never fails a context or an
    explanation: what cannot be done now is left for the next call."""
    from contextlib import suppress
    with suppress(EkkoError):
        # A user db that never erased anything has no tombstones, nor the key that their
        # digests are made with: one indexed read, and erasure's code is never loaded.
        if user is None or user.meta("erasure_key") is None:
            return
        from .erasure import settle_runs
        settle_runs(workspace, user)


def _run_ranking(context: dict) -> dict:
    """What `explain` needs later about how the ranked list was built: counts, and what brought
    each packed item in (ids and counts only, never text; scores stay out of explanations, as
    the design asks)."""
    diag = context["diagnostics"]
    ranking = {"candidatesConsidered": diag["candidatesConsidered"], "ranked": diag["ranked"],
               "packed": diag["packed"], "belowRelevanceFloor": diag["belowRelevanceFloor"],
               "cutForBudget": len(diag["cutForBudget"]),
               "items": {r["id"]: {"via": r["via"]} for r in context["ranking"]}}
    for entity in context.get("entities") or ():  # ids only, as everything a run keeps
        for node_id in entity["sourceNodeIds"]:
            ranking["items"].setdefault(node_id, {"via": ["entity"]})
        ranking.setdefault("entities", []).append({"id": entity["id"],
                                                   "from": entity["sourceNodeIds"]})
    left_out = [{"id": o["nodeId"], "reason": o["reason"]} for o in diag["omitted"]
                if o["reason"] in LEFT_OUT]
    if left_out:
        ranking["leftOut"] = left_out
    return ranking


# Why a record the context found was left out of it, in what `explain` shows: a message whose
# memory was taken back, and private memory off the question's topic.
LEFT_OUT = ("source_retired", "off_topic")
