"""The raw message log: append-only writes and session reads."""
from __future__ import annotations

from ..errors import NotFound, Rejected, Step
from ..ids import new_id
from ..policy.records import json_objects, normalise_message, parse_meta_pairs
from .stores import UseCase


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
        raws = json_objects(lines, what="written", max_bytes=self.config.get("limits.line"))
        if not raws:
            raise Rejected("no messages in the JSON lines input", "give one message per line")
        return self._append([r for _, r in raws], source=[n for n, _ in raws],
                            session=session, confirm=confirm)

    def _append(self, raws: list[dict], *, source: list[int] | None,
                session: str | None = None, confirm: bool = False) -> list[dict]:
        now = self.env.now_iso()
        default = self.session(session)
        limit = self.config.get("limits.message")
        messages: list[dict] = []
        batch_ids: set[str] = set()
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
            if msg["id"] in batch_ids:
                raise Rejected(f"{where}id {msg['id']} appears twice", "ids must be unique")
            batch_ids.add(msg["id"])
            messages.append({"id": msg.pop("id"), **msg})
        store = self.store
        clashes = store.messages.message_ids_exist([m["id"] for m in messages])
        if clashes:
            raise Rejected(f"message id {sorted(clashes)[0]} already exists",
                           "drop the id field to get a new one; nothing was written")
        parents = {m["parentId"] for m in messages if m.get("parentId")} - batch_ids
        missing = parents - store.messages.message_ids_exist(sorted(parents))
        if missing:
            raise NotFound(f"parent message {sorted(missing)[0]} does not exist",
                           "to check the id", step=Step(command="history"))
        store.messages.append_messages(messages)
        return messages

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
