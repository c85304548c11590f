"""config.toml at user level (~/.ekko) and workspace level (.ekko), workspace winning.

Parsing is skipped for files holding only comments (the template `init` writes), since
importing tomllib costs more than a whole `ekko-mem log`.
"""
from __future__ import annotations

import os

from .errors import Rejected

# dotted name -> (type check, description)
SETTINGS: dict[str, tuple] = {
    "session.default": (str, "default session id"),
    "context.budget": (int, "context token budget"),
    "context.counter": (str, "token counter: estimate, cl100k or o200k"),
    "context.recent": (int, "recent messages in a context (3 to 8)"),
    "context.header": (str, "line printed before a text or markdown context (\"\" for none)"),
    "extractor.command": (str, "LLM command run as extractor/summariser"),
    "extractor.timeout": ((int, float), "seconds before an LLM command is given up"),
    "sensitive.policy": (str, "confirm (default), refuse or allow"),
    "hooks.session": (str, "session that the git hook logs commits into"),
    "hooks.trailers": (bool, "record Decision:/Constraint: trailers as memory"),
    "schema.rules": (list, "extra controlled-schema rules"),
    "schema.synonyms": (dict, "key synonyms, alias = canonical"),
    "schema.singleValued": (list, "keys whose new value supersedes the old"),
    "limits.message": (int, "most characters in one logged message"),
    "limits.title": (int, "most characters in a memory title"),
    "limits.content": (int, "most characters in a memory's content"),
    "limits.line": (int, "most bytes in one JSON Lines input line"),
}
CHOICES = {"context.counter": ("estimate", "cl100k", "o200k"),
           "sensitive.policy": ("confirm", "refuse", "allow")}
DEFAULTS = {"session.default": "default", "context.budget": 1200, "context.counter": "estimate",
            "context.recent": 6, "extractor.timeout": 60, "sensitive.policy": "confirm",
            "hooks.session": "git", "hooks.trailers": True,
            "limits.message": 100_000, "limits.title": 1_000, "limits.content": 20_000,
            "limits.line": 1 << 20}
POSITIVE = ("limits.message", "limits.title", "limits.content", "limits.line")


def _meaningful(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def _parse(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise Rejected(f"cannot read {path}: {exc}", "fix the file or move it aside") from None
    if not _meaningful(text):
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Rejected(f"{path} is not valid TOML: {exc}",
                       "fix that line, or move the file aside") from None
    return _flatten(data, path, text)


def _line_of(text: str, section: str, key: str) -> str:
    """'line N' of `key = ...` inside [section] (or its dotted form), for error messages."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            current = stripped.strip("[] ")
        name = stripped.split("=", 1)[0].strip()
        if "=" in stripped and (name == f"{section}.{key}" or (current == section
                                                                 and name == key)):
            return f"line {number}"
        if stripped in (f"[{section}]", f"[[{section}]]") and not key:
            return f"line {number}"
    return "line ?"


def _flatten(data: dict, path: str, text: str = "") -> dict:
    flat: dict = {}
    for section, body in data.items():
        if not isinstance(body, dict):
            raise Rejected(f"{path}, {_line_of(text, section, '')}: '{section}' must be a"
                           " [section]",
                           f"known settings: {', '.join(SETTINGS)}")
        for key, value in body.items():
            dotted = f"{section}.{key}"
            if dotted not in SETTINGS:
                raise Rejected(f"{path}, {_line_of(text, section, key)}: unknown setting"
                               f" '{dotted}'",
                               f"known settings: {', '.join(SETTINGS)}")
            kind = SETTINGS[dotted][0]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise Rejected(f"{path}, {_line_of(text, section, key)}: '{dotted}' has the"
                               f" wrong type ({type(value).__name__})",
                               f"it is the {SETTINGS[dotted][1]}")
            if dotted in POSITIVE and value < 1:
                raise Rejected(f"{path}, {_line_of(text, section, key)}: '{dotted}' must be"
                               f" 1 or more, not {value}", f"it is the {SETTINGS[dotted][1]}")
            if dotted in CHOICES and value not in CHOICES[dotted]:
                raise Rejected(f"{path}, {_line_of(text, section, key)}: '{dotted}' is"
                               f" {value!r}", f"use one of: {', '.join(CHOICES[dotted])}")
            flat[dotted] = value
    return flat


class Config:
    def __init__(self, values: dict, sources: dict) -> None:
        self.values = values
        self.sources = sources

    def get(self, dotted: str, default=None):
        return self.values.get(dotted, DEFAULTS.get(dotted, default))

    def effective(self) -> list[dict]:
        return [{"key": key, "value": self.get(key), "source": self.sources.get(key, "default"),
                 "description": SETTINGS[key][1]}
                for key in SETTINGS if self.get(key) is not None]


def load(user_home: str, workspace_root: str | None) -> Config:
    values: dict = {}
    sources: dict = {}
    paths = [os.path.join(str(user_home), "config.toml")]
    if workspace_root is not None:
        paths.append(os.path.join(str(workspace_root), ".ekko", "config.toml"))
    for path in paths:  # later files win
        for key, value in _parse(path).items():
            values[key] = value
            sources[key] = path
    return Config(values, sources)
