"""Command bodies shared by the Typer app and the fast path: parse, one service call, a
result (`results.py`), then `render.emit`.

Kept free of Typer so that hot commands (log, context) start without importing it.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

from . import results
from .render import emit

# A bulk write's embedding that finishes sooner than this draws no progress line.
EMBEDDING_QUIET_S = 2.0


def service(workspace=None, session=None, timeout=None):
    from .options import spell_step
    from .service import MemoryService
    return MemoryService(workspace, session=session, timeout=timeout, spell=spell_step)


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
    emit(results.Initialised(result), as_json=as_json, quiet=quiet)


def do_log(text, *, session=None, role="user", parent=None, meta=None, jsonl=None,
           yes=False, as_json=False, quiet=False, workspace=None):
    svc = service(workspace, session)
    with svc:
        if jsonl is not None:
            # Read a line at a time (stdin copied aside first), written a chunk at a time,
            # and printed from the log once committed: memory stays flat at any length.
            from .service.transfer_files import open_import
            shown = progress_line("embedding", quiet=quiet, delay=EMBEDDING_QUIET_S)
            with open_import(jsonl, sys.stdin.buffer) as source:
                with ended(shown):
                    messages = svc.log_lines(source.lines(svc.config.get("limits.line")),
                                             session=session, confirm=yes, progress=shown)
                emit(results.Logged(messages, tuple(svc.notes)), as_json=as_json,
                     quiet=quiet)
            return
        body = read_text(text, "message text")
        messages = [svc.log_message(body, session=session, role=role, parent=parent,
                                    meta=list(meta or ()), confirm=yes)]
    emit(results.Logged(messages, tuple(svc.notes)), as_json=as_json, quiet=quiet)


def unless_revealed(result, reveal: bool):
    """What a view prints: credentials masked unless the person asked to see them."""
    if reveal:
        return result
    from .policy.sensitive import mask_json
    return mask_json(result)


def do_history(*, session=None, limit=20, sessions=False, reveal=False, as_json=False,
               quiet=False, no_color=False, workspace=None):
    if sessions:
        with service(workspace) as svc:
            found = unless_revealed(svc.sessions(limit), reveal)
        return emit(results.Sessions(found), as_json=as_json, quiet=quiet, no_color=no_color)
    with service(workspace, session) as svc:
        result = unless_revealed(svc.history(session=session, limit=limit), reveal)
    emit(results.History(result), as_json=as_json, quiet=quiet, no_color=no_color)


def do_migrate(*, status=False, dry_run=False, as_json=False, quiet=False, workspace=None):
    result = service(workspace).migration_report(status=status, dry_run=dry_run)
    emit(results.Migration(result, status=status, dry_run=dry_run), as_json=as_json,
         quiet=quiet)


def do_context(text, *, session=None, budget=None, format="text", counter=None,
               strict=False, with_input=False, as_of=None, quiet=False, workspace=None,
               as_json=False):
    from .policy.vocab import FORMATS, choose
    fmt = "json" if as_json else choose("format", format, FORMATS)
    if text == "-":
        text = read_text("-")
    with service(workspace, session) as svc:
        context = svc.build_context(text, session=session, budget=budget, counter=counter,
                                    strict=strict, with_input=with_input,
                                    markdown=fmt == "markdown", as_of=as_of)
    emit(results.Context(context), fmt=fmt, quiet=quiet)


def do_explain(context_id=None, *, last=False, reveal=False, as_json=False, quiet=False,
               workspace=None):
    with service(workspace) as svc:
        result = unless_revealed(svc.explain(None if last else context_id), reveal)
    emit(results.Explanation(result), as_json=as_json, quiet=quiet)


def do_schema(name, *, quiet=False):
    from .errors import UsageError
    from .models import SCHEMAS
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}", f"use one of: {', '.join(SCHEMAS)}")
    emit(results.Schema(SCHEMAS[name].model_json_schema()), quiet=quiet)


def do_mcp(*, session=None, workspace=None, client=None, as_json=False):
    if client is None and not as_json:
        from .mcp_server import serve
        return serve(workspace=workspace, session=session)
    from . import mcp_clients
    with service(workspace, session) as svc:
        root = svc.root
    command, chosen = _installed_binary(), client.strip().lower() if client else None
    if as_json or chosen is None:
        return emit(results.Schema(mcp_clients.server_entry(command, root, session, chosen)))
    config = mcp_clients.client_config(chosen, command, root, session)
    emit(results.Prompt(mcp_clients.as_text(config)))


def _running_binary() -> str | None:
    """The ekko-mem this process was started as, for the hook to call back (None: run
    another way, e.g. python -m ekko_mem)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return os.path.abspath(argv0) if argv0.endswith("ekko-mem") else None


def _installed_binary() -> str:
    """This installation's ekko-mem: the one running, else the console script beside this
    Python. A client starts it with its own PATH, which may not hold it."""
    return _running_binary() or os.path.join(os.path.dirname(sys.executable), "ekko-mem")


def do_hooks(action, *, rev="HEAD", branch=None, as_json=False, quiet=False, workspace=None):
    from .options import flag
    hook_flags = {"rev": flag("rev"), "branch": flag("branch")}  # the hook script's options
    with service(workspace) as svc:
        result = {"install": lambda: svc.install_hooks(_running_binary(), hook_flags),
                  "uninstall": svc.uninstall_hooks,
                  "run": lambda: svc.record_commit(rev, branch)}[action]()
    emit(results.HookOutcome(action, result), as_json=as_json, quiet=quiet)


def do_hooks_install(**options):
    do_hooks("install", **options)


def do_hooks_uninstall(**options):
    do_hooks("uninstall", **options)


def do_hooks_run(hook, **options):
    if hook != "post-commit":
        from .errors import UsageError
        raise UsageError(f"unknown hook {hook!r}", "only post-commit is supported")
    do_hooks("run", **options)


def do_index(*, user=False, rebuild=False, as_json=False, quiet=False, workspace=None):
    shown = progress_line("indexing", quiet=quiet, bar=30)
    with service(workspace) as svc, ended(shown):
        result = svc.index(user=user, rebuild=rebuild, progress=shown)
        notes = tuple(svc.notes)
    emit(results.Indexed(result, notes), as_json=as_json, quiet=quiet)


class Progress:
    """`label done/total` on a terminal's stderr, redrawn in place (with a bar `bar`
    characters wide). Nothing is drawn until `delay` seconds after it was made, so a write
    that is over by then leaves no line behind; `end` ends the line, if one was drawn."""

    def __init__(self, label: str, stream, *, delay: float = 0.0, bar: int = 0,
                 clock=time.monotonic) -> None:
        self.label, self.stream, self.bar, self.clock = label, stream, bar, clock
        self.shown_from = clock() + delay
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.drawn and self.clock() < self.shown_from:
            return
        filled = self.bar * done // total if total else self.bar
        bar = f"[{'#' * filled}{'.' * (self.bar - filled)}] " if self.bar else ""
        self.stream.write(f"\r{self.label} {bar}{done}/{total}")
        self.stream.flush()
        self.drawn = True

    def end(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def progress_line(label: str, *, quiet: bool, delay: float = 0.0, bar: int = 0,
                  stream=None, clock=time.monotonic) -> Progress | None:
    """A Progress on stderr (or `stream`); None when quiet or that is no terminal: a pipe or
    a log file gets no line redrawn in place."""
    stream = sys.stderr if stream is None else stream
    if quiet or not stream.isatty():
        return None
    return Progress(label, stream, delay=delay, bar=bar, clock=clock)


@contextmanager
def ended(shown: Progress | None):
    """The progress line ended when the work is, failed or not: an error line starts on a
    line of its own."""
    try:
        yield
    finally:
        if shown is not None:
            shown.end()


def do_doctor(*, repair=False, compact=False, scan=None, as_json=False, quiet=False,
              workspace=None):
    from .errors import EkkoError
    with service(workspace) as svc:
        report = svc.doctor(repair=repair, scan=scan, compact=compact)
    emit(results.DoctorReport(report), as_json=as_json, quiet=quiet)
    if not report["ok"]:
        from .options import command_line
        raise EkkoError("doctor found problems", f"run '{command_line('doctor', 'repair')}'"
                        if report["repairable"] else "see the FAIL lines above")
