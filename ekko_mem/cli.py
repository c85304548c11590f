"""Entry point: error translation in one place, and a fast path for the hot commands.

`log` runs in git hooks and `context` before every model call, so they are parsed here without
importing Typer (about 35 ms). Anything the fast parser does not know (help, rare flags) goes to
the full Typer app, which defines the same options.
"""
from __future__ import annotations

import os
import sys

from .errors import EkkoError, ExitCode

# option -> (parameter, kind): kind is "value", "flag" or "append".
COMMON = {"--workspace": ("workspace", "value"), "-w": ("workspace", "value"),
          "--json": ("as_json", "flag"), "--quiet": ("quiet", "flag"), "-q": ("quiet", "flag")}
FAST_COMMANDS: dict[str, dict] = {
    "log": {**COMMON, "--session": ("session", "value"), "-s": ("session", "value"),
            "--role": ("role", "value"), "--parent": ("parent", "value"),
            "--meta": ("meta", "append")},
    "context": {**COMMON, "--session": ("session", "value"), "-s": ("session", "value"),
                "--budget": ("budget", "value"), "-b": ("budget", "value"),
                "--format": ("format", "value"), "-f": ("format", "value"),
                "--counter": ("counter", "value"), "--strict": ("strict", "flag"),
                "--with-input": ("with_input", "flag")},
}


def parse_fast(argv: list[str]) -> tuple[str, dict] | None:
    """Parse a hot command's arguments, or None to hand them to Typer."""
    if argv in (["--version"], ["-V"]):
        return "version", {}
    if not argv or argv[0] not in FAST_COMMANDS:
        return None
    table, params, positional = FAST_COMMANDS[argv[0]], {}, []
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
        if kind == "append":
            params.setdefault(param, []).append(value)
        else:
            params[param] = value
    if len(positional) > 1:
        return None
    params["text"] = positional[0] if positional else None
    return argv[0], params


def _run_fast(command: str, params: dict) -> None:
    if command == "version":
        from . import __version__
        sys.stdout.write(f"ekko-mem {__version__}\n")
        return
    from . import actions
    text = params.pop("text")
    getattr(actions, f"do_{command}")(text, **params)


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
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def entry() -> None:
    sys.exit(main())
