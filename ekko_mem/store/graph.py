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
        row = self.db.one("select id, aliases_json, kind from memory_entities where name = ?",
                          (name,))
        if row is None:
            self.db.execute("insert into memory_entities values (?, ?, ?, ?, ?)",
                            (fresh_id, kind, name, json.dumps(aliases, ensure_ascii=False),
                             now))
            self._index_names(fresh_id, [name, *aliases])
            return fresh_id
        known = json.loads(row[1])
        more = [a for a in aliases if a not in known]
        if more:
            self.db.execute("update memory_entities set aliases_json = ? where id = ?",
                            (json.dumps(known + more, ensure_ascii=False), row[0]))
            self._index_names(row[0], more)
        return row[0]

    def set_kind(self, entity_id: str, kind: str) -> None:
        """A kind someone said outright (NAME:KIND) over the rules' guess."""
        self.db.execute("update memory_entities set kind = ? where id = ?", (kind, entity_id))

    def _index_names(self, entity_id: str, names: list[str]) -> None:
        self.db.executemany("insert or ignore into memory_entity_names values (?, ?)",
                            [(n, entity_id) for n in names if n.strip()])

    def add_edge(self, edge: dict) -> None:
        self.db.execute(f"insert into memory_edges ({', '.join(EDGE_COLUMNS)}) values"
                        f" ({', '.join('?' * len(EDGE_COLUMNS))})",
                        tuple(edge.get(k) for k in _EDGE_KEYS))

    def retire_from(self, node_ids: list[str], now: str) -> int:
        """Retire the live edges these memories gave."""
        return self._mark(node_ids, now, None)

    def revive_from(self, node_ids: list[str], retired_at: str) -> int:
        """An undo put these memories back: the edges they lost at `retired_at` hold again."""
        return self._mark(node_ids, None, retired_at)

    def _mark(self, node_ids: list[str], retired_at: str | None, was: str | None) -> int:
        done = 0
        for node_id in node_ids:
            done += self.db.execute("update memory_edges set retired_at = ? where"
                                    " source_node_id = ? and retired_at is ?",
                                    (retired_at, node_id, was)).rowcount
        return done

    def erase_from(self, node_ids: list[str]) -> int:
        """Delete the edges these memories gave; returns how many went. Which entities go
        with them is the erasure's to settle (store/erasure.py settle_entities): one a live
        memory still lists by name stays, with the kind it was given."""
        return sum(self.db.execute("delete from memory_edges where source_node_id = ?",
                                   (node_id,)).rowcount for node_id in node_ids)

    def named(self, words: list[str]) -> list[dict]:
        """The entities any of `words` names (a name or an alias, case aside), read through the
        name index: the cost follows the words, not the number of entities."""
        found: dict[str, dict] = {}
        for at in range(0, len(words), 400):
            chunk = words[at:at + 400]
            for row in self.db.all(
                    "select distinct n.name, e.id, e.kind, e.name, e.aliases_json, e.created_at"
                    " from memory_entity_names n join memory_entities e on e.id = n.entity_id"
                    f" where n.name in ({','.join('?' * len(chunk))})", tuple(chunk)):
                entity = found.setdefault(row[1], _entity(row[1:]))
                entity.setdefault("said", []).append(row[0])
        return list(found.values())

    def said_of(self, entity_id: str, limit: int) -> list[dict]:
        """The edges that say something of the entity either way round (no `mentioned`
        edge), retired ones included, newest first; every part reads an index range."""
        rows = self.db.all(
            "select g.*, s.name, o.name, o.kind from memory_edges g"
            " left join memory_entities s on s.id = g.subject"
            " left join memory_entities o on o.id = g.object_entity_id"
            " where g.rowid in (select * from (select rowid from memory_edges where"
            " subject = ?1 and relation < 'mentioned' order by recorded_at desc limit ?2)"
            " union select * from (select rowid from memory_edges where subject = ?1"
            " and relation > 'mentioned' order by recorded_at desc limit ?2)"
            " union select * from (select rowid from memory_edges where"
            " object_entity_id = ?1 order by rowid desc limit ?2))"
            " order by g.recorded_at desc, g.id desc limit ?2", (entity_id, limit))
        return [_edge(row) for row in rows]

    def live_edges(self, subject: str, relations: tuple[str, ...] = (), limit: int = 20,
                   retired: bool = False) -> list[dict]:
        """The edges from `subject` that still hold in this db (with `retired`, those that
        no longer do too), through the subject index."""
        sql = ("select g.*, s.name, o.name, o.kind from memory_edges g"
               " left join memory_entities s on s.id = g.subject"
               " left join memory_entities o on o.id = g.object_entity_id"
               " where g.subject = ?" + ("" if retired else " and g.retired_at is null"))
        args: list = [subject]
        if relations:
            sql += f" and g.relation in ({','.join('?' * len(relations))})"
            args += relations
        return [_edge(row) for row in self.db.all(sql + " order by g.recorded_at desc limit ?",
                                                  (*args, limit))]

    def read_to(self) -> tuple[int, int]:
        """(the rowid of the last memory the graph was read from, the last memory's rowid):
        the graph is behind while the first is smaller."""
        row = self.db.one("select (select value from ekko_meta where key = 'graph_read_to'),"
                          " (select max(rowid) from memory_nodes)")
        return int(row[0] or 0), int(row[1] or 0)

    def was_read(self, node_id: str) -> bool:
        """Whether the graph has read this memory (its rowid is at or before the mark)."""
        row = self.db.one("select rowid <= coalesce((select cast(value as integer) from"
                          " ekko_meta where key = 'graph_read_to'), 0) from memory_nodes"
                          " where id = ?", (node_id,))
        return bool(row and row[0])

    def texts_after(self, rowid: int, limit: int) -> list[str]:
        """The titles and contents of the memories after `rowid` (the graph has not read them)."""
        return [f"{r[0]}\n{r[1]}" for r in self.db.all(
            "select title, content from memory_nodes where rowid > ? order by rowid limit ?",
            (rowid, limit))]

    def find_entity(self, name: str) -> dict | None:
        """The entity called `name`, or known by it as an alias (case aside); its own name
        first, then the oldest that has it as an alias."""
        row = self.db.one("select e.id, e.kind, e.name, e.aliases_json, e.created_at"
                          " from memory_entity_names n join memory_entities e"
                          " on e.id = n.entity_id where n.name = ?"
                          " order by e.name = ? collate nocase desc, e.created_at limit 1",
                          (name, name))
        return _entity(row) if row else None

    def entity_by_id(self, entity_id: str) -> dict | None:
        row = self.db.one("select id, kind, name, aliases_json, created_at from memory_entities"
                          " where id = ?", (entity_id,))
        return _entity(row) if row else None

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
        return [_edge(row) for row in rows]

    # -- what is left to read ------------------------------------------------------------------
    def nodes_after(self, rowid: int, limit: int) -> list[tuple[int, dict]]:
        """(rowid, node) of the memories written after `rowid`, oldest first."""
        from . import codec
        rows = self.db.all(f"select rowid, {codec.NODE_COLUMNS} from memory_nodes"
                           " where rowid > ? order by rowid limit ?", (rowid, limit))
        return [(r[0], codec.node_from_row(r[1:])) for r in rows]


def _edge(row) -> dict:
    edge = dict(zip(_EDGE_KEYS, row[:len(_EDGE_KEYS)]))
    edge["subjectName"] = row[-3] or edge["subject"]
    edge["objectName"], edge["objectKind"] = row[-2] or edge["objectId"], row[-1]
    return edge


def _entity(row) -> dict:
    return {"id": row[0], "kind": row[1], "name": row[2], "aliases": json.loads(row[3]),
            "createdAt": row[4]}
