"""Command bodies shared by the Typer app and the fast path: one service call, then render.

Kept free of Typer so that hot commands (log, context) start without importing it.
"""
from __future__ import annotations

import os
import sys

from .render import human, machine


def service(workspace=None, session=None, timeout=None):
    from .service import MemoryService
    return MemoryService(workspace, session=session, timeout=timeout)


def read_text(text: str | None, what: str = "text") -> str:
    """TEXT, or stdin for '-' or when TEXT is missing and stdin is not a terminal."""
    from .errors import UsageError
    if text == "-" or (text is None and not sys.stdin.isatty()):
        data = sys.stdin.buffer.read()
        try:
            # One trailing newline is how shells end text, not part of the message.
            return data.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise UsageError(f"stdin is not valid UTF-8 (byte {exc.start})",
                             "convert it first, for example with iconv -t UTF-8") from None
    if text is None:
        raise UsageError(f"no {what} given", f"pass the {what} as an argument or pipe it in")
    return text


def do_init(path, *, no_gitignore=False, git_hooks=False, as_json=False, quiet=False,
            workspace=None):
    _init(path, no_gitignore=no_gitignore, as_json=as_json, quiet=quiet, workspace=workspace)
    if git_hooks:
        do_hooks("install", as_json=as_json, quiet=quiet, workspace=path or ".")


def _init(path, *, no_gitignore, as_json, quiet, workspace):
    result = service(workspace).init_workspace(path, gitignore=not no_gitignore)
    if as_json:
        return machine.emit_json(result)
    if result["created"]:
        human.lines([f"initialised {result['db']}"])
    else:
        human.lines([f"already initialised: {result['db']} (nothing changed)"])
    if result["gitignore"] == "added":
        human.note("added .ekko/ to .gitignore (memory stays private)", quiet=quiet)


def do_log(text, *, session=None, role="user", parent=None, meta=None, jsonl=None,
           yes=False, as_json=False, quiet=False, workspace=None):
    svc = service(workspace, session)
    with svc:
        if jsonl is not None:
            messages = svc.log_jsonl(_read_lines(jsonl), session=session, confirm=yes)
        else:
            body = read_text(text, "message text")
            messages = [svc.log_message(body, session=session, role=role, parent=parent,
                                        meta=list(meta or ()), confirm=yes)]
    for note in svc.notes:
        human.note(f"ekko-mem: note: {note}", quiet=quiet)
    if as_json:
        return machine.emit_jsonl(messages)
    if not quiet:
        human.lines([m["id"] for m in messages])


def _read_lines(source: str):
    from .errors import UsageError
    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}",
                             "check the path, or pass - for stdin") from None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source} is not valid UTF-8 (byte {exc.start})",
                         "convert it first, for example with iconv -t UTF-8") from None


def unless_revealed(result, reveal: bool):
    """What a view prints: credentials masked unless the person asked to see them."""
    if reveal:
        return result
    from .policy.sensitive import mask_json
    return mask_json(result)


def do_history(*, session=None, limit=20, sessions=False, reveal=False, as_json=False,
               no_color=False, workspace=None):
    if sessions:
        with service(workspace) as svc:
            found = unless_revealed(svc.sessions(limit), reveal)
        if as_json:
            return machine.emit_jsonl(found)
        return human.table("sessions", ["session", "messages", "first", "last"],
                           [[s["sessionId"], s["messages"], s["firstAt"], s["lastAt"]]
                            for s in found], no_color=no_color)
    with service(workspace, session) as svc:
        result = unless_revealed(svc.history(session=session, limit=limit), reveal)
    if as_json:
        return machine.emit_jsonl(result["messages"])
    rows = [[m["createdAt"], m["id"], m["role"], human.short(m["content"], 80)]
            for m in result["messages"]]
    human.table(f"session {result['sessionId']}", ["time", "id", "role", "content"], rows,
                no_color=no_color)


def do_migrate(*, status=False, dry_run=False, as_json=False, workspace=None):
    result = service(workspace).migration_report(status=status, dry_run=dry_run)
    if as_json:
        return machine.emit_json(result)
    out = [f"{result['db']}: schema version {result['version']} (latest {result['latest']})"]
    if status:
        out += [f"applied  {m['version']:03d} {m['name']} at {m['appliedAt']}"
                for m in result["applied"]]
    out += [f"{'would apply' if dry_run else 'pending'}  {n:03d} {name}"
            for n, name in result["pending"] if status or dry_run]
    if not status and not dry_run:
        out += [f"applied  {name}" for name in result["appliedNow"]] or ["nothing to apply"]
    human.lines(out)


def do_context(text, *, session=None, budget=None, format="text", counter=None,
               strict=False, with_input=False, quiet=False, workspace=None, as_json=False):
    from .policy.vocab import FORMATS, choose
    fmt = "json" if as_json else choose("format", format, FORMATS)
    if text == "-":
        text = read_text("-")
    with service(workspace, session) as svc:
        context = svc.build_context(text, session=session, budget=budget, counter=counter,
                                    strict=strict, with_input=with_input,
                                    markdown=fmt == "markdown")
    for warning in context["diagnostics"]["warnings"]:
        human.note(f"ekko-mem: warning: {warning}", quiet=quiet)
    if fmt == "json":
        return machine.emit_json(context)
    if context["text"]:
        sys.stdout.write(context["text"] + "\n")


def do_explain(context_id=None, *, last=False, reveal=False, as_json=False, workspace=None):
    with service(workspace) as svc:
        result = unless_revealed(svc.explain(None if last else context_id), reveal)
    if as_json:
        return machine.emit_json(result)
    out = [f"context {result['contextId']} ({result['createdAt']})"
           + (f" for: {result['queryText']}" if result.get("queryText") else "")]
    found = result.get("retrieval") or {}
    if found:
        out.append(f"ranked list: {found['candidatesConsidered']} candidates considered,"
                   f" {found['ranked']} ranked, {found['packed']} packed,"
                   f" {found['cutForBudget']} cut for the budget,"
                   f" {found['belowRelevanceFloor']} below the relevance floor")
    for item in result["items"]:
        rank = f"  [found by {', '.join(item['via'])}]" if item.get("via") else ""
        if item["kind"] != "node":
            out.append(f"- {item['kind']} {item['id']}: {human.short(item['title'], 70)}{rank}")
            continue
        out.append(f"- {item['title']}  ({item['id']}, {item.get('scope', '?')}){rank}")
        if item.get("reason"):
            out.append(f"    why: {item['reason']}")
        for source in item.get("sources", []):
            out.append(f"    from {source['sessionId']} at {source['createdAt']}:"
                       f" {human.short(source['content'], 60)}")
    human.lines(out)


def do_schema(name):
    from .errors import UsageError
    from .models import SCHEMAS
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}", f"use one of: {', '.join(SCHEMAS)}")
    machine.emit_json(SCHEMAS[name].model_json_schema())


def do_mcp(*, session=None, workspace=None):
    from .errors import StoreUnavailable
    try:
        import mcp  # noqa: F401  (the optional extra)
    except ImportError:
        raise StoreUnavailable("the MCP server needs the optional 'mcp' package",
                               "pip install 'ekko-mem[mcp]'") from None
    from .mcp_server import serve
    serve(workspace=workspace, session=session)


def do_config(*, as_json=False, no_color=False, workspace=None):
    svc = service(workspace)
    settings = svc.config.effective()
    if as_json:
        return machine.emit_json(settings)
    human.table("effective settings", ["key", "value", "source"],
                [[s["key"], machine.dump(s["value"]), s["source"]] for s in settings],
                no_color=no_color)


def _running_binary() -> str | None:
    """The ekko-mem this process was started as, for the hook to call back (None: run
    another way, e.g. python -m ekko_mem)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return os.path.abspath(argv0) if argv0.endswith("ekko-mem") else None


def do_hooks(action, *, rev="HEAD", as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        result = {"install": lambda: svc.install_hooks(_running_binary()),
                  "uninstall": svc.uninstall_hooks,
                  "run": lambda: svc.record_commit(rev)}[action]()
    if as_json:
        return machine.emit_json(result)
    if quiet:
        return None
    if action == "install":
        human.lines([f"installed {result['hook']}" + (" (chained after the existing hook)"
                     if result.get("chained") else "") if result["installed"]
                     else f"{result['hook']}: {result['reason']}"])
    elif action == "uninstall":
        human.lines([f"removed ekko-mem from {result['hook']}" if result["removed"]
                     else f"{result['hook']}: {result['reason']}"])
    else:
        human.lines([f"recorded {result['sha'][:12]} as {result['messageId']}"
                     if result["recorded"] else f"{result['sha'][:12]}: {result['reason']}"])


def do_hooks_install(**options):
    do_hooks("install", **options)


def do_hooks_uninstall(**options):
    do_hooks("uninstall", **options)


def do_hooks_run(hook, **options):
    if hook != "post-commit":
        from .errors import UsageError
        raise UsageError(f"unknown hook {hook!r}", "only post-commit is supported")
    do_hooks("run", **options)


def do_doctor(*, repair=False, scan=None, as_json=False, quiet=False, workspace=None):
    from .errors import EkkoError
    with service(workspace) as svc:
        report = svc.doctor(repair=repair, scan=scan)
    if as_json:
        machine.emit_json(report)
    elif not quiet:
        human.lines([f"{'ok' if c['ok'] else 'FIXED' if c['fixed'] else 'FAIL':5}"
                     f" {c['db']:9} {c['check']:17} {c['detail']}".rstrip()
                     for c in report["checks"]])
    if not report["ok"]:
        from .options import command_line
        raise EkkoError("doctor found problems", f"run '{command_line('doctor', 'repair')}'"
                        if report["repairable"] else "see the FAIL lines above")
