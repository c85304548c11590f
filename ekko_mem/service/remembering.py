"""`remember`: a node from flags, or nodes extracted from free text (logged as their source)."""
from __future__ import annotations

from contextlib import ExitStack

from ..errors import Answer, NeedsConfirmation, NotFound, Rejected, Step, refusal
from ..ids import new_id
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .drafts import Drafts
    from .messages import Messages
    from .nodes import Nodes
    from .queries import Queries


class Remembering(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, queries: Queries, nodes: Nodes,
                 messages: Messages) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.queries = queries
        self.nodes = nodes
        self.messages = messages

    def remember(self, text: str | None = None, *, fields: dict | None = None,
                 supersedes: str | None = None, reason: str = "", actor: str = "user",
                 confirm: bool = False, session: str | None = None,
                 dry_run: bool = False) -> list[dict]:
        """One proposal per node; each result is the design's {accepted, nodeId, reason}.
        A dry run answers with what each would store (see `_rehearse`) and writes nothing."""
        if dry_run:
            return self._rehearse(lambda: self.remember(
                text, fields=fields, supersedes=supersedes, reason=reason, actor=actor,
                confirm=confirm, session=session))
        fields = {k: v for k, v in (fields or {}).items() if v not in (None, [], "")}
        if text is not None and not text.strip():
            raise Rejected("the text to remember is empty", "pass TEXT or pipe it in")
        if text is not None:  # before any extraction work on it
            from ..policy.limits import check_size
            # A memory is what is worth keeping from a text; the text itself belongs in the log.
            check_size("the text to remember", text, self.config.get("limits.content"),
                       "limits.content", instead="remember the part worth keeping, keep the"
                       " whole text in the message log with 'ekko-mem log'")
        if fields or supersedes:
            if text is not None and supersedes:
                fields = {**self._said(text, fields, session), **fields}
            elif text is not None:
                fields.setdefault("content", text.strip())
            return self._remember_fields(text, fields, supersedes, reason, actor, confirm,
                                         session)
        if text is None:
            raise Rejected("nothing to remember", "give text, or a title, or a key with a value")
        return self._remember_text(text.strip(), reason, actor, confirm, session)

    def _past_expiry(self, given) -> str | None:
        """The expiry as stored, when it has already passed (a typed 2020 for 2026 stores a
        memory that is never seen); None when there is none or it is still ahead."""
        if not given:
            return None
        from ..env import format_time
        from ..policy.timeexpr import is_past, parse_when
        now = self.env.now()
        when = parse_when(str(given), now)
        return format_time(when) if is_past(when, now) else None

    def _rehearse(self, remember) -> list[dict]:
        """Run `remember` for real, in transactions on every db that are then rolled back: the
        same decision code, and nothing kept (no message, node or audit event). A user db that
        does not exist yet is stood in for by an empty one in memory, so no file is made."""
        self.stores.stand_in_user_store()
        stores = [store for _, store in self.stores.existing()]

        class _RollBack(Exception):
            pass

        plans: list[dict] = []
        try:
            with ExitStack() as held:
                for store in stores:
                    held.enter_context(store.db.atomic())
                answers = remember()
                plans = [_plan(answer, stores) for answer in answers]  # before the rollback
                raise _RollBack
        except _RollBack:
            pass
        return plans

    def _remember_fields(self, text, fields, supersedes, reason, actor, confirm, session):
        past = self._past_expiry(fields.get("expiresAt"))
        if past is not None and not confirm:
            return [refusal(NeedsConfirmation(
                f"the expiry {fields['expiresAt']!r} ({past}) has passed: the memory would be"
                " expired at once", "to store it anyway", step=Step("confirm")),
                {"accepted": False, "nodeId": None})]
        if text is None:
            answers = [self._propose(fields, supersedes, reason, actor, confirm, session)]
        else:
            answers = self._with_source(text, session, confirm, lambda mid: [self._propose(
                {**fields, "sourceMessageIds": [*fields.get("sourceMessageIds", []), mid]},
                supersedes, reason, actor, confirm, session)])
        for answer in answers if past is not None else ():
            if answer.get("accepted"):
                answer.setdefault("notes", []).append(
                    f"expired at once: its expiry ({past}) has passed")
        return answers

    def _propose(self, fields, supersedes, reason, actor, confirm, session) -> dict:
        if supersedes:
            return self.nodes.propose_update("supersede", fields, target_id=supersedes,
                                       reason=reason, actor=actor, confirm=confirm,
                                       session=session)
        return self.nodes.propose_update("create", fields, reason=reason, actor=actor,
                                   confirm=confirm, session=session)

    def _read(self, text: str, session) -> list[dict]:
        """The rules' extraction items for `text`, as if it were the next message."""
        from ..extract.rules import extract
        now = self.env.now_iso()
        probe = {"id": "msg_pending", "sessionId": self.session(session), "role": "user",
                 "content": text, "createdAt": now}
        extraction = extract([probe], now=now, end_of_day=self.drafts.end_of_day())
        return extraction.get("nodes") or []

    def _said(self, text: str, fields: dict, session) -> dict:
        """A new version given as text, in the words a fresh `remember TEXT` stores: the one
        lasting keyed statement the rules read in it (key, value, title and content agree),
        else the text without the request around it, from which the title is cut."""
        from ..extract.rules import without_request
        plain = {"content": without_request(text) or text.strip()}
        if any(fields.get(name) is not None for name in RESTATED):
            return plain  # the caller said what the text is; it is the content
        items = self._read(text, session)
        node = items[0]["node"] if len(items) == 1 else {}
        if (items and items[0].get("operation") in ("create", "supersede")
                and node.get("key") is not None and not node.get("expiresAt")):
            return {name: node[name] for name in RESTATED if node.get(name) is not None}
        return plain

    def _remember_text(self, text, reason, actor, confirm, session) -> list[dict]:
        from ..extract.rules import without_request
        items = self._read(text, session)
        # The person asked for this to be remembered: that is explicit intent, so a lasting
        # node the rules put in session scope only for want of intent takes its default scope.
        for item in items:
            node = item["node"]
            node["explicit"] = True
            if node.get("scope") == "session" and not node.get("expiresAt"):
                node.pop("scope")
        if not items:  # the title is cut from the content by the draft rules
            said = without_request(text) or text.strip()
            items = [{"operation": "create", "reason": reason or "remembered as written",
                      "node": {"type": "fact", "content": said, "explicit": True}}]

        def apply(mid):
            for item in items:
                item["node"]["sourceMessageIds"] = [mid]
            return self.apply_items(items, actor=actor, confirm=confirm, session=session,
                                    reason=reason)
        return self._with_source(text, session, confirm, apply)

    def _with_source(self, text, session, confirm, write) -> list[dict]:
        """Log `text` as the source message in the same transaction as the writes.

        If every proposal is refused, the message is rolled back too: nothing is written.
        """
        # Outside any workspace the text is logged in the user db's own log, so a user memory
        # taken from it cites a plain id there; a workspace memory still needs a workspace.
        store = self.stores.workspace_or_none() or self.stores.for_scope("user", create=True)
        mid = new_id("message")
        message = {"id": mid, "sessionId": self.session(session), "role": "user",
                   "content": text, "createdAt": self.env.now_iso()}
        self.messages.guard_credentials(message, "", confirm)

        class _AllRefused(Exception):
            pass

        results: list[dict] = []
        try:
            with store.db.atomic():
                store.messages.append_messages([message])
                results = write(mid)
                if not any(r.get("accepted") for r in results):
                    raise _AllRefused
        except _AllRefused:
            return results
        for result in results:
            result.setdefault("sourceMessageId", mid)
        return results

    def apply_items(self, items: list[dict], *, actor: str, confirm: bool = False,
                    session: str | None = None, reason: str = "") -> list[dict]:
        """Apply MemoryExtraction items through propose_update (same validation as remember)."""
        results = []
        for item in items:
            op = item.get("operation", "create")
            why = reason or item.get("reason", "")
            node = dict(item.get("node") or {})
            if op == "ignore":
                results.append({"accepted": False, "nodeId": None, "reason": why or "ignored",
                                "operation": "ignored", "code": 0})
                continue
            if _closes_task(op, item, node):
                named = self._open_tasks_named(item["target"]["text"])
                if len(named) != 1:
                    results.append(_unclosed(item["target"]["text"], named))
                    continue
                # The task keeps its own words; only its state changes.
                node = {k: v for k, v in node.items() if k not in ("title", "content")}
                item = {**item, "targetId": named[0]["id"]}
            target = item.get("targetId") or self._resolve_target(item.get("target"), node)
            if op in ("supersede", "update", "expire") and target is None:
                if op == "expire":
                    results.append(refusal(NotFound("nothing to expire matches"),
                                           {"accepted": False, "nodeId": None}))
                    continue
                op = "create"  # nothing to replace: the new statement stands on its own
            results.append(self.nodes.propose_update(op, node, target_id=target, reason=why,
                                                     actor=actor, confirm=confirm,
                                                     session=session,
                                                     replace=bool(item.get("replace"))))
        return results

    def _open_tasks_named(self, said: str) -> list[dict]:
        """The open tasks a "done" statement names (policy/tasks.py): one, none or several."""
        from ..policy.tasks import named_tasks
        tasks = self.queries.retrieve({"types": ["task"], "key": "task_state", "limit": 200})
        open_tasks = [n for n in tasks["exact"] if n["status"] == "active"
                      and (n.get("valueJson") or {}).get("state") == "open"]
        return named_tasks(said, open_tasks)

    def _resolve_target(self, selector: dict | None, node: dict) -> str | None:
        if not selector:
            return None
        query: dict[str, object] = {"limit": 5}
        for name in ("key", "valueJson", "domain"):
            if selector.get(name) is not None:
                query[name] = selector[name]
        if selector.get("type"):
            query["types"] = [selector["type"]]
        if selector.get("categoryPathPrefix"):
            query["categoryPathPrefix"] = selector["categoryPathPrefix"]
        if selector.get("text"):
            query["queryText"] = selector["text"]
        if len(query) == 1:
            return None
        found = self.queries.retrieve(query)
        hits = found["exact"] + found["relevant"]
        hits = [n for n in hits if n["status"] == "active" and n["scope"] != "global"
                and not n.get("weak")]
        return hits[0]["id"] if hits else None


# What a new version given as text restates; the rest of the old version carries over.
RESTATED = ("type", "domain", "categoryPath", "key", "valueJson", "title", "content")

# A write's past-tense operation, as a dry run says it would happen.
_WOULD = {"created": "create", "superseded": "supersede", "refreshed": "refresh",
          "updated": "update", "expired": "expire", "deleted": "delete", "ignored": "ignore"}
PLANNED = ("type", "scope", "domain", "categoryPath", "key", "valueJson", "title", "content",
           "expiresAt")


def _plan(answer: dict, stores: list) -> Answer:
    """What one proposal would store, read back from the db before the rollback; a refusal
    keeps its reason, hint, code and typed error."""
    error = getattr(answer, "error", None)
    plan: dict[str, object] = {"dryRun": True, "accepted": bool(answer.get("accepted"))}
    if not plan["accepted"]:
        kept = {k: v for k, v in answer.items() if k not in ("accepted", "nodeId", "operation")}
        return Answer({**plan, "operation": "refused", **kept}, error)
    node: dict = next(filter(None, (store.nodes.get_node(answer["nodeId"])
                                    for store in stores)), {})
    plan["operation"] = _WOULD.get(answer["operation"], answer["operation"])
    plan.update({k: node[k] for k in PLANNED if node.get(k) is not None})
    if plan["operation"] in ("refresh", "update"):  # an id that exists, unlike a new one
        plan["nodeId"] = answer["nodeId"]
    for name in ("supersededId", "reason", "notes"):
        if answer.get(name):
            plan[name] = answer[name]
    return Answer(plan, error)


def _closes_task(op: str, item: dict, node: dict) -> bool:
    """A statement that a task is done, naming the task only by what it says."""
    return (op == "update" and node.get("type") == "task" and not item.get("targetId")
            and (node.get("valueJson") or {}).get("state") == "done"
            and bool((item.get("target") or {}).get("text")))


def _unclosed(said: str, named: list[dict]) -> dict:
    """No task closed: none is named, or several are and guessing could close the wrong one."""
    from ..policy.sensitive import mask_secrets
    said = mask_secrets(said)  # printed back, as an error quoting input would be
    if named:
        reason = (f"{len(named)} open tasks match {said!r}"
                  f" ({', '.join(n['id'] for n in named[:3])}); none was closed")
    else:
        reason = f"no open task matches {said!r}; none was closed"
    return {"accepted": False, "nodeId": None, "operation": "unmatched", "reason": reason,
            "candidates": [n["id"] for n in named], "code": 0}
