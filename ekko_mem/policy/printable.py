"""Stored text made safe to print: memory holds whatever anyone logged, and an escape
sequence in a title must not retitle a terminal, clear it or forge output.

`printable` drops escape sequences (CSI, OSC, DCS and the rest, 7-bit and 8-bit forms) and
every other C0 control but newline and tab, DEL and every C1 control. It shows the invisible
characters as `<U+XXXX>`: bidi controls (an RLO makes `exe.txt` read as `txt.exe`), zero-width
characters, the other format characters (Unicode's Cf, tag characters included: they can
hide words that a model reads and a person does not) and the line and paragraph separators.
A zero-width joiner between two emoji (👨‍👩‍👧) is kept: there it only joins pictures.
`one_line` is a field of a row: newline, carriage return and tab shown as `\\n`, `\\r`, `\\t`,
so a row is always one line. `json_safe` makes JSON text escape DEL, C1 and the invisible
characters too (json.dumps already escapes C0): the JSON stays the same data.
"""
from __future__ import annotations

import re
from functools import cache

ESC, BEL, ZWJ = "\x1b", "\x07", "\u200d"
_KEEP = frozenset("\n\t")
_STRING_STARTS = frozenset("]PX^_")  # OSC, DCS, SOS, PM, APC: run to BEL or ST
_C1_STRINGS = {"\x9d": "]", "\x90": "P", "\x98": "X", "\x9e": "^", "\x9f": "_"}
# Unicode's format characters (Cf) and the line and paragraph separators (Zl, Zp), as
# ranges; a test checks that it holds every one unicodedata knows.
INVISIBLE = ((0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F),
             (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F),
             (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF),
             (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
             (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F))
_INVISIBLE_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in INVISIBLE)
_CONTROL_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_ONE_LINE = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def printable(text: str) -> str:
    """`text` without control characters and escape sequences (newline and tab stay), its
    invisible characters shown as `<U+XXXX>`."""
    if text.isprintable():
        return text
    work, control, invisible = _patterns()
    if not work.search(text):
        return text
    if control.search(text):
        text = _without_controls(text)
    return invisible.sub(_shown, text)


@cache
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """Compiled on first need: most text is printable, and `log` prints only ids."""
    return (re.compile(f"[{_CONTROL_CLASS}{_INVISIBLE_CLASS}]"),
            re.compile(f"[{_CONTROL_CLASS}]"), re.compile(f"[{_INVISIBLE_CLASS}]"))


def one_line(text: str) -> str:
    """`text` as one field of one line: printable, with newline, carriage return and tab
    written as `\\n`, `\\r` and `\\t`."""
    return printable(str(text).translate(_ONE_LINE))


def _shown(match: re.Match) -> str:
    ch, text, at = match.group(), match.string, match.start()
    if ch == ZWJ and _joins_emoji(text, at):
        return ch
    return f"<U+{ord(ch):04X}>"


def _joins_emoji(text: str, at: int) -> bool:
    before = at - 1
    while before >= 0 and (text[before] == "\ufe0f" or "\U0001f3fb" <= text[before]
                           <= "\U0001f3ff"):  # emoji presentation, skin tones
        before -= 1
    return before >= 0 and at + 1 < len(text) and _pictograph(text[before]) \
        and _pictograph(text[at + 1])


def _pictograph(ch: str) -> bool:
    return "\u2190" <= ch <= "\u2bff" or "\U0001f000" <= ch <= "\U0001faff"


def _without_controls(text: str) -> str:
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


def _json_escape(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON writes a character beyond the BMP
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


_JSON_ESCAPES = {code: _json_escape(code) for code in [
    *range(0x7f, 0xa0), *(code for low, high in INVISIBLE for code in range(low, high + 1))]}


def json_safe(text: str) -> str:
    """JSON text with DEL, C1 controls and invisible characters escaped as \\uXXXX (still the
    same JSON data)."""
    return text.translate(_JSON_ESCAPES) if not text.isascii() or "\x7f" in text else text
