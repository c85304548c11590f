"""The Typer app, generated from the option table: one command per entry of
options.COMMANDS, its parameters built from the entry's argument and options, its body the
same `cli.dispatch` the fast path calls."""
from __future__ import annotations

import inspect
import os
from typing import Any, List, Optional

import typer
from typing_extensions import Annotated

from . import __version__, cli, helptext
from .errors import ExitCode
from .options import COMMANDS, HELP_FLAGS, VERSION, Arg, Command, Opt

app = typer.Typer(
    name="ekko-mem",
    help=helptext.PROGRAM,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": list(HELP_FLAGS)},
)
audit_app = typer.Typer(no_args_is_help=False)
app.add_typer(audit_app, name="audit")
hooks_app = typer.Typer(no_args_is_help=True)
app.add_typer(hooks_app, name="hooks", help=helptext.GROUPS["hooks"])
config_app = typer.Typer(no_args_is_help=False)
app.add_typer(config_app, name="config")
GROUPS = {"audit": audit_app, "hooks": hooks_app, "config": config_app}
TYPES = {"value": str, "int": int, "float": float}


def _choices(values):
    return lambda incomplete: [v for v in values if v.startswith(incomplete)]


def _asked(kind: str):
    """Complete from the same list `ekko-mem __complete KIND` prints (ids, keys, ...)."""
    def complete(incomplete: str):
        from .actions_complete import candidates
        return candidates(kind, incomplete)
    return complete


def _completion(source):
    if isinstance(source, str):
        return _asked(source)
    return _choices(source) if source else None


def _option(opt: Opt) -> inspect.Parameter:
    kind: Any
    if opt.kind == "flag":
        kind = bool
    elif opt.kind == "append":
        kind = Optional[List[str]]
    else:
        kind = TYPES[opt.kind] if opt.default is not None else Optional[TYPES[opt.kind]]
    info = typer.Option(*opt.flags, help=opt.help, metavar=opt.metavar,
                        autocompletion=_completion(opt.complete))
    return inspect.Parameter(opt.param, inspect.Parameter.KEYWORD_ONLY, default=opt.default,
                             annotation=Annotated[kind, info])


def _argument(arg: Arg) -> inspect.Parameter:
    info = typer.Argument(help=arg.help, metavar=arg.metavar,
                          autocompletion=_completion(arg.complete))
    if arg.many:
        return inspect.Parameter(arg.param, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                 annotation=Annotated[List[str], info])
    if arg.required:
        return inspect.Parameter(arg.param, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                 annotation=Annotated[str, info])
    return inspect.Parameter(arg.param, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                             annotation=Annotated[Optional[str], info])


def _callback(command: Command, *, group: bool = False):
    """A function Typer reads as if written by hand: this signature, this docstring."""
    def callback(**params) -> None:
        ctx = params.pop("ctx", None)
        if ctx is not None and ctx.invoked_subcommand is not None:
            return  # `audit undo`: the group's own listing is not wanted
        try:
            cli.dispatch(command.name, params)
        except BrokenPipeError:
            raise cli.ReaderLeft from None
        except KeyboardInterrupt:
            raise cli.Interrupted from None

    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    annotation=typer.Context)] if group else []
    parameters += [_argument(command.arg)] if command.arg else []
    parameters += [_option(opt) for opt in command.options]
    # Typer reads the parameters from the signature inspect finds here
    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters, return_annotation=None)
    callback.__name__ = callback.__qualname__ = command.name.replace(" ", "_")
    callback.__doc__ = command.help
    return callback


def _version(value: bool) -> None:
    if value:
        print(f"ekko-mem {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option(
        *VERSION.flags, is_eager=True, callback=_version, help=VERSION.help)] = False) -> None:
    """Long-term, auditable memory for LLM agents, over SQLite."""


def _register(command: Command) -> None:
    group, _, name = command.name.rpartition(" ")
    if command.name in GROUPS:  # `audit` lists events itself and also holds `audit undo`
        GROUPS[command.name].callback(invoke_without_command=True)(
            _callback(command, group=True))
    else:
        (GROUPS[group] if group else app).command(name)(_callback(command))


for _spec in COMMANDS.values():
    _register(_spec)


def run(argv: list[str]) -> int:
    """Run the app without Click's own error printing; errors come back as one line."""
    from typer._click import exceptions as click_exc
    from .errors import UsageError
    command = typer.main.get_command(app)
    if os.environ.get(cli.COMPLETE_VAR):
        # add_completion=False skips registering Typer's shell classes; completion needs them.
        from typer.completion import completion_init
        completion_init()
    try:
        result = command.main(args=argv, prog_name="ekko-mem", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help())
        return int(ExitCode.USAGE)
    except click_exc.UsageError as exc:
        sub = exc.ctx.command_path if exc.ctx else "ekko-mem"
        raise UsageError(exc.format_message().rstrip("."),
                         f"see '{sub} {HELP_FLAGS[-1]}'") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), f"see 'ekko-mem {HELP_FLAGS[-1]}'") from None
    except typer.Abort:
        return int(ExitCode.INTERRUPTED)
    return result if isinstance(result, int) else 0
