"""Renderers of the workspace commands: init, migrate, config, schema, hooks, doctor, export,
import."""
from __future__ import annotations

import sys

from . import Renderer, human, machine, written


class InitialisedView(Renderer):
    def done(self, result) -> str:
        return f"initialised {human.field(result.data['db'])}" if result.data["created"] else ""

    def human(self, result) -> None:
        if self.quiet:
            return
        data = result.data
        db = human.field(data["db"])
        human.lines([f"initialised {db}" if data["created"]
                     else f"already initialised: {db} (nothing changed)"])
        if data["gitignore"] == "added":
            human.note("added .ekko/ to .gitignore (memory stays private)")


class MigrationView(Renderer):
    def done(self, result) -> str:
        return "" if result.dry_run else written(result.data.get("appliedNow") or [], "applied")

    def human(self, result) -> None:
        if self.quiet:
            return
        data, status, dry_run = result.data, result.status, result.dry_run
        out = [f"{human.field(data['db'])}: schema version {data['version']}"
               f" (latest {data['latest']})"]
        if status:
            out += [f"applied  {m['version']:03d} {m['name']} at {human.when(m['appliedAt'])}"
                    for m in data["applied"]]
        out += [f"{'would apply' if dry_run else 'pending'}  {n:03d} {name}"
                for n, name in data["pending"] if status or dry_run]
        if not status and not dry_run:
            out += [f"applied  {name}" for name in data["appliedNow"]] or ["nothing to apply"]
        human.lines(out)


class SettingsView(Renderer):
    def json(self, result) -> None:
        machine.emit_json(result.rows)

    def human(self, result) -> None:
        human.table("effective settings", ["key", "value", "source"],
                    [[s["key"], machine.dump(s["value"]), s["source"]] for s in result.rows],
                    no_color=self.no_color)


class SchemaView(Renderer):
    """A schema is for tools (an LLM's structured output): JSON whatever the format, unless
    quiet (then only the exit code says whether the name is known)."""

    def human(self, result) -> None:
        if not self.quiet:
            self.json(result)


class HookView(Renderer):
    def done(self, result) -> str:
        data = result.data
        if result.action == "run":
            return written([data["messageId"]], "recorded as") if data.get("recorded") else ""
        return _hook_line(result.action, data) if data.get("installed") or \
            data.get("removed") else ""

    def human(self, result) -> None:
        if not self.quiet:
            human.lines([_hook_line(result.action, {k: human.field(v) if isinstance(v, str)
                                                    else v for k, v in result.data.items()})])


def _hook_line(action: str, data: dict) -> str:
    if action == "install":
        if not data["installed"]:
            return f"{data['hook']}: {data['reason']}"
        chained = " (chained after the existing hook)" if data.get("chained") else ""
        return f"installed {data['hook']}{chained}"
    if action == "uninstall":
        return (f"removed ekko-mem from {data['hook']}" if data["removed"]
                else f"{data['hook']}: {data['reason']}")
    return (f"recorded {data['sha'][:12]} as {data['messageId']}" if data["recorded"]
            else f"{data['sha'][:12]}: {data['reason']}")


class DoctorView(Renderer):
    def human(self, result) -> None:
        if not self.quiet:
            human.lines([f"{'ok' if c['ok'] else 'FIXED' if c['fixed'] else 'FAIL':5}"
                         f" {human.field(c['db']):9} {c['check']:17}"
                         f" {human.field(c['detail'])}".rstrip()
                         for c in result.data["checks"]])


class ExportedView(Renderer):
    """An export is JSON Lines whatever the format: it is read back by `import`. Quiet, it
    prints nothing (the exit code says whether the dbs could be read)."""

    def json(self, result) -> None:
        for line in machine.jsonl_lines(result.records):
            sys.stdout.write(line)

    def human(self, result) -> None:
        if not self.quiet:
            self.json(result)


class ImportView(Renderer):
    def done(self, result) -> str:
        count = sum(result.data["imported"].values())
        return f"imported {count} records" if count else ""

    def human(self, result) -> None:
        if not self.quiet:
            counts = result.data["imported"]
            human.lines([f"imported {counts['message']} messages, {counts['summary']}"
                         f" summaries, {counts['node']} memories, {counts['event']} audit"
                         f" events; {result.data['skipped']} already present"
                         + (f"; skipped {result.data['erased']} erased records"
                            if result.data.get("erased") else "")])


class IndexedView(Renderer):
    def done(self, result) -> str:
        count = result.data["embedded"]
        return f"embedded {count} rows" if count else ""

    def diagnose(self, result) -> None:
        for note in result.notes:
            human.note(f"ekko-mem: note: {note}", quiet=self.quiet)

    def human(self, result) -> None:
        if self.quiet:
            return
        data = result.data
        have, rows = data["withVectors"], data["rows"]
        human.lines([f"embedded {data['embedded']} rows with {human.field(data['model'])} in"
                     f" {human.field(data['db'])}",
                     *(f"  {label}: {have[kind]} of {rows[kind]} have vectors" for kind, label
                       in (("message", "messages"), ("node", "memories"),
                           ("summary", "summaries")))])
