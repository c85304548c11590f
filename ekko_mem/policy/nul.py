"""Stored text is text: a NUL byte in any field is refused on every write path.

SQLite keeps a NUL, but much of what reads memory back stops at one (C strings, the
full-text tokenizer, terminals, some JSON tools), so the text found, shown and sent to a
model would silently differ from the text stored. One rule, one message, for the log,
`remember`, `edit`, `import`, the MCP tools and the git hook alike.
"""
from __future__ import annotations

from ..errors import Rejected

NUL = "\x00"
HINT = "strip binary data first"


def holds_nul(value) -> bool:
    """True when a NUL is in `value`: a string, or any string (key or item) nested in it."""
    stack = [value]
    while stack:  # a loop, not recursion: JSON from outside may be nested very deep
        item = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def refuse_nul(record: dict, what: str, more: str = "") -> None:
    """Rejected (exit 4) naming the first field of `record` holding a NUL, e.g. "message
    content contains a NUL byte; strip binary data first"; `more` extends the hint."""
    for field, value in record.items():
        if holds_nul(field) or holds_nul(value):
            name = field.replace(NUL, "\\0") if isinstance(field, str) else field
            raise Rejected(f"{what} {name} contains a NUL byte", f"{HINT}{more}")
