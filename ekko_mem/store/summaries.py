"""The chain of summaries, context-run records and extraction bookkeeping."""
from __future__ import annotations

from . import codec
from .connection import Part
from .nodes import CHAIN_LIMIT
from .vectors import VectorStore


class SummaryStore(Part):
    def append_summary(self, summary: dict) -> None:
        self.db.execute(f"insert into memory_summaries ({codec.SUMMARY_COLUMNS}) values"
                        f" ({','.join('?' * 15)})", codec.summary_to_row(summary))
        VectorStore(self.db).index_summary(summary)

    def get_latest_summary(self, session_id: str) -> dict | None:
        row = self.db.one(f"select {codec.SUMMARY_COLUMNS} from memory_summaries"
                          " where session_id = ? order by created_at desc, rowid desc limit 1",
                          (session_id,))
        return codec.summary_from_row(row) if row else None

    def get_summary(self, summary_id: str) -> dict | None:
        row = self.db.one(f"select {codec.SUMMARY_COLUMNS} from memory_summaries where id = ?",
                          (summary_id,))
        return codec.summary_from_row(row) if row else None

    def list_summaries(self, session_id: str, limit: int = 100) -> list[dict]:
        rows = self.db.all(f"select {codec.SUMMARY_COLUMNS} from memory_summaries"
                           " where session_id = ? order by created_at, rowid limit ?",
                           (session_id, limit))
        return [codec.summary_from_row(r) for r in rows]

    def parent_chain(self, summary: dict, limit: int = CHAIN_LIMIT) -> tuple[list[str], dict]:
        """The ids of the summaries `summary` was built on, the nearest first, each once, and
        where the walk stopped early ({} at the first summary; else "at" the id whose parent
        link led back into the chain or past `limit`, "why" "cycle" or "limit")."""
        seen, current = {summary["id"]}, summary
        parents: list[str] = []
        while current.get("parentSummaryId"):
            parent_id = current["parentSummaryId"]
            if parent_id in seen or len(seen) >= limit:
                return parents, {"at": current["id"],
                                 "why": "cycle" if parent_id in seen else "limit"}
            parent = self.get_summary(parent_id)
            if parent is None:
                break
            current = parent
            seen.add(parent_id)
            parents.append(parent_id)
        return parents, {}

    # -- context runs (explain) --------------------------------------------------------------
    def record_context_run(self, run: dict) -> None:
        self.db.execute("insert into memory_context_runs (id, session_id, query_text, budget,"
                        " used_tokens, used_memory_ids_json, created_at, ranking_json)"
                        " values (?, ?, ?, ?, ?, ?, ?, ?)",
                        (run["id"], run.get("sessionId"), run.get("queryText"), run["budget"],
                         run["usedTokens"], codec.dumps(run["usedMemoryIds"]),
                         run["createdAt"], codec.dumps(run.get("ranking") or {})))

    def get_context_run(self, run_id: str | None) -> dict | None:
        if run_id is None:
            row = self.db.one("select * from memory_context_runs"
                              " order by created_at desc, rowid desc limit 1")
        else:
            row = self.db.one("select * from memory_context_runs where id = ?", (run_id,))
        if row is None:
            return None
        return {"id": row[0], "sessionId": row[1], "queryText": row[2], "budget": row[3],
                "usedTokens": row[4], "usedMemoryIds": codec.loads(row[5]),
                "createdAt": row[6], "ranking": codec.loads(row[7]) if len(row) > 7 else None}

    # -- extraction bookkeeping --------------------------------------------------------------
    def extraction_mark(self, session_id: str) -> str | None:
        row = self.db.one("select last_message_id from memory_extraction_marks"
                          " where session_id = ?", (session_id,))
        return row[0] if row else None

    def set_extraction_mark(self, session_id: str, message_id: str, now: str) -> None:
        self.db.execute("insert or replace into memory_extraction_marks values (?, ?, ?)",
                        (session_id, message_id, now))

    def add_job(self, job: dict) -> None:
        self.db.execute(
            "insert into memory_extraction_jobs (id, session_id, kind, message_ids_json,"
            " command, error, attempts, status, created_at, updated_at)"
            " values (?, ?, ?, ?, ?, ?, 1, 'pending', ?, ?)",
            (job["id"], job["sessionId"], job["kind"], codec.dumps(job["messageIds"]),
             job.get("command"), job["error"], job["createdAt"], job["createdAt"]))

    def list_jobs(self, status: str = "pending", limit: int = 100) -> list[dict]:
        rows = self.db.all(
            "select id, session_id, kind, message_ids_json, command, error, attempts, status,"
            " created_at, updated_at from memory_extraction_jobs where status = ?"
            " order by created_at limit ?", (status, limit))
        return [{"id": r[0], "sessionId": r[1], "kind": r[2], "messageIds": codec.loads(r[3]),
                 "command": r[4], "error": r[5], "attempts": r[6], "status": r[7],
                 "createdAt": r[8], "updatedAt": r[9]} for r in rows]

    def update_job(self, job_id: str, *, status: str, error: str | None, now: str) -> None:
        self.db.execute("update memory_extraction_jobs set status = ?, error = coalesce(?,"
                        " error), attempts = attempts + 1, updated_at = ? where id = ?",
                        (status, error, now, job_id))
