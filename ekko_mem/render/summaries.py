"""Renderers of summaries and extraction: the chain, prompts, outcomes, the retry queue."""
from __future__ import annotations

import sys

from . import Renderer, human, machine


class SummaryChainView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.summaries)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{s['id']}  {s['fromMessageId']}..{s['toMessageId']}  parent"
                     f" {s.get('parentSummaryId') or '-'}"
                     f"{'  (needs regeneration)' if s.get('needsRegeneration') else ''}"
                     f"\n    {human.short(s['summary'], 90)}" for s in result.summaries])


class PromptView(Renderer):
    """A prompt goes to an LLM as it is, whatever the format asked; quiet leaves it, as it
    leaves the text of a context: that text is the command's answer to a pipe, not talk."""

    def human(self, result) -> None:
        sys.stdout.write(result.text)

    json = human


class _Outcome(Renderer):
    """A summary or an extraction: when the LLM failed, the queued job is worth a warning."""

    def diagnose(self, result) -> None:
        if result.data.get("queued"):
            human.note(f"ekko-mem: warning: the LLM command failed ({result.data['error']});"
                       f" queued as {result.data['queued']}, nothing written; retry with"
                       f" '{result.retry_command}'", quiet=self.quiet)


class SummarizedView(_Outcome):
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
                human.note(f"nothing done: {data['reason']}")
            return
        human.lines([f"{summary['id']} (parent {summary.get('parentSummaryId') or '-'}):"
                     f" {summary['summary']}"] + extraction_lines(data.get("extraction") or {}))


class ExtractedView(_Outcome):
    def human(self, result) -> None:
        if not self.quiet:
            human.lines(extraction_lines(result.data)
                        or [result.data.get("reason") or "no memory in the new messages"])


def extraction_lines(data: dict) -> list[str]:
    lines = []
    for answer in data.get("results", []):
        if answer.get("accepted"):
            lines.append(f"  {answer['operation']} {answer['nodeId']} ({answer['scope']})")
        elif answer.get("operation") != "ignored":
            lines.append(f"  not stored: {answer['reason']}")
    return lines


class JobsView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.jobs)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{j['id']}  {j['kind']}  {j['sessionId']}  tries {j['attempts']}"
                     f"  {j['error']}" for j in result.jobs] or ["the retry queue is empty"])


class RetriesView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.outcomes)

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([f"{o['jobId']}: {o['status']}" + (f" ({o['error']})" if o.get("error")
                                                       else "") for o in result.outcomes]
                    or ["the retry queue is empty"])
