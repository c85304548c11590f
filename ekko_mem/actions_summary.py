"""Command bodies for summaries and extraction."""
from __future__ import annotations

import sys

from . import results
from .actions import service
from .errors import UsageError
from .render import emit


def _read(source: str) -> str:
    """The answer's text, from FILE or - (stdin)."""
    if source == "-":
        return sys.stdin.read()
    try:
        with open(source, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}", "check the path") from None


def _retry_command() -> str:
    """Named in the warning when an LLM command failed and its job was queued."""
    from .options import command_line
    return command_line("extract", "retry")


def do_summarize(*, session=None, llm_cmd=None, if_needed=False, print_prompt=False,
                 apply=None, chain=False, no_extract=False, as_json=False, quiet=False,
                 workspace=None):
    with service(workspace, session) as svc:
        if chain:
            chained = results.SummaryChain(svc.summary_chain(session=session))
            return emit(chained, as_json=as_json, quiet=quiet)
        if print_prompt:
            return emit(results.Prompt(svc.summary_prompt(session=session)["prompt"]))
        if apply is not None:
            result = svc.apply_answer(svc.read_answer(_read(apply)), session=session)
        else:
            result = svc.summarize(session=session, llm_cmd=llm_cmd, if_needed=if_needed,
                                   extract=not no_extract)
    emit(results.Summarized(result, _retry_command()), as_json=as_json, quiet=quiet)


def do_extract(*, session=None, llm_cmd=None, retry=False, jobs=False, print_prompt=False,
               apply=None, as_json=False, quiet=False, workspace=None):
    with service(workspace, session) as svc:
        if jobs:
            return emit(results.Jobs(svc.jobs()), as_json=as_json, quiet=quiet)
        if retry:
            return emit(results.Retries(svc.retry_jobs(llm_cmd=llm_cmd)), as_json=as_json,
                        quiet=quiet)
        if print_prompt:
            return emit(results.Prompt(svc.extraction_prompt_for(session=session)))
        if apply is not None:
            answer = svc.read_answer(_read(apply), extraction=True)
            result = svc.apply_answer(answer, session=session)
        else:
            result = svc.extract(session=session, llm_cmd=llm_cmd)
    emit(results.Extracted(result, _retry_command()), as_json=as_json, quiet=quiet)
    if apply is not None:
        _fail_on_refusals(result)


def _fail_on_refusals(result: dict) -> None:
    """An answer applied by hand reports refusals in its exit code, as `remember` does;
    automatic extraction does not (a refusal there is policy working, not an error)."""
    answers = result.get("results", [])
    error = results.first_refusal(answers)
    if error is not None and not any(a.get("accepted") for a in answers):
        raise error
