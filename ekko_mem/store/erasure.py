"""Erasure: finding and removing every copy of erased text inside one db.

A hard delete's text can have been copied into summaries, audit payloads, context-run records
and extraction bookkeeping; these reads and writes find those copies. The caller holds one
transaction around all of them, so an interrupted purge leaves the db as it was before.
"""
from __future__ import annotations

import json
import os
import time

from . import codec
from .connection import Part
from .vectors import VectorStore

CHECKPOINT_TRIES = 20
CHECKPOINT_PAUSE_S = 0.1


class ErasureStore(Part):
    # -- summaries ---------------------------------------------------------------------------
    def summaries_covering(self, message_ids: list[str]) -> list[str]:
        """Summaries whose message range holds any of `message_ids` (asked before they go)."""
        return self._ids_each(
            "select s.id from memory_summaries s, memory_messages m where m.id = ?"
            " and s.session_id = m.session_id and m.created_at between"
            " (select created_at from memory_messages where id = s.from_message_id)"
            " and (select created_at from memory_messages where id = s.to_message_id)",
            [(mid,) for mid in message_ids])

    def summaries_containing(self, texts: list[str]) -> list[str]:
        return self._ids_each(
            "select id from memory_summaries where instr(summary, ?1) or"
            " instr(coalesce(current_goal, ''), ?1) or instr(constraints_json, ?2) or"
            " instr(preferences_json, ?2) or instr(decisions_json, ?2) or"
            " instr(completed_work_json, ?2) or instr(pending_work_json, ?2) or"
            " instr(known_issues_json, ?2)", [(t, _json_body(t)) for t in texts])

    def _ids_each(self, sql: str, params_each) -> list[str]:
        """The ids `sql` returns for each set of parameters, once each, in order."""
        found: list[str] = []
        for params in params_each:
            found += [r[0] for r in self.db.all(sql, params)]
        return list(dict.fromkeys(found))

    def drop_summaries(self, ids: list[str], now: str) -> list[str]:
        """Remove summaries and every later summary built on them (each carries its parent's
        text forward), leaving tombstones; the next `summarize` rebuilds from the log that
        remains."""
        if not ids:
            return []
        rows = self.db.all(
            f"with recursive chain(id) as (select id from memory_summaries where id in"
            f" ({','.join('?' * len(ids))}) union select s.id from memory_summaries s join chain"
            " on s.parent_summary_id = chain.id) select c.id, s.summary from chain c join"
            " memory_summaries s on s.id = c.id", ids)
        dropped = [r[0] for r in rows]
        self.add_tombstones({r[0]: r[1] for r in rows}, now)
        self.db.execute("delete from memory_summaries where id in"
                        f" ({','.join('?' * len(dropped))})", dropped)
        VectorStore(self.db).drop(dropped)
        return dropped

    # -- nodes -------------------------------------------------------------------------------
    def nodes_citing(self, message_ids: list[str]) -> list[dict]:
        """Nodes taken from any of these messages (a scan: erasure is rare)."""
        found: dict[str, dict] = {}
        for start in range(0, len(message_ids), 500):
            chunk = message_ids[start:start + 500]
            for row in self.db.all(
                    f"select {codec.NODE_COLUMNS} from memory_nodes n where exists (select 1"
                    f" from json_each(n.source_message_ids_json) j where j.value in"
                    f" ({','.join('?' * len(chunk))}))", chunk):
                node = codec.node_from_row(row)
                found[node["id"]] = node
        return list(found.values())

    # -- context runs ------------------------------------------------------------------------
    def drop_context_runs(self, ids: list[str], texts: list[str]) -> int:
        """Runs that used an erased record or left it out, or whose question holds the
        erased text."""
        removed = self.db.execute("delete from memory_context_runs where " + _CITES,
                                  (json.dumps(list(ids)),)).rowcount if ids else 0
        for text in texts:
            removed += self.db.execute(
                "delete from memory_context_runs where instr(query_text, ?)", (text,)).rowcount
        return removed

    # -- audit -------------------------------------------------------------------------------
    def scrub_event_copies(self, ids: list[str], texts: list[str]) -> int:
        """Other events' copies: a successor's `before`, an undo's record. Records with an
        erased id become {"id", "erased"}; a live record's snapshot is its own text and stays;
        other strings holding erased text (notes, reasons) become "[erased]"."""
        needles = [f'"{i}"' for i in ids] + [_json_body(t) for t in texts]
        hits: dict[str, tuple] = {}
        for needle in needles:
            for row in self.db.all("select id, payload_json, reason from memory_audit_events"
                                   " where instr(payload_json, ?) or instr(reason, ?)",
                                   (needle, needle)):
                hits[row[0]] = row
        erased_ids = set(ids)
        for event_id, payload, reason in hits.values():
            clean = _scrub(codec.loads(payload), erased_ids, texts)
            if any(t in reason for t in texts):
                reason = "[erased]"
            self.db.execute("update memory_audit_events set payload_json = ?, reason = ?"
                            " where id = ?", (codec.dumps(clean), reason, event_id))
        return len(hits)

    # -- the entity graph ---------------------------------------------------------------------
    def entities_of(self, node_ids: list[str], names: list[str]) -> dict[str, str]:
        """{id: name} of the entities these memories' edges name, and of those `names` (the
        memories' own entity lists) call by a name or an alias: asked before they go."""
        found: dict[str, str] = {}
        for node_id in node_ids:
            found.update(self.db.all(
                "select e.id, e.name from memory_edges g join memory_entities e"
                " on e.id = g.subject or e.id = g.object_entity_id"
                " where g.source_node_id = ?", (node_id,)))
        for name in dict.fromkeys(names):
            found.update(self.db.all(
                "select e.id, e.name from memory_entity_names n join memory_entities e"
                " on e.id = n.entity_id where n.name = ?", (name,)))
        return found

    def settle_entities(self, entities: dict[str, str]) -> dict[str, str]:
        """After the edges of erased memories went: each of `entities` that no edge and no
        memory's entity list names any more is deleted, with its names; one that stays keeps
        only the aliases a memory that names it still says (the others came from erased
        words). Returns {id: name} of those deleted."""
        gone: dict[str, str] = {}
        for entity_id, name in entities.items():
            row = self.db.one("select aliases_json from memory_entities where id = ?",
                              (entity_id,))
            aliases = json.loads(row[0]) if row else []
            names = [name, *aliases]
            if row is None or not self._named_still(entity_id, names):
                self.db.execute("delete from memory_entities where id = ?", (entity_id,))
                self.db.execute("delete from memory_entity_names where entity_id = ?",
                                (entity_id,))
                gone[entity_id] = name
                continue
            kept = [a for a in aliases if self._said_about(entity_id, names, a)]
            if kept != aliases:
                self.db.execute("update memory_entities set aliases_json = ? where id = ?",
                                (json.dumps(kept, ensure_ascii=False), entity_id))
                self.db.execute("delete from memory_entity_names where entity_id = ?",
                                (entity_id,))
                self.db.executemany("insert or ignore into memory_entity_names values (?, ?)",
                                    [(n, entity_id) for n in [name, *kept] if n.strip()])
        return gone

    def _named_still(self, entity_id: str, names: list[str]) -> bool:
        if self.db.one("select 1 from memory_edges where subject = ? union all select 1 from"
                       " memory_edges where object_entity_id = ? limit 1",
                       (entity_id, entity_id)) is not None:
            return True
        return any(self._listing(n, 1) for n in names)

    def _listing(self, name: str, limit: int = -1) -> list[tuple[str, str]]:
        """(title, content) of the memories whose entity list holds `name`, case aside (a
        scan, read only by an erasure)."""
        return self.db.all(
            "select title, content from memory_nodes where instr(lower(entities_json),"
            " lower(?2)) and exists (select 1 from json_each(entities_json) j"
            " where j.value = ?1 collate nocase) limit ?3", (name, _json_body(name), limit))

    def _said_about(self, entity_id: str, names: list[str], alias: str) -> bool:
        """Whether a memory that names the entity (by an edge or in its entity list) still
        holds `alias` in its words, or one lists the alias itself."""
        if self.db.one("select 1 from memory_edges g join memory_nodes n"
                       " on n.id = g.source_node_id where (g.subject = ?1 or"
                       " g.object_entity_id = ?1) and (instr(n.title, ?2) or"
                       " instr(n.content, ?2)) limit 1", (entity_id, alias)) is not None:
            return True
        return bool(self._listing(alias, 1)) or any(alias in title or alias in content
                   for n in names for title, content in self._listing(n))

    # -- extraction bookkeeping --------------------------------------------------------------
    def forget_extraction_of(self, message_ids: list[str]) -> None:
        """Watermarks on a purged message step back to the one before it; queued retries that
        would read a purged message are dropped."""
        gone = set(message_ids)
        for session_id, mark in self.db.all(
                f"select session_id, last_message_id from memory_extraction_marks where"
                f" last_message_id in ({','.join('?' * len(message_ids))})", message_ids):
            previous = None
            for (candidate,) in self.db.all(
                    "select id from memory_messages where session_id = ? and (created_at, rowid)"
                    " < (select created_at, rowid from memory_messages where id = ?)"
                    " order by created_at desc, rowid desc limit ?",
                    (session_id, mark, len(gone) + 1)):
                if candidate not in gone:
                    previous = candidate
                    break
            if previous is None:
                self.db.execute("delete from memory_extraction_marks where session_id = ?",
                                (session_id,))
            else:
                self.db.execute("update memory_extraction_marks set last_message_id = ?"
                                " where session_id = ?", (previous, session_id))
        for mid in message_ids:
            self.db.execute("delete from memory_extraction_jobs where instr(message_ids_json, ?)",
                            (f'"{mid}"',))

    # -- purges left to finish in another db -------------------------------------------------
    def add_pending_purge(self, node_id: str, message_ids: list[str], now: str) -> None:
        self.db.executemany("insert or ignore into memory_pending_purges values (?, ?, ?)",
                            [(mid, node_id, now) for mid in message_ids])

    def pending_purges(self, node_ids: list[str] | None = None) -> dict[str, list[str]]:
        """{node id: message ids} still to be purged somewhere (all when node_ids is None)."""
        if node_ids is None:
            rows = self.db.all("select node_id, message_id from memory_pending_purges")
        elif not node_ids:
            rows = []
        else:
            rows = self.db.all("select node_id, message_id from memory_pending_purges where"
                               f" node_id in ({','.join('?' * len(node_ids))})", node_ids)
        out: dict[str, list[str]] = {}
        for node_id, mid in rows:
            out.setdefault(node_id, []).append(mid)
        return out

    def clear_pending_purges(self, message_ids: list[str], node_id: str | None = None) -> None:
        """Forget pending rows of these messages (only `node_id`'s when given)."""
        for start in range(0, len(message_ids), 500):
            chunk = message_ids[start:start + 500]
            where = "" if node_id is None else " and node_id = ?"
            self.db.execute("delete from memory_pending_purges where message_id in"
                            f" ({','.join('?' * len(chunk))}){where}",
                            [*chunk, *([] if node_id is None else [node_id])])

    def note_workspace(self, workspace_id: str, root: str, now: str) -> None:
        self.db.execute("insert or replace into memory_workspaces values (?, ?, ?)",
                        (workspace_id, root, now))

    def known_workspaces(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.db.all(
            "select workspace_id, root from memory_workspaces order by seen_at desc")]

    def was_hard_deleted(self, node_id: str) -> bool:
        row = self.db.one("select 1 from memory_audit_events where node_id = ? and"
                          " event_type = 'delete' and json_extract(payload_json,"
                          " '$.after.mode') = 'hard' limit 1", (node_id,))
        return row is not None

    def runs_citing(self, ids: list[str]) -> int:
        """Context runs that still name any of these ids (what verifying expects to be 0)."""
        if not ids:
            return 0
        return self.db.one("select count(*) from memory_context_runs where " + _CITES,
                           (json.dumps(list(ids)),))[0]

    # -- tombstones: what was erased, by id and keyed digest, never by text --------------------
    def add_tombstones(self, texts_by_id: dict[str, str], now: str) -> None:
        """Inside the erasing transaction: {erased id: its text}, only the digest kept."""
        if not texts_by_id:
            return
        key = self._digest_key(create=True)
        assert key is not None  # made here when missing
        self.db.executemany("insert or ignore into memory_tombstones (id, digest, erased_at)"
                            " values (?, ?, ?)", [(item, _digest(key, text), now)
                                                  for item, text in texts_by_id.items()])

    def erased(self, ids) -> set[str]:
        """The ids among `ids` that a tombstone names."""
        ids = list(dict.fromkeys(ids))
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            found |= {r[0] for r in self.db.all(
                "select id from memory_tombstones where id in"
                f" ({','.join('?' * len(chunk))})", chunk)}
        return found

    def erased_texts(self, texts) -> set[str]:
        """The texts among `texts` whose digest a tombstone holds (the same words erased)."""
        key = self._digest_key(create=False)
        if key is None:
            return set()
        digests = {_digest(key, t): t for t in dict.fromkeys(texts)}
        found: set[str] = set()
        keys = list(digests)
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            found |= {digests[r[0]] for r in self.db.all(
                "select digest from memory_tombstones where digest in"
                f" ({','.join('?' * len(chunk))})", chunk)}
        return found

    def tombstones_after(self, seq: int) -> list[tuple[int, str]]:
        """(seq, id) of the tombstones written after `seq`, oldest first."""
        return [(r[0], r[1]) for r in self.db.all(
            "select seq, id from memory_tombstones where seq > ? order by seq", (seq,))]

    def tombstone_book(self) -> str | None:
        """Names this db's tombstones for a reader elsewhere (None until one is written): a
        workspace keeps how far it has read under it, so a new user db starts from 0."""
        # Stored beside the key when it is made, so a workspace catching up reads one row and
        # loads no hashing code; an older db's book is derived from its key as it was made.
        row = self.db.one("select value from ekko_meta where key = 'erasure_book'")
        if row is not None:
            return row[0]
        key = self._digest_key(create=False)
        return None if key is None else _book(key)

    def read_up_to(self, book: str) -> int:
        row = self.db.one("select value from ekko_meta where key = ?", (f"erased_read:{book}",))
        return int(row[0]) if row else 0

    def set_read_up_to(self, book: str, seq: int) -> None:
        self.db.execute("insert or replace into ekko_meta values (?, ?)",
                        (f"erased_read:{book}", str(seq)))

    def _digest_key(self, create: bool) -> bytes | None:
        # Keyed, so a digest cannot be looked up in a table made elsewhere; the key is in
        # this db only, beside the digests it made.
        row = self.db.one("select value from ekko_meta where key = 'erasure_key'")
        if row is None and create:
            value = os.urandom(16).hex()
            self.db.execute("insert into ekko_meta values ('erasure_key', ?)", (value,))
            self.db.execute("insert into ekko_meta values ('erasure_book', ?)",
                            (_book(bytes.fromhex(value)),))
            return bytes.fromhex(value)
        return bytes.fromhex(row[0]) if row else None

    # -- after the transaction ---------------------------------------------------------------
    def checkpoint_truncate(self) -> bool:
        """Fold the WAL into the db and truncate it, retrying while a reader holds old pages;
        False when a reader kept them alive throughout."""
        # A short busy wait per try: the default would wait seconds on each reader.
        saved = self.db.one("PRAGMA busy_timeout")[0]
        self.db.execute("PRAGMA busy_timeout = 50")
        try:
            for _ in range(CHECKPOINT_TRIES):
                busy, _, _ = self.db.one("PRAGMA wal_checkpoint(TRUNCATE)")
                if not busy:
                    return True
                time.sleep(CHECKPOINT_PAUSE_S)
            return False
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(saved)}")

    # -- what erasure may have left, through SQL (the byte scan is store/scan.py) --------

    def index_leftovers(self, texts: list[str]) -> int:
        """FTS entries matching a text whose row is gone: index bytes a byte scan can miss."""
        from .fts import match_all
        left = 0
        for text in texts:
            match = match_all(text)
            if match is None:
                continue
            for table in ("memory_nodes", "memory_messages"):
                left += self.db.one(
                    f"select count(*) from (select rowid from {table}_fts where {table}_fts"
                    f" match ? except select rowid from {table})", (match,))[0]
        return left

    def live_copies(self, texts: list[str]) -> int:
        """Rows that still hold a text: the same words said again, or not yet erased."""
        total = 0
        for text in texts:
            body = _json_body(text)
            total += self.db.one(
                "select (select count(*) from memory_nodes where instr(title, ?1) or"
                " instr(content, ?1) or instr(coalesce(value_json, ''), ?2))"
                " + (select count(*) from memory_messages where instr(content, ?1))"
                " + (select count(*) from memory_summaries where instr(summary, ?1))"
                " + (select count(*) from memory_audit_events where instr(payload_json, ?2)"
                " or instr(reason, ?1))"
                " + (select count(*) from memory_context_runs where instr(query_text, ?1))",
                (text, body))[0]
        return total


# A run names a record in the ids it used, and in its ranking: as an item's key, or as the
# id of one it left out. Parameter 1 is a JSON list of ids.
_CITES = ("exists (select 1 from json_each(used_memory_ids_json) u where u.value in"
          " (select value from json_each(?1))) or exists (select 1 from"
          " json_tree(coalesce(ranking_json, '{}')) t where (t.key in (select value from"
          " json_each(?1)) or t.key = 'id' and t.value in (select value from json_each(?1))))")


def _digest(key: bytes, text: str) -> bytes:
    import hashlib  # only an erasure or an import hashes: never a plain context
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=key,
                           digest_size=16).digest()


def _book(key: bytes) -> str:
    import hashlib
    return hashlib.blake2b(key, digest_size=8).hexdigest()


def _json_body(text: str) -> str:
    """`text` as it appears inside a JSON string (quotes, backslashes, controls escaped)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _scrub(value, erased_ids: set[str], texts: list[str]):
    if isinstance(value, dict):
        if value.get("id") in erased_ids:
            return {"id": value["id"], "erased": True}
        if value.get("id"):  # a snapshot of a live record: its own words, not a copy
            return value
        return {k: _scrub(v, erased_ids, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, erased_ids, texts) for v in value]
    if isinstance(value, str) and any(t in value for t in texts):
        return "[erased]"
    return value
