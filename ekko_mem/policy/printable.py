"""Stored text made safe to print: memory holds whatever anyone logged, and an escape
sequence in a title must not retitle a terminal, clear it or forge output.

`printable` drops escape sequences (CSI, OSC, DCS and the rest, 7-bit and 8-bit forms) and
every other C0 control but newline and tab, DEL and every C1 control. `json_safe` makes JSON
text escape DEL and C1 too (json.dumps already escapes C0): the JSON stays the same data.
"""
from __future__ import annotations

ESC, BEL = "\x1b", "\x07"
_KEEP = frozenset("\n\t")
_STRING_STARTS = frozenset("]PX^_")  # OSC, DCS, SOS, PM, APC: run to BEL or ST
_C1_STRINGS = {"\x9d": "]", "\x90": "P", "\x98": "X", "\x9e": "^", "\x9f": "_"}
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7f, 0xa0)}


def printable(text: str) -> str:
    """`text` without control characters and escape sequences (newline and tab stay)."""
    if text.isprintable() or not _has_control(text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == ESC or ch == "\x9b" or ch in _C1_STRINGS:
            i = _skip_sequence(text, i)
            continue
        if ch in _KEEP or not _is_control(ch):
            out.append(ch)
        i += 1
    return "".join(out)


def _has_control(text: str) -> bool:
    return any(_is_control(ch) and ch not in _KEEP for ch in text)


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7f <= code < 0xa0


def _skip_sequence(text: str, i: int) -> int:
    """The index just past the escape sequence that starts at i."""
    ch, n = text[i], len(text)
    if ch == "\x9b":
        kind, j = "[", i + 1
    elif ch in _C1_STRINGS:
        kind, j = _C1_STRINGS[ch], i + 1
    else:
        if i + 1 >= n:
            return n
        kind, j = text[i + 1], i + 2
    if kind == "[":  # CSI: parameter and intermediate bytes, then one final byte
        while j < n and not "\x40" <= text[j] <= "\x7e":
            j += 1
        return min(j + 1, n)
    if kind in _STRING_STARTS:  # a string: up to BEL, ESC \ or the 8-bit ST
        while j < n and text[j] not in (BEL, "\x9c", ESC):
            j += 1
        if j < n and text[j] == ESC:
            j += 1  # the backslash of ESC \
        return min(j + 1, n)
    return j  # a two-character escape (ESC c, ESC 7, ...)


def json_safe(text: str) -> str:
    """JSON text with DEL and C1 controls escaped as \\u00XX (still the same JSON data)."""
    return text.translate(_JSON_ESCAPES) if not text.isascii() or "\x7f" in text else text
