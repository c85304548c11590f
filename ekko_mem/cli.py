"""Entry point: error translation in one place, and a fast path for the hot commands.

`log` runs in git hooks, `context` before every model call, and the reads (`show`, `audit`,
`history`, ...) at a prompt, so they are parsed here without importing Typer (which costs
more than the command), from the same option table (options.py) the Typer app is generated
from. Help read through a pipe or with NO_COLOR is written from that table too (helptext.py).
Anything the fast parser does not know (clustered short flags, `--`, a malformed value) goes
to the full Typer app, which then gives the usage error; both parsers end in `dispatch`,
which checks choices and ranges and runs the action.
"""
from __future__ import annotations

import gc
import io
import os
import sys

# A command lives for a fraction of a second; the cyclic collector's passes over what its
# imports build free next to nothing, at a cost a free-text `remember` feels (bench/README.md).
# Long commands (import, mcp) still collect, every 100,000 allocations. Set
# before the imports below, the largest.
gc.set_threshold(100_000)

from .errors import EkkoError, ExitCode, Rejected, Unprinted, UsageError  # noqa: E402
from .options import COMMANDS, VERSION, Command, Opt  # noqa: E402

FAST_COMMANDS = {name: command for name, command in COMMANDS.items() if command.fast}
REFUSALS = {ExitCode.USAGE: UsageError, ExitCode.REJECTED: Rejected}
COMPLETE = "__complete"  # hidden: the values shell completion offers (actions_complete.py)
COMPLETE_VAR = "_EKKO_MEM_COMPLETE"  # Typer's completion protocol, which Typer answers
_CONVERT = {"int": int, "float": float}  # what Click's INT and FLOAT types call


class ReaderLeft(BaseException):
    """stdout's reader closed the pipe. Not an OSError, so Click's handler (exit 1) lets it by."""


class Interrupted(BaseException):
    """Ctrl-C inside a command. Not a KeyboardInterrupt, which Click turns into a silent abort."""


class ClosedStdout(io.TextIOBase):
    """stdout when the process started with it closed (`ekko-mem log hi >&-`), where Python
    leaves None: a write fails as writing to a closed descriptor does, and the command says
    what it wrote (errors.Unprinted) rather than failing on None."""

    def write(self, text: str) -> int:
        import errno
        raise OSError(errno.EBADF, "stdout is closed")


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
    words = 2 if " ".join(argv[:2]) in FAST_COMMANDS else 1  # `hooks run`
    command = FAST_COMMANDS.get(" ".join(argv[:words])) if argv else None
    if command is None:
        return None
    by_flag = {f: opt for opt in command.options for f in opt.flags}
    params = defaults(command)
    positional: list[str] = []
    args = iter(argv[words:])
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
    if command.arg and command.arg.required and not positional:
        return None  # Typer names the missing argument
    if command.arg and positional:
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
    from .values import within
    raise refuse(f"{opt.flag} must be {within(opt.range)}, not {value}",
                 f"pass {opt.flag} {opt.suggestion}")


def dispatch(name: str, params: dict) -> None:
    """Where both parsers end: check the values, then run the command's action."""
    command = COMMANDS[name]
    check(command, params)
    invoke(command, params)


def invoke(command: Command, params: dict) -> None:
    """Call the action: the argument first, the options with a design field gathered into
    one dict under the design's names, the rest as keywords. `no_color` says what the
    environment says too (NO_COLOR, TERM=dumb, no terminal): views are told, not left to
    look."""
    params = dict(params)
    if params.get("no_color") is False:
        from .env import Env
        params["no_color"] = not Env().color()
    args = [params.pop(command.arg.param)] if command.arg else []
    if command.design:
        params[command.design] = {opt.field: params.pop(opt.param)
                                  for opt in command.options if opt.field}
    command.run(*args, **params)


def _run_fast(command: str, params: dict) -> None:
    if command == "version":
        from . import __version__
        _write(f"ekko-mem {__version__}\n")
        return
    dispatch(command, params)


def _write(text: str) -> None:
    """What is printed here rather than through `render.emit` (a version, plain help)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise Unprinted("", exc.strerror or str(exc)) from None


def _run_typer(argv: list[str]) -> int:
    from .app import run
    return run(argv)


def _run_slow(argv: list[str]) -> int:
    """What the fast parser does not take: plain help (no Typer, no rich) when it is asked
    for and stdout is no colour terminal, the hidden completion command, else Typer."""
    if argv[:1] == [COMPLETE]:
        from .actions_complete import do_complete
        return do_complete(argv[1:])
    from . import helptext
    asked = None if COMPLETE_VAR in os.environ else helptext.request(argv)
    if asked is not None and helptext.plain_wanted(argv, os.environ, sys.stdout):
        path, code = asked
        _write(helptext.render(path))
        return int(code)
    return _run_typer(argv)


# Commands that only read: a stray byte in their text is repaired (U+FFFD) rather than refused,
# so a context is still printed before the model call.
READERS = {"context", "query"}


def text_arguments(argv: list[str]) -> list[str]:
    """argv as text. Python reads bytes that are not UTF-8 as lone surrogates; a writer
    refuses them (they cannot be stored), a reader repairs them."""
    bad = [i for i, arg in enumerate(argv) if _has_surrogate(arg)]
    if not bad:
        return argv
    repaired = [arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                if _has_surrogate(arg) else arg for arg in argv]
    if argv and argv[0] in READERS:
        return repaired
    raise UsageError(f"argument {bad[0]} is not valid UTF-8 ({repaired[bad[0]]!r})",
                     "pass text in UTF-8 (convert it with iconv -t UTF-8)")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


# Errors no input should turn into "internal error": what each says about the input.
_INPUT_ERRORS = {
    "UnicodeEncodeError": ("the input holds text that is not valid Unicode (a lone surrogate)",
                           "send UTF-8 text; nothing was written"),
    "RecursionError": ("the input is nested too deeply to read",
                       "flatten the JSON; nothing was written"),
    "OverflowError": ("a number or time in the input is out of range",
                      "give a smaller number or an earlier time; nothing was written"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = os.environ.get("EKKO_DEBUG", "") not in ("", "0")
    code: int = ExitCode.OK
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
    try:
        argv = text_arguments(argv)
        fast = parse_fast(argv)
        if fast is not None:
            _run_fast(*fast)
        else:
            code = _run_slow(argv)
    except EkkoError as exc:
        if debug:
            import traceback
            traceback.print_exc()
        from .options import spell_step
        _emit_error(exc.line(spell_step))
        code = exc.code
        if isinstance(exc, Unprinted):
            _silence_stdout()  # what stdout would not take is dropped, not tried again
    except (KeyboardInterrupt, Interrupted):
        _emit_error("ekko-mem: interrupted; nothing half-written was kept")
        code = ExitCode.INTERRUPTED
    except (BrokenPipeError, ReaderLeft):
        # `ekko-mem history | head`: the reader left; that is not an error.
        _silence_stdout()
        code = ExitCode.OK
    except SystemExit as exc:
        # rich meets a closed pipe by pointing stdout at /dev/null and exiting 1; the reader
        # leaving is not an error here either.
        if exc.code == 1 and _stdout_is_devnull():
            code = ExitCode.OK
        else:
            raise
    except (UnicodeEncodeError, RecursionError, OverflowError) as exc:
        if debug:
            raise
        message, hint = _INPUT_ERRORS[type(exc).__name__]
        _emit_error(UsageError(message, hint).line())
        code = ExitCode.USAGE
    except Exception as exc:  # the last line of defence: one line, no traceback
        if debug:
            raise
        _emit_error(f"ekko-mem: internal error: {type(exc).__name__}: {exc};"
                    " rerun with EKKO_DEBUG=1 and report it")
        code = ExitCode.ERROR
    return int(_flush_stdout(code))


def _flush_stdout(code: int) -> int:
    """Write out what is left for stdout. What was written outside `render.emit` (help, a
    version) and cannot be is said once; a reader that left is not an error."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OSError as exc:
        _silence_stdout()
        if code == ExitCode.OK:
            _emit_error(Unprinted("", exc.strerror or str(exc)).line())
            code = ExitCode.UNPRINTED
    return code


def _emit_error(line: str) -> None:
    # An error may quote what the user typed: one line, and no credential echoed back.
    from .policy.printable import one_line
    from .policy.sensitive import mask_secrets
    try:
        sys.stderr.write(one_line(mask_secrets(line)) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full too: the exit code still says it
        pass


def _stdout_is_devnull() -> bool:
    try:
        here, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return (here.st_dev, here.st_ino) == (null.st_dev, null.st_ino)


def _silence_stdout() -> None:
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # no descriptor (ClosedStdout): nothing is held for it
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def entry() -> None:
    code = main()
    # All is written and every db closed (tests hold main to that). What is left is the
    # interpreter freeing each module and object one by one: a tenth of a short command,
    # in a git hook or before every model call. The process gives its memory back at once.
    from contextlib import suppress
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
