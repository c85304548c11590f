"""Export and import: a lossless JSON Lines round trip of messages, summaries, nodes and
audit events. Importing is all-or-nothing per db, idempotent by id, and held to the same
scope and sensitive-data policy as any other write: an untrusted file cannot write global
scope or slip long-term user memory in unconfirmed."""
from __future__ import annotations

import json

from ..errors import NeedsConfirmation, Rejected
from ..policy.records import json_objects

FORMAT = "ekko-mem-export"
VERSION = 1
KINDS = ("message", "summary", "node", "event")


class TransferService:
    def export_lines(self, *, scopes: list[str] | None = None, session: str | None = None):
        """Yield export records: a header, then messages, summaries, nodes and events."""
        scopes = [self.check_choice("scope", s) for s in scopes or []] or None
        yield {"kind": "header", "format": FORMAT, "version": VERSION}
        stores = self._stores()
        workspace = dict(stores).get("workspace")
        wants_log = scopes is None or "session" in scopes or "workspace" in scopes
        if workspace is not None and wants_log:
            for msg in workspace.export_messages(session):
                yield {"kind": "message", "data": msg}
            for summary in workspace.export_summaries(session):
                yield {"kind": "summary", "data": summary}
        node_ids: set[str] = set()
        for _, store in stores:
            for node in store.export_nodes(scopes, session):
                node_ids.add(node["id"])
                yield {"kind": "node", "data": node}
        for _, store in stores:
            for event in store.export_events():
                if (scopes is None and session is None) or event.get("nodeId") in node_ids:
                    yield {"kind": "event", "data": event}

    def import_lines(self, lines, *, confirm: bool = False) -> dict:
        records = self._parse_import(lines)
        self._check_import_policy(records, confirm)
        plan = self._plan_import(records)
        counts = {kind: 0 for kind in KINDS}
        for store, batch in plan:
            with store.db.atomic():
                for kind, data in batch:
                    self._insert_record(store, kind, data)
                    counts[kind] += 1
        skipped = sum(1 for _ in records) - sum(counts.values())
        return {"imported": counts, "skipped": skipped}

    def _parse_import(self, lines) -> list[tuple[int, str, dict]]:
        from pydantic import ValidationError

        from ..models import (MemoryAuditEvent, MemoryMessage, MemoryNode, MemorySummary,
                              validation_message)
        models = {"message": MemoryMessage, "summary": MemorySummary, "node": MemoryNode,
                  "event": MemoryAuditEvent}
        records = []
        for number, item in json_objects(lines, what="imported"):
            kind = item.get("kind")
            if kind == "header":
                if item.get("format") != FORMAT or item.get("version") != VERSION:
                    raise Rejected(f"line {number}: not an {FORMAT} v{VERSION} file",
                                   "export it again with this ekko-mem")
                continue
            if kind not in models:
                raise Rejected(f"line {number}: unknown kind {kind!r}",
                               f"use one of: {', '.join(KINDS)}; nothing was imported")
            try:
                data = models[kind].model_validate(item.get("data")).model_dump(
                    exclude_none=True)
            except ValidationError as exc:
                raise Rejected(f"line {number}: {kind} {validation_message(exc)}",
                               "fix that line; nothing was imported") from None
            records.append((number, kind, data))
        if not records:
            raise Rejected("nothing to import", "give an 'ekko-mem export' file")
        return records

    def _check_import_policy(self, records, confirm: bool) -> None:
        from ..policy.sensitive import describe, find_sensitive
        unconfirmed, secrets = [], []
        for number, kind, data in records:
            if kind != "node":
                continue
            if data["scope"] == "global":
                raise Rejected(f"line {number}: global scope cannot be imported",
                               "global memory ships with ekko-mem; nothing was imported")
            if data["scope"] == "user" and not data.get("explicit"):
                unconfirmed.append(number)
            if data["scope"] in ("user", "workspace") and data["status"] == "active":
                text = " ".join([data["title"], data["content"],
                                 json.dumps(data.get("valueJson"), ensure_ascii=False)])
                if find_sensitive(text):
                    secrets.append((number, describe(find_sensitive(text))))
        if confirm:
            return
        if unconfirmed:
            raise NeedsConfirmation(
                f"{len(unconfirmed)} user-scope memories (first at line {unconfirmed[0]}) were"
                " not stated explicitly by the user", "rerun with --yes if you trust the file")
        if secrets:
            raise NeedsConfirmation(f"line {secrets[0][0]} holds {secrets[0][1]}",
                                    "rerun with --yes to import sensitive data")

    def _plan_import(self, records) -> list[tuple[object, list[tuple[str, dict]]]]:
        """Which db each new record goes to; records whose id exists already are skipped."""
        user_nodes = {d["id"] for _, k, d in records if k == "node" and d["scope"] == "user"}
        workspace = self.store
        user = self.user_store(create=bool(user_nodes))
        batches: dict[int, tuple[object, list]] = {}
        tables = {"message": "memory_messages", "summary": "memory_summaries",
                  "node": "memory_nodes", "event": "memory_audit_events"}
        for kind in KINDS:
            for store_name in ("workspace", "user"):
                store = workspace if store_name == "workspace" else user
                if store is None:
                    continue
                chosen = [d for _, k, d in records if k == kind and self._target(
                    kind, d, user_nodes, user) == store_name]
                if not chosen:
                    continue
                present = store.existing_ids(tables[kind], [d["id"] for d in chosen])
                fresh = [(kind, d) for d in chosen if d["id"] not in present]
                if fresh:
                    batches.setdefault(id(store), (store, []))[1].extend(fresh)
        return list(batches.values())

    @staticmethod
    def _target(kind, data, user_nodes, user_store) -> str:
        if kind == "node":
            return "user" if data["scope"] == "user" else "workspace"
        if kind == "event":
            node_id = data.get("nodeId")
            if node_id in user_nodes or (node_id and user_store is not None
                                         and user_store.get_node(node_id)):
                return "user"
        return "workspace"

    @staticmethod
    def _insert_record(store, kind, data) -> None:
        if kind == "message":
            store.append_messages([data])
        elif kind == "summary":
            store.append_summary(data)
        elif kind == "node":
            store.insert_node(data)
        else:
            store.add_event(data)
