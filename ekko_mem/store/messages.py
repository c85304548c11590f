"""The raw message log: append-only, except for hard deletes."""
from __future__ import annotations

from . import codec, fts
from .connection import Part
from .refs import SEP, local_ids
from .vectors import VectorStore


class MessageStore(Part):
    def append_messages(self, messages: list[dict]) -> None:
        with self.db.atomic() as db:
            first = db.one("select coalesce(max(rowid), 0) + 1 from memory_messages")[0]
            # Explicit rowids let both tables be filled with one executemany each.
            db.executemany(f"insert into memory_messages (rowid, {codec.MESSAGE_COLUMNS})"
                           " values (?, ?, ?, ?, ?, ?, ?, ?)",
                           [(first + i, *codec.message_to_row(m))
                            for i, m in enumerate(messages)])
            db.executemany("insert into memory_messages_fts (rowid, content) values (?, ?)",
                           [(first + i, fts.index_text(m["content"]))
                            for i, m in enumerate(messages)])
            VectorStore(db).index_messages(messages)

    def message_ids_exist(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = self.db.all(f"select id from memory_messages where id in ({marks})", ids)
        return {r[0] for r in rows}

    def _own_id(self) -> str | None:
        row = self.db.one("select value from ekko_meta where key = 'store_id'")
        return row[0] if row else None

    def get_message(self, message_id: str) -> dict | None:
        row = self.db.one(f"select {codec.MESSAGE_COLUMNS} from memory_messages where id = ?",
                          (message_id,))
        return codec.message_from_row(row) if row else None

    def get_messages(self, ids: list[str]) -> list[dict]:
        """The messages `ids` name in this log: plain ids, or a node's source references
        naming this db (store/refs.py); the others are not here."""
        if any(SEP in i for i in ids):
            ids = local_ids(ids, self._own_id())
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.all(f"select {codec.MESSAGE_COLUMNS} from memory_messages"
                           f" where id in ({marks}) order by created_at, rowid", ids)
        return [codec.message_from_row(r) for r in rows]

    def list_recent_messages(self, session_id: str, limit: int) -> list[dict]:
        """The last `limit` messages of a session, oldest first."""
        rows = self.db.all(
            f"select {codec.MESSAGE_COLUMNS} from memory_messages where session_id = ?"
            " order by created_at desc, rowid desc limit ?", (session_id, limit))
        return [codec.message_from_row(r) for r in reversed(rows)]

    def list_messages_after(self, session_id: str, after_id: str | None,
                            limit: int = -1) -> list[dict]:
        """Messages of a session after `after_id` (all when None), oldest first.

        Reads only the tail: the watermark's position is found by its primary key.
        """
        if after_id is None:
            rows = self.db.all(
                f"select {codec.MESSAGE_COLUMNS} from memory_messages where session_id = ?"
                " order by created_at, rowid limit ?", (session_id, limit))
        else:
            rows = self.db.all(
                f"select {codec.MESSAGE_COLUMNS} from memory_messages m where session_id = ?"
                " and (created_at, rowid) > (select created_at, rowid from memory_messages"
                " where id = ?) order by created_at, rowid limit ?",
                (session_id, after_id, limit))
        return [codec.message_from_row(r) for r in rows]

    def list_sessions(self, limit: int = 100) -> list[dict]:
        rows = self.db.all(
            "select session_id, count(*), min(created_at), max(created_at) from memory_messages"
            " group by session_id order by max(created_at) desc limit ?", (limit,))
        return [{"sessionId": r[0], "messages": r[1], "firstAt": r[2], "lastAt": r[3]}
                for r in rows]

    def delete_messages(self, ids: list[str]) -> int:
        """Hard-delete messages and their FTS entries (the caller holds the transaction)."""
        count = 0
        for row in self.db.all(
                f"select rowid, content from memory_messages where id in"
                f" ({','.join('?' * len(ids))})", ids) if ids else []:
            self.db.execute("insert into memory_messages_fts (memory_messages_fts, rowid,"
                            " content) values ('delete', ?, ?)", (row[0], fts.index_text(row[1])))
            self.db.execute("delete from memory_messages where rowid = ?", (row[0],))
            count += 1
        VectorStore(self.db).drop(ids)
        if count:
            self.db.fts_deleted.add("memory_messages_fts")
        return count

    def find_commit_message(self, session_id: str, sha: str) -> str | None:
        """The message that logged commit `sha`, if any (hooks record each commit once)."""
        row = self.db.one("select id from memory_messages where session_id = ? and"
                          " json_extract(metadata_json, '$.sha') = ? limit 1",
                          (session_id, sha))
        return row[0] if row else None
