"""Turning results into text: human tables, JSON for scripts, plain text for LLM pipes.

Every result type (`ekko_mem.results`) has one renderer; `emit` is the only place that picks
it. Renderer modules load only when their result is shown, so `log` never imports the code
that prints a doctor report.

The answer is written after the work is done: when stdout cannot take it (a full disk, a
closed descriptor), `emit` says what was written, so that no one runs a write again to find
out (`errors.Unprinted`). A reader that leaves (a closed pipe) is not that: it goes on up.
"""
from __future__ import annotations

import sys

from .. import results as r
from . import machine

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import Callable


class Renderer:
    """One result type's renderings: `human` for people (honours quiet and no_color), `json`
    for scripts (the design's shape, unchanged, whatever quiet says), `markdown` where the
    result has its own. `diagnose` writes stderr notes before the data in every format."""

    def __init__(self, *, quiet: bool = False, no_color: bool = False) -> None:
        self.quiet = quiet
        self.no_color = no_color

    def diagnose(self, result) -> None:
        pass

    def json(self, result) -> None:
        machine.emit_json(result.data)

    def human(self, result) -> None:
        raise NotImplementedError(type(result).__name__)

    def markdown(self, result) -> None:
        self.human(result)

    def found(self, result) -> bool:
        """Whether a listing found anything: when quiet, the exit code says it."""
        return True

    def done(self, result) -> str:
        """What the command wrote, in a few words ("written as msg_..."), for the line that
        says its answer could not be printed; "" when it wrote nothing."""
        return ""


def masked(text):
    """Text that may quote what was given (a refusal's reason, a warning), as it is printed:
    errors carry what was said as it was said, and where they are shown a credential in them
    is masked."""
    if not isinstance(text, str) or not text:
        return text
    from ..policy.sensitive import mask_secrets
    return mask_secrets(text)


def refusals_masked(answers: list) -> list:
    """The service's answers, each refusal's reason and hint masked (`masked`)."""
    return [{**a, **{k: masked(a[k]) for k in ("reason", "hint") if k in a}}
            if a.get("accepted") is False else a for a in answers]


def written(ids, verb: str = "written as") -> str:
    """`verb` and the ids, the first three and how many more: "" for none."""
    ids = list(ids)
    if not ids:
        return ""
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    return f"{verb} {', '.join(ids[:3])}{more}"


# Each result type's renderer, imported when that result is shown: one function per type,
# so that `log` never imports the code that prints a doctor report.
def _initialised() -> type[Renderer]:
    from .workspace import InitialisedView
    return InitialisedView

def _migration() -> type[Renderer]:
    from .workspace import MigrationView
    return MigrationView

def _settings() -> type[Renderer]:
    from .workspace import SettingsView
    return SettingsView

def _schema() -> type[Renderer]:
    from .workspace import SchemaView
    return SchemaView

def _hook_outcome() -> type[Renderer]:
    from .workspace import HookView
    return HookView

def _doctor_report() -> type[Renderer]:
    from .workspace import DoctorView
    return DoctorView

def _exported() -> type[Renderer]:
    from .workspace import ExportedView
    return ExportedView

def _import_report() -> type[Renderer]:
    from .workspace import ImportView
    return ImportView

def _indexed() -> type[Renderer]:
    from .workspace import IndexedView
    return IndexedView

def _logged() -> type[Renderer]:
    from .messages import LoggedView
    return LoggedView

def _history() -> type[Renderer]:
    from .messages import HistoryView
    return HistoryView

def _sessions() -> type[Renderer]:
    from .messages import SessionsView
    return SessionsView

def _message_hits() -> type[Renderer]:
    from .messages import MessageHitsView
    return MessageHitsView

def _writes() -> type[Renderer]:
    from .memory import WritesView
    return WritesView

def _rehearsed() -> type[Renderer]:
    from .memory import RehearsedView
    return RehearsedView

def _forget_outcome() -> type[Renderer]:
    from .memory import ForgetView
    return ForgetView

def _query_result() -> type[Renderer]:
    from .memory import QueryView
    return QueryView

def _audit_trail() -> type[Renderer]:
    from .memory import AuditView
    return AuditView

def _undone() -> type[Renderer]:
    from .memory import UndoneView
    return UndoneView

def _shown() -> type[Renderer]:
    from .memory import ShownView
    return ShownView

def _expired() -> type[Renderer]:
    from .memory import ExpiredView
    return ExpiredView

def _entity_graph() -> type[Renderer]:
    from .graph import EntityGraphView
    return EntityGraphView

def _context() -> type[Renderer]:
    from .context import ContextView
    return ContextView

def _explanation() -> type[Renderer]:
    from .explain import ExplanationView
    return ExplanationView

def _summary_chain() -> type[Renderer]:
    from .summaries import SummaryChainView
    return SummaryChainView

def _prompt() -> type[Renderer]:
    from .summaries import PromptView
    return PromptView

def _summarized() -> type[Renderer]:
    from .summaries import SummarizedView
    return SummarizedView

def _extracted() -> type[Renderer]:
    from .summaries import ExtractedView
    return ExtractedView

def _jobs() -> type[Renderer]:
    from .summaries import JobsView
    return JobsView

def _retries() -> type[Renderer]:
    from .summaries import RetriesView
    return RetriesView


RENDERERS: dict[type[r.Result], Callable[[], type[Renderer]]] = {
    r.Initialised: _initialised, r.Migration: _migration, r.Settings: _settings,
    r.Schema: _schema, r.HookOutcome: _hook_outcome, r.DoctorReport: _doctor_report,
    r.Exported: _exported, r.ImportReport: _import_report, r.Indexed: _indexed,
    r.Logged: _logged, r.History: _history, r.Sessions: _sessions, r.MessageHits: _message_hits,
    r.Writes: _writes, r.Rehearsed: _rehearsed, r.ForgetOutcome: _forget_outcome,
    r.QueryResult: _query_result, r.AuditTrail: _audit_trail, r.Undone: _undone,
    r.Shown: _shown, r.Expired: _expired, r.EntityGraph: _entity_graph,
    r.Context: _context, r.Explanation: _explanation,
    r.SummaryChain: _summary_chain, r.Prompt: _prompt, r.Summarized: _summarized,
    r.Extracted: _extracted, r.Jobs: _jobs, r.Retries: _retries,
}


def renderer_for(result_type: type[r.Result]) -> type[Renderer]:
    return RENDERERS[result_type]()


def emit(result: r.Result, *, fmt: str = "human", as_json: bool = False, quiet: bool = False,
         no_color: bool = False) -> None:
    """Write `result` to stdout (and its diagnostics to stderr). `as_json` is the JSON flag
    every command has; it wins over `fmt`."""
    view = renderer_for(type(result))(quiet=quiet, no_color=no_color)
    view.diagnose(result)
    try:
        write = {"human": view.human, "text": view.human, "json": view.json,
                 "markdown": view.markdown}["json" if as_json else fmt]
        write(result)
        sys.stdout.flush()  # here, while what was written is known
    except BrokenPipeError:
        raise
    except OSError as exc:
        from ..errors import Unprinted
        raise Unprinted(view.done(result), exc.strerror or str(exc)) from None
    if quiet and not view.found(result):
        # As `grep -q`: nothing printed, the answer is the exit code (5, not found: 1 is an
        # error here). Not an EkkoError, which would print an error line.
        from ..errors import ExitCode
        raise SystemExit(int(ExitCode.NOT_FOUND))
