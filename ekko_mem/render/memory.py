"""Renderers of structured memory: writes, forget, query, audit, undo, show, expire."""
from __future__ import annotations

from . import Renderer, human, machine
from .nodes import node_rows, print_show


class WritesView(Renderer):
    """One line per stored write; refusals are left to the error line the command ends with."""

    def diagnose(self, result) -> None:
        for note in result.notes:
            human.note(note, quiet=self.quiet)
        for answer in result.answers:  # a "done" that named no single open task
            if answer.get("operation") == "unmatched":
                human.note(answer["reason"], quiet=self.quiet)

    def json(self, result) -> None:
        machine.emit_jsonl(result.answers)

    def human(self, result) -> None:
        if self.quiet:
            return
        for answer in result.answers:
            if answer.get("accepted") or answer.get("deletedIds"):
                human.lines([_describe_write(answer)])


def _describe_write(answer: dict) -> str:
    text = f"{answer['operation']} {answer['nodeId']} ({answer['scope']})"
    if answer.get("supersededId"):
        text += f", superseding {answer['supersededId']}"
    for note in answer.get("notes", []):
        text += f"\n  note: {note}"
    return text


class ForgetView(Renderer):
    def human(self, result) -> None:
        data = result.data
        if data.get("candidates"):  # what to choose from is the answer, even when quiet
            human.lines([f"{c['id']}\t{c['scope']}\t{c['status']}\t{c['title']}"
                         for c in data["candidates"]])
        elif not self.quiet:
            human.lines(_forget_lines(data, result.scan_command))


def _forget_lines(data: dict, scan_command: str) -> list[str]:
    out = [f"{data['mode']}-deleted {i}" for i in data["deletedIds"]]
    out += [f"already erased {i} (finished what was left)" for i in data.get("alreadyErased", [])]
    out += [f"purged message {i}" for i in data.get("purgedMessageIds", [])]
    out += [f"dropped summary {i} (the next 'ekko-mem summarize' rebuilds it)"
            for i in data.get("summariesDropped", [])]
    check = data.get("verify")
    if check and check["clean"]:
        out.append(f"verified: none of {check['textsChecked']} erased texts is left in"
                   f" {', '.join(check['filesChecked'])} or the full-text index")
    elif check and check["clean"] is None:
        out.append("not verified: no erased text was long enough to scan for (16 bytes);"
                   f" '{scan_command} TEXT' checks any text")
    return out


class QueryView(Renderer):
    def human(self, result) -> None:
        data = result.data
        for title in ("exact", "relevant"):
            if data[title]:
                human.table(title, ["id", "scope", "type", "memory", "status", "conf"],
                            node_rows(data[title]), no_color=self.no_color)
        if data["omitted"]:
            human.table("omitted", ["id", "reason"],
                        [[o["nodeId"], o["reason"]] for o in data["omitted"]],
                        no_color=self.no_color)
        if not (data["exact"] or data["relevant"]):
            human.note("no memory matches")


class AuditView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.events)

    def human(self, result) -> None:
        human.table("audit", ["time", "event", "type", "node", "actor", "reason"],
                    [[e["createdAt"], e["id"], e["eventType"], e.get("nodeId") or "-",
                      e["actor"], human.short(e["reason"], 50)] for e in result.events],
                    no_color=self.no_color)


class UndoneView(Renderer):
    def human(self, result) -> None:
        if not self.quiet:
            data = result.data
            human.lines([f"undid {data['undoneEventId']} as {data['eventId']}: "
                         + ", ".join(data["changedIds"])])


class ShownView(Renderer):
    def json(self, result) -> None:
        machine.emit_json(result.record)

    def human(self, result) -> None:
        print_show(result.record, no_color=self.no_color)


class ExpiredView(Renderer):
    def human(self, result) -> None:
        if not self.quiet:
            human.lines([f"expired {i}" for i in result.data["expiredIds"]]
                        or ["nothing to expire"])
