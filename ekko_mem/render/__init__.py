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

# Where each result type's renderer lives: "module:class" inside this package.
RENDERERS = {
    r.Initialised: "workspace:InitialisedView",
    r.Migration: "workspace:MigrationView",
    r.Settings: "workspace:SettingsView",
    r.Schema: "workspace:SchemaView",
    r.HookOutcome: "workspace:HookView",
    r.DoctorReport: "workspace:DoctorView",
    r.Exported: "workspace:ExportedView",
    r.ImportReport: "workspace:ImportView",
    r.Indexed: "workspace:IndexedView",
    r.Logged: "messages:LoggedView",
    r.History: "messages:HistoryView",
    r.Sessions: "messages:SessionsView",
    r.MessageHits: "messages:MessageHitsView",
    r.Writes: "memory:WritesView",
    r.Rehearsed: "memory:RehearsedView",
    r.ForgetOutcome: "memory:ForgetView",
    r.QueryResult: "memory:QueryView",
    r.AuditTrail: "memory:AuditView",
    r.Undone: "memory:UndoneView",
    r.Shown: "memory:ShownView",
    r.Expired: "memory:ExpiredView",
    r.Context: "context:ContextView",
    r.Explanation: "explain:ExplanationView",
    r.SummaryChain: "summaries:SummaryChainView",
    r.Prompt: "summaries:PromptView",
    r.Summarized: "summaries:SummarizedView",
    r.Extracted: "summaries:ExtractedView",
    r.Jobs: "summaries:JobsView",
    r.Retries: "summaries:RetriesView",
}
FORMATS = {"human": "human", "text": "human", "json": "json", "markdown": "markdown"}


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


def written(ids, verb: str = "written as") -> str:
    """`verb` and the ids, the first three and how many more: "" for none."""
    ids = list(ids)
    if not ids:
        return ""
    more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
    return f"{verb} {', '.join(ids[:3])}{more}"


def renderer_for(result_type: type) -> type[Renderer]:
    module, name = RENDERERS[result_type].split(":")
    from ..lazy import load
    return getattr(load(f"{__name__}.{module}"), name)


def emit(result: r.Result, *, fmt: str = "human", as_json: bool = False, quiet: bool = False,
         no_color: bool = False) -> None:
    """Write `result` to stdout (and its diagnostics to stderr). `as_json` is the JSON flag
    every command has; it wins over `fmt`."""
    view = renderer_for(type(result))(quiet=quiet, no_color=no_color)
    view.diagnose(result)
    try:
        getattr(view, FORMATS["json" if as_json else fmt])(result)
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
