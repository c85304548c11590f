"""Consistency checks for `doctor`: each returns what is wrong, as counts or ids."""
from __future__ import annotations


class MaintenanceStore:
    db: object

    def fts_out_of_step(self) -> dict:
        """Rows whose FTS entry is missing or left over (contentless FTS keeps a docsize row
        per indexed rowid)."""
        out = {}
        for table in ("memory_nodes", "memory_messages"):
            shadow = f"{table}_fts_docsize"
            missing = self.db.one(f"select count(*) from {table} where rowid not in"
                                  f" (select id from {shadow})")[0]
            extra = self.db.one(f"select count(*) from {shadow} where id not in"
                                f" (select rowid from {table})")[0]
            out[table] = {"missing": missing, "extra": extra}
        return out

    def fts_index_ok(self) -> bool:
        from ..errors import StoreUnavailable
        try:
            for table in ("memory_nodes_fts", "memory_messages_fts"):
                self.db.execute(f"insert into {table} ({table}) values ('integrity-check')")
        except StoreUnavailable:
            return False
        return True

    def broken_chains(self) -> dict:
        """Supersede links that point nowhere, superseded nodes with no successor, and nodes
        that are active together although one superseded the other."""
        dangling = [r[0] for r in self.db.all(
            "select id from memory_nodes n where supersedes_id is not null and not exists"
            " (select 1 from memory_nodes o where o.id = n.supersedes_id)")]
        orphaned = [r[0] for r in self.db.all(
            "select id from memory_nodes o where status = 'superseded' and not exists"
            " (select 1 from memory_nodes n where n.supersedes_id = o.id)")]
        double = [r[0] for r in self.db.all(
            "select o.id from memory_nodes o join memory_nodes n on n.supersedes_id = o.id"
            " where o.status = 'active' and n.status = 'active'")]
        return {"dangling": dangling, "superseded_without_successor": orphaned,
                "both_active": double}

    def missing_sources(self, known_among) -> list[str]:
        """Nodes citing a source message that is not in the workspace log; `known_among(ids)`
        says which of a batch of ids exist, so the log is asked once per 500 ids."""
        rows = self.db.all("select n.id, j.value from memory_nodes n,"
                           " json_each(n.source_message_ids_json) j")
        cited = sorted({mid for _, mid in rows})
        known: set[str] = set()
        for start in range(0, len(cited), 500):
            known |= known_among(cited[start:start + 500])
        return sorted({node for node, mid in rows if mid not in known})

    def summaries_missing_messages(self) -> list[str]:
        rows = self.db.all(
            "select s.id from memory_summaries s where not exists (select 1 from"
            " memory_messages m where m.id = s.from_message_id) or not exists (select 1 from"
            " memory_messages m where m.id = s.to_message_id)")
        return [r[0] for r in rows]

    def purged_message_ids(self) -> set[str]:
        """Messages removed on purpose (forget --purge-sources), from the purge audit events."""
        ids: set[str] = set()
        for (payload,) in self.db.all("select payload_json from memory_audit_events"
                                      " where event_type = 'purge'"):
            import json
            after = (json.loads(payload) if payload else {}).get("after") or {}
            ids.update(after.get("messageIds") or [])
        return ids
