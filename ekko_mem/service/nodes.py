"""memory_propose_update: normalise, check scope and schema, resolve same-kind memories, write."""
from __future__ import annotations

from ..errors import NeedsConfirmation, NotFound, Rejected, Step, refusal
from ..policy.reasons import explain
from ..values import check
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .audit_log import AuditLog
    from .drafts import Drafts
    from .graph import Graph
    from .queries import Queries


def kin_filter(node: dict, now: str) -> dict:
    """The find_nodes filter for the live nodes of `node`'s scope (and session), domain and
    type: where its rivals for a key are."""
    f = {"scopes": [node["scope"]], "domain": node["domain"], "types": [node["type"]],
         "now": now}
    if node["scope"] == "session":
        f["sessionId"] = node.get("sessionId")
    return f


class Nodes(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, queries: Queries,
                 audit_log: AuditLog, graph: Graph) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.queries = queries
        self.audit_log = audit_log
        self.graph = graph

    # -- the design's memory_propose_update ---------------------------------------------------
    def propose_update(self, operation: str, node: dict | None = None, *, reason: str = "",
                       actor: str = "agent", target_id: str | None = None,
                       confirm: bool = False, session: str | None = None,
                       replace: bool = False) -> dict:
        """Validate and apply one proposed change; returns {accepted, nodeId, reason, ...}.

        Refusals are answers, not exceptions: accepted is False, `code` is the exit code
        (3 needs confirmation, 4 rejected, 5 not found) and nothing was written.
        A new structured value for a single-valued key keeps the old value's other fields
        (a change of 辣 keeps 少油) unless `replace` says the statement replaces all of it.
        An update or supersede never keeps the old title or content beside a new title,
        content, key or value (`_restated`).
        """
        from .graph import split_kinds
        node, kinds = split_kinds(node)
        result = self._propose(operation, node, reason, actor, target_id, confirm, session,
                               replace)
        if kinds and result.get("accepted") and result.get("scope"):
            store = self.stores.for_scope(result["scope"])
            node = store.nodes.get_node(result["nodeId"])
            if node is not None:
                self.graph.name_kinds(store, kinds, self.env.now_iso(), node, actor,
                                      self.audit_log.record)
        return result

    def _propose(self, operation, node, reason, actor, target_id, confirm, session,
                 replace) -> dict:
        try:
            operation, actor = check("operation", operation or ""), check("actor", actor or "")
            if operation == "create":
                return self._create(dict(node or {}), reason, actor, confirm, session,
                                    replace)
            target = self.queries.find_node(target_id or (node or {}).get("supersedesId") or "")
            if operation == "supersede":
                return self._supersede(target, dict(node or {}), reason, actor, confirm,
                                       session, replace)
            if operation == "update":
                return self._update(target, dict(node or {}), reason, actor, confirm, session)
            status = "expired" if operation == "expire" else "deleted"
            return self._set_status(target, status, reason, actor)
        except (Rejected, NeedsConfirmation, NotFound) as exc:
            return refusal(exc, {"accepted": False, "nodeId": None})

    # -- operations ---------------------------------------------------------------------------
    def _create(self, draft, reason, actor, confirm, session, replace=False) -> dict:
        node, notes = self.drafts.prepare_node(draft, actor=actor, confirm=confirm, session=session)
        store = self.stores.for_scope(node["scope"], create=True)
        now = node["createdAt"]
        with store.db.atomic():
            self.sweep_expired(store, now)
            # Read under the write lock: a concurrent writer may have changed the slot.
            same = self.same_kind(store, node)
            identical = next((old for old in same if self._identical(old, node)), None)
            if identical is not None:
                return self._refresh(store, identical, node, reason, actor, notes)
            rivals = [old for old in same if self.drafts.schema.is_single_valued(node.get("key"))]
            if rivals:
                self._confirm_override(rivals[0], node, actor, confirm)
                if not replace:
                    notes += self._merge_fields(rivals[0], node)
                return self._write_supersede(store, rivals[0], node, reason, actor, notes)
            store.nodes.insert_node(node)
            why = explain(reason, node, actor)
            self.audit_log.record(store, "create", node, actor, why, after=node, notes=notes)
        return self._accepted(node, "created", why, notes)

    def _supersede(self, old, draft, reason, actor, confirm, session, replace=False) -> dict:
        node, notes = self._new_version(old, draft, actor, confirm, session)
        if node["scope"] != old["scope"]:
            raise Rejected(f"a supersede stays in the old node's scope ({old['scope']})",
                           "forget the old node and remember the new one instead")
        self._confirm_override(old, node, actor, confirm)
        store = self.stores.for_scope(node["scope"])
        with store.db.atomic():
            old = self._still_active(store, old)
            if not replace and old.get("key") == node.get("key"):
                notes += self._merge_fields(old, node)
            return self._write_supersede(store, old, node, reason, actor, notes)

    def _update(self, old, draft, reason, actor, confirm, session) -> dict:
        """Small edits keep the id; a change of key, value, type or scope is a supersede."""
        meaning = ("key", "valueJson", "type", "scope", "domain", "categoryPath")
        if any(draft[k] is not None and draft[k] != old.get(k) for k in meaning if k in draft):
            return self._supersede(old, draft, reason, actor, confirm, session)
        node, notes = self._new_version(old, draft, actor, confirm, session)
        node.update(id=old["id"], createdAt=old["createdAt"], status=old["status"],
                    supersedesId=old.get("supersedesId"))
        store = self.stores.for_scope(old["scope"])
        with store.db.atomic():
            old = self._still_active(store, old)
            node["status"] = old["status"]
            store.nodes.replace_node(node)
            if node["status"] == "active" and _words_changed(old, node):
                self.graph.reread(store, node, self.env.now_iso())
            why = explain(reason or "updated", node, actor)
            self.audit_log.record(store, "update", node, actor, why, before=old, after=node,
                                  notes=notes)
        return self._accepted(node, "updated", why, notes)

    def _set_status(self, old, status, reason, actor) -> dict:
        store = self.stores.for_scope(old["scope"])
        now = self.env.now_iso()
        with store.db.atomic():
            old = self._still_active(store, old)
            store.nodes.set_status(old["id"], status, now)
            self.graph.retire(store, [old["id"]], now)
            after = {**old, "status": status, "updatedAt": now}
            self.audit_log.record(store, "expire" if status == "expired" else "delete", after,
                                  actor, reason, before=old, after=after)
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
                           "to look at it again, then retry",
                           step=Step(command="show", target=old["id"]))
        return current

    def _write_supersede(self, store, old, node, reason, actor, notes) -> dict:
        node["supersedesId"] = old["id"]
        node["parentId"] = node.get("parentId") or old.get("parentId") or old["id"]
        store.nodes.set_status(old["id"], "superseded", node["createdAt"])
        self.graph.retire(store, [old["id"]], node["createdAt"])
        store.nodes.insert_node(node)
        why = explain(reason or f"supersedes {old['id']}", node, actor)
        self.audit_log.record(store, "supersede", node, actor, why, before=old, after=node,
                              notes=notes)
        result = self._accepted(node, "superseded", why, notes)
        result["supersededId"] = old["id"]
        return result

    def _merge_fields(self, old, node) -> list[str]:
        """Fold the old value's other fields into a new structured value of a single-valued
        key; returns each field's before and after, for the supersede's audit event."""
        before, new = old.get("valueJson"), node.get("valueJson")
        if not (isinstance(before, dict) and isinstance(new, dict)
                and self.drafts.schema.is_single_valued(node.get("key"))):
            return []
        merged = {**before, **new}
        if merged != new:
            from ..extract.rules import worded
            zh = any("\u4e00" <= ch <= "\u9fff" for ch in node["title"])
            said = worded(node["key"], new, zh)
            node["valueJson"] = merged
            # Wording the rules gave the new fields alone is redone for the whole value;
            # words the person chose are kept.
            if said and said["title"] == node["title"]:
                node.update(worded(node["key"], merged, zh) or {})
        return ["; ".join(f"{field}: {before.get(field, '-')} -> {merged[field]}"
                          if before.get(field) != merged[field] else f"{field}: {merged[field]}"
                          f" (kept)" for field in merged)]

    def _refresh(self, store, old, node, reason, actor, notes) -> dict:
        fresh = {**old, "updatedAt": node["createdAt"],
                 "confidence": max(old["confidence"], node["confidence"]),
                 "importance": max(old["importance"], node["importance"]),
                 "explicit": old.get("explicit") or node.get("explicit")}
        for field in ("tags", "entities", "sourceMessageIds"):
            fresh[field] = list(dict.fromkeys([*old.get(field, []), *node.get(field, [])]))
        store.nodes.replace_node(fresh)
        self.audit_log.record(store, "refresh", fresh, actor, reason or "remembered again",
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
        key = old.get("key")
        if key is not None and old.get("valueJson") != node.get("valueJson"):
            return False
        if key is not None and not self.drafts.schema.is_state(key):
            return True
        return (old["title"].strip().lower() == node["title"].strip().lower()
                and old["content"].strip() == node["content"].strip())

    def same_kind(self, store, node) -> list[dict]:
        f = kin_filter(node, node["createdAt"])
        if node.get("key") is not None:
            f["key"] = node["key"]
            single = self.drafts.schema.is_single_valued(node["key"])
            if not single and not self.drafts.schema.is_state(node["key"]):
                f["valueJson"] = node.get("valueJson")
        else:
            f["categoryPrefix"] = node["categoryPath"]
        # Tasks are told apart by their text, so more of them are compared than one value's;
        # most tasks share their key, so they are read in rank order, the newest 200 at most.
        wide = self.drafts.schema.is_state(node.get("key"))
        return store.nodes.find_nodes({**f, "rankWalk": wide}, limit=200 if wide else 20)

    def _new_version(self, old, draft, actor, confirm, session) -> tuple[dict, list[str]]:
        """The node `draft` makes of `old`: what the draft leaves out carries over, but never
        words that describe the old version beside a new title, content, key or value."""
        given = {k: v for k, v in draft.items() if v is not None}
        merged = {**self._carry_over(old), **given, **_restated(old, given)}
        merged.pop("supersedesId", None)
        node, notes = self.drafts.prepare_node(merged, actor=actor, confirm=confirm,
                                               session=session)
        # Whether the value changed is known only once it is normalised (少辣 is
        # {"spicy": "low"}); then the words not given are made again, from the new value.
        # A task's state is not what its words say: a task done keeps them.
        changed = node.get("key") != old.get("key") or (
            node.get("valueJson") != old.get("valueJson")
            and not self.drafts.schema.is_state(node.get("key")))
        if changed and not (_given(given, "title") and _given(given, "content")):
            merged.update(_restated(old, given, node))
            node, notes = self.drafts.prepare_node(merged, actor=actor, confirm=confirm,
                                                   session=session)
        return node, notes

    def _carry_over(self, old) -> dict:
        keep = ("scope", "domain", "categoryPath", "type", "key", "valueJson", "title",
                "content", "confidence", "importance", "tags", "entities", "sourceMessageIds",
                "sessionId", "expiresAt", "explicit", "parentId")
        return {k: old[k] for k in keep if k in old}

    def sweep_expired(self, store, now: str) -> list[str]:
        """Past expiresAt: mark expired, audited. Runs inside write transactions."""
        swept = []
        for node in store.nodes.due_for_expiry(now):
            store.nodes.set_status(node["id"], "expired", now)
            self.graph.retire(store, [node["id"]], now)
            after = {**node, "status": "expired", "updatedAt": now}
            self.audit_log.record(store, "expire", after, "system", "expiresAt passed", before=node,
                        after=after)
            swept.append(node["id"])
        return swept

    def expire_due(self) -> dict:
        now = self.env.now_iso()
        swept: list[str] = []
        for _, store in self.stores.existing():
            with store.db.atomic():
                swept += self.sweep_expired(store, now)
        return {"expiredIds": swept}

    def _accepted(self, node, operation, reason, notes) -> dict:
        out = {"accepted": True, "nodeId": node["id"], "reason": reason,
               "operation": operation, "scope": node["scope"]}
        if notes:
            out["notes"] = notes
        return out


def _words_changed(old: dict, node: dict) -> bool:
    return any(old.get(k) != node.get(k) for k in ("title", "content", "entities"))


def _given(draft: dict, field: str) -> str | None:
    text = draft.get(field)
    return text.strip() if isinstance(text, str) and text.strip() else None


def _restated(old: dict, given: dict, node: dict | None = None) -> dict:
    """The title and content a new version puts in place of the old ones; None lets the draft
    rules make them (a title cut from the content, content that repeats the title, or
    `key: value`). A new title takes the old content's place and new content the old title's.
    With `node`, whose key or value is not `old`'s, the words the caller did not give are
    the rules' own for the new value where they have them: the old words described the old
    value."""
    title, content = _given(given, "title"), _given(given, "content")
    new_content = content is not None and content != old["content"].strip()
    out: dict = {}
    if title is None and new_content:
        out["title"] = None
    if content is None and title is not None and title != old["title"].strip():
        out["content"] = None
    if node is not None:
        said = {}
        if node.get("key") is not None:
            from ..extract.rules import worded
            zh = any("\u4e00" <= ch <= "\u9fff" for ch in title or content or old["title"])
            said = worded(node["key"], node.get("valueJson"), zh) or {}
        if title is None and not new_content:
            out["title"] = said.get("title")
        if content is None:
            out["content"] = said.get("content")
    return out
