"""Every command and option of the command line, declared once.

The Typer app (app.py) and the fast parser (cli.py) are both generated from this table, so a
flag, its kind, default, checks and help cannot drift between them; the table also names the
design field each option fills, so `--category` becomes categoryPath in one place. `log`,
`context`, `remember`, `history` and `query` are parsed from it before Typer is imported, so
this module imports nothing heavier than the vocabularies.
"""
from __future__ import annotations

from . import commands
from .config_values import SETTINGS as CONFIG_SETTINGS
from .errors import ExitCode
from .values import VALUES, Value, describe

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import Callable

KINDS = ("value", "int", "float", "flag", "append")
RULE_KINDS = {"int": "int", "float": "float", "choice": "value", "time": "value"}


class Opt:
    """One option: how it is spelt, parsed, checked, documented and completed.

    kind: value (text), int, float, flag (no value) or append (repeatable text).
    choices / range: what a given value must be; a choice is matched as the service matches
    it (case and outer spaces aside). A value outside is refused with the `refusal` exit code,
    and the hint suggests `example`, else the default.
    complete: values to offer, or the kind of value `ekko-mem __complete KIND` lists (ids,
    nodes, messages, events, sessions, keys, categories, domains; actions_complete.py).
    field: the design's name for what the option fills (categoryPath, valueJson, ...).
    rule: the value's rule in values.py, when it has one: the kind, choices (those a person
    may give), range, noun, example and help come from there, and so does the default unless
    a config setting supplies it (then the service reads it) or `default` is given. `help`
    then replaces only the first words of the table's line.
    """

    __slots__ = ("flags", "param", "kind", "default", "help", "choices", "noun", "range",
                 "refusal", "example", "complete", "field", "metavar", "rule")

    def __init__(self, flags: str, param: str, kind: str = "value", default=None, *,
                 help: str = "", choices: tuple = (), noun: str = "", range: tuple = (),
                 refusal: ExitCode = ExitCode.USAGE, example=None, complete=None,
                 field: str | None = None,
                 metavar: str | None = None, rule: Value | None = None) -> None:
        if rule is not None:
            kind = RULE_KINDS[rule.kind]
            choices, range, noun, example = rule.given, rule.range, rule.noun, rule.suggestion
            if default is None and rule.setting is None:
                default = rule.default
            help = describe(rule, help or None, default=default is None)
        assert kind in KINDS, kind
        self.rule = rule
        self.flags = tuple(flags.split())
        self.param, self.kind, self.default, self.help = param, kind, default, help
        self.choices, self.noun, self.range, self.refusal = choices, noun or param, range, refusal
        self.example = example
        self.complete = choices if complete is None else complete
        self.field, self.metavar = field, metavar

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def suggestion(self):
        """A good value to name in the hint of a refusal."""
        return self.default if self.example is None else self.example

    def but(self, **changes) -> Opt:
        """This option with some attributes changed (the same flag, another command's help)."""
        copy = object.__new__(Opt)
        for name in Opt.__slots__:
            setattr(copy, name, changes.get(name, getattr(self, name)))
        return copy


class Arg:
    """A command's positional argument; at most one per command. complete: as Opt's. many:
    it takes every word left (a list), as `config set KEY VALUE` does."""

    __slots__ = ("param", "help", "metavar", "required", "complete", "many")

    def __init__(self, param: str, help: str, *, metavar: str | None = None,
                 required: bool = False, complete=(), many: bool = False) -> None:
        self.param, self.help, self.metavar, self.required = param, help, metavar, required
        self.complete, self.many = complete, many


class Command:
    """A command: its help (docstring form: summary, paragraphs, examples), argument and
    options, what runs it (a function in commands.py, which imports the action), whether the
    fast path parses it, and the keyword under which the options with a design field reach
    the action."""

    __slots__ = ("name", "run", "help", "arg", "options", "fast", "design")

    def __init__(self, name: str, run: Callable[..., None], help: str, *,
                 arg: Arg | None = None, options: tuple = (), fast: bool = False,
                 design: str | None = None) -> None:
        self.name, self.run, self.help, self.arg, self.options = name, run, help, arg, options
        self.fast, self.design = fast, design


HELP_FLAGS = ("-h", "--help")
VERSION = Opt("--version -V", "version", "flag", False, help="Print the version and exit.")

# EKKO_WORKSPACE is read where the workspace is found (env.py), not here: once.
WORKSPACE = Opt("--workspace -w", "workspace",
                help="Workspace folder (default: EKKO_WORKSPACE, else found upward from here,"
                " as git does).")
JSON = Opt("--json", "as_json", "flag", False, help="Machine-readable JSON on stdout.")
QUIET = Opt("--quiet -q", "quiet", "flag", False, help="Print nothing but errors.")
NO_COLOR = Opt("--no-color", "no_color", "flag", False, help="No colour (also NO_COLOR).")
SESSION = Opt("--session -s", "session", complete="sessions",
              help="Session id (default: EKKO_SESSION, else 'default').")
YES = Opt("--yes -y", "yes", "flag", False, help="Confirm; no question asked.")
REVEAL = Opt("--reveal", "reveal", "flag", False,
             help="Show credentials as stored (masked as [secret removed] by default).")
REASON = Opt("--reason", "reason", default="", help="Why (kept in the audit trail).")
LIMIT = Opt("--limit -n", "limit", default=20, rule=VALUES["listing"], help="at most this many")
SINCE = Opt("--since", "since", rule=VALUES["since"])
AS_OF = Opt("--as-of", "as_of", rule=VALUES["as_of"])

SCOPE = Opt("--scope", "scope", rule=VALUES["scope"], field="scope")
SCOPES_OPT = SCOPE.but(kind="append", field="scopes",
                       help=describe(VALUES["scope"], "only these scopes (repeatable)"))
TYPE = Opt("--type", "type", rule=VALUES["type"], field="type")
TYPES_OPT = TYPE.but(kind="append", field="types",
                     help=describe(VALUES["type"], "only these types (repeatable)"))
DOMAIN = Opt("--domain", "domain", complete="domains", field="domain",
             help="Domain, e.g. 生活技能 or engineering.")
CATEGORY = Opt("--category", "category", complete="categories",
               field="categoryPathPrefix", help="Category path, e.g. 生活技能/做饭/饮食偏好.")
KEY = Opt("--key", "key", complete="keys", field="key",
          help="Controlled key, e.g. avoid_ingredient.")
VALUE = Opt("--value", "value", field="valueJson",
            help="valueJson: JSON, or plain text taken as a string.")

LLM_CMD = Opt("--llm-cmd", "llm_cmd", help="LLM command run as extractor (argv, no shell);"
              " default [extractor] command in config.toml, else the built-in rules.")
APPLY = Opt("--apply", "apply", help="Apply a JSON answer made by any tool, from FILE or -.")
PRINT_PROMPT = Opt("--print-prompt", "print_prompt", "flag", False,
                   help="Print the prompt an LLM would get, and stop.")
CONFIG_KEYS = tuple(CONFIG_SETTINGS)
MCP_CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")  # mcp_clients.CLIENTS
CONFIG_USER = Opt("--user", "user", "flag", False,
                  help="The user's config.toml (EKKO_HOME, else ~/.ekko), not the workspace's.")

COMMANDS = {c.name: c for c in (
    Command(
        "init", commands.do_init,
        """Create PATH/.ekko/ with a migrated memory.db and a commented config.toml.

        Example: ekko-mem init ~/src/myproject
        """,
        arg=Arg("path", "Workspace folder (default: .)."),
        options=(
            Opt("--no-gitignore", "no_gitignore", "flag", False,
                help="Do not add .ekko/ to .gitignore in a git repository."),
            Opt("--git-hooks", "git_hooks", "flag", False,
                help="Also install the post-commit hook."),
            JSON, QUIET)),
    Command(
        "log", commands.do_log,
        """Append a message to the raw log and print its id.

        A credential in the text (API key, token, password) is stored as [secret removed]
        unless --yes; sensitive.policy = "refuse" rejects such a message (exit 4).
        Example: git log -1 --format=%s | ekko-mem log --role tool -s git --meta source=hook
        """,
        fast=True, arg=Arg("text", "Message text; '-' or nothing with piped stdin reads stdin."),
        options=(
            SESSION,
            Opt("--role", "role", rule=VALUES["role"]),
            Opt("--parent", "parent", complete="messages",
                help="Id of the message this one answers."),
            Opt("--meta", "meta", "append", help="key=value into metadata (repeatable)."),
            Opt("--jsonl", "jsonl", help="Append many MemoryMessage JSON lines from FILE or -"
                " (one transaction)."),
            YES.but(help="Keep credentials as written (they are masked by default)."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "history", commands.do_history,
        """Show a session's recent messages, oldest first (JSON Lines with --json).

        Credentials in them print as [secret removed] unless --reveal.
        Example: ekko-mem history -s git -n 5 --json | jq -r .content
        Example: ekko-mem history --sessions
        """,
        fast=True,
        options=(
            SESSION, LIMIT.but(help=describe(VALUES["listing"], "how many messages")),
            Opt("--sessions", "sessions", "flag", False,
                help="List the sessions instead, most recent first."),
            REVEAL, WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "migrate", commands.do_migrate,
        """Apply pending schema migrations to the workspace memory db.

        Example: ekko-mem migrate --status
        """,
        options=(
            Opt("--status", "status", "flag", False, help="List applied and pending."),
            Opt("--dry-run", "dry_run", "flag", False, help="Print what would run."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "remember", commands.do_remember,
        """Remember a preference, fact, decision, task or constraint (exit 3: confirm, 4: refused).

        Example: ekko-mem remember "以后做饭别给我推荐香菜，我喜欢少油少辣"
        Example: ekko-mem remember --scope user --category 生活技能/做饭/饮食偏好 --key avoid_ingredient --value 香菜
        """,  # noqa: E501
        fast=True, design="fields",
        arg=Arg("text", "What to remember; with no other flags the node is extracted from it."),
        options=(
            SCOPE, SESSION, DOMAIN, CATEGORY.but(field="categoryPath"), TYPE, KEY, VALUE,
            Opt("--title", "title", field="title", help="Short title."),
            Opt("--content", "content", field="content", help="Full text."),
            Opt("--tag", "tag", "append", field="tags", help="Tag (repeatable)."),
            Opt("--entity", "entity", "append", field="entities", help="Entity (repeatable)."),
            Opt("--confidence", "confidence", rule=VALUES["confidence"], field="confidence"),
            Opt("--importance", "importance", rule=VALUES["importance"], field="importance"),
            Opt("--expires", "expires", field="expiresAt",
                help="ISO time, +2h, +3d, today, tomorrow."),
            Opt("--supersedes", "supersedes", complete="nodes",
                help="Id of the memory this one replaces."),
            Opt("--source", "source", "append", field="sourceMessageIds", complete="messages",
                help="Source message id (repeatable)."),
            REASON,
            Opt("--actor", "actor", rule=VALUES["actor"], complete=()),
            Opt("--dry-run", "dry_run", "flag", False,
                help="Print what would be stored (create, supersede, refresh or refused);"
                " write nothing."),
            YES, WORKSPACE, JSON, QUIET)),
    Command(
        "query", commands.do_query,
        """Find memories: exact by fields, relevant by text (best first), and what was left out.

        Example: ekko-mem query --key avoid_ingredient --value 香菜 --json
        Example: ekko-mem query 你喜欢什么运动
        Example: ekko-mem query "staging database port" --messages --since "last week"
        """,
        fast=True, design="query",
        arg=Arg("text", "Words to search for; '-' or nothing with piped stdin reads stdin."),
        options=(
            SCOPES_OPT, SESSION, DOMAIN, CATEGORY, TYPES_OPT, KEY, VALUE,
            Opt("--tag", "tag", "append", field="tags", help="Has this tag."),
            Opt("--entity", "entity", "append", field="entities", help="Has this entity."),
            Opt("--include-expired", "include_expired", "flag", False, field="includeExpired",
                help="Also expired memories."),
            Opt("--include-superseded", "include_superseded", "flag", False,
                field="includeSuperseded", help="Also superseded versions."),
            Opt("--limit -n", "limit", rule=VALUES["limit"], field="limit"),
            Opt("--messages", "messages", "flag", False,
                help="Search the raw message log of every session instead."),
            SINCE.but(help=describe(VALUES["since"], "with --messages, from this time on")),
            AS_OF.but(help=describe(VALUES["as_of"], "the memories that held then")),
            REVEAL, WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "forget", commands.do_forget,
        """Forget memories: soft by default (status deleted); --hard removes them for good.

        ID may be words instead: the active memories they match (ranked as query ranks them)
        are listed and, at a terminal, a question asks before they go; elsewhere exit 3 lists
        them until --yes. Several matches, or --hard, need --yes too. --hard also
        removes the text from older versions, audit copies, context records and summaries,
        in one transaction per db; an interrupted run is finished by running it again.
        Example: ekko-mem forget --key avoid_ingredient --value 香菜 --reason "不再忌口"
        Example: ekko-mem forget 我老婆不吃辣
        """,
        design="selector", arg=Arg("node_id", "Id (or unique prefix) of the memory, or words"
                                   " that find it.", metavar="ID|TEXT", complete="nodes"),
        options=(
            SCOPE, DOMAIN, CATEGORY, TYPE, KEY, VALUE,
            Opt("--source-message", "source_message", field="sourceMessageId",
                complete="messages",
                help="Every memory taken from this message."),
            Opt("--all-workspace", "all_workspace", "flag", False, field="workspace",
                help="Every memory in this workspace."),
            Opt("--all-user", "all_user", "flag", False, field="user",
                help="Every user-scope memory."),
            Opt("--hard", "hard", "flag", False,
                help="Remove for good (text, index and audit copies)."),
            Opt("--purge-sources", "purge_sources", "flag", False,
                help="With --hard: also the source messages."),
            Opt("--message", "message", "append", metavar="ID", complete="messages",
                help="With --hard: erase this logged message (repeatable)."),
            Opt("--verify", "verify", "flag", False, help="With --hard: byte-scan the db, -wal"
                " and -shm files afterwards; exit 1 if the text is still there."),
            YES, REASON, WORKSPACE, JSON, QUIET)),
    Command(
        "audit", commands.do_audit,
        """List audit events, newest first (JSON Lines with --json).

        Example: ekko-mem audit --node mem_01k --json
        """,
        fast=True,
        options=(
            Opt("--node", "node", complete="nodes", help="Only this node."), SINCE,
            LIMIT.but(default=50),
            REVEAL, WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "audit undo", commands.do_undo,
        """Reverse a soft change (create, update, supersede, expire, delete) as a new change.

        An event already undone is left alone (exit 0, naming the undo); undoing an undo
        makes its change again.
        Example: ekko-mem audit undo evt_01k
        """,
        arg=Arg("event", "Audit event id (or unique prefix).", required=True, complete="events"),
        options=(REASON, WORKSPACE, JSON, QUIET)),
    Command(
        "show", commands.do_show,
        """Show a record with its versions, source messages and audit trail.

        Credentials print as [secret removed] unless --reveal.
        Example: ekko-mem show mem_01k
        """,
        fast=True,
        arg=Arg("identifier", "A node, message, summary or event id (or unique prefix).",
                metavar="ID", required=True, complete="ids"),
        options=(REVEAL, WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "graph", commands.do_graph,
        """Show a person, pet, place or thing your memories name, and how it relates.

        Each edge has two times: when it held, as the statement said (validFrom, validTo),
        and when it was recorded and retired (a memory replaced or forgotten).
        Example: ekko-mem graph Anna --depth 2
        Example: ekko-mem graph 小王 --as-of 2026-03-01 --json
        """,
        fast=True,
        arg=Arg("name", "The entity's name or an alias.", metavar="NAME", required=True),
        options=(
            Opt("--depth", "depth", rule=VALUES["depth"]),
            AS_OF,
            WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "edit", commands.do_edit,
        """Edit a memory in $EDITOR (JSON); saved as an audited update or supersede.

        Example: EDITOR=nano ekko-mem edit mem_01k
        """,
        arg=Arg("identifier", "Node id (or prefix).", metavar="ID", required=True,
                complete="nodes"),
        options=(REASON, YES, WORKSPACE, JSON, QUIET)),
    Command(
        "expire", commands.do_expire,
        """Mark memories past their expiresAt as expired (audited); writes do this on their own.

        Example: ekko-mem expire
        """,
        options=(WORKSPACE, JSON, QUIET)),
    Command(
        "context", commands.do_context,
        """Print the memory context for the next model call, within a token budget.

        Example: llm -s "$(ekko-mem context "$Q")" "$Q"
        Example: ekko-mem context "今晚吃什么？" --budget 300 --format json
        """,
        fast=True, arg=Arg("text", "The user's current message ('-' reads stdin)."),
        options=(
            SESSION,
            Opt("--budget -b", "budget", rule=VALUES["budget"]),
            Opt("--format -f", "format", rule=VALUES["format"]),
            Opt("--counter", "counter", rule=VALUES["counter"]),
            Opt("--strict", "strict", "flag", False,
                help="Fail (exit 6) instead of degrading when a db is unusable."),
            Opt("--with-input", "with_input", "flag", False,
                help="Also print TEXT itself, first in the budget."),
            AS_OF.but(help=describe(VALUES["as_of"], "the memories and edges that held then;"
                                    " a question naming a past month or year sets it")),
            WORKSPACE, QUIET, JSON)),
    Command(
        "explain", commands.do_explain,
        """Why was this in the context? The memories a context run used, their sources and reasons.

        Example: ekko-mem explain --last
        """,
        fast=True,
        arg=Arg("context_id", "A context run id (default: the last one).", metavar="CONTEXT_ID"),
        options=(
            Opt("--last", "last", "flag", False, help="The last context run."),
            REVEAL, WORKSPACE, JSON, QUIET)),
    Command(
        "schema", commands.do_schema,
        """Print a JSON Schema (usable with `llm --schema`).

        Example: ekko-mem schema extraction > extraction.schema.json
        """,
        arg=Arg("name", "summary, extraction, node, context, message, query, query-result, rule,"
                " audit-event, propose-update or forget.", required=True),
        options=(QUIET,)),
    Command(
        "summarize", commands.do_summarize,
        """Append the next summary, built from the previous one and the new messages only.

        Example: ekko-mem summarize -s chat --if-needed
        Example: ekko-mem summarize -s chat --print-prompt | llm | ekko-mem summarize -s chat --apply -
        """,  # noqa: E501
        options=(
            SESSION, LLM_CMD,
            Opt("--if-needed", "if_needed", "flag", False,
                help="Only when the design's triggers hold; else do nothing."),
            PRINT_PROMPT, APPLY,
            Opt("--chain", "chain", "flag", False, help="List the session's summaries."),
            Opt("--no-extract", "no_extract", "flag", False,
                help="Do not extract memories from the new messages."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "extract", commands.do_extract,
        """Extract memories from messages not yet extracted (each message once).

        Example: ekko-mem extract -s chat --llm-cmd "llm -m gpt-4o-mini"
        """,
        options=(
            SESSION, LLM_CMD,
            Opt("--retry", "retry", "flag", False, help="Run the retry queue again."),
            Opt("--jobs", "jobs", "flag", False, help="List the retry queue."),
            PRINT_PROMPT, APPLY, WORKSPACE, JSON, QUIET)),
    Command(
        "export", commands.do_export,
        """Export messages, summaries, memories and audit events as JSON Lines.

        Example: ekko-mem export > backup.jsonl
        """,
        fast=True,
        options=(
            SCOPES_OPT, SESSION,
            Opt("--output -o", "output", help="Write to FILE (mode 0600) instead of stdout."),
            WORKSPACE, QUIET)),
    Command(
        "import", commands.do_import,
        """Import an export file: all or nothing, ids and times kept, twice adds nothing.

        With --from llm-logs, the conversations llm logged instead (its logs.db): each one a
        session, each prompt and reply a message, checked as log checks them; only what is
        new is added, so it can run from cron.
        Example: ekko-mem import backup.jsonl
        Example: ekko-mem import --from llm-logs --since -1d
        """,
        arg=Arg("source", "An export file, or - for stdin; with --from llm-logs, llm's"
                " logs.db (default: the one `llm logs path` prints).", metavar="FILE"),
        options=(Opt("--from", "origin", default="export", choices=("export", "llm-logs"),
                     noun="import source", help="What FILE is: export, or llm-logs"
                     " (llm's logs.db)."),
                 SINCE.but(help=describe(VALUES["since"], "with --from llm-logs, only the"
                                         " responses from this time on")),
                 YES.but(help="Confirm; with --from llm-logs, keep credentials as written."),
                 Opt("--allow-erased", "allow_erased", "flag", False,
                     help="Bring back records erased here since the export was taken."),
                 WORKSPACE, JSON, QUIET)),
    Command(
        "hooks install", commands.do_hooks_install,
        """Install the post-commit hook (chains with an existing hook; fails open).

        Example: ekko-mem hooks install
        """,
        options=(WORKSPACE, JSON, QUIET)),
    Command(
        "hooks uninstall", commands.do_hooks_uninstall,
        """Remove only what 'hooks install' added.

        Example: ekko-mem hooks uninstall
        """,
        options=(WORKSPACE, JSON, QUIET)),
    Command(
        "hooks run", commands.do_hooks_run,
        """Record a commit (what the installed hook calls): subject, sha, branch, paths, trailers.

        Example: ekko-mem hooks run post-commit --rev HEAD~1
        """,
        fast=True,
        arg=Arg("hook", "The hook being run: post-commit.", required=True,
                complete=("post-commit",)),
        options=(
            Opt("--rev", "rev", default="HEAD", help="The commit to record."),
            Opt("--branch", "branch", help="The branch it was made on (default: the one"
                " checked out now; the hook passes the one it was made on)."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "index", commands.do_index,
        """Embed what has no vector yet, for semantic recall (needs the [semantic] extra).

        Writes embed as they go once retrieval.semantic is true; this fills in rows written
        before, or imported. Each batch is committed, so an interrupted run resumes.
        Example: ekko-mem config set retrieval.semantic true && ekko-mem index
        """,
        options=(
            Opt("--user", "user", "flag", False,
                help="Index the user db (EKKO_HOME, else ~/.ekko), not the workspace's."),
            Opt("--rebuild", "rebuild", "flag", False,
                help="Drop every vector and embed everything again."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "doctor", commands.do_doctor,
        """Check the memory dbs: owner, integrity, index, modes, schema, expiry, chains, references.

        Exit 0 when all is well (or repaired), 1 when problems remain.
        Example: ekko-mem doctor --repair
        Example: ekko-mem doctor --scan "hunter2"
        Example: ekko-mem doctor --repair --compact
        """,
        options=(
            Opt("--repair", "repair", "flag", False,
                help="Fix what can be fixed: rebuild the index, chmod, migrate, expire."),
            Opt("--compact", "compact", "flag", False,
                help="Store old audit copies by reference and difference, then give the"
                " freed space back to the file system (VACUUM)."),
            Opt("--scan", "scan", metavar="TEXT", help="Also byte-scan each db, -wal and -shm"
                " file and the full-text index for TEXT (proves an erasure)."),
            WORKSPACE, JSON, QUIET)),
    Command(
        "config", commands.do_config,
        """Show the effective settings and the file each one came from (workspace wins over user).

        A problem in a file (a bad value, an unknown key, broken TOML) is shown with its
        file, line and key, and the fix; then the exit code is 4.
        Example: ekko-mem config --json
        """,
        fast=True, options=(WORKSPACE, JSON, QUIET, NO_COLOR)),
    Command(
        "config get", commands.do_config_get,
        """Print the value of one setting in effect (exit 5 when it is unset and has no default).

        Example: ekko-mem config get context.budget
        """,
        arg=Arg("key", "A setting, e.g. context.budget ('ekko-mem config' lists them).",
                required=True, complete=CONFIG_KEYS),
        options=(WORKSPACE, JSON, QUIET)),
    Command(
        "config set", commands.do_config_set,
        """Set one setting in the workspace's config.toml, or with --user in the user's.

        Outside a workspace the user's file is written. The value is checked as the file's
        would be (exit 2 when it is wrong); comments and other lines are kept.
        Example: ekko-mem config set context.budget 800
        Example: ekko-mem config set extractor.command "llm -m gpt-4o-mini" --user
        """,
        arg=Arg("words", "The setting and its value.", metavar="KEY VALUE", required=True,
                complete=CONFIG_KEYS, many=True),
        options=(CONFIG_USER, WORKSPACE, JSON, QUIET)),
    Command(
        "config unset", commands.do_config_unset,
        """Remove one setting from the workspace's config.toml, or with --user from the user's.

        Nothing to remove is not an error (exit 0).
        Example: ekko-mem config unset context.budget
        """,
        arg=Arg("key", "The setting to remove.", required=True, complete=CONFIG_KEYS),
        options=(CONFIG_USER, WORKSPACE, JSON, QUIET)),
    Command(
        "mcp", commands.do_mcp,
        """Serve the memory tools to an agent over MCP on stdio.

        Tools: memory_search, memory_get, memory_context, memory_propose_update,
        memory_forget, memory_log. With --config, print instead what a client needs to
        start this ekko-mem for this workspace, and exit.

        Example: ekko-mem mcp --workspace ~/src/myproject --session agent-1
        Example: ekko-mem mcp --config cursor > .cursor/mcp.json
        """,
        options=(SESSION, WORKSPACE,
                 Opt("--config", "client", choices=MCP_CLIENTS, noun="MCP client",
                     help="Print this client's configuration and exit: claude-desktop,"
                     " claude-code, cursor or vscode."),
                 JSON.but(help="Print only the server's entry (JSON) and exit."))),
)}


def flag(param: str) -> str:
    """The long flag of an option, for messages and hints that name it."""
    for command in COMMANDS.values():
        for opt in command.options:
            if opt.param == param:
                return opt.flag
    raise KeyError(param)


def command_line(name: str, *params: str) -> str:
    """`ekko-mem NAME --flag ...`, for a hint that names the next command to run."""
    return " ".join(["ekko-mem", name, *map(flag, params)])


# A step names parameters by their design names; these are spelt by another option's name.
_STEP_PARAMS = {"confirm": "yes", "purgeSources": "purge_sources"}


def spell_step(step) -> str:
    """An error's next step (errors.Step) as the command line says it: the flags to rerun
    with, or the command to run."""
    words = []
    for given in step.params:
        name, _, value = given.partition("=")
        words += [flag(_STEP_PARAMS.get(name, name))] + ([value] if value else [])
    if step.command is None:
        return "rerun with " + " ".join(words)
    return "run '" + " ".join(["ekko-mem", step.command, *filter(None, [step.target]),
                               *words]) + "'"
