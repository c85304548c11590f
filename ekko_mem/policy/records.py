"""Normalising raw message input from flags or JSON lines into stored records."""
from __future__ import annotations

import json

from ..env import format_time, parse_time
from ..errors import Rejected, UsageError
from .nul import refuse_nul
from .vocab import ROLES, choose

MESSAGE_FIELDS = {"id", "sessionId", "parentId", "role", "content", "metadata", "createdAt"}


def parse_meta_pairs(pairs: list[str]) -> dict:
    meta: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"metadata {pair!r} is not key=value", "write it like source=git")
        meta[key.strip()] = value
    return meta


def normalise_message(raw: dict, *, default_session: str, now: str,
                      max_chars: int | None = None) -> dict:
    """Check one message's fields and fill defaults; raise Rejected naming the field."""
    unknown = set(raw) - MESSAGE_FIELDS
    if unknown:
        raise Rejected(f"unknown field(s) {', '.join(sorted(unknown))}",
                       f"a message has: {', '.join(sorted(MESSAGE_FIELDS))}")
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        raise Rejected("message content is missing or empty", "give the text to log")
    refuse_nul({"content": content}, "message")
    if max_chars is not None:
        from .limits import check_size
        check_size("the message", content, max_chars, "limits.message")
        if isinstance(raw.get("metadata"), dict):
            check_size("the message's metadata", json.dumps(raw["metadata"], ensure_ascii=False),
                       max_chars, "limits.message")
    session = raw.get("sessionId") or default_session
    if not isinstance(session, str) or not session.strip():
        raise Rejected("sessionId must be a non-empty string", "give a session name")
    role = choose("role", raw.get("role") or "user", ROLES)
    meta = raw.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise Rejected("metadata must be a JSON object", 'write it like {"source": "git"}')
    out: dict[str, object] = {"sessionId": session.strip(), "role": role, "content": content,
                              "createdAt": now}
    for name in ("id", "parentId"):
        if raw.get(name) is not None:
            if not isinstance(raw[name], str) or not raw[name].strip():
                raise Rejected(f"{name} must be a non-empty string", f"fix or drop {name}")
            out[name] = raw[name].strip()
    if raw.get("createdAt") is not None:
        try:
            out["createdAt"] = format_time(parse_time(str(raw["createdAt"])))
        except ValueError:
            raise Rejected(f"createdAt {raw['createdAt']!r} is not an ISO-8601 time",
                           "write it like 2026-01-31T12:00:00Z") from None
    if meta:
        out["metadata"] = meta
    return out


def json_object(number: int, line: str, *, what: str, max_bytes: int | None = None
                ) -> dict | None:
    """Line `number`'s JSON object, None for a blank line; anything else is refused with its
    number ("nothing was {what}")."""
    if not line.strip():
        return None
    if max_bytes is not None:
        from .limits import check_size, line_bytes
        check_size(f"line {number}", line, max_bytes, "limits.line", unit="bytes",
                   size=line_bytes(line, max_bytes))
    try:
        value = json.loads(line)
    except ValueError as exc:  # a JSONDecodeError, or a number too long to read
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "a number too long to read"
        raise Rejected(f"line {number} is not valid JSON ({why})",
                       f"fix that line; nothing was {what}") from None
    if not isinstance(value, dict):
        raise Rejected(f"line {number} is not a JSON object",
                       f"each line must be one object; nothing was {what}")
    return value
