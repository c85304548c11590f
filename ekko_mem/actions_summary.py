"""Command bodies for summaries and extraction."""
from __future__ import annotations

import sys

from .actions import service
from .errors import Rejected, UsageError
from .render import human, machine


def _read_answer(source: str) -> dict:
    if source == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}", "check the path") from None
    from .extract.llm import LLMFailure, parse_json_answer
    try:
        return parse_json_answer(text)
    except LLMFailure as exc:
        raise Rejected(str(exc), "give the JSON answer of an LLM (code fences are fine)"
                       ) from None


def _warn_queued(result: dict, quiet: bool) -> None:
    if result.get("queued"):
        from .options import command_line
        human.note(f"ekko-mem: warning: the LLM command failed ({result['error']}); queued as"
                   f" {result['queued']}, nothing written; retry with"
                   f" '{command_line('extract', 'retry')}'", quiet=quiet)


def do_summarize(*, session=None, llm_cmd=None, if_needed=False, print_prompt=False,
                 apply=None, chain=False, no_extract=False, as_json=False, quiet=False,
                 workspace=None):
    with service(workspace, session) as svc:
        if chain:
            summaries = svc.summary_chain(session=session)
            if as_json:
                return machine.emit_jsonl(summaries)
            return human.lines([
                f"{s['id']}  {s['fromMessageId']}..{s['toMessageId']}  parent"
                f" {s.get('parentSummaryId') or '-'}"
                f"{'  (needs regeneration)' if s.get('needsRegeneration') else ''}"
                f"\n    {human.short(s['summary'], 90)}" for s in summaries])
        if print_prompt:
            return sys.stdout.write(svc.summary_prompt(session=session)["prompt"])
        if apply is not None:
            result = svc.apply_answer(_read_answer(apply), session=session)
        else:
            result = svc.summarize(session=session, llm_cmd=llm_cmd, if_needed=if_needed,
                                   extract=not no_extract)
    _warn_queued(result, quiet)
    if as_json:
        return machine.emit_json(result)
    if quiet:
        return None
    if result.get("kind") == "extraction":
        return human.lines(_extraction_lines(result))
    summary = result.get("summary")
    if summary is None:
        if result.get("skipped"):
            human.note(f"nothing done: {result['reason']}")
        return None
    extracted = result.get("extraction") or {}
    human.lines([f"{summary['id']} (parent {summary.get('parentSummaryId') or '-'}):"
                 f" {summary['summary']}"] + _extraction_lines(extracted))


def _extraction_lines(result: dict) -> list[str]:
    lines = []
    for r in result.get("results", []):
        if r.get("accepted"):
            lines.append(f"  {r['operation']} {r['nodeId']} ({r['scope']})")
        elif r.get("operation") != "ignored":
            lines.append(f"  not stored: {r['reason']}")
    return lines


def do_extract(*, session=None, llm_cmd=None, retry=False, jobs=False, print_prompt=False,
               apply=None, as_json=False, quiet=False, workspace=None):
    with service(workspace, session) as svc:
        if jobs:
            pending = svc.jobs()
            if as_json:
                return machine.emit_jsonl(pending)
            return human.lines([f"{j['id']}  {j['kind']}  {j['sessionId']}  tries"
                                f" {j['attempts']}  {j['error']}" for j in pending]
                               or ["the retry queue is empty"])
        if retry:
            outcomes = svc.retry_jobs(llm_cmd=llm_cmd)
            if as_json:
                return machine.emit_jsonl(outcomes)
            return human.lines([f"{o['jobId']}: {o['status']}" + (f" ({o['error']})" if
                                o.get("error") else "") for o in outcomes]
                               or ["the retry queue is empty"])
        if print_prompt:
            return sys.stdout.write(svc.extraction_prompt_for(session=session))
        if apply is not None:
            answer = _read_answer(apply)
            if "nodes" not in answer:
                raise Rejected("an extraction needs a \"nodes\" list",
                               "see 'ekko-mem schema extraction'")
            result = svc.apply_answer(answer, session=session)
        else:
            result = svc.extract(session=session, llm_cmd=llm_cmd)
    _warn_queued(result, quiet)
    if as_json:
        machine.emit_json(result)
    elif not quiet:
        lines = _extraction_lines(result)
        human.lines(lines or [result.get("reason") or "no memory in the new messages"])
    if apply is not None:
        _fail_on_refusals(result)


def _fail_on_refusals(result: dict) -> None:
    """An answer applied by hand reports refusals in its exit code, as `remember` does;
    automatic extraction does not (a refusal there is policy working, not an error)."""
    from .actions_memory import refused_error
    results = result.get("results", [])
    error = refused_error(results)
    if error is not None and not any(r.get("accepted") for r in results):
        raise error
