"""Whole-table reads for export, in a stable order (time, then id) so exports compare equal."""
from __future__ import annotations

from . import codec


class TransferStore:
    db: object

    def export_messages(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self.db.all(f"select {codec.MESSAGE_COLUMNS} from memory_messages {where}"
                               " order by created_at, id", args):
            yield codec.message_from_row(row)

    def export_summaries(self, session_id: str | None = None):
        where, args = ("where session_id = ?", (session_id,)) if session_id else ("", ())
        for row in self.db.all(f"select {codec.SUMMARY_COLUMNS} from memory_summaries {where}"
                               " order by created_at, id", args):
            yield codec.summary_from_row(row)

    def export_nodes(self, scopes: list[str] | None = None, session_id: str | None = None):
        where, args = [], []
        if scopes:
            where.append(f"scope in ({','.join('?' * len(scopes))})")
            args += scopes
        if session_id:
            where.append("(scope != 'session' or session_id = ?)")
            args.append(session_id)
        clause = f"where {' and '.join(where)}" if where else ""
        for row in self.db.all(f"select {codec.NODE_COLUMNS} from memory_nodes {clause}"
                               " order by created_at, id", args):
            yield codec.node_from_row(row)

    def export_events(self):
        for row in self.db.all(f"select {codec.EVENT_COLUMNS} from memory_audit_events"
                               " order by created_at, id"):
            yield codec.event_from_row(row)

    def existing_ids(self, table: str, ids: list[str]) -> set[str]:
        if table not in ("memory_messages", "memory_summaries", "memory_nodes",
                         "memory_audit_events"):
            raise ValueError(table)
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.all(f"select id from {table} where id in"
                               f" ({','.join('?' * len(chunk))})", chunk)
            found |= {r[0] for r in rows}
        return found
