"""Renderers of summaries and extraction: the chain, prompts, outcomes, the retry queue."""
from __future__ import annotations

import sys

from . import Renderer, human, machine, refusals_masked, written


class SummaryChainView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.summaries)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{s['id']}  {human.field(s['fromMessageId'])}.."
                     f"{human.field(s['toMessageId'])}  parent"
                     f" {human.field(s.get('parentSummaryId') or '-')}"
                     f"{'  (needs regeneration)' if s.get('needsRegeneration') else ''}"
                     f"\n    {human.field(human.short(s['summary'], 90))}"
                     for s in result.summaries])


class PromptView(Renderer):
    """A prompt goes to an LLM as it is, whatever the format asked; quiet leaves it, as it
    leaves the text of a context: that text is the command's answer to a pipe, not talk."""

    def human(self, result) -> None:
        sys.stdout.write(result.text)

    json = human


class _Outcome(Renderer):
    """A summary or an extraction: when the LLM failed, the queued job is worth a warning.
    A refusal among its answers is printed masked (render.masked)."""

    def json(self, result) -> None:
        machine.emit_json(_masked_outcome(result.data))

    def diagnose(self, result) -> None:
        if result.data.get("queued"):
            human.note(f"ekko-mem: warning: the LLM command failed"
                       f" ({human.field(result.data['error'])});"
                       f" queued as {result.data['queued']}, nothing written; retry with"
                       f" '{result.retry_command}'", quiet=self.quiet)


class SummarizedView(_Outcome):
    def done(self, result) -> str:
        summary = result.data.get("summary") or {}
        extraction = result.data if result.data.get("kind") == "extraction" else \
            result.data.get("extraction") or {}
        return written(([summary["id"]] if summary.get("id") else []) + stored(extraction))

    def human(self, result) -> None:
        data = result.data
        if self.quiet:
            return
        if data.get("kind") == "extraction":  # an extraction answer applied by hand
            human.lines(extraction_lines(data))
            return
        summary = data.get("summary")
        if summary is None:
            if data.get("skipped"):
                human.note(f"nothing done: {human.field(data['reason'])}")
            return
        human.lines([f"{summary['id']} (parent"
                     f" {human.field(summary.get('parentSummaryId') or '-')}):"
                     f" {human.hang(summary['summary'], '    ')}"]
                    + extraction_lines(data.get("extraction") or {}))


class ExtractedView(_Outcome):
    def done(self, result) -> str:
        return written(stored(result.data))

    def human(self, result) -> None:
        if not self.quiet:
            human.lines(extraction_lines(result.data)
                        or [human.field(result.data.get("reason")
                                        or "no memory in the new messages")])


def stored(data: dict) -> list[str]:
    """The memories an extraction wrote."""
    return [a["nodeId"] for a in data.get("results", []) if a.get("accepted") and a.get("nodeId")]


def _masked_outcome(data: dict) -> dict:
    """The outcome with the refusals among its answers masked: its own (an extraction) and
    those of the extraction that came with a summary."""
    out = {**data, "results": refusals_masked(data["results"])} if "results" in data else data
    inner = data.get("extraction")
    if isinstance(inner, dict) and "results" in inner:
        out = {**out, "extraction": _masked_outcome(inner)}
    return out


def extraction_lines(data: dict) -> list[str]:
    lines = []
    for answer in refusals_masked(data.get("results", [])):
        if answer.get("accepted"):
            lines.append(f"  {answer['operation']} {answer['nodeId']} ({answer['scope']})")
        elif answer.get("operation") != "ignored":
            lines.append(f"  not stored: {human.field(answer['reason'])}")
    return lines


class JobsView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.jobs)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{j['id']}  {j['kind']}  {human.field(j['sessionId'])}  tries"
                     f" {j['attempts']}  {human.field(j['error'])}" for j in result.jobs]
                    or ["the retry queue is empty"])


class RetriesView(Renderer):
    def done(self, result) -> str:
        return written([o["jobId"] for o in result.outcomes if o["status"] == "done"],
                       "retried")

    def json(self, result) -> None:
        machine.emit_jsonl(result.outcomes)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{o['jobId']}: {o['status']}"
                     + (f" ({human.field(o['error'])})" if o.get("error") else "")
                     for o in result.outcomes] or ["the retry queue is empty"])
