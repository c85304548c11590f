"""memory_forget: soft by default, hard on request, with confirmation for anything broad."""
from __future__ import annotations

from ..errors import (Answer, EkkoError, NeedsConfirmation, NotFound, Rejected, StoreUnavailable,
                      Step, refusal)
from ..policy.vocab import ACTORS, choose
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..store import SqliteMemoryStore
    from .audit_log import AuditLog
    from .drafts import Drafts
    from .erasure import Erasure
    from .graph import Graph
    from .queries import Queries

ALL_STATUSES = ["active", "superseded", "expired", "deleted"]
# Words find the memories they match, not every weak hit: those scoring at least CLOSE of the
# best match that hold at least COVER of the words' index terms (bigrams, for Chinese).
TEXT_POOL = 50
CLOSE = 0.5
COVER = 0.5


class Forgetting(UseCase):
    def __init__(self, stores: Stores, *, drafts: Drafts, queries: Queries,
                 audit_log: AuditLog, erasure: Erasure, graph: Graph) -> None:
        super().__init__(stores)
        self.drafts = drafts
        self.queries = queries
        self.audit_log = audit_log
        self.erasure = erasure
        self.graph = graph

    def forget(self, selector: dict, *, mode: str = "soft", reason: str = "",
               confirm: bool = False, purge_sources: bool = False,
               actor: str = "user", verify: bool = False) -> dict:
        """Returns {deletedIds, mode, reason, ...}: a hard delete adds purgedMessageIds,
        summariesDropped, pending and notCheckpointed (and verify); a refusal adds
        requiresConfirmation, hint, code and candidates.

        Besides the design's selector: `text`, words that find the active memories they
        match (always confirmed: a search can pick the wrong one), and `ids`, a list of ids
        (the candidates a person confirmed)."""
        try:
            return self._forget(selector, mode, reason, confirm, purge_sources, actor, verify)
        finally:
            self.erasure.release()

    def _forget(self, selector, mode, reason, confirm, purge_sources, actor, verify) -> dict:
        try:
            actor = choose("actor", actor, ACTORS)
            if mode not in ("soft", "hard"):
                raise Rejected(f"unknown mode {mode!r}", "use soft or hard")
            if (purge_sources or verify) and mode != "hard":
                raise Rejected(f"{'purging sources' if purge_sources else 'verifying'} is for"
                               " removing text for good", step=Step("hard"))
            if mode == "hard" and selector.get("id"):
                finished = self._finish_erased(selector["id"], reason, actor, purge_sources,
                                               confirm)
                if finished is not None:
                    return self._settle(finished, verify)
            found = self._forget_candidates(selector, mode)
            text = selector.get("text")
            if not found:
                if text:
                    raise NotFound(f"no active memory matches {text!r}", "to see what is"
                                   " remembered", step=Step(command="query"))
                raise NotFound("no memory matches that selector", "to check it",
                               step=Step(command="query"))
            if (len(found) > 1 or mode == "hard" or text) and not confirm:
                raise NeedsConfirmation(_why_ask(len(found), text), "to go ahead",
                                        step=Step("confirm"), data={
                    "candidates": [{"id": n["id"], "title": n["title"], "scope": n["scope"],
                                    "status": n["status"]} for n, _ in found]})
            if mode == "hard":
                return self._settle(_outcome(self.erasure.hard_delete(
                    found, reason, actor, purge_sources), reason or "hard delete"), verify)
            deleted = self._soft_delete(found, reason, actor)
            return {"deletedIds": deleted, "mode": mode, "reason": reason or "forgotten"}
        except (Rejected, NeedsConfirmation, NotFound) as exc:
            return refusal(exc, {"deletedIds": [], "mode": mode})

    def _forget_candidates(self, selector: dict,
                           mode: str) -> list[tuple[dict, SqliteMemoryStore]]:
        statuses = ALL_STATUSES if mode == "hard" else ["active", "expired"]
        if selector.get("id"):
            return [self._by_id(selector["id"], statuses)]
        if selector.get("ids"):
            return [self._by_id(node_id, statuses) for node_id in selector["ids"]]
        f: dict = {"statuses": statuses}
        for name, field in (("domain", "domain"), ("key", "key"), ("valueJson", "valueJson"),
                            ("categoryPathPrefix", "categoryPrefix"),
                            ("sourceMessageId", "sourceMessageId")):
            if selector.get(name) is not None:
                f[field] = selector[name]
        if f.get("key"):
            f["key"] = self.drafts.schema_key(f["key"])
        if f.get("sourceMessageId"):  # user memory names this workspace's messages in full
            from ..store.refs import citing_forms
            f["sourceMessageId"] = citing_forms(f["sourceMessageId"], self.stores.workspace_id())
        if isinstance(f.get("categoryPrefix"), str):
            f["categoryPrefix"] = [p for p in f["categoryPrefix"].split("/") if p]
        if selector.get("type"):
            f["types"] = [self.drafts.check_choice("type", selector["type"])]
        scope = self.drafts.check_choice("scope", selector.get("scope"))
        whole = selector.get("workspace") or selector.get("user")
        if selector.get("text"):
            return self._matching(selector["text"], {**f, "scope": scope},
                                  "workspace" if selector.get("workspace") else
                                  "user" if selector.get("user") else None)
        if len(f) == 1 and not scope and not whole:
            raise Rejected("forget needs an id or a selector",
                           "give an id, or a scope, domain, category, type, key or source"
                           " message")
        if scope == "global":
            raise Rejected("global memory is read-only", "it ships with ekko-mem")
        found = []
        for name, store in self.stores.existing():
            if selector.get("user") and name != "user" or selector.get("workspace") and \
                    name != "workspace":
                continue
            scopes = [scope] if scope else None
            if name == "user" and scope not in (None, "user"):
                continue
            if name == "workspace" and scope == "user":
                continue
            nodes = store.nodes.find_nodes({**f, "scopes": scopes}, limit=10000)
            found += [(n, store) for n in nodes]
        return found

    def _by_id(self, node_id: str, statuses: list[str]) -> tuple[dict, SqliteMemoryStore]:
        node = self.queries.find_node(node_id)
        if node["status"] not in statuses:
            raise NotFound(f"{node['id']} is already {node['status']}",
                           "to remove it for good", step=Step("hard"))
        return node, self.stores.for_scope(node["scope"])

    def _matching(self, text: str, f: dict,
                  db: str | None) -> list[tuple[dict, SqliteMemoryStore]]:
        """The active memories `text` names, ranked as `query` ranks them, within the other
        selectors given; only close, well-covered matches (see CLOSE and COVER)."""
        if f.get("scope") == "global":
            raise Rejected("global memory is read-only", "it ships with ekko-mem")
        ranked = self.queries.retrieve({"queryText": text, "limit": TEXT_POOL})
        scores = ranked["scores"]
        nodes = [n for n in ranked["relevant"] if n["status"] == "active"
                 and n["scope"] != "global" and _fits(n, f, db)]
        if not nodes:
            return []
        from ..retrieval import analyse
        wanted = set(analyse(text, self.env.now()).strong_terms)
        best = max(scores[n["id"]] for n in nodes)
        return [(n, self.stores.for_scope(n["scope"])) for n in nodes
                if scores[n["id"]] >= CLOSE * best and _covers(n, wanted)]

    def _soft_delete(self, found, reason, actor) -> list[str]:
        now = self.env.now_iso()
        for store in {id(s): s for _, s in found}.values():
            with store.db.atomic():
                for node, owner in found:
                    if owner is not store:
                        continue
                    node = store.nodes.get_node(node["id"])  # as it is now, under the lock
                    if node is None or node["status"] == "deleted":
                        continue
                    store.nodes.set_status(node["id"], "deleted", now)
                    self.graph.retire(store, [node["id"]], now)
                    after = {**node, "status": "deleted", "updatedAt": now}
                    self.audit_log.record(store, "delete", after, actor, reason or "forgotten",
                                before=node, after=after)
        return [n["id"] for n, _ in found]

    def _finish_erased(self, node_id, reason, actor, purge_sources, confirm) -> Answer | None:
        """The same hard delete run again after it was interrupted: the node is gone, so
        finish what may be left (pending source purges, the WAL checkpoint)."""
        stores = self.stores.existing()
        if any(store.nodes.get_node(node_id) for _, store in stores):
            return None
        mine = [store for _, store in stores if store.erasure.was_hard_deleted(node_id)
                or store.erasure.pending_purges([node_id])]
        if not mine:
            return None
        if not confirm:
            raise NeedsConfirmation(f"{node_id} was erased; finishing its purge cannot be undone",
                                    "to go ahead", step=Step("confirm"))
        from .erasure import new_report
        report = new_report()
        # The user db erased it: every workspace's context runs may still name it.
        report["_user"] = any(store is self.stores.user_store() for store in mine)
        if purge_sources:
            self.erasure.finish_pending([(store, [node_id]) for store in mine], reason, actor,
                                        report)
        report["alreadyErased"] = [node_id]
        self.erasure.finish(report, reason, actor)
        for store in mine:
            self.erasure.checkpoint(store, report)
        return _outcome(report, reason or "hard delete")

    def _settle(self, outcome: Answer, verify: bool) -> Answer:
        """When asked to verify, prove it: a scan that finds the text again fails."""
        if verify:
            outcome["verify"] = self.erasure.verify_erasure(outcome)
            if outcome["verify"]["clean"] is False and not outcome.get("code"):
                error = _not_clean(outcome["verify"])
                outcome.update(code=int(error.code), reason=error.message, hint=error.hint)
                outcome.error = error
        for private in [k for k in outcome if k.startswith("_")]:  # the service's own notes
            del outcome[private]
        return outcome

    def forget_messages(self, message_ids: list[str], *, mode: str = "hard",
                        reason: str = "", confirm: bool = False, actor: str = "user",
                        verify: bool = False) -> dict:
        """Erase logged messages by id (the log is append-only: only a hard delete removes)."""
        try:
            if mode != "hard":
                raise Rejected("logged messages are kept as they were said",
                               "to erase them for good", step=Step("hard"))
            if not confirm:
                raise NeedsConfirmation("a hard delete cannot be undone", "to go ahead",
                                        step=Step("confirm"))
            return self._forget_messages(message_ids, reason, actor, verify)
        except (Rejected, NeedsConfirmation, NotFound) as exc:
            return refusal(exc, {"deletedIds": [], "mode": mode})
        finally:
            self.erasure.release()

    def _forget_messages(self, message_ids, reason, actor, verify) -> dict:
        known = self.store.messages.message_ids_exist(message_ids)
        unknown = [m for m in message_ids if m not in known]
        if unknown and not set(unknown) <= self.store.health.purged_message_ids():
            raise NotFound(f"no message {unknown[0]}", "to check the id",
                           step=Step(command="history"))
        report = self.erasure.purge_messages(message_ids, reason=reason, actor=actor)
        return self._settle(_outcome(report, reason or "purge"), verify)


def _why_ask(count: int, text: str | None) -> str:
    if text:
        return f"{count} {'memory matches' if count == 1 else 'memories match'} {text!r}"
    return f"{count} memories match" if count > 1 else "a hard delete cannot be undone"


def _fits(node: dict, f: dict, db: str | None) -> bool:
    """Whether a node found by words also meets the selector's other fields."""
    if db == "user" and node["scope"] != "user" or db == "workspace" and node["scope"] == "user":
        return False
    path = node.get("categoryPath") or []
    prefix = f.get("categoryPrefix") or []
    return ((f.get("scope") is None or node["scope"] == f["scope"])
            and (not f.get("types") or node["type"] in f["types"])
            and (f.get("domain") is None or node["domain"] == f["domain"])
            and (f.get("key") is None or node.get("key") == f["key"])
            and (f.get("valueJson") is None or node.get("valueJson") == f["valueJson"])
            and path[:len(prefix)] == prefix
            and (not f.get("sourceMessageId") or bool(
                set(f["sourceMessageId"]) & set(node.get("sourceMessageIds") or []))))


def _covers(node: dict, wanted: set[str]) -> bool:
    """At least COVER of the words' strong terms are in the node's own text."""
    if not wanted:
        return False
    from ..tokens import tokens
    text = " ".join([node["title"], node["content"], *(node.get("tags") or []),
                     *(node.get("entities") or [])])
    return len(wanted & set(tokens(text))) >= COVER * len(wanted)


def _not_clean(check: dict) -> EkkoError:
    """Why a verified erasure is not clean, in one line: the first place that says so."""
    if check["workspacesNotChecked"]:
        return StoreUnavailable(f"erased, but {check['workspacesNotChecked'][0]} could not be"
                                " opened to check it", "fix that workspace and run the same"
                                " command again to finish")
    if check["filesWithText"] or check["indexLeftovers"]:
        where = ", ".join(check["filesWithText"]) or "the full-text index"
        return EkkoError(f"erased, but the text is still in {where}"
                         + (f" ({check['liveCopies']} live records say the same)"
                            if check["liveCopies"] else ""),
                         "forget those records too, then run the command again")
    return EkkoError(f"erased, but {check['contextRunsLeft']} context runs still name it",
                     "run the same command again to finish")


def _outcome(report: dict, reason: str) -> Answer:
    """A hard delete's answer; never success while text may still be on disk."""
    out = {"mode": "hard", "reason": reason, **report}
    if report["pending"]:
        first = report["pending"][0]
        return _unfinished(out, f"erased here, but source message {first['messageId']} is"
                           f" {first['reason']}", "there (or here again once it can be opened)"
                           " to finish", Step("hard", "purgeSources", "confirm",
                                              command="forget", target=first["nodeId"]))
    if report["deferred"]:
        first = report["deferred"][0]
        return _unfinished(out, f"erased, but {first['workspace']} could not be opened to drop"
                           f" its context runs that used it ({first['reason']})",
                           "fix that workspace and run the same command again to finish")
    if report["notCheckpointed"]:
        return _unfinished(out, "erased from the tables, but another process reading"
                           f" {report['notCheckpointed'][0]} keeps the old pages in its -wal"
                           " file", "close that reader and run the same command again to finish")
    return Answer(out)


def _unfinished(out: dict, reason: str, hint: str, step: Step | None = None) -> Answer:
    error = StoreUnavailable(reason, hint, step=step)
    return Answer({**out, "code": int(error.code), "reason": reason, "hint": error.hint}, error)
