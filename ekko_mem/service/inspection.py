"""Looking back: the audit trail, undo, and `show` (why is this remembered?)."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import kind_of
from ..store.refs import citing_forms, split_ref
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .audit_log import AuditLog
    from .queries import Queries


class Inspection(UseCase):
    def __init__(self, stores: Stores, *, queries: Queries, audit_log: AuditLog) -> None:
        super().__init__(stores)
        self.queries = queries
        self.audit_log = audit_log

    def audit(self, *, node_id: str | None = None, since: str | None = None,
              limit: int = 50) -> list[dict]:
        if limit < 1:
            raise Rejected(f"limit must be at least 1, not {limit}", "ask for 50, say")
        if node_id:
            node_id = self._node_id_for_audit(node_id)
        if since:
            since = self._normalise_since(since)
        events: list[dict] = []
        for _, store in self.stores.existing():
            events += store.nodes.list_events(node_id=node_id, since=since, limit=limit)
        events.sort(key=lambda e: (e["createdAt"], e["id"]), reverse=True)
        return events[:limit]

    def audit_trail(self, *, node_id: str | None = None, since: str | None = None,
                    limit: int = 50) -> dict:
        """`audit` for people: the events, and the title of each node they name, by id (a
        purged node has none)."""
        events = self.audit(node_id=node_id, since=since, limit=limit)
        wanted = {e["nodeId"] for e in events if e.get("nodeId")}
        titles: dict[str, str] = {}
        for _, store in self.stores.existing():
            titles.update(store.nodes.titles(wanted - titles.keys()))
        return {"events": events, "titles": titles}

    def _node_id_for_audit(self, node_id: str) -> str:
        try:
            return self.queries.find_node(node_id)["id"]
        except NotFound:
            return node_id  # a hard-deleted node keeps its audit rows

    def _normalise_since(self, since: str) -> str:
        from ..env import format_time
        from ..policy.timeexpr import parse_since  # as the message search reads its start
        return format_time(parse_since(since, self.env.now()))

    def _find_event(self, event_id: str):
        full = event_id if event_id.startswith("evt_") and len(event_id) > 20 else \
            self.queries.resolve_id(event_id, kinds=("event",))
        for _, store in self.stores.existing():
            event = store.nodes.get_event(full)
            if event is not None:
                return event, store
        raise NotFound(f"no audit event {event_id}", "to list them", step=Step(command="audit"))

    def undo(self, event_id: str, *, reason: str = "", actor: str = "user") -> dict:
        """Reverse a change as a new audited change; the audit trail (audit_log.py) knows how."""
        event, store = self._find_event(event_id)
        return self.audit_log.undo(event, store, reason=reason, actor=actor)

    def show(self, identifier: str) -> dict:
        """A record with its chain, sources and audit trail, found by id or unique prefix."""
        full = self._resolve_any(self._local_message(identifier))
        kind = kind_of(full)
        if kind == "node":
            node = self.queries.find_node(full)
            store = self.stores.for_scope(node["scope"]) if node["scope"] != "global" else None
            chain, cut = self._chain(node)
            events = [e for n in chain for e in store.nodes.list_events(node_id=n["id"], limit=200)
                      ] if store else []
            events.sort(key=lambda e: (e["createdAt"], e["id"]))
            sources, external = self._sources(node)
            shown = {"kind": "node", "node": node, "chain": chain, "sources": sources,
                     "events": events}
            if external:  # cited, but logged where this command cannot read
                shown["externalSources"] = external
            if cut:  # a stored loop (or a runaway chain): the versions end where it starts
                shown["chainCut"] = cut
            return shown
        if kind == "message":
            msg = self.store.messages.get_message(full)
            forms = citing_forms(full, self.stores.workspace_id())
            cited = [n for _, store in self.stores.existing() for n in store.nodes.find_nodes(
                {"sourceMessageId": forms, "statuses": ["active", "superseded", "expired",
                                                        "deleted"]}, limit=100)]
            return {"kind": "message", "message": msg, "nodes": cited}
        if kind == "summary":
            summary = self.store.summaries.get_summary(full)
            if summary is None:  # its id was found in another db: summaries are the workspace's
                raise NotFound(f"no summary {full} in this workspace", "check the id")
            parents, cut = self.store.summaries.parent_chain(summary)
            shown = {"kind": "summary", "summary": summary, "parents": parents}
            if cut:
                shown["chainCut"] = cut
            return shown
        event, _ = self._find_event(full)
        return {"kind": "event", "event": event}

    def _sources(self, node: dict) -> tuple[list[dict], list[dict]]:
        """The cited messages readable from here (the user db's own log, this workspace's),
        and the others: logged in another workspace, named with where it was, if known."""
        refs = node.get("sourceMessageIds") or []
        if not refs:
            return [], []
        logs = [self.stores.workspace_or_none()]
        if node["scope"] == "user":
            logs.insert(0, self.stores.user_store())
        found: dict[str, dict] = {}
        for log in filter(None, logs):
            for message in log.messages.get_messages(refs):
                found.setdefault(message["id"], message)
        known = self.stores.known_workspaces()
        external = []
        for ref in refs:
            where, mid = split_ref(ref)
            if mid not in found:
                external.append({"ref": ref, "workspaceId": where, "messageId": mid,
                                 "root": known.get(where) if where else None})
        return list(found.values()), external

    def _local_message(self, identifier: str) -> str:
        """A source reference as shown on a user memory: the message id when it is logged
        in this workspace; elsewhere, where to read it."""
        where, mid = split_ref(identifier)
        if where is None or where == self.stores.workspace_id():
            return mid
        root = self.stores.known_workspaces().get(where)
        raise NotFound(f"{identifier} is logged in another workspace"
                       f" ({root or 'its folder is not known here'})", "to read it there",
                       step=Step(command="show", target=mid))

    def _resolve_any(self, identifier: str) -> str:
        for _, store in self.stores.existing():
            for getter in (store.nodes.get_node, store.nodes.get_event):
                if getter(identifier) is not None:
                    return identifier
        seed = self.stores.global_store()
        if seed is not None and seed.nodes.get_node(identifier):
            return identifier
        return self.queries.resolve_id(identifier)

    def _chain(self, node: dict) -> tuple[list[dict], dict]:
        """Every version of this memory, oldest first, and where the walk was cut short."""
        store = self.stores.for_scope(node["scope"]) if node["scope"] != "global" else None
        if store is None:
            return [node], {}
        return store.nodes.version_chain(node)
