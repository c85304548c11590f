"""What commands hand to the renderer: one type per kind of result.

Each wraps the service's answer unchanged (its JSON shape is the scripting contract) plus what
the human view needs besides. `render.emit` picks the renderer by the result's type.

Not dataclasses: importing `dataclasses` pulls in `inspect` and each class
costs more to build, more than `log` and `context` spend on all of their output. `Result` gives
the same keyword/positional constructor, equality and repr from the class's annotations.
"""
from __future__ import annotations

TYPE_CHECKING = False  # `typing` itself is not loaded by the hot commands
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .errors import EkkoError


class Result:
    """Fields are the class's annotations, in order; a class attribute is a field's default
    (defaults are immutable: tuples, not lists)."""

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        # Worked out on first use, not when the class is made: a command builds one type.
        found = cls.__dict__.get("_fields")
        if found is None:
            declared = (name for klass in reversed(cls.__mro__)
                        for name in klass.__dict__.get("__annotations__", {}))
            # not annotated: the annotations are the fields
            found = cls._fields = tuple(dict.fromkeys(declared))  # type: ignore[attr-defined]
        return found

    def __init__(self, *args, **kwargs) -> None:
        fields = self.fields()
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields")
        given = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields or name in given:
                raise TypeError(f"{type(self).__name__}: bad or repeated field {name!r}")
            given[name] = value
        for name in fields:
            if name not in given and not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__}: missing field {name!r}")
            setattr(self, name, given.get(name, getattr(type(self), name, None)))

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and all(
            getattr(self, name) == getattr(other, name) for name in self.fields())

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dicts it wraps

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.fields())
        return f"{type(self).__name__}({inner})"


def first_refusal(answers: Iterable[dict]) -> EkkoError | None:
    """The typed error of the first refusal among service answers (errors.Answer)."""
    return next((error for a in answers if (error := getattr(a, "error", None)) is not None),
                None)


# -- the workspace ------------------------------------------------------------------------------

class Initialised(Result):
    """`init`: the db, whether it was created, what happened to .gitignore."""
    data: dict


class Migration(Result):
    """`migrate`: the schema report, and whether a status listing or a dry run asked for it."""
    data: dict
    status: bool = False
    dry_run: bool = False


class Settings(Result):
    """`config`: each effective setting with where it came from."""
    rows: list


class Schema(Result):
    """`schema NAME`: a JSON Schema, printed as JSON in every format."""
    data: dict


class HookOutcome(Result):
    """`hooks install|uninstall|run`: what the hook action did."""
    action: str
    data: dict


class DoctorReport(Result):
    """`doctor`: one row per check."""
    data: dict


class Exported(Result):
    """`export`: the records, as JSON Lines in every format (streamed, not held)."""
    records: Iterable


class Indexed(Result):
    """`index`: what was embedded, and how much of the db has vectors now."""
    data: dict
    notes: tuple = ()


class ImportReport(Result):
    """`import`: counts of what was imported and skipped."""
    data: dict


# -- messages -----------------------------------------------------------------------------------

class Logged(Result):
    """`log`: the messages written, and the service's notes on them (for stderr)."""
    messages: list
    notes: tuple = ()


class History(Result):
    """`history`: one session's messages."""
    data: dict


class Sessions(Result):
    """`history` of sessions: the sessions and their message counts."""
    sessions: list


class MessageHits(Result):
    """`query` over the message log: ranked message search."""
    data: dict


# -- memory -------------------------------------------------------------------------------------

class Writes(Result):
    """`remember`, `edit`: one answer per proposed write (refusals included); notes go to
    stderr."""
    answers: list
    notes: tuple = ()

    @property
    def error(self) -> EkkoError | None:
        return first_refusal(self.answers)


class Rehearsed(Result):
    """A dry run of `remember`: what each proposal would store, or why it would be refused;
    nothing was written."""
    answers: list

    @property
    def error(self) -> EkkoError | None:
        return first_refusal(self.answers)


class ForgetOutcome(Result):
    """`forget`: what was deleted or erased, or the candidates a selector matched;
    `scan_command` is the command line named when erasure could not be verified."""
    data: dict
    scan_command: str = ""


class QueryResult(Result):
    """`query`: exact and relevant memories, and what was omitted."""
    data: dict


class AuditTrail(Result):
    """`audit`: events, newest first, and the title of each node they name (by node id;
    None: not looked up)."""
    events: list
    titles: dict | None = None


class Undone(Result):
    """`audit undo`: the undo event and the memories it changed."""
    data: dict


class Shown(Result):
    """`show`: a node, message, summary or event record with what links to it."""
    record: dict


class EntityGraph(Result):
    """`graph`: an entity and its edges, each with the time it held and the time it was
    known."""
    data: dict


class Expired(Result):
    """`expire`: the memories marked expired."""
    data: dict


# -- context ------------------------------------------------------------------------------------

class Context(Result):
    """`context`: the packed context; its text is already in the asked format (text or
    markdown)."""
    data: dict


class Explanation(Result):
    """`explain`: why each item of a context run was there."""
    data: dict


# -- summaries and extraction -------------------------------------------------------------------

class SummaryChain(Result):
    """`summarize`, the chain: the session's summaries, oldest first."""
    summaries: list


class Prompt(Result):
    """`summarize` or `extract` asked for the prompt: written as is in every format."""
    text: str


class LLMOutcome(Result):
    """What an LLM command (or its answer applied by hand) produced; `retry_command` is named
    when the command failed and its job was queued."""
    data: dict
    retry_command: str = ""


class Summarized(LLMOutcome):
    """`summarize`: the summary and what was extracted with it."""


class Extracted(LLMOutcome):
    """`extract`: one answer per memory the extraction proposed."""


class Jobs(Result):
    """`extract`, the queue: jobs waiting for a retry."""
    jobs: list


class Retries(Result):
    """`extract`, retried: the outcome of each retried job."""
    outcomes: list
