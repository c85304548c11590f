"""The entity graph's tables: entities by name, and the edges a memory's text gave them.

An edge's subject is an entity id or 'user' / 'project'. Edges are retired, not deleted, when
their memory is replaced or forgotten, so the graph can be read as of an earlier day; only a
hard delete removes them, and with them each entity no edge names any more.
"""
from __future__ import annotations

import json

from .connection import Part

EDGE_COLUMNS = ("id", "subject", "relation", "object_entity_id", "value", "valid_from",
                "valid_to", "recorded_at", "retired_at", "source_node_id", "source_message_id")
_EDGE_KEYS = ("id", "subject", "relation", "objectId", "value", "validFrom", "validTo",
              "recordedAt", "retiredAt", "sourceNodeId", "sourceMessageId")


class GraphStore(Part):
    def entity_id(self, name: str, kind: str, aliases: list[str], now: str,
                  fresh_id: str) -> str:
        """The id of the entity called `name`, made with `fresh_id` when there is none; new
        aliases are added to it."""
        row = self.db.one("select id, aliases_json from memory_entities where name = ?",
                          (name,))
        if row is None:
            self.db.execute("insert into memory_entities values (?, ?, ?, ?, ?)",
                            (fresh_id, kind, name, json.dumps(aliases, ensure_ascii=False),
                             now))
            return fresh_id
        known = json.loads(row[1])
        more = [a for a in aliases if a not in known]
        if more:
            self.db.execute("update memory_entities set aliases_json = ? where id = ?",
                            (json.dumps(known + more, ensure_ascii=False), row[0]))
        return row[0]

    def add_edge(self, edge: dict) -> None:
        self.db.execute(f"insert into memory_edges ({', '.join(EDGE_COLUMNS)}) values"
                        f" ({', '.join('?' * len(EDGE_COLUMNS))})",
                        tuple(edge.get(k) for k in _EDGE_KEYS))

    def retire_from(self, node_ids: list[str], now: str) -> int:
        """Retire the live edges these memories gave."""
        done = 0
        for node_id in node_ids:
            done += self.db.execute("update memory_edges set retired_at = ? where"
                                    " source_node_id = ? and retired_at is null",
                                    (now, node_id)).rowcount
        return done

    def erase_from(self, node_ids: list[str]) -> int:
        """Delete the edges these memories gave, and the entities no edge names after that;
        returns how many edges went."""
        named: set[str] = set()
        gone = 0
        for node_id in node_ids:
            for subject, obj in self.db.all("select subject, object_entity_id from memory_edges"
                                            " where source_node_id = ?", (node_id,)):
                named.update(x for x in (subject, obj) if x and x not in ("user", "project"))
            gone += self.db.execute("delete from memory_edges where source_node_id = ?",
                                    (node_id,)).rowcount
        for entity_id in sorted(named):
            still = self.db.one("select 1 from memory_edges where subject = ? union all"
                                " select 1 from memory_edges where object_entity_id = ?"
                                " limit 1", (entity_id, entity_id))
            if still is None:
                self.db.execute("delete from memory_entities where id = ?", (entity_id,))
        return gone

    def find_entity(self, name: str) -> dict | None:
        """The entity called `name`, or known by it as an alias (case aside)."""
        row = self.db.one("select id, kind, name, aliases_json, created_at from memory_entities"
                          " where name = ? collate nocase", (name,))
        if row is None:
            row = self.db.one("select e.id, e.kind, e.name, e.aliases_json, e.created_at"
                              " from memory_entities e, json_each(e.aliases_json) a"
                              " where a.value = ? collate nocase order by e.created_at"
                              " limit 1", (name,))
        return _entity(row) if row else None

    def aliases(self) -> dict[str, str]:
        """Every name and alias, to the entity's name."""
        out: dict[str, str] = {}
        for name, aliases in self.db.all("select name, aliases_json from memory_entities"):
            out[name] = name
            for alias in json.loads(aliases):
                out.setdefault(alias, name)
        return out

    def edges_of(self, entity_id: str, limit: int) -> list[dict]:
        """The edges about `entity_id` (an id, 'user' or 'project') either way round, with
        the names at both ends, retired ones included, oldest first."""
        rows = self.db.all(
            "select g.*, s.name, o.name, o.kind from memory_edges g"
            " left join memory_entities s on s.id = g.subject"
            " left join memory_entities o on o.id = g.object_entity_id"
            " where g.rowid in (select rowid from memory_edges where subject = ?"
            " union select rowid from memory_edges where object_entity_id = ?)"
            " order by g.recorded_at, g.id limit ?", (entity_id, entity_id, limit))
        out = []
        for row in rows:
            edge = dict(zip(_EDGE_KEYS, row[:len(_EDGE_KEYS)]))
            edge["subjectName"] = row[-3] or edge["subject"]
            edge["objectName"], edge["objectKind"] = row[-2] or edge["objectId"], row[-1]
            out.append(edge)
        return out

    # -- what is left to read ------------------------------------------------------------------
    def nodes_after(self, rowid: int, limit: int) -> list[tuple[int, dict]]:
        """(rowid, node) of the memories written after `rowid`, oldest first."""
        from . import codec
        rows = self.db.all(f"select rowid, {codec.NODE_COLUMNS} from memory_nodes"
                           " where rowid > ? order by rowid limit ?", (rowid, limit))
        return [(r[0], codec.node_from_row(r[1:])) for r in rows]


def _entity(row) -> dict:
    return {"id": row[0], "kind": row[1], "name": row[2], "aliases": json.loads(row[3]),
            "createdAt": row[4]}
