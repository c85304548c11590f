"""Renderers of structured memory: writes, forget, query, audit, undo, show, expire."""
from __future__ import annotations

from . import Renderer, human, machine, refusals_masked, written
from .nodes import node_cells, node_rows, print_show


class WritesView(Renderer):
    """One line per stored write; refusals are left to the error line the command ends with."""

    def diagnose(self, result) -> None:
        for note in result.notes:
            human.note(note, quiet=self.quiet)
        for answer in result.answers:  # a "done" that named no single open task
            if answer.get("operation") == "unmatched":
                human.note(answer["reason"], quiet=self.quiet)

    def done(self, result) -> str:
        return written(a["nodeId"] for a in result.answers
                       if (a.get("accepted") or a.get("deletedIds")) and a.get("nodeId"))

    def json(self, result) -> None:
        machine.emit_jsonl(refusals_masked(result.answers))

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
        text += f"\n  note: {human.field(note)}"
    return text


class RehearsedView(Renderer):
    """A dry run of `remember`: each would-be write in a few lines; stdout stays the plan."""

    def json(self, result) -> None:
        machine.emit_jsonl(refusals_masked(result.answers))

    def human(self, result) -> None:
        if self.quiet:
            return
        human.lines([line for plan in refusals_masked(result.answers)
                     for line in _plan_lines(plan)])
        human.note("dry run: nothing was written")


def _plan_lines(plan: dict) -> list[str]:
    import json
    op = plan["operation"]
    if op == "refused":
        return [f"would refuse: {human.field(plan.get('reason', ''))}"]
    what = f"{plan.get('scope', '')} {plan.get('type', 'memory')}"
    head = {"supersede": f"would supersede {plan.get('supersededId')} with a {what}",
            "refresh": f"would refresh {plan.get('nodeId')}, the same {what}"
            }.get(op, f"would {op} a {what}")
    value = json.dumps(plan.get("valueJson"), ensure_ascii=False)
    rows = [("title", plan.get("title")), ("category", "/".join(plan.get("categoryPath") or [])),
            ("key", f"{plan['key']} = {value}" if plan.get("key") else ""),
            ("expires", plan.get("expiresAt") and human.when(plan["expiresAt"])),
            ("reason", plan.get("reason"))]
    return [head, *(f"  {name:9} {human.field(text)}" for name, text in rows if text),
            *(f"  note: {human.field(note)}" for note in plan.get("notes", []))]


class ForgetView(Renderer):
    def done(self, result) -> str:
        data = result.data
        return written(data.get("deletedIds") or [], f"{data.get('mode', 'soft')}-deleted")

    def human(self, result) -> None:
        data = result.data
        if data.get("candidates"):  # what to choose from is the answer, even when quiet
            # One line each, whatever a title holds: `cut -f1` takes only the ids listed.
            human.lines(["\t".join(human.field(c[name]) for name in ("id", "scope", "status",
                                                                      "title"))
                         for c in data["candidates"]])
        elif not self.quiet:
            human.lines(_forget_lines(data, result.scan_command))


YES_WORDS = {"y", "yes", "是", "是的", "好", "确定", "确认"}


def confirm_forget(candidates: list[dict], *, hard: bool) -> bool:
    """Ask the person at the terminal (stderr, then a line from stdin); anything but a yes,
    end of input included, keeps the memories."""
    import sys
    these = "this memory" if len(candidates) == 1 else f"these {len(candidates)} memories"
    for c in candidates:
        human.note(f"  {c['id']}  {c['scope']}  {human.field(human.short(c['title'], 70))}")
    sys.stderr.write(f"forget {these}{' for good' if hard else ''}? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in YES_WORDS


def _forget_lines(data: dict, scan_command: str) -> list[str]:
    out = [f"{data['mode']}-deleted {i}" for i in data["deletedIds"]]
    out += [f"already erased {i} (finished what was left)" for i in data.get("alreadyErased", [])]
    out += [f"purged message {i}" for i in data.get("purgedMessageIds", [])]
    out += [f"dropped summary {i} (the next 'ekko-mem summarize' rebuilds it)"
            for i in data.get("summariesDropped", [])]
    out += [f"removed {human.field(path)}" for path in data.get("filesRemoved", [])]
    out += [f"could not remove {human.field(path)}: remove it by hand"
            for path in data.get("filesLeft", [])]
    check = data.get("verify")
    if check and check["clean"]:
        out.append(f"verified: none of {check['textsChecked']} erased texts is left in"
                   f" {', '.join(check['filesChecked'])} or the full-text index")
    elif check and check["clean"] is None:
        out.append("not verified: this run erased no text to scan for;"
                   f" '{scan_command} TEXT' checks any text")
    return out


class QueryView(Renderer):
    """Each section under its title, piped or not: exact, relevant, weak, omitted. Weak rows
    (under the relevance floor `context` ranks by) are listed apart, after the relevant ones."""

    def found(self, result) -> bool:
        # As grep -q would answer "is there a memory about this": weak rows are no match.
        data = result.data
        return bool(data["exact"] or any(not n.get("weak") for n in data["relevant"]))

    def human(self, result) -> None:
        if self.quiet:
            return
        data = result.data
        sections = [("exact", "exact", data["exact"]),
                    ("relevant", "relevant", [n for n in data["relevant"] if not n.get("weak")]),
                    ("weak", "weak matches", [n for n in data["relevant"] if n.get("weak")])]
        for line, title, rows in sections:  # piped, a section's one-word line
            if not rows:
                continue
            if human.piped():
                human.tsv(node_rows(rows), line)
            else:
                human.grid(title, ["id\nscope type", "memory", "status\nconf"],
                           node_cells(rows), no_color=self.no_color)
        if data["omitted"]:
            human.table("omitted", ["id", "reason"],
                        [[o["nodeId"], o["reason"]] for o in data["omitted"]],
                        no_color=self.no_color, heading=True)
        if not (data["exact"] or data["relevant"]):
            human.note("no memory matches")


class AuditView(Renderer):
    """Each event with what its memory says (the node's title), so the trail reads without
    looking every id up."""

    def json(self, result) -> None:
        machine.emit_jsonl(result.events)

    def found(self, result) -> bool:
        return bool(result.events)

    def human(self, result) -> None:
        if self.quiet:
            return
        events = [(e, self._title(result, e)) for e in result.events]
        if human.piped():  # the title last: the fields before it keep their places
            return human.tsv([[human.when(e["createdAt"]), e["id"], e["eventType"],
                               e.get("nodeId") or "-", e["actor"], human.short(e["reason"], 50),
                               human.short(title, 70)] for e, title in events])
        human.grid("audit", ["time\nactor", "event\ntype", "memory\nreason"],
                   [[f"{human.when(e['createdAt'])}\n{human.field(e['actor'])}",
                     f"{e['id']}\n{human.field(e['eventType'])}",
                     "\n".join(map(human.field, filter(None, [e.get("nodeId"), title,
                                                              f"why: {e['reason']}"])))]
                    for e, title in events], no_color=self.no_color)

    @staticmethod
    def _title(result, event: dict) -> str:
        node = event.get("nodeId")
        if not node or result.titles is None:
            return ""
        return " ".join(result.titles.get(node, "(erased)").split())  # no row: purged


class UndoneView(Renderer):
    def done(self, result) -> str:
        data = result.data
        return "" if data.get("alreadyUndone") else \
            written([data["eventId"]], f"undid {data['undoneEventId']} as")

    def human(self, result) -> None:
        if not self.quiet:
            data = result.data
            if data.get("alreadyUndone"):
                human.lines([f"{data['undoneEventId']} is already undone by {data['eventId']};"
                             " nothing changed"])
                return
            human.lines([f"undid {data['undoneEventId']} as {data['eventId']}: "
                         + ", ".join(data["changedIds"])])


class ShownView(Renderer):
    def json(self, result) -> None:
        machine.emit_json(result.record)

    def human(self, result) -> None:
        if not self.quiet:
            print_show(result.record)


class ExpiredView(Renderer):
    def done(self, result) -> str:
        return written(result.data["expiredIds"], "expired")

    def human(self, result) -> None:
        if not self.quiet:
            human.lines([f"expired {i}" for i in result.data["expiredIds"]]
                        or ["nothing to expire"])
