"""Entry point: error translation in one place, and a fast path for the hot commands.

`log` runs in git hooks and `context` before every model call, so they are parsed here without
importing Typer (about 35 ms). Anything the fast parser does not know (help, rare flags) goes to
the full Typer app, which defines the same options.
"""
from __future__ import annotations

import os
import sys

from .errors import EkkoError, ExitCode

# option -> (parameter, kind): kind is "value", "int", "float", "flag" or "append".
COMMON = {"--workspace": ("workspace", "value"), "-w": ("workspace", "value"),
          "--json": ("as_json", "flag")}
QUIET = {"--quiet": ("quiet", "flag"), "-q": ("quiet", "flag")}
SESSION = {"--session": ("session", "value"), "-s": ("session", "value")}
NO_COLOR = {"--no-color": ("no_color", "flag")}
# name -> (module with the action, takes TEXT, options)
FAST_COMMANDS: dict[str, tuple[str, bool, dict]] = {
    "log": ("actions", True, {**COMMON, **QUIET, **SESSION, "--role": ("role", "value"),
                              "--parent": ("parent", "value"), "--meta": ("meta", "append"),
                              "--yes": ("yes", "flag"), "-y": ("yes", "flag")}),
    "context": ("actions", True, {
        **COMMON, **QUIET, **SESSION, "--budget": ("budget", "value"),
        "-b": ("budget", "value"), "--format": ("format", "value"), "-f": ("format", "value"),
        "--counter": ("counter", "value"), "--strict": ("strict", "flag"),
        "--with-input": ("with_input", "flag")}),
    "remember": ("actions_memory", True, {
        **COMMON, **QUIET, **SESSION, "--scope": ("scope", "value"),
        "--domain": ("domain", "value"), "--category": ("category", "value"),
        "--type": ("type", "value"), "--key": ("key", "value"), "--value": ("value", "value"),
        "--title": ("title", "value"), "--content": ("content", "value"),
        "--tag": ("tag", "append"), "--entity": ("entity", "append"),
        "--confidence": ("confidence", "float"), "--importance": ("importance", "float"),
        "--expires": ("expires", "value"), "--supersedes": ("supersedes", "value"),
        "--source": ("source", "append"), "--reason": ("reason", "value"),
        "--actor": ("actor", "value"), "--yes": ("yes", "flag"), "-y": ("yes", "flag")}),
    "history": ("actions", False, {**COMMON, **SESSION, **NO_COLOR,
                                   "--limit": ("limit", "int"), "-n": ("limit", "int"),
                                   "--sessions": ("sessions", "flag"),
                                   "--reveal": ("reveal", "flag")}),
    "query": ("actions_memory", True, {
        **COMMON, **SESSION, **NO_COLOR, "--scope": ("scope", "append"),
        "--type": ("type", "append"), "--tag": ("tag", "append"),
        "--entity": ("entity", "append"), "--domain": ("domain", "value"),
        "--category": ("category", "value"), "--key": ("key", "value"),
        "--value": ("value", "value"), "--include-expired": ("include_expired", "flag"),
        "--include-superseded": ("include_superseded", "flag"),
        "--limit": ("limit", "int"), "-n": ("limit", "int"),
        "--messages": ("messages", "flag"), "--since": ("since", "value"),
        "--reveal": ("reveal", "flag")}),
}


def parse_fast(argv: list[str]) -> tuple[str, dict] | None:
    """Parse a hot command's arguments, or None to hand them to Typer (which also gives
    the usage errors, so both paths fail the same way)."""
    if argv in (["--version"], ["-V"]):
        return "version", {}
    if not argv or argv[0] not in FAST_COMMANDS:
        return None
    _, takes_text, table = FAST_COMMANDS[argv[0]]
    params: dict = {}
    positional: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        name, eq, inline = arg.partition("=")
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        if arg == "--" or name not in table:
            return None
        param, kind = table[name]
        if kind == "flag":
            if eq:
                return None
            params[param] = True
            continue
        value = inline if eq else next(args, None)
        if value is None:
            return None
        if kind == "int":
            if not value.lstrip("-").isdigit():
                return None
            value = int(value)
        elif kind == "float":
            try:
                value = float(value)
            except ValueError:
                return None
        if kind == "append":
            params.setdefault(param, []).append(value)
        else:
            params[param] = value
    if len(positional) > (1 if takes_text else 0):
        return None
    if takes_text:
        params["text"] = positional[0] if positional else None
    return argv[0], params


def _run_fast(command: str, params: dict) -> None:
    if command == "version":
        from . import __version__
        sys.stdout.write(f"ekko-mem {__version__}\n")
        return
    import importlib
    module = importlib.import_module(f".{FAST_COMMANDS[command][0]}", __package__)
    action = getattr(module, f"do_{command}")
    if FAST_COMMANDS[command][1]:
        action(params.pop("text"), **params)
    else:
        action(**params)


def _run_typer(argv: list[str]) -> int:
    from .app import run
    return run(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = os.environ.get("EKKO_DEBUG", "") not in ("", "0")
    code = ExitCode.OK
    try:
        fast = parse_fast(argv)
        if fast is not None:
            _run_fast(*fast)
        else:
            code = _run_typer(argv)
    except EkkoError as exc:
        if debug:
            import traceback
            traceback.print_exc()
        _emit_error(exc.line())
        code = exc.code
    except KeyboardInterrupt:
        _emit_error("ekko-mem: interrupted")
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `ekko-mem history | head`: the reader left; that is not an error.
        _silence_stdout()
        code = ExitCode.OK
    except Exception as exc:  # the last line of defence: one line, no traceback
        if debug:
            raise
        _emit_error(f"ekko-mem: internal error: {type(exc).__name__}: {exc};"
                    " rerun with EKKO_DEBUG=1 and report it")
        code = ExitCode.ERROR
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    return int(code)


def _emit_error(line: str) -> None:
    from .render.terminal import printable  # an error may quote what the user typed
    try:
        sys.stderr.write(printable(line) + "\n")
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def entry() -> None:
    sys.exit(main())
