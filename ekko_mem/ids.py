"""Identifiers sortable by creation time, with a readable prefix per kind."""
from __future__ import annotations

import os
import time

PREFIXES = {"message": "msg", "summary": "sum", "node": "mem", "event": "evt", "context": "ctx",
            "job": "job"}
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_last = [0, 0]  # last millisecond, last counter: keeps ids monotonic within one process


def _encode(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, rest = divmod(number, 32)
        chars.append(_ALPHABET[rest])
    return "".join(reversed(chars))


def new_id(kind: str) -> str:
    """`msg_` + 10 chars of wall-clock milliseconds + 8 chars that grow within the millisecond."""
    millis = int(time.time() * 1000)
    if millis <= _last[0]:
        millis = _last[0]
        _last[1] += 1
    else:
        _last[0] = millis
        _last[1] = int.from_bytes(os.urandom(5), "big") >> 1  # room left to count upward
    return f"{PREFIXES[kind]}_{_encode(millis, 10)}{_encode(_last[1], 8)}"


def kind_of(identifier: str) -> str | None:
    head = identifier.split("_", 1)[0]
    for kind, prefix in PREFIXES.items():
        if prefix == head:
            return kind
    return None
