"""memory_forget: soft by default, hard on request, with confirmation for anything broad."""
from __future__ import annotations

from ..errors import NeedsConfirmation, NotFound, Rejected
from ..policy.vocab import ACTORS, choose

ALL_STATUSES = ["active", "superseded", "expired", "deleted"]


class ForgetService:
    def forget(self, selector: dict, *, mode: str = "soft", reason: str = "",
               confirm: bool = False, purge_sources: bool = False,
               actor: str = "user") -> dict:
        """Returns {deletedIds, mode, requiresConfirmation?, reason?, candidates?}."""
        try:
            actor = choose("actor", actor, ACTORS)
            if mode not in ("soft", "hard"):
                raise Rejected(f"unknown mode {mode!r}", "use soft or hard")
            if purge_sources and mode != "hard":
                raise Rejected("--purge-sources removes text for good", "add --hard")
            found = self._forget_candidates(selector, mode)
            if not found:
                raise NotFound("no memory matches that selector", "check it with 'ekko-mem query'")
            if (len(found) > 1 or mode == "hard") and not confirm:
                why = (f"{len(found)} memories match" if len(found) > 1 else
                       "a hard delete cannot be undone")
                raise NeedsConfirmation(why, "rerun with --yes to go ahead", data={
                    "candidates": [{"id": n["id"], "title": n["title"], "scope": n["scope"],
                                    "status": n["status"]} for n, _ in found]})
            deleted = (self._hard_delete(found, reason, actor, purge_sources) if mode == "hard"
                       else self._soft_delete(found, reason, actor))
            return {"deletedIds": deleted, "mode": mode, "reason": reason or "forgotten"}
        except (Rejected, NeedsConfirmation, NotFound) as exc:
            return {"deletedIds": [], "mode": mode, "requiresConfirmation":
                    isinstance(exc, NeedsConfirmation), "reason": exc.message,
                    "hint": exc.hint, "code": int(exc.code), **exc.data}

    def _forget_candidates(self, selector: dict, mode: str) -> list[tuple[dict, object]]:
        statuses = ALL_STATUSES if mode == "hard" else ["active", "expired"]
        if selector.get("id"):
            node = self.find_node(selector["id"])
            if node["status"] not in statuses:
                raise NotFound(f"{node['id']} is already {node['status']}",
                               "use --hard to remove it for good")
            return [(node, self._store_for(node["scope"]))]
        f = {"statuses": statuses}
        for name, field in (("domain", "domain"), ("key", "key"), ("valueJson", "valueJson"),
                            ("categoryPathPrefix", "categoryPrefix"),
                            ("sourceMessageId", "sourceMessageId")):
            if selector.get(name) is not None:
                f[field] = selector[name]
        if f.get("key"):
            f["key"] = self.schema_key(f["key"])
        if isinstance(f.get("categoryPrefix"), str):
            f["categoryPrefix"] = [p for p in f["categoryPrefix"].split("/") if p]
        if selector.get("type"):
            f["types"] = [self.check_choice("type", selector["type"])]
        scope = self.check_choice("scope", selector.get("scope"))
        whole = selector.get("workspace") or selector.get("user")
        if len(f) == 1 and not scope and not whole:
            raise Rejected("forget needs an id or a selector",
                           "pass ID, or --scope/--domain/--category/--type/--key/--source-message")
        if scope == "global":
            raise Rejected("global memory is read-only", "it ships with ekko-mem")
        found = []
        for name, store in self._stores():
            if selector.get("user") and name != "user" or selector.get("workspace") and \
                    name != "workspace":
                continue
            scopes = [scope] if scope else None
            if name == "user" and scope not in (None, "user"):
                continue
            if name == "workspace" and scope == "user":
                continue
            nodes = store.find_nodes({**f, "scopes": scopes}, limit=10000)
            found += [(n, store) for n in nodes]
        return found

    def _soft_delete(self, found, reason, actor) -> list[str]:
        now = self.env.now_iso()
        for store in {id(s): s for _, s in found}.values():
            with store.db.atomic():
                for node, owner in found:
                    if owner is not store:
                        continue
                    node = store.get_node(node["id"])  # as it is now, under the lock
                    if node is None or node["status"] == "deleted":
                        continue
                    store.set_status(node["id"], "deleted", now)
                    after = {**node, "status": "deleted", "updatedAt": now}
                    self._audit(store, "delete", after, actor, reason or "forgotten",
                                before=node, after=after)
        return [n["id"] for n, _ in found]

    def _hard_delete(self, found, reason, actor, purge_sources) -> list[str]:
        deleted: list[str] = []
        sources: list[str] = []
        for store in {id(s): s for _, s in found}.values():
            with store.db.atomic():
                for node, owner in found:
                    if owner is store:
                        deleted += self._erase_chain(store, node, reason, actor)
                        sources += node.get("sourceMessageIds", [])
            store.optimize_fts()
            store.checkpoint()
        if purge_sources and sources:
            self._purge_messages(sorted(set(sources)), reason, actor)
        return list(dict.fromkeys(deleted))

    def _erase_chain(self, store, node, reason, actor) -> list[str]:
        """Remove a node and the older versions it superseded: they hold the same text."""
        erased = []
        current = node
        while current is not None:
            store.hard_delete_node(current["id"])
            store.scrub_events(current["id"])
            store.detach_successors(current["id"])
            erased.append(current["id"])
            prior = current.get("supersedesId")
            current = store.get_node(prior) if prior else None
        for node_id in erased:
            self._audit(store, "delete", {"id": node_id, "userId": node.get("userId"),
                                          "workspaceId": node.get("workspaceId")},
                        actor, reason or "hard delete", after={"mode": "hard"})
        return erased

    def _purge_messages(self, message_ids: list[str], reason, actor) -> None:
        store = self.store
        with store.db.atomic():
            stale = store.mark_summaries_stale(message_ids)
            removed = store.delete_messages(message_ids)
            self._audit(store, "purge", {"id": None}, actor, reason or "purge sources",
                        after={"messagesRemoved": removed, "messageIds": message_ids,
                               "summariesStale": stale})
        store.optimize_fts()
        store.checkpoint()
