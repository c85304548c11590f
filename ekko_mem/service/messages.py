"""The raw message log: append-only writes and session reads."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import new_id
from ..policy.records import normalise_message, parse_meta_pairs
from .stores import UseCase


CHUNK = 1000  # messages checked and written at a time by log_lines


def _chunks(items, size: int):
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Messages(UseCase):
    def log_message(self, content: str, *, session: str | None = None, role: str = "user",
                    parent: str | None = None, meta: list[str] | dict | None = None,
                    confirm: bool = False) -> dict:
        metadata = meta if isinstance(meta, dict) else parse_meta_pairs(meta or [])
        raw = {"content": content, "sessionId": self.session(session), "role": role,
               "parentId": parent, "metadata": metadata or None}
        return self._append([raw], source=None, confirm=confirm)[0]

    def log_jsonl(self, lines, *, session: str | None = None,
                  confirm: bool = False) -> list[dict]:
        """Append many messages from JSON lines in one transaction; one bad line rejects all."""
        return list(self.log_lines(lines, session=session, confirm=confirm))

    def log_lines(self, lines, *, session: str | None = None, confirm: bool = False):
        """log_jsonl for input of any length: lines are read, checked and written a chunk at
        a time inside one transaction, so memory stays flat and one bad line still rejects
        all; the messages written are read back from the log once committed."""
        store = self.store
        now, default = self.env.now_iso(), self.session(session)
        first, count, parents = None, 0, set()
        with store.db.atomic():
            for chunk in _chunks(self._objects(lines), CHUNK):
                messages = self._prepared([r for _, r in chunk], [n for n, _ in chunk],
                                          default, now, confirm)
                self._check_ids(messages, [n for n, _ in chunk], first)
                named = {m["parentId"] for m in messages if m.get("parentId")}
                parents |= named - store.messages.message_ids_exist(sorted(named))
                at = store.messages.append_messages(messages)
                first = at if first is None else first
                count += len(messages)
            if not count:
                raise Rejected("no messages in the JSON lines input", "give one message per line")
            # A parent may be a message further down the input, written since.
            unresolved, missing = sorted(parents), set()
            for at in range(0, len(unresolved), CHUNK):
                batch = unresolved[at:at + CHUNK]
                missing |= set(batch) - store.messages.message_ids_exist(batch)
            self._parents_exist(missing)
        return store.messages.messages_from(first, count)

    def _objects(self, lines):
        """(line number, object) for each non-blank line; a line over limits.line, from a
        file read a line at a time, comes as its size (transfer_files.TooLong)."""
        from ..policy.records import json_object
        cap = self.config.get("limits.line")
        for number, line in enumerate(lines, start=1):
            if not isinstance(line, str):
                from ..policy.limits import check_size
                check_size(f"line {number}", "", cap, "limits.line", unit="bytes",
                           size=line.size)
            value = json_object(number, line, what="written", max_bytes=cap)
            if value is not None:
                yield number, value

    def _append(self, raws: list[dict], *, source: list[int] | None,
                session: str | None = None, confirm: bool = False) -> list[dict]:
        store = self.store
        messages = self._prepared(raws, source, self.session(session), self.env.now_iso(),
                                  confirm)
        self._check_ids(messages, source, None)
        self._parents_exist({m["parentId"] for m in messages if m.get("parentId")}
                            - {m["id"] for m in messages}
                            - store.messages.message_ids_exist(
                                sorted({m["parentId"] for m in messages
                                        if m.get("parentId")})))
        store.messages.append_messages(messages)
        return messages

    def _prepared(self, raws: list[dict], source: list[int] | None, default: str, now: str,
                  confirm: bool) -> list[dict]:
        """Each message checked, its defaults filled and its credentials guarded; the first
        problem rejects them all, naming its line."""
        limit = self.config.get("limits.message")
        messages: list[dict] = []
        for index, raw in enumerate(raws):
            where = f"line {source[index]}: " if source else ""
            try:
                msg = normalise_message(raw, default_session=default, now=now,
                                        max_chars=limit)
            except Rejected as exc:
                raise Rejected(f"{where}{exc.message}", exc.reason_for_step
                               + ("; nothing was written" if source else ""),
                               step=exc.step) from None
            self.guard_credentials(msg, where, confirm)
            msg.setdefault("id", new_id("message"))
            messages.append({"id": msg.pop("id"), **msg})
        return messages

    def _check_ids(self, messages: list[dict], source: list[int] | None,
                   first: int | None) -> None:
        """An id given twice in the input (earlier in this chunk, or in a chunk already
        written from rowid `first` on), or one the log held before, rejects the input."""
        seen: set[str] = set()
        for index, msg in enumerate(messages):
            if msg["id"] in seen:
                where = f"line {source[index]}: " if source else ""
                raise Rejected(f"{where}id {msg['id']} appears twice", "ids must be unique")
            seen.add(msg["id"])
        held = self.store.messages.ids_written_since(list(seen), first or 0)
        for index, msg in enumerate(messages):
            if msg["id"] not in held:
                continue
            if first is not None and held[msg["id"]]:
                where = f"line {source[index]}: " if source else ""
                raise Rejected(f"{where}id {msg['id']} appears twice", "ids must be unique")
            raise Rejected(f"message id {msg['id']} already exists",
                           "drop the id field to get a new one; nothing was written")

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
