"""`llm`'s conversation log (its logs.db) read as ekko-mem messages, oldest first.

    with LlmLog(default_logs_path()) as log:
        for record in log.messages(since="2026-01-01"):
            ...

Each llm response gives two records in the shape a JSON Lines `ekko-mem log` takes: the prompt as
a `user` message, then the reply as an `assistant` message (a side with no text is left
out). One llm conversation is one session, `llm-<conversation id>`; `createdAt` is when the
response started (the reply: when it ended); `metadata` holds `source: "llm"`,
`llmResponseId`, `model` and, when llm named the conversation, `conversationName`.
`source_key(record)` is a key no other record shares and every read gives again, for an
import that must not add the same message twice.

The prompt is the text as typed: fragments (`llm -f`) are left out, as `llm logs -q` leaves
them out of its search. What a fragment holds is a file, a page or an ekko-mem context; none
of it is what the person said, and a context logged back in would be remembered twice.

Both of llm's layouts are read: the message store (`turns`, what llm 0.36 writes) and the
`responses` table older versions wrote, which an upgraded logs.db still holds. The file is
opened read-only and read a batch at a time, each batch one short statement: llm writes to
the same file with a few seconds' patience for a lock, and one statement held open for a
whole import would keep it waiting.

Nothing here imports llm, and nothing above `errors`, so the reader works without llm.
"""
from __future__ import annotations

import heapq
import os
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator, Mapping

from ..errors import NotFound, Rejected, UsageError

BATCH = 500  # rows a statement; each batch is held in memory, never the whole log
SOURCE = "llm"
EPOCH = datetime.min.replace(tzinfo=timezone.utc)  # where a row without a time sorts

# The message store: a turn is one model call. turn_search holds the prompt as typed (its
# fragments left out) and the reply's text, which llm derives from the message tree. A batch
# is chosen from the turns alone, and only its rows' texts are read.
TURNS = """
select batch.id, batch.thread_id, threads.name, batch.model, batch.datetime_utc,
       batch.duration_ms, turn_search.prompt, turn_search.response
from (select id, thread_id, model, datetime_utc, duration_ms,
             coalesce(datetime_utc, '') as sort_time
      from turns
      where (coalesce(datetime_utc, ''), id) > (:after, :after_id)
        and coalesce(datetime_utc, '') >= :since
      order by sort_time, id
      limit :batch) as batch
left join turn_search on turn_search.turn_id = batch.id
left join threads on threads.id = batch.thread_id
order by batch.sort_time, batch.id
"""

# The layout before llm 0.36, which llm itself reads only for responses the store lacks.
RESPONSES = """
select batch.id, batch.conversation_id, conversations.name, batch.model,
       batch.datetime_utc, batch.duration_ms, responses.prompt, responses.response
from (select id, conversation_id, model, datetime_utc, duration_ms,
             coalesce(datetime_utc, '') as sort_time
      from responses
      where (coalesce(datetime_utc, ''), id) > (:after, :after_id)
        and coalesce(datetime_utc, '') >= :since {not_in_turns}
      order by sort_time, id
      limit :batch) as batch
join responses on responses.id = batch.id
left join conversations on conversations.id = batch.conversation_id
order by batch.sort_time, batch.id
"""
NOT_IN_TURNS = "and id not in (select id from turns)"
TABLES = "select name from sqlite_master where type = 'table'"


def default_logs_path(environ: Mapping[str, str] | None = None,
                      platform: str | None = None) -> Path:
    """Where llm keeps logs.db, as `llm logs path` prints it: under LLM_USER_PATH when that
    is set, else in llm's folder in the platform's place for settings. Nothing is created."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if env.get("LLM_USER_PATH"):
        return Path(env["LLM_USER_PATH"]) / "logs.db"
    home = env.get("HOME") or os.path.expanduser("~")
    if platform.startswith("win"):
        base = env.get("APPDATA") or env.get("USERPROFILE") or home
    elif platform == "darwin":
        base = os.path.join(home, "Library", "Application Support")
    else:
        base = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return Path(base) / "io.datasette.llm" / "logs.db"


def source_key(record: dict) -> str:
    """The record's own key, the same on every read: its llm response and its side."""
    return f"{SOURCE}:{record['metadata']['llmResponseId']}:{record['role']}"


def parse_since(since: str | datetime | None) -> datetime | None:
    """`since` as an aware UTC time; a bare date or a time without a zone is UTC."""
    if since is None:
        return None
    if isinstance(since, datetime):
        return _utc(since)
    moment = _parse_time(since)
    if moment is None:
        raise UsageError(f"since {since!r} is not an ISO-8601 time",
                         "write it like 2026-01-31 or 2026-01-31T12:00:00Z")
    return moment


class LlmLog:
    """One llm logs.db, open read-only until `close()` (or the end of a `with` block)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise NotFound(f"no llm log at {self.path}",
                           "run llm once to create it, or give the path `llm logs path` prints")
        try:
            self.connection = sqlite3.connect(self.path.absolute().as_uri() + "?mode=ro",
                                              uri=True)
        except sqlite3.Error as exc:
            raise self._not_a_log(str(exc)) from None
        try:
            self.tables = {row[0] for row in self.connection.execute(TABLES)}
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._not_a_log(str(exc)) from None
        if "turns" in self.tables and "turn_search" not in self.tables:
            self.close()
            raise self._not_a_log("it has turns but no turn_search; run any llm command once"
                                  " to bring it up to date")
        if not self.tables & {"turns", "responses"}:
            self.close()
            raise self._not_a_log("it has neither a turns nor a responses table")

    def _not_a_log(self, why: str) -> Rejected:
        return Rejected(f"{self.path} is not an llm log ({why})",
                        "give the path `llm logs path` prints")

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> LlmLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def messages(self, since: str | datetime | None = None) -> Iterator[dict]:
        """The log's messages, oldest response first, each response's prompt before its
        reply; only responses started at or after `since`. Raises UsageError for a `since`
        that is not a time, before anything is read."""
        start = parse_since(since)
        return self._messages(start)

    def _messages(self, start: datetime | None) -> Iterator[dict]:
        floor = start.strftime("%Y-%m-%dT%H:%M:%S") if start else ""
        sources = []
        if "turns" in self.tables:
            sources.append(self._rows(TURNS, floor))
        if "responses" in self.tables:
            not_in = NOT_IN_TURNS if "turns" in self.tables else ""
            sources.append(self._rows(RESPONSES.format(not_in_turns=not_in), floor))
        for _, _, row in heapq.merge(*sources):
            at = _parse_time(row[4] or "")
            if start is not None and (at is None or at < start):
                continue  # the query compares whole seconds; this is the exact test
            yield from _records(row, at)

    def _rows(self, sql: str, floor: str) -> Iterator[tuple]:
        """(time, id, row) in time order, a batch a statement, each run to its end at once
        so that no read holds the file between batches."""
        after, after_id = "", ""
        while True:
            try:
                batch = self.connection.execute(sql, {"after": after, "after_id": after_id,
                                                      "since": floor, "batch": BATCH}
                                                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise self._not_a_log(str(exc)) from None
            for row in batch:
                yield _parse_time(row[4] or "") or EPOCH, row[0], row
            if len(batch) < BATCH:
                return
            after, after_id = batch[-1][4] or "", batch[-1][0]


def _records(row: tuple, at: datetime | None) -> Iterator[dict]:
    response_id, conversation, name, model, _, duration, prompt, reply = row
    meta = {"source": SOURCE, "llmResponseId": response_id, "model": model}
    if name:
        meta["conversationName"] = name
    session = f"llm-{conversation or response_id}"
    ended = at + timedelta(milliseconds=duration or 0) if at else None
    for role, text, when in (("user", prompt, at), ("assistant", reply, ended)):
        text = (text or "").strip()  # llm joins fragments and prompt with a newline
        if not text:
            continue
        record = {"role": role, "content": text, "sessionId": session, "metadata": dict(meta)}
        if when is not None:
            record["createdAt"] = _format_time(when)
        yield record


def _parse_time(text: str) -> datetime | None:
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        return _utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)  # llm writes UTC; old versions said nothing
    return moment.astimezone(timezone.utc)


def _format_time(moment: datetime) -> str:
    """The way ekko-mem writes a time: UTC, to the millisecond."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
