"""Old audit copies stored again in today's compact form (store/copies.py), and the space they
freed given back to the file system.

A db written before schema 11 holds every event's copies of its node in full: a refreshed
memory's events each hold it twice, with its whole source list. Nothing is lost by storing them
again: an event is rewritten only when it reads back exactly as it did, and only when shorter.
"""
from __future__ import annotations

from . import codec, copies
from .connection import Part

NODES_PER_BATCH = 500  # one write transaction each: other processes write in between


class AuditCompaction(Part):
    def compact(self) -> dict:
        """Every event that copies its node, stored again by reference and difference where
        that is shorter; counts and payload bytes before and after."""
        done = {"events": 0, "rewritten": 0, "bytesBefore": 0, "bytesAfter": 0}
        last = 0
        while True:
            with self.db.atomic():
                rows = self.db.all(f"select rowid, {codec.NODE_COLUMNS} from memory_nodes"
                                   " where rowid > ? order by rowid limit ?",
                                   (last, NODES_PER_BATCH))
                for row in rows:
                    self._compact_node(codec.node_from_row(row[1:]), done)
            if len(rows) < NODES_PER_BATCH:
                return done
            last = rows[-1][0]

    def _compact_node(self, node: dict, done: dict) -> None:
        node_id = node["id"]
        # One payload held at a time: an old restated memory's can be megabytes together.
        for (rowid,) in self.db.all("select rowid from memory_audit_events where node_id = ?"
                                    " and payload_json is not null", (node_id,)):
            stored = self.db.one("select payload_json from memory_audit_events"
                                 " where rowid = ?", (rowid,))[0]
            payload = codec.loads(stored)
            recorded = copies.decode(payload, node_id, node)
            if not copies.holds_copy(recorded, node_id):
                continue  # only a payload the store could have written is stored anew
            done["events"] += 1
            done["bytesBefore"] += len(stored.encode())
            kept = self._shorter(recorded, node_id, node, stored)
            if kept != stored:
                self.db.execute("update memory_audit_events set payload_json = ?"
                                " where rowid = ?", (kept, rowid))
                done["rewritten"] += 1
            done["bytesAfter"] += len(kept.encode())

    @staticmethod
    def _shorter(recorded: dict, node_id: str, node: dict, stored: str) -> str:
        """The payload as recorded stored anew, if that reads back exactly so and is shorter
        than `stored`."""
        again = codec.dumps(copies.encode(recorded, node_id, node))
        if len(again.encode()) >= len(stored.encode()):
            return stored
        if codec.dumps(copies.decode(codec.loads(again), node_id, node)) != codec.dumps(recorded):
            return stored
        return again

    def vacuum(self) -> None:
        """Rebuild the file without its free pages (outside any transaction)."""
        self.db.execute("VACUUM")
