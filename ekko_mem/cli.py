"""Entry point: error translation in one place, and a fast path for the hot commands.

`log` runs in git hooks and `context` before every model call, so they are parsed here without
importing Typer (about 35 ms), from the same option table (options.py) the Typer app is
generated from. Anything the fast parser does not know (help, clustered short flags, `--`, a
malformed value) goes to the full Typer app, which then gives the usage error; both parsers
end in `dispatch`, which checks choices and ranges and runs the action.
"""
from __future__ import annotations

import os
import sys

from .errors import EkkoError, ExitCode, Rejected, UsageError
from .options import COMMANDS, VERSION, Command, Opt

FAST_COMMANDS = {name: command for name, command in COMMANDS.items() if command.fast}
REFUSALS = {ExitCode.USAGE: UsageError, ExitCode.REJECTED: Rejected}
_CONVERT = {"int": int, "float": float}  # what Click's INT and FLOAT types call


def defaults(command: Command) -> dict:
    """Every parameter as Typer fills it when the command line does not give it."""
    params = {command.arg.param: None} if command.arg else {}
    for opt in command.options:
        params[opt.param] = opt.default
    return params


def parse_fast(argv: list[str]) -> tuple[str, dict] | None:
    """Parse a hot command's arguments, or None to hand them to Typer (which also gives
    the usage errors, so both paths fail the same way)."""
    if len(argv) == 1 and argv[0] in VERSION.flags:
        return "version", {}
    command = FAST_COMMANDS.get(argv[0]) if argv else None
    if command is None:
        return None
    by_flag = {f: opt for opt in command.options for f in opt.flags}
    params = defaults(command)
    positional: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        # Only long options take `=value`; Click reads `-s=x` as the value "=x".
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        opt = by_flag.get(name)
        if opt is None:
            return None
        if opt.kind == "flag":
            if eq:
                return None
            params[opt.param] = True
            continue
        value = inline if eq else next(args, None)
        if value is None or not _store(params, opt, value):
            return None
    if len(positional) > (1 if command.arg else 0):
        return None
    if positional:
        params[command.arg.param] = positional[0]
    return command.name, params


def _store(params: dict, opt: Opt, value: str) -> bool:
    if opt.kind in _CONVERT:
        try:
            value = _CONVERT[opt.kind](value)
        except ValueError:
            return False
    if opt.kind == "append":
        params[opt.param] = [*(params[opt.param] or ()), value]
    else:
        params[opt.param] = value
    return True


def check(command: Command, params: dict) -> None:
    """Refuse a given value outside the option's choices or range."""
    for opt in command.options:
        value = params.get(opt.param)
        if value is None or not (opt.choices or opt.range):
            continue
        for one in value if opt.kind == "append" else [value]:
            _check_value(opt, one)


def _check_value(opt: Opt, value) -> None:
    refuse = REFUSALS[opt.refusal]
    if opt.choices and value.strip().lower() not in opt.choices:
        raise refuse(f"unknown {opt.noun} {value!r}", f"use one of: {', '.join(opt.choices)}")
    if not opt.range:
        return
    low, high = opt.range
    if low <= value and (high is None or value <= high):  # NaN fails both
        return
    wanted = f"at least {low}" if high is None else f"from {low} to {high}"
    raise refuse(f"{opt.flag} must be {wanted}, not {value}", f"pass {opt.flag} {opt.suggestion}")


def dispatch(name: str, params: dict) -> None:
    """Where both parsers end: check the values, then run the command's action."""
    command = COMMANDS[name]
    check(command, params)
    invoke(command, params)


def invoke(command: Command, params: dict) -> None:
    """Call the action: the argument first, the options with a design field gathered into
    one dict under the design's names, the rest as keywords."""
    import importlib
    module, function = command.run.split(":")
    action = getattr(importlib.import_module(f".{module}", __package__), function)
    params = dict(params)
    args = [params.pop(command.arg.param)] if command.arg else []
    if command.design:
        params[command.design] = {opt.field: params.pop(opt.param)
                                  for opt in command.options if opt.field}
    action(*args, **params)


def _run_fast(command: str, params: dict) -> None:
    if command == "version":
        from . import __version__
        sys.stdout.write(f"ekko-mem {__version__}\n")
        return
    dispatch(command, params)


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
        from .options import spell_step
        _emit_error(exc.line(spell_step))
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
    from .policy.printable import printable  # an error may quote what the user typed
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
