"""The raw message log: append-only writes and session reads."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import PREFIXES, new_id
from ..policy.records import normalise_message, parse_meta_pairs
from .stores import UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .stores import Progress


CHUNK = 1000  # lines read and checked, and messages staged, at a time by log_lines


def _chunks(items, size: int):
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _already_exists(ids: set[str]) -> Rejected:
    return Rejected(f"message id {sorted(ids)[0]} already exists",
                    "drop the id field to get a new one; nothing was written")


def derived_id(key: str, created_at: str | None) -> str:
    """A message id that the same record of another log always gets: its time (ms) as
    `new_id` writes it, then 40 bits of a digest of its key in that log."""
    import hashlib

    from ..env import parse_time
    millis = int(parse_time(created_at).timestamp() * 1000) if created_at else 0
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:5], "big")
    return f"{PREFIXES['message']}_{_base32(millis, 10)}{_base32(digest, 8)}"


def _base32(number: int, width: int) -> str:
    alphabet = "0123456789abcdefghjkmnpqrstvwxyz"  # ids.py's: Crockford, lower case
    chars = []
    for _ in range(width):
        number, rest = divmod(number, 32)
        chars.append(alphabet[rest])
    return "".join(reversed(chars))


def _written(index):
    """The staged messages, once written, then the scratch db closed."""
    try:
        for messages in index.staged_as_given():
            yield from messages
    finally:
        index.close()


class Messages(UseCase):
    def log_message(self, content: str, *, session: str | None = None, role: str = "user",
                    parent: str | None = None, meta: list[str] | dict | None = None,
                    confirm: bool = False) -> dict:
        metadata = meta if isinstance(meta, dict) else parse_meta_pairs(meta or [])
        default = self.session(session)
        raw = {"content": content, "sessionId": default, "role": role, "parentId": parent,
               "metadata": metadata or None}
        msg = self._prepare(raw, "", default, self.env.now_iso(),
                            self.config.get("limits.message"), confirm)
        store = self.store
        if store.messages.message_ids_exist([msg["id"]]):
            raise _already_exists({msg["id"]})
        if msg.get("parentId") and not store.messages.message_ids_exist([msg["parentId"]]):
            self._parents_exist({msg["parentId"]})
        store.messages.append_messages([msg])
        return msg

    def log_jsonl(self, lines: Iterable[str], *, session: str | None = None,
                  confirm: bool = False, progress: Progress | None = None) -> list[dict]:
        """Append many messages from JSON lines in one transaction; one bad line rejects all."""
        return list(self.log_lines(lines, session=session, confirm=confirm, progress=progress))

    def log_lines(self, lines: Iterable[str], *, session: str | None = None,
                  confirm: bool = False, progress: Progress | None = None) -> Iterator[dict]:
        """log_jsonl for input of any length, in two passes. The first reads and checks
        every line and stages the messages in a private scratch db (memory stays flat and
        the log is not locked meanwhile); the second checks what the log holds again and
        writes them in one transaction. One bad line still rejects all. With semantic recall
        on, their vectors are made after that commit (`progress(done, total)` after each
        batch). Yields the messages written, once committed."""
        return self._log(self._objects(lines), session=session, confirm=confirm,
                         progress=progress)

    def _log(self, objects, *, session: str | None, confirm: bool,
             progress: Progress | None, none_is_fine: bool = False) -> Iterator[dict]:
        """log_lines of (number, raw message, where) triples; `where` starts the words of a
        refusal. With `none_is_fine`, no messages at all writes nothing and is no error."""
        from ..store.transfer import ImportIndex
        from .semantic import vectors_after
        index = ImportIndex()
        try:
            if self._check_lines(index, objects, session, confirm, none_is_fine):
                with vectors_after({"workspace": self.store}, progress):
                    self._write_staged(index)
        except BaseException:
            index.close()
            raise
        return _written(index)

    def _check_lines(self, index, objects, session: str | None, confirm: bool,
                     none_is_fine: bool = False) -> int:
        """Every line read and checked, the messages staged in `index`; how many. Refused
        as `log` always refused a batch: a line that is not JSON first, then the first line
        (in order) whose fields are wrong or whose id came before, then an id the log holds,
        then a parent that is nowhere."""
        now, default = self.env.now_iso(), self.session(session)
        limit = self.config.get("limits.message")
        problem: Rejected | None = None
        held: set[str] = set()       # given ids the log already holds
        parents: set[str] = set()    # parents named that the log did not hold
        count = 0
        for chunk in _chunks(objects, CHUNK):  # not JSON: refused at once
            if problem is not None:
                continue
            staged: list[tuple[int, dict]] = []
            wheres = {number: where for number, _, where in chunk}
            for number, raw, where in chunk:
                try:
                    staged.append((number, self._prepare(raw, where, default, now, limit,
                                                         confirm)))
                except Rejected as exc:
                    problem = exc
                    break
            repeat = index.add([("message", m["id"], n, False) for n, m in staged])
            if repeat is not None:
                repeated = next(m["id"] for n, m in staged if n == repeat[0])
                problem = Rejected(f"{wheres[repeat[0]]}id {repeated} appears twice",
                                   "ids must be unique")
            if problem is not None:
                continue
            held |= self.store.messages.message_ids_exist([m["id"] for _, m in staged])
            named = {m["parentId"] for _, m in staged if m.get("parentId")}
            parents |= named - self.store.messages.message_ids_exist(sorted(named))
            index.stage_as_given(staged)
            count += len(staged)
        if problem is not None:
            raise problem
        if not count and not none_is_fine:
            raise Rejected("no messages in the JSON lines input", "give one message per line")
        if held:
            raise _already_exists(held)
        # A parent may name a message anywhere in the input.
        self._parents_exist(parents - index.messages_among(sorted(parents)))
        return count

    def _write_staged(self, index) -> None:
        """The staged messages written in one transaction. Another process may have written
        or erased messages since they were checked, so what the log holds is checked again
        under the write lock: an id it holds now, a parent it no longer holds."""
        store = self.store
        with store.db.atomic():
            for messages in index.staged_as_given():
                held = store.messages.message_ids_exist([m["id"] for m in messages])
                if held:
                    raise _already_exists(held)
                named = sorted({m["parentId"] for m in messages if m.get("parentId")})
                self._parents_exist(set(named) - store.messages.message_ids_exist(named)
                                    - index.messages_among(named))
                store.messages.append_messages(messages)

    def _objects(self, lines):
        """(line number, object, where) for each non-blank line; a line over limits.line,
        from a file read a line at a time, comes as its size (transfer_files.TooLong)."""
        from .transfer_files import line_object
        cap = self.config.get("limits.line")
        for number, line in enumerate(lines, start=1):
            value = line_object(number, line, cap, "written")
            if value is not None:
                yield number, value, f"line {number}: "

    # -- llm's log -----------------------------------------------------------------------------
    def import_llm_log(self, path: str | None = None, *, since: str | None = None,
                       confirm: bool = False, allow_erased: bool = False,
                       progress: Progress | None = None) -> dict:
        """The conversations `llm` logged (its logs.db at `path`, else where llm keeps it),
        logged here as `log` logs JSON lines: each conversation a session, each prompt and
        reply a message at its own time, the model in its metadata. Each message's id is
        made from its place in llm's log, so what this log holds already is skipped (a
        second import adds nothing), and so is what was erased here, unless `allow_erased`.
        `since` (a time as a message search reads one) leaves older responses unread. The
        log is read a batch at a time; all is written, or nothing."""
        from ..store.llm_logs import LlmLog
        start = self._since(since) if since else None
        found = {"held": 0, "erased": 0}
        with LlmLog(self._llm_log_path(path)) as log:
            fresh = self._fresh(log.messages(since=start), found, allow_erased)
            written = sum(1 for _ in self._log(fresh, session=None, confirm=confirm,
                                               progress=progress, none_is_fine=True))
        report: dict = {"imported": {"message": written, "summary": 0, "node": 0, "event": 0},
                        "skipped": found["held"]}
        if found["erased"]:
            report["erased"] = found["erased"]
        return report

    def _since(self, text: str):
        from ..policy.timeexpr import parse_since
        return parse_since(text, self.env.now())

    def _llm_log_path(self, path: str | None) -> str:
        import os

        from ..store.llm_logs import default_logs_path
        if not path:
            return str(default_logs_path(self.env.environ))
        return os.path.normpath(os.path.join(self.env.cwd, os.path.expanduser(path)))

    def _fresh(self, records, found: dict, allow_erased: bool):
        """(number, record, where) for each record whose id the log holds not, nor a
        tombstone (unless `allow_erased`); `found` counts those left out."""
        from ..store.llm_logs import source_key
        for chunk in _chunks(enumerate(records, start=1), CHUNK):
            for _, record in chunk:
                record["id"] = derived_id(source_key(record), record.get("createdAt"))
            ids = [record["id"] for _, record in chunk]
            held = self.store.messages.message_ids_exist(ids)
            erased = set() if allow_erased else self.store.erasure.erased(ids) - held
            found["held"] += len(held)
            found["erased"] += len(erased)
            for number, record in chunk:
                if record["id"] not in held and record["id"] not in erased:
                    meta = record["metadata"]
                    yield number, record, (f"llm response {meta['llmResponseId']}"
                                           f" ({record['role']}): ")

    def _prepare(self, raw: dict, where: str, default: str, now: str, limit: int,
                 confirm: bool) -> dict:
        """One message checked, its defaults filled and its credentials guarded."""
        try:
            msg = normalise_message(raw, default_session=default, now=now, max_chars=limit)
        except Rejected as exc:
            raise Rejected(f"{where}{exc.message}", exc.reason_for_step
                           + ("; nothing was written" if where else ""),
                           step=exc.step) from None
        self.guard_credentials(msg, where, confirm)
        msg.setdefault("id", new_id("message"))
        return {"id": msg.pop("id"), **msg}

    @staticmethod
    def _parents_exist(missing: set[str]) -> None:
        if missing:
            raise NotFound(f"parent message {sorted(missing)[0]} does not exist",
                           "to check the id", step=Step(command="history"))

    def guard_credentials(self, msg: dict, where: str, confirm: bool) -> None:
        """A credential in chat is not kept: masked on the way in (the log is what every
        later summary and context is built from), unless the person confirms or the policy
        says allow; the 'refuse' policy rejects the message instead.

        Every message passes here on its way into a log (log, its JSON lines, remember's
        source text, the git hook), so a NUL byte in any of its fields is refused here too."""
        from ..policy.nul import refuse_nul
        refuse_nul(msg, f"{where}message", "; nothing was written" if where else "")
        policy = self.config.get("sensitive.policy")
        if policy == "allow" or (confirm and policy != "refuse"):
            return
        from ..policy.sensitive import (credentials_in_json, describe, find_credentials,
                                        mask_json, mask_secrets)
        meta = msg.get("metadata")
        found = find_credentials(msg["content"]) + credentials_in_json(meta)
        if not found:
            return
        what = describe(found)
        if policy == "refuse":
            raise Rejected(f"{where}the message contains {what}; sensitive.policy is 'refuse'",
                           "remove it and log again; nothing was written")
        msg["content"] = mask_secrets(msg["content"])
        if meta:
            msg["metadata"] = mask_json(meta)
        keep = self.stores.spell(Step("confirm"))
        self.stores.notes.append(f"{where}{what} in the message was replaced by [secret removed]"
                                 f" ({keep} to keep it as written)")

    def history(self, *, session: str | None = None, limit: int = 20) -> dict:
        if limit < 1:
            raise Rejected(f"limit must be at least 1, not {limit}", "ask for 20, say")
        sid = self.session(session)
        return {"sessionId": sid, "messages": self.store.messages.list_recent_messages(sid, limit)}

    def sessions(self, limit: int = 100) -> list[dict]:
        """Sessions with their message counts, the most recently active first."""
        if limit < 1:
            raise Rejected(f"limit must be at least 1, not {limit}", "ask for 20, say")
        return self.store.messages.list_sessions(limit)
