"""`explain`: which memories a context run used, their sources and reasons. Apart from
Context, so that a context loads none of what an explanation reads (audit, lookups)."""
from __future__ import annotations

from ..errors import EkkoError, Step
from .context import settle
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .inspection import Inspection
    from .queries import Queries


class Explanations(UseCase):
    def __init__(self, stores: Stores, *, queries: Queries, inspection: Inspection) -> None:
        super().__init__(stores)
        self.queries = queries
        self.inspection = inspection

    def explain(self, context_id: str | None = None) -> dict:
        from ..errors import NotFound
        if context_id is not None and not context_id.startswith("ctx_"):
            raise NotFound(f"{context_id!r} is not a context id", "context ids start with ctx_")
        if context_id is not None and len(context_id) < 22:
            context_id = self.queries.resolve_id(context_id, kinds=("context",))
        self._settle_here()
        run = self.store.summaries.get_context_run(context_id)
        if run is None:
            raise NotFound("no context run recorded" if context_id is None else
                           f"no context run {context_id}", "first",
                           step=Step(command="context"))
        ranking = run.get("ranking") or {}
        ranked = ranking.get("items", {})
        items = []
        for item_id in run["usedMemoryIds"]:
            items.append({**self._explain_item(item_id), **ranked.get(item_id, {})})
        retrieval = {k: v for k, v in ranking.items() if k != "items"}
        if retrieval.get("entities"):
            retrieval["entities"] = [self._entity(entry) for entry in retrieval["entities"]]
        if retrieval.get("leftOut"):
            retrieval["leftOut"] = [self._left_out(entry) for entry in retrieval["leftOut"]]
        return {"contextId": run["id"], "queryText": run["queryText"],
                "sessionId": run["sessionId"], "createdAt": run["createdAt"], "items": items,
                "retrieval": retrieval}

    def _settle_here(self) -> None:
        """Before a run is read: drop the runs naming a user memory erased since this
        workspace last looked (another workspace's erasure cannot reach one it never heard
        of). An explanation is shown whether or not that could be done."""
        store = self.store
        if store.read_only_reason:
            return
        try:
            user = self.stores.user_store()
        except EkkoError:
            return
        settle(store, user)

    def _entity(self, entry: dict) -> dict:
        """An entity a run gave a line, by its name as it is now."""
        for _, store in self.stores.existing():
            found = store.graph.entity_by_id(entry["id"])
            if found is not None:
                return {**entry, "name": found["name"], "kind": found["kind"]}
        return {**entry, "name": None}

    def _left_out(self, entry: dict) -> dict:
        """A record the run left out, with its title as it is now."""
        from ..ids import kind_of
        if kind_of(entry["id"]) == "message":
            msg = self.store.messages.get_message(entry["id"])
            return {**entry, "kind": "message",
                    "title": msg["content"][:80] if msg else "(message since removed)"}
        try:
            title = self.queries.find_node(entry["id"])["title"]
        except EkkoError:
            title = "(memory since forgotten)"
        return {**entry, "kind": "node", "title": title}

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
        node: dict | None
        try:
            node = self.queries.find_node(item_id)
        except EkkoError:
            try:
                seed = self.stores.global_store()
                node = seed.nodes.get_node(item_id) if seed is not None else None
            except EkkoError:
                node = None
        if not node:
            return {"id": item_id, "kind": "node", "exists": False,
                    "title": "(memory since forgotten)"}
        made = ("create", "supersede", "import")
        created = [e for e in self.inspection.audit(node_id=node["id"], limit=20)
                   if e["eventType"] in made] if node["scope"] != "global" else []
        sources = self.store.messages.get_messages(node.get("sourceMessageIds", []))
        return {"id": node["id"], "kind": "node", "exists": True, "title": node["title"],
                "content": node["content"], "scope": node["scope"], "type": node["type"],
                "status": node["status"], "actor": node.get("actor"),
                "reason": created[-1]["reason"] if created else None,
                "sources": [{"id": m["id"], "sessionId": m["sessionId"],
                             "createdAt": m["createdAt"], "content": m["content"]}
                            for m in sources]}
