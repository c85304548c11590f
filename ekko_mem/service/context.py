"""buildMemoryContext: the least memory the model needs, conflict-resolved, within budget.

A context call never writes memory and never blocks the conversation: any store that cannot
be read (missing, locked, corrupt, newer schema) is skipped with a warning, and the answer is
still a context (storeStatus degraded or disabled), unless the caller asked for --strict.
"""
from __future__ import annotations

import os

from ..errors import EkkoError, StoreUnavailable
from ..ids import new_id
from ..policy import conflict, topics
from ..trust import db_files

LOCK_TIMEOUT_S = 0.5  # a context waits at most this long for a locked db
HIGH_CONFIDENCE = 0.7
# The fixed sections' sizes (the design's 10-20 structured memories); everything else in the
# budget is filled from the ranked list, as far as the budget and the relevance floor allow.
LIMITS = {"tasks": 5, "constraints": 10, "preferences": 10}
# Priority in the budget, the design's order: current input > recent messages > task state >
# latest summary > high-confidence memory > related history > low-confidence memory.
PRIORITY = {"input": 0, "recent": 1, "task": 2, "summary": 3, "memory": 4, "history": 5,
            "weak": 6}


class ContextService:
    def build_context(self, text: str | None = None, *, session: str | None = None,
                      budget: int | None = None, counter: str | None = None,
                      strict: bool = False, with_input: bool = False,
                      markdown: bool = False, record: bool = True) -> dict:
        from ..policy.budget import get_counter
        warnings: list[str] = []
        config = self._context_config(warnings, strict)
        budget = config.get("context.budget") if budget is None else budget
        if budget < 0:
            from ..errors import UsageError
            raise UsageError(f"--budget must be 0 or more, not {budget}", "pass --budget 1200")
        from ..retrieval.limits import check_limit
        check_limit("budget", budget)
        counter_name = counter or config.get("context.counter")
        count = get_counter(counter_name)
        sid = self.session(session)
        text = (text or "").strip()
        stores, status = self._context_stores(warnings, strict)
        gathered = self._gather(stores, sid, text, warnings,
                                max(3, min(8, int(config.get("context.recent")))), budget)
        if stores and warnings and status == "ok":
            status = "degraded"
        context = self._pack(gathered, text, budget, count, counter_name, with_input,
                             markdown, config.get("context.header"))
        context["diagnostics"].update(enabled=bool(stores), storeStatus=status,
                                      warnings=warnings)
        if record and stores:
            self._record_run(context, sid, text, budget, warnings)
        return context

    # -- opening, degraded ----------------------------------------------------------------
    def _context_config(self, warnings, strict):
        try:
            return self.config
        except EkkoError as exc:
            if strict:
                raise
            warnings.append(f"config ignored: {exc.message}")
            from ..config import Config
            self._config = Config({}, {})
            return self._config

    def _context_stores(self, warnings, strict) -> tuple[list[tuple[str, object]], str]:
        stores = []
        failed = 0
        candidates = []
        try:
            candidates.append(("workspace", self.db_path))
        except EkkoError as exc:
            if strict:
                raise
            warnings.append(exc.message)
            failed += 1
        user = self.env.user_db()
        if os.path.exists(user):
            candidates.append(("user", user))
        for name, path in candidates:
            try:
                if not os.path.exists(path):
                    raise StoreUnavailable(f"{name} memory db {path} is missing",
                                           "run 'ekko-mem init'")
                # Refused as the writers refuse it: no reads, no run records.
                self._trusted(*db_files(path))
                store = self._open_for_context(path)
                if store.read_only_reason:
                    if strict:
                        store.close()
                        raise StoreUnavailable(f"{name} db: {store.read_only_reason}",
                                               "drop --strict to read what can be read")
                    warnings.append(f"{name} db: {store.read_only_reason}; read what it could")
                stores.append((name, store))
            except EkkoError as exc:
                if strict:
                    raise
                warnings.append(f"{name} db skipped: {exc.message}")
                failed += 1
        if name_is_workspace(stores):
            self._store = dict(stores)["workspace"]
        status = "ok" if not failed else ("degraded" if stores else "disabled")
        return stores, status

    def _open_for_context(self, path):
        from ..store import open_for_reading, open_store
        try:
            return open_store(path, allow_newer=True, timeout=LOCK_TIMEOUT_S)
        except StoreUnavailable as exc:
            if "locked" in exc.message or not os.path.exists(path):
                raise
            try:  # a read-only file system or file: read without writing anything
                return open_for_reading(path, timeout=LOCK_TIMEOUT_S)
            except StoreUnavailable:
                raise exc from None

    # -- retrieval ------------------------------------------------------------------------
    def _gather(self, stores, sid, text, warnings, recent_n, budget) -> dict:
        """The design's fixed sections, then one ranked list for the rest of the budget."""
        now = self.env.now_iso()
        out = {"recent": [], "summary": None, "nodes": [], "ranked": [], "omitted": [],
               "considered": 0, "belowFloor": 0}
        base = {"now": now, "statuses": ["active"]}
        hints = topics.categories_for(text) if text else []
        for name, store in stores:
            try:
                if name == "workspace":
                    out["recent"] = store.messages.list_recent_messages(sid, recent_n)
                    out["summary"] = store.summaries.get_latest_summary(sid)
                out["nodes"] += self._fixed_nodes(name, store, sid, text, base, hints)
            except EkkoError as exc:
                warnings.append(f"{name} db read failed: {exc.message}; used what was read")
        if text:
            shown = [m["id"] for m in out["recent"]] + (
                [out["summary"]["id"]] if out["summary"] else [])
            found = self.recall(stores, text, skip_ids=shown, node_filter=base,
                                warnings=warnings, room=budget // 40)
            out["ranked"] = found["ranked"]
            out.update(considered=found["considered"], belowFloor=found["belowFloor"])
        self._resolve_all(out, sid, now)
        return out

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

    def _resolve_all(self, out, sid, now) -> None:
        """Conflicts are settled over fixed and ranked nodes together; the fixed sections keep
        their winners, the ranked list keeps the rest of its winners."""
        ranked_nodes = [c.record for c in out["ranked"] if c.kind == "node"]
        fixed_ids = {n["id"] for n in out["nodes"]}
        winners = self._resolve(out["nodes"] + ranked_nodes, sid, now, out["omitted"])
        won = {n["id"] for n in winners}
        out["nodes"] = [n for n in winners if n["id"] in fixed_ids]
        out["ranked"] = [c for c in out["ranked"] if c.kind != "node" or (
            c.id in won and c.id not in fixed_ids)]

    def _resolve(self, nodes, sid, now, omitted) -> list[dict]:
        unique = {}
        for node in nodes:
            if node["scope"] == "session" and node.get("sessionId") != sid:
                continue
            if node["type"] == "task" and (node.get("valueJson") or {}).get("state") == "done":
                continue
            unique[node["id"]] = node
        winners, losers = conflict.resolve(list(unique.values()), now,
                                           self.schema.is_single_valued)
        omitted += [{"nodeId": n["id"], "reason": "conflict_lost"} for n in losers]
        return winners

    # -- packing --------------------------------------------------------------------------
    def _pack(self, gathered, text, budget, count, counter_name, with_input,
              markdown, header=None) -> dict:
        from ..render.context import build_items, render_text
        _mask_for_model(gathered)
        nodes = gathered["nodes"]
        sections = {
            "activeTasks": [n for n in nodes if n["type"] == "task"][: LIMITS["tasks"]],
            "constraints": [n for n in nodes if n["type"] in ("constraint", "decision", "fact")
                            ][: LIMITS["constraints"]],
            "preferences": [n for n in nodes if n["type"] in ("preference", "correction")
                            ][: LIMITS["preferences"]],
        }
        placed = {n["id"] for group in sections.values() for n in group}
        # Fixed nodes past their section's size join the ranked list, after its hits.
        ranked = gathered["ranked"] + [_as_candidate(n) for n in nodes if n["id"] not in placed]
        chinese = topics.is_chinese(text + "".join(n["title"] for n in nodes[:10]))
        items = build_items(text if with_input else "", gathered, sections,
                            _could_fit(ranked, budget, count), chinese, PRIORITY,
                            HIGH_CONFIDENCE)
        body, kept, omitted, used = render_text(items, budget, count, chinese, markdown,
                                                header)
        used_ids = [i for i in dict.fromkeys(k.split("#")[0] for k in kept) if i != "input"]
        keep = set(used_ids)
        packed = [c for c in ranked if c.id in keep]
        by_kind = {kind: [c.record for c in packed if c.kind == kind]
                   for kind in ("node", "message", "summary")}
        return {
            "contextId": new_id("context"), "queryText": text or None,
            "latestSummary": gathered["summary"] if gathered["summary"] and
            gathered["summary"]["id"] in keep else None,
            "recentMessages": [m for m in gathered["recent"] if m["id"] in keep],
            "activeTasks": [n for n in sections["activeTasks"] if n["id"] in keep],
            "relevantNodes": by_kind["node"],
            "constraints": [n for n in sections["constraints"] if n["id"] in keep],
            "preferences": [n for n in sections["preferences"] if n["id"] in keep],
            "relevantMessages": by_kind["message"],
            "relevantSummaries": by_kind["summary"],
            "usedMemoryIds": used_ids,
            "ranking": [_ranking_entry(c) for c in packed],
            "diagnostics": {
                "retrievedNodeCount": len(nodes) + sum(c.kind == "node" for c in ranked),
                "omittedNodeCount": len(gathered["omitted"]) + len(omitted),
                "budget": budget, "usedTokens": used, "tokenCounter": counter_name,
                "omitted": gathered["omitted"] + omitted,
                "truncated": [k.split("#")[0] for k, v in kept.items() if v],
                "candidatesConsidered": gathered["considered"],
                "belowRelevanceFloor": gathered["belowFloor"],
                "ranked": len(ranked), "packed": len(packed),
                "cutForBudget": [c.id for c in ranked if c.id not in keep],
            },
            "text": body,
        }

    def _record_run(self, context, sid, text, budget, warnings) -> None:
        """Remember which ids this context used, for `explain`. Never memory, never blocking."""
        store = self._store
        if store is None or store.read_only_reason:
            return
        from ..policy.sensitive import mask_secrets
        text = mask_secrets(text)  # the question is kept for explain, its credentials not
        try:
            with store.db.atomic():
                store.summaries.record_context_run({
                    "id": context["contextId"], "sessionId": sid, "queryText": text or None,
                    "budget": budget, "usedTokens": context["diagnostics"]["usedTokens"],
                    "usedMemoryIds": context["usedMemoryIds"], "createdAt": self.env.now_iso(),
                    "ranking": _run_ranking(context)})
        except EkkoError as exc:
            warnings.append(f"context run not recorded: {exc.message}")

    # -- explain --------------------------------------------------------------------------
    def explain(self, context_id: str | None = None) -> dict:
        from ..errors import NotFound
        if context_id is not None and not context_id.startswith("ctx_"):
            raise NotFound(f"{context_id!r} is not a context id", "context ids start with ctx_")
        if context_id is not None and len(context_id) < 22:
            context_id = self.resolve_id(context_id, kinds=("context",))
        run = self.store.summaries.get_context_run(context_id)
        if run is None:
            raise NotFound("no context run recorded" if context_id is None else
                           f"no context run {context_id}", "run 'ekko-mem context' first")
        ranking = run.get("ranking") or {}
        ranked = ranking.get("items", {})
        items = []
        for item_id in run["usedMemoryIds"]:
            items.append({**self._explain_item(item_id), **ranked.get(item_id, {})})
        return {"contextId": run["id"], "queryText": run["queryText"],
                "sessionId": run["sessionId"], "createdAt": run["createdAt"], "items": items,
                "retrieval": {k: v for k, v in ranking.items() if k != "items"}}

    def _explain_item(self, item_id: str) -> dict:
        from ..ids import kind_of
        kind = kind_of(item_id)
        if kind == "message":
            msg = self.store.messages.get_message(item_id)
            return {"id": item_id, "kind": "message", "exists": msg is not None,
                    "title": msg["content"][:80] if msg else "(message since removed)",
                    "sessionId": msg["sessionId"] if msg else None,
                    "createdAt": msg["createdAt"] if msg else None}
        if kind == "summary":
            summary = self.store.summaries.get_summary(item_id)
            return {"id": item_id, "kind": "summary", "exists": summary is not None,
                    "title": summary["summary"][:80] if summary else "(summary since removed)"}
        try:
            node = self.find_node(item_id)
        except EkkoError:
            try:
                node = (self.global_store() or None) and self.global_store().nodes.get_node(item_id)
            except EkkoError:
                node = None
        if not node:
            return {"id": item_id, "kind": "node", "exists": False,
                    "title": "(memory since forgotten)"}
        made = ("create", "supersede", "import")
        created = [e for e in self.audit(node_id=node["id"], limit=20)
                   if e["eventType"] in made] if node["scope"] != "global" else []
        sources = self.store.messages.get_messages(node.get("sourceMessageIds", []))
        return {"id": node["id"], "kind": "node", "exists": True, "title": node["title"],
                "content": node["content"], "scope": node["scope"], "type": node["type"],
                "status": node["status"], "actor": node.get("actor"),
                "reason": created[-1]["reason"] if created else None,
                "sources": [{"id": m["id"], "sessionId": m["sessionId"],
                             "createdAt": m["createdAt"], "content": m["content"]}
                            for m in sources]}


def _as_candidate(node: dict):
    from ..retrieval import Candidate
    return Candidate("node", node["id"], node["title"], node["updatedAt"], node)


def _mask_for_model(gathered: dict) -> None:
    """Credentials never leave through a context: every record it may print or carry in its
    JSON (text, tags, values, session names, summary lists) is masked as a whole, whatever
    path stored it."""
    from ..policy.sensitive import mask_json, mask_secrets
    gathered["recent"] = [mask_json(m) for m in gathered["recent"]]
    gathered["summary"] = mask_json(gathered["summary"])
    gathered["nodes"] = [mask_json(n) for n in gathered["nodes"]]
    for cand in gathered["ranked"]:
        cand.record = mask_json(cand.record)
        cand.text = mask_secrets(cand.text)


def _could_fit(ranked: list, budget: int, count) -> list:
    """The head of the ranked list that could still matter: items until their text adds up to
    twice the budget. Packing the rest would only cost time (it is counted as cut)."""
    head, total = [], 0
    for cand in ranked:
        if total > 2 * budget:
            break
        head.append(cand)
        total += count(cand.text)
    return head


def _run_ranking(context: dict) -> dict:
    """What `explain` needs later about how the ranked list was built: counts, and what brought
    each packed item in (ids and counts only, never text; scores stay out of explanations, as
    the design asks)."""
    diag = context["diagnostics"]
    return {"candidatesConsidered": diag["candidatesConsidered"], "ranked": diag["ranked"],
            "packed": diag["packed"], "belowRelevanceFloor": diag["belowRelevanceFloor"],
            "cutForBudget": len(diag["cutForBudget"]),
            "items": {r["id"]: {"via": r["via"]} for r in context["ranking"]}}


def _ranking_entry(cand) -> dict:
    return {"id": cand.id, "kind": cand.kind, "score": round(cand.score, 4),
            "via": cand.via, "matched": cand.matched}


def name_is_workspace(stores) -> bool:
    return any(name == "workspace" for name, _ in stores)
