"""Editing config.toml a line at a time, so that comments, order and spacing stay as written.

tomllib only reads, and writing a parsed file back would drop every comment. The editor knows
the shape config.toml has: `[table]` headers, `key = value` lines, comments and blank lines.
It changes or removes the one line that holds a key, or adds one; it never edits inside an
`[[array]]` table, a value spread over several lines, or a key defined as a table of its own.
Every edit is checked by reading the result back: unless it parses as the old file with exactly
that one key changed, the edit is refused and the text left as it was. Pure: text in, text out.
"""
from __future__ import annotations

import math
import re
import sys

_BARE = r"[A-Za-z0-9_-]+"
_SIMPLE = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_KEY = rf"{_SIMPLE}(?:[ \t]*\.[ \t]*{_SIMPLE})*"
_PAIR = rf"([ \t]*)({_KEY})([ \t]*=[ \t]*)(.*)"
_HEADER = rf"[ \t]*(\[\[?)[ \t]*({_KEY})[ \t]*(\]\]?)[ \t]*(#.*)?"
_GONE = object()


def _match(pattern: str, text: str):
    # re caches compiled patterns; compiling these at import cost more than a `log` (config
    # problems import this module for their line numbers).
    return re.fullmatch(pattern, text)


class CannotEdit(Exception):
    """The file has a shape this editor does not change safely; the message says which."""


def tomllib():
    if sys.version_info >= (3, 11):
        import tomllib as module
    else:
        import tomli as module
    return module


class Line:
    """One physical line: blank, comment, header (a table's path), pair (a key's full path,
    its value on this line or, when `more` > 0, on the next `more` lines too) or part of the
    value above."""

    __slots__ = ("kind", "path", "array", "indent", "key", "equals", "value", "tail", "end",
                 "more")

    def __init__(self, kind: str, path: tuple = (), *, array: bool = False, indent: str = "",
                 key: str = "", equals: str = "", value: str = "", tail: str = "",
                 end: str = "") -> None:
        self.kind, self.path, self.array, self.more = kind, path, array, 0
        self.indent, self.key, self.equals, self.value = indent, key, equals, value
        self.tail, self.end = tail, end


def scan(text: str) -> list[Line]:
    """The lines of a TOML file, each with the table or key it belongs to. Raises
    CannotEdit for a line it cannot place (the file is then not edited)."""
    raw = physical_lines(text)
    out: list[Line] = []
    table: tuple = ()
    i = 0
    while i < len(raw):
        body, end = _ending(raw[i])
        line = _classify(body, end, table)
        if line.kind == "header":
            table = line.path
        out.append(line)
        if line.kind == "pair" and not _parses(line.value):
            line.more = _continuation(raw, i, line)
            out += [Line("more", line.path) for _ in range(line.more)]
            i += line.more
        i += 1
    return out


def physical_lines(text: str) -> list[str]:
    """The lines as TOML counts them, each with its ending: only \\n (or \\r\\n) ends one;
    str.splitlines would also split at characters a string value may hold (U+2028, U+0085)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _ending(line: str) -> tuple[str, str]:
    for end in ("\r\n", "\n"):
        if line.endswith(end):
            return line[: -len(end)], end
    return line, ""


def _classify(body: str, end: str, table: tuple) -> Line:
    stripped = body.strip()
    if not stripped:
        return Line("blank", end=end)
    if stripped.startswith("#"):
        return Line("comment", end=end)
    if stripped.startswith("["):
        found = _match(_HEADER, body)
        if found is None or len(found.group(1)) != len(found.group(3)):
            raise CannotEdit(f"cannot read the table header {stripped!r}")
        return Line("header", _key_path(found.group(2)), array=len(found.group(1)) == 2,
                    end=end)
    found = _match(_PAIR, body)
    if found is None:
        raise CannotEdit(f"cannot read the line {stripped!r}")
    value, tail = _split_comment(found.group(4))
    return Line("pair", table + _key_path(found.group(2)), indent=found.group(1),
                key=found.group(2), equals=found.group(3), value=value, tail=tail, end=end)


def _key_path(key: str) -> tuple:
    """A key as written (bare, quoted or dotted) as the path of names TOML reads it as."""
    data = tomllib().loads(f"{key} = 0")
    path = []
    while isinstance(data, dict):
        (name, data), = data.items()
        path.append(name)
    return tuple(path)


def _split_comment(rest: str) -> tuple[str, str]:
    """`value  # comment` as ("value", "  # comment"): a # inside a string is not a comment."""
    quote = ""
    i = 0
    while i < len(rest):
        ch = rest[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        i += 1
    value = rest[:i].rstrip()
    return value, rest[len(value):]


def _parses(value: str) -> bool:
    try:
        tomllib().loads(f"v = {value}")
    except Exception:  # tomllib's own error, whatever the Python version calls it
        return False
    return True


def _continuation(raw: list[str], start: int, line: Line) -> int:
    """How many more lines a value spread over several lines takes (a multi-line array or
    string); CannotEdit if it never closes."""
    text = line.value + line.tail
    for more in range(1, len(raw) - start):
        text += line.end + _ending(raw[start + more])[0]
        if _parses(text):
            return more
    raise CannotEdit(f"cannot find where the value of {'.'.join(line.path)} ends")


# -- writing values --------------------------------------------------------------------------

def toml_value(value) -> str:
    """A value as TOML writes it on one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("TOML settings hold finite numbers only")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_key(name: str) -> str:
    return name if _match(_BARE, name) else _string(name)


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:  # controls TOML does not allow raw
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# -- edits -----------------------------------------------------------------------------------

def set_value(text: str, key: str, value) -> str:
    """`text` with `key` (section.name) set to `value`: its line changed in place, else a line
    added at the end of its table, else the table added at the end of the file."""
    old = _read(text)
    lines, path = scan(text), tuple(key.split(".", 1))
    found = _holding(lines, path, key)
    raw = physical_lines(text)
    if found is not None:
        at, line = found
        raw[at] = f"{line.indent}{line.key}{line.equals}{toml_value(value)}{line.tail}{line.end}"
    else:
        raw = _insert(raw, lines, path, value, _newline(text))
    new = "".join(raw)
    _verify(old, new, path, value)
    return new


def unset_value(text: str, key: str) -> str | None:
    """`text` without the line that sets `key`, or None when it does not set it."""
    old = _read(text)
    lines, path = scan(text), tuple(key.split(".", 1))
    found = _holding(lines, path, key)
    if found is None:
        return None
    raw = physical_lines(text)
    del raw[found[0]]
    new = "".join(raw)
    _verify(old, new, path, _GONE)
    return new


def line_of(text: str, path: tuple) -> int | None:
    """The 1-based line where `path` (a table, or a key in one) is first set, for messages."""
    try:
        lines = scan(text)
    except CannotEdit:
        return None
    for number, line in enumerate(lines, start=1):
        if line.kind in ("pair", "header") and line.path[: len(path)] == path:
            return number
    return None


def _read(text: str) -> dict:
    try:
        return tomllib().loads(text)
    except Exception as exc:  # tomllib's TOMLDecodeError (tomli's on Python 3.10)
        raise CannotEdit(f"it is not valid TOML ({exc})") from None


def _holding(lines: list[Line], path: tuple, key: str) -> tuple[int, Line] | None:
    """(index, line) of the one line that sets `path`; CannotEdit when the key is set in a
    shape this editor leaves to people (a table of its own, inline, over several lines)."""
    found = None
    for at, line in enumerate(lines):
        if line.kind == "header" and line.path[: len(path)] == path:
            kind = "[[" + ".".join(line.path) + "]]" if line.array else f"[{key}]"
            raise CannotEdit(f"{key} is written as a {kind} table")
        if line.kind != "pair":
            continue
        if line.path == path:
            if line.more:
                raise CannotEdit(f"{key} is spread over several lines")
            found = (at, line)
        elif line.path[: len(path)] == path or path[: len(line.path)] == line.path:
            raise CannotEdit(f"{key} is written inline as {'.'.join(line.path)} = …")
    return found


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _insert(raw: list[str], lines: list[Line], path: tuple, value, nl: str) -> list[str]:
    """A new `name = value` line after the last line of its table (or of the root dotted keys
    that make the table), else `[section]` and the line at the end of the file."""
    section, name = path
    raw = raw[:]
    if raw and not raw[-1].endswith("\n"):
        raw[-1] += nl
    after = _end_of_table(lines, section)
    if after is not None:
        at, indent, dotted = after
        key = f"{toml_key(section)}.{toml_key(name)}" if dotted else toml_key(name)
        return [*raw[: at + 1], f"{indent}{key} = {toml_value(value)}{nl}", *raw[at + 1:]]
    if any(line.strip() for line in raw):
        raw.append(nl)
    return [*raw, f"[{toml_key(section)}]{nl}", f"{toml_key(name)} = {toml_value(value)}{nl}"]


def _end_of_table(lines: list[Line], section: str) -> tuple[int, str, bool] | None:
    """(index of its last line, the indent of its keys, whether they are dotted keys at the
    root) of the table `section`, or None when the file has no such table."""
    headers = [at for at, line in enumerate(lines)
               if line.kind == "header" and line.path == (section,) and not line.array]
    if headers:
        start, dotted = headers[-1], False
    else:  # `section.name = value` lines before the first header make the table too
        start, dotted = -1, True
    last, indent = (start, "") if headers else (None, "")
    for at in range(start + 1, len(lines)):
        line = lines[at]
        if line.kind == "header":
            break
        if line.kind == "pair" and (not dotted or line.path[0] == section):
            last, indent = at + line.more, line.indent
    return None if last is None else (last, indent, dotted)


def _leaves(data: dict) -> dict:
    """section.name -> value, the depth config.toml's settings live at."""
    out: dict[tuple, object] = {}
    for section, body in data.items():
        if isinstance(body, dict):
            out.update({(section, name): value for name, value in body.items()})
        else:
            out[(section,)] = body
    return out


def _verify(old: dict, new_text: str, path: tuple, value) -> None:
    expected = _leaves(old)
    if value is _GONE:
        expected.pop(path, None)
    else:
        expected[path] = value
    try:
        got = _leaves(tomllib().loads(new_text))
    except Exception:  # the edit broke the file: refuse it rather than write it
        got = None
    if got != expected or (value is not _GONE and type(got[path]) is not type(value)):
        raise CannotEdit(f"changing {'.'.join(path)} here would change more than that key")
