"""The Typer app: one short function per command, each parsing options and calling actions."""
from __future__ import annotations

from typing import List, Optional

import typer
from typing_extensions import Annotated

from . import __version__, actions
from .errors import ExitCode

app = typer.Typer(
    name="ekko-mem",
    help="Long-term, auditable memory for LLM agents, over SQLite.\n\n"
    "Exit codes: 0 ok, 1 error, 2 usage, 3 needs confirmation, 4 rejected,"
    " 5 not found, 6 store not initialised or unavailable, 130 interrupted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

Workspace = Annotated[Optional[str], typer.Option(
    "--workspace", "-w", envvar="EKKO_WORKSPACE", show_envvar=False,
    help="Workspace folder (default: found upward from here, as git does).")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]
NoColor = Annotated[bool, typer.Option("--no-color", help="No colour (also NO_COLOR).")]
Session = Annotated[Optional[str], typer.Option(
    "--session", "-s", help="Session id (default: EKKO_SESSION, else 'default').")]


def _color(no_color: bool) -> bool:
    from .env import Env
    return not no_color and Env().color()


def _version(value: bool) -> None:
    if value:
        print(f"ekko-mem {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option(
        "--version", "-V", is_eager=True, callback=_version,
        help="Print the version and exit.")] = False) -> None:
    """Long-term, auditable memory for LLM agents, over SQLite."""


@app.command()
def init(
    path: Annotated[Optional[str], typer.Argument(help="Workspace folder (default: .).")] = None,
    no_gitignore: Annotated[bool, typer.Option(
        "--no-gitignore", help="Do not add .ekko/ to .gitignore in a git repository.")] = False,
    json: Json = False, quiet: Quiet = False,
) -> None:
    """Create PATH/.ekko/ with a migrated memory.db and a commented config.toml.

    Example: ekko-mem init ~/src/myproject
    """
    actions.do_init(path, no_gitignore=no_gitignore, as_json=json, quiet=quiet)


@app.command()
def log(
    text: Annotated[Optional[str], typer.Argument(
        help="Message text; '-' or nothing with piped stdin reads stdin.")] = None,
    session: Session = None,
    role: Annotated[str, typer.Option(
        "--role", help="user, assistant, system or tool.")] = "user",
    parent: Annotated[Optional[str], typer.Option(
        "--parent", help="Id of the message this one answers.")] = None,
    meta: Annotated[Optional[List[str]], typer.Option(
        "--meta", help="key=value into metadata (repeatable).")] = None,
    jsonl: Annotated[Optional[str], typer.Option(
        "--jsonl", help="Append many MemoryMessage JSON lines from FILE or - (one transaction).")
    ] = None,
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Append a message to the raw log and print its id.

    Example: git log -1 --format=%s | ekko-mem log --role tool -s git --meta source=hook
    """
    actions.do_log(text, session=session, role=role, parent=parent, meta=meta or [],
                   jsonl=jsonl, as_json=json, quiet=quiet, workspace=workspace)


@app.command()
def history(
    session: Session = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many messages.")] = 20,
    workspace: Workspace = None, json: Json = False, no_color: NoColor = False,
) -> None:
    """Show a session's recent messages, oldest first (JSON Lines with --json).

    Example: ekko-mem history -s git -n 5 --json | jq -r .content
    """
    actions.do_history(session=session, limit=limit, as_json=json, color=_color(no_color),
                       workspace=workspace)


@app.command()
def migrate(
    status: Annotated[bool, typer.Option("--status", help="List applied and pending.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would run.")] = False,
    workspace: Workspace = None, json: Json = False,
) -> None:
    """Apply pending schema migrations to the workspace memory db.

    Example: ekko-mem migrate --status
    """
    actions.do_migrate(status=status, dry_run=dry_run, as_json=json, workspace=workspace)


def run(argv: list[str]) -> int:
    """Run the app without Click's own error printing; errors come back as one line."""
    from typer._click import exceptions as click_exc
    from .errors import UsageError
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="ekko-mem", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help())
        return int(ExitCode.USAGE)
    except click_exc.UsageError as exc:
        sub = exc.ctx.command_path if exc.ctx else "ekko-mem"
        raise UsageError(exc.format_message().rstrip("."),
                         f"see '{sub} --help'") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), "see 'ekko-mem --help'") from None
    except typer.Abort:
        return int(ExitCode.INTERRUPTED)
    return result if isinstance(result, int) else 0
