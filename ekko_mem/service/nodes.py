"""memory_propose_update: normalise, check scope and schema, resolve same-kind memories, write."""
from __future__ import annotations

from ..errors import EkkoError, NeedsConfirmation, NotFound, Rejected
from ..ids import new_id
from ..policy.vocab import ACTORS, OPERATIONS, SCOPES, STATUSES, TYPES, choose
from .context import ContextService
from .drafts import DraftMixin
from .forget import ForgetService
from .inspect import InspectService
from .query import QueryService
from .recall import RecallService
from .remember import RememberService
from .summarize import SummaryService
from .transfer import TransferService
from .doctor import DoctorService
from .hooks import HookService


def _refusal(exc: EkkoError) -> dict:
    return {"accepted": False, "nodeId": None, "reason": exc.message, "hint": exc.hint,
            "requiresConfirmation": isinstance(exc, NeedsConfirmation), "code": int(exc.code),
            **exc.data}


class NodeService(DoctorService, HookService, TransferService, SummaryService, ContextService,
                  RememberService, DraftMixin, QueryService, RecallService, ForgetService,
                  InspectService):
    # -- the design's memory_propose_update ---------------------------------------------------
    def propose_update(self, operation: str, node: dict | None = None, *, reason: str = "",
                       actor: str = "agent", target_id: str | None = None,
                       confirm: bool = False, session: str | None = None) -> dict:
        """Validate and apply one proposed change; returns {accepted, nodeId, reason, ...}.

        Refusals are answers, not exceptions: accepted is False, `code` is the exit code
        (3 needs confirmation, 4 rejected, 5 not found) and nothing was written.
        """
        try:
            operation = choose("operation", operation, OPERATIONS)
            actor = choose("actor", actor, ACTORS)
            if operation == "create":
                return self._create(dict(node or {}), reason, actor, confirm, session)
            target = self.find_node(target_id or (node or {}).get("supersedesId") or "")
            if operation == "supersede":
                return self._supersede(target, dict(node or {}), reason, actor, confirm,
                                       session)
            if operation == "update":
                return self._update(target, dict(node or {}), reason, actor, confirm, session)
            status = "expired" if operation == "expire" else "deleted"
            return self._set_status(target, status, reason, actor)
        except (Rejected, NeedsConfirmation, NotFound) as exc:
            return _refusal(exc)

    # -- operations ---------------------------------------------------------------------------
    def _create(self, draft, reason, actor, confirm, session) -> dict:
        node, notes = self.prepare_node(draft, actor=actor, confirm=confirm, session=session)
        store = self._store_for(node["scope"], create=True)
        now = node["createdAt"]
        with store.db.atomic():
            self._sweep_expired(store, now)
            # Read under the write lock: a concurrent writer may have changed the slot.
            same = self._same_kind(store, node)
            identical = next((old for old in same if self._identical(old, node)), None)
            if identical is not None:
                return self._refresh(store, identical, node, reason, actor, notes)
            rivals = [old for old in same if self.schema.is_single_valued(node.get("key"))]
            if rivals:
                self._confirm_override(rivals[0], node, actor, confirm)
                return self._write_supersede(store, rivals[0], node, reason, actor, notes)
            store.nodes.insert_node(node)
            self._audit(store, "create", node, actor, reason or "remembered", after=node,
                        notes=notes)
        return self._accepted(node, "created", reason or "remembered", notes)

    def _supersede(self, old, draft, reason, actor, confirm, session) -> dict:
        merged = {**self._carry_over(old), **{k: v for k, v in draft.items() if v is not None}}
        merged.pop("supersedesId", None)
        merged.setdefault("scope", old["scope"])
        node, notes = self.prepare_node(merged, actor=actor, confirm=confirm, session=session)
        if node["scope"] != old["scope"]:
            raise Rejected(f"a supersede stays in the old node's scope ({old['scope']})",
                           "forget the old node and remember the new one instead")
        self._confirm_override(old, node, actor, confirm)
        store = self._store_for(node["scope"])
        with store.db.atomic():
            old = self._still_active(store, old)
            return self._write_supersede(store, old, node, reason, actor, notes)

    def _update(self, old, draft, reason, actor, confirm, session) -> dict:
        """Small edits keep the id; a change of key, value, type or scope is a supersede."""
        merged = {**self._carry_over(old), **{k: v for k, v in draft.items() if v is not None}}
        meaning = ("key", "valueJson", "type", "scope", "domain", "categoryPath")
        if any(merged.get(k) != old.get(k) for k in meaning if k in draft):
            return self._supersede(old, draft, reason, actor, confirm, session)
        node, notes = self.prepare_node(merged, actor=actor, confirm=confirm, session=session)
        node.update(id=old["id"], createdAt=old["createdAt"], status=old["status"],
                    supersedesId=old.get("supersedesId"))
        store = self._store_for(old["scope"])
        with store.db.atomic():
            old = self._still_active(store, old)
            node["status"] = old["status"]
            store.nodes.replace_node(node)
            self._audit(store, "update", node, actor, reason, before=old, after=node,
                        notes=notes)
        return self._accepted(node, "updated", reason or "updated", notes)

    def _set_status(self, old, status, reason, actor) -> dict:
        store = self._store_for(old["scope"])
        now = self.env.now_iso()
        with store.db.atomic():
            old = self._still_active(store, old)
            store.nodes.set_status(old["id"], status, now)
            after = {**old, "status": status, "updatedAt": now}
            self._audit(store, "expire" if status == "expired" else "delete", after, actor,
                        reason, before=old, after=after)
        return self._accepted(after, "expired" if status == "expired" else "deleted",
                              reason or status, [])

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _still_active(store, old: dict) -> dict:
        """The node as it is now, under the write lock; a change that raced us wins."""
        current = store.nodes.get_node(old["id"])
        if current is None or current["status"] != "active":
            state = "gone" if current is None else current["status"]
            raise Rejected(f"{old['id']} is {state}, not active",
                           "look at it again with 'ekko-mem show' and retry")
        return current

    def _write_supersede(self, store, old, node, reason, actor, notes) -> dict:
        node["supersedesId"] = old["id"]
        node["parentId"] = node.get("parentId") or old.get("parentId") or old["id"]
        store.nodes.set_status(old["id"], "superseded", node["createdAt"])
        store.nodes.insert_node(node)
        self._audit(store, "supersede", node, actor, reason or "superseded",
                    before=old, after=node, notes=notes)
        result = self._accepted(node, "superseded", reason or f"supersedes {old['id']}", notes)
        result["supersededId"] = old["id"]
        return result

    def _refresh(self, store, old, node, reason, actor, notes) -> dict:
        fresh = {**old, "updatedAt": node["createdAt"],
                 "confidence": max(old["confidence"], node["confidence"]),
                 "importance": max(old["importance"], node["importance"]),
                 "explicit": old.get("explicit") or node.get("explicit")}
        for field in ("tags", "entities", "sourceMessageIds"):
            fresh[field] = list(dict.fromkeys([*old.get(field, []), *node.get(field, [])]))
        store.nodes.replace_node(fresh)
        self._audit(store, "refresh", fresh, actor, reason or "remembered again",
                    before=old, after=fresh, notes=notes)
        return self._accepted(fresh, "refreshed", f"already remembered as {old['id']};"
                              " refreshed it instead of adding a duplicate", notes)

    def _confirm_override(self, old, node, actor, confirm) -> None:
        # The design: overriding a high-confidence memory on a vague new statement needs a yes.
        strong_old = old.get("explicit") and old["confidence"] >= 0.9
        weak_new = actor != "user" and not node.get("explicit")
        if strong_old and weak_new and not confirm:
            raise NeedsConfirmation(
                f"{old['id']} ({old['title']}) is an explicit, high-confidence memory",
                "confirm to supersede it", data={"targetId": old["id"]})

    def _identical(self, old, node) -> bool:
        if old.get("key") is not None:
            return old.get("valueJson") == node.get("valueJson")
        return (old["title"].strip().lower() == node["title"].strip().lower()
                and old["content"].strip() == node["content"].strip())

    def _same_kind(self, store, node) -> list[dict]:
        f = {"scopes": [node["scope"]], "domain": node["domain"], "types": [node["type"]],
             "now": node["createdAt"]}
        if node["scope"] == "session":
            f["sessionId"] = node.get("sessionId")
        if node.get("key") is not None:
            f["key"] = node["key"]
            if not self.schema.is_single_valued(node["key"]):
                f["valueJson"] = node.get("valueJson")
        else:
            f["categoryPrefix"] = node["categoryPath"]
        return store.nodes.find_nodes(f, limit=20)

    def _carry_over(self, old) -> dict:
        keep = ("scope", "domain", "categoryPath", "type", "key", "valueJson", "title",
                "content", "confidence", "importance", "tags", "entities", "sourceMessageIds",
                "sessionId", "expiresAt", "explicit", "parentId")
        return {k: old[k] for k in keep if k in old}

    def _sweep_expired(self, store, now: str) -> list[str]:
        """Past expiresAt: mark expired, audited. Runs inside write transactions."""
        swept = []
        for node in store.nodes.due_for_expiry(now):
            store.nodes.set_status(node["id"], "expired", now)
            after = {**node, "status": "expired", "updatedAt": now}
            self._audit(store, "expire", after, "system", "expiresAt passed", before=node,
                        after=after)
            swept.append(node["id"])
        return swept

    def expire_due(self) -> dict:
        now = self.env.now_iso()
        swept: list[str] = []
        for _, store in self._stores():
            with store.db.atomic():
                swept += self._sweep_expired(store, now)
        return {"expiredIds": swept}

    def _audit(self, store, kind, node, actor, reason, *, before=None, after=None,
               notes=None) -> str:
        event_id = new_id("event")
        if node.get("scope") == "user" and node.get("sourceMessageIds"):
            # Where a later purge of its sources must look; written with the node, so a
            # refused write leaves no trace of it.
            store.erasure.note_workspace(self.store.store_id(), self.root, self.env.now_iso())
        payload = {"before": before, "after": after}
        if notes:
            payload["notes"] = notes
        store.nodes.add_event({"id": event_id, "eventType": kind, "nodeId": node["id"],
                         "sessionId": node.get("sessionId"),
                         "workspaceId": node.get("workspaceId"), "userId": node.get("userId"),
                         "actor": actor, "reason": reason or kind, "payload": payload,
                         "createdAt": self.env.now_iso()})
        return event_id

    def _accepted(self, node, operation, reason, notes) -> dict:
        out = {"accepted": True, "nodeId": node["id"], "reason": reason,
               "operation": operation, "scope": node["scope"]}
        if notes:
            out["notes"] = notes
        return out

    # -- stores by scope ----------------------------------------------------------------------
    def _store_for(self, scope: str, *, create: bool = False):
        if scope == "user":
            return self.user_store(create=create)
        return self.store

    def _stores(self) -> list[tuple[str, object]]:
        """The dbs that exist: the workspace's (when there is one) and the user's."""
        found = []
        try:
            found.append(("workspace", self.store))
        except EkkoError:
            if self._workspace_arg is not None or self.env.find_workspace() is not None:
                raise
        user = self.user_store()
        if user is not None:
            found.append(("user", user))
        return found

    def check_choice(self, kind: str, value: str | None):
        table = {"scope": SCOPES, "type": TYPES, "status": STATUSES}[kind]
        return None if value is None else choose(kind, value, table)
