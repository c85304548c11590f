"""Help as plain text, made from the option table (options.py) without importing Typer.

Help read through a pipe, a pager or a file, or with NO_COLOR, has no frames and no escape
codes, and costs about what printing the version does: cli.py serves it before Typer is
imported. On a colour terminal Typer's rich help stays. Both come from the same table, so they
say the same thing: the commands, the argument, every option with its help and default, the
examples. Examples are never wrapped, so each stays one line to copy.
"""
from __future__ import annotations

import unicodedata

from .errors import ExitCode
from .options import COMMANDS, HELP_FLAGS, NO_COLOR, VERSION, Command

PROG = "ekko-mem"
PROGRAM = ("Long-term, auditable memory for LLM agents, over SQLite.\n\n"
           "Exit codes: 0 ok, 1 error, 2 usage, 3 needs confirmation, 4 rejected,"
           " 5 not found, 6 store not initialised or unavailable, 7 done but not printed,"
           " 130 interrupted.")
# Groups that are not commands themselves; `audit` is both (it lists events, and holds `undo`).
GROUPS = {"hooks": "Git hooks that log commits into memory."}
HELP = "Show this message and exit."
HELP_LABEL = ", ".join(HELP_FLAGS)
WIDTH = 80
METAVARS = {"value": "TEXT", "append": "TEXT", "int": "INTEGER", "float": "FLOAT"}
# Commands that are also groups: they run on their own and hold commands of their own.
GROUPS_WITH_COMMANDS = tuple(name for name in COMMANDS
                             if any(other.startswith(f"{name} ") for other in COMMANDS))


def request(argv: list[str]) -> tuple[str, ExitCode] | None:
    """Which help `argv` asks for (the command path, "" for the program) and the exit code
    (2 when a group is run without a command, as Typer does), or None when it does not ask
    for help in a way read here; then Typer reads it, and fails the same way it always did."""
    if not argv:
        return "", ExitCode.USAGE
    if argv[0] in HELP_FLAGS:
        return "", ExitCode.OK
    name = argv[0]
    if name in GROUPS or name in COMMANDS:
        sub = f"{name} {argv[1]}" if len(argv) > 1 else ""
        if sub in COMMANDS:
            return _asks(sub, argv[2:])
        if name in GROUPS:
            if len(argv) == 1:
                return name, ExitCode.USAGE
            return (name, ExitCode.OK) if argv[1] in HELP_FLAGS else None
        return _asks(name, argv[1:])
    return None


def _asks(name: str, rest: list[str]) -> tuple[str, ExitCode] | None:
    """A help flag where an option may stand, after only options the command knows."""
    by_flag = {f: opt for opt in COMMANDS[name].options for f in opt.flags}
    tokens = iter(rest)
    for token in tokens:
        if token in HELP_FLAGS:
            return name, ExitCode.OK
        if token == "--":
            return None
        if token == "-" or not token.startswith("-"):
            continue
        flag, eq, _ = token.partition("=") if token.startswith("--") else (token, "", "")
        opt = by_flag.get(flag)
        if opt is None or (eq and opt.kind == "flag"):
            return None
        if opt.kind != "flag" and not eq and next(tokens, None) is None:
            return None
    return None


def plain_wanted(argv: list[str], environ, stdout) -> bool:
    """Plain help unless stdout is a colour terminal (the rule env.Env.color applies)."""
    if "NO_COLOR" in environ or environ.get("TERM") == "dumb":
        return True
    if any(token in NO_COLOR.flags for token in argv):
        return True
    return not getattr(stdout, "isatty", lambda: False)()


# -- the text -----------------------------------------------------------------------------


def render(path: str) -> str:
    if path == "":
        return _program()
    if path in GROUPS:
        return _group(path)
    return _command(COMMANDS[path])


def _program() -> str:
    summary, _, rest = PROGRAM.partition("\n\n")
    out = [f"Usage: {PROG} [OPTIONS] COMMAND [ARGS]...", "", *_para(summary),
           *(line for p in rest.split("\n\n") for line in ["", *_para(p)])]
    options = [(_label(VERSION), VERSION.help), (HELP_LABEL, HELP)]
    out += ["", "Options:", *_rows(options), "", "Commands:", *_rows(children(""))]
    return "\n".join(out) + "\n"


def _group(name: str) -> str:
    out = [f"Usage: {PROG} {name} [OPTIONS] COMMAND [ARGS]...", "", *_para(GROUPS[name]),
           "", "Options:", *_rows([(HELP_LABEL, HELP)]),
           "", "Commands:", *_rows(children(name))]
    return "\n".join(out) + "\n"


def children(group: str) -> list[tuple[str, str]]:
    """The commands one level below `group`; groups after the plain commands, as Typer
    lists them."""
    depth = group.count(" ") + 1 if group else 0
    below = [c for c in COMMANDS.values() if c.name.startswith(f"{group} " if group else "")]
    own = [(c.name.split()[depth], summary_of(c)) for c in below
           if c.name.count(" ") == depth and c.name not in GROUPS_WITH_COMMANDS]
    nested = [(n.split()[depth], summary_of(COMMANDS[n]) if n in COMMANDS else GROUPS[n])
              for n in [*GROUPS_WITH_COMMANDS, *GROUPS] if n.count(" ") == depth
              and n.startswith(f"{group} " if group else "")]
    return own + nested


def _command(command: Command) -> str:
    summary, paragraphs, examples = parse(command.help)
    arg = command.arg
    usage = [f"{PROG} {command.name}", "[OPTIONS]"]
    if command.name in GROUPS_WITH_COMMANDS:
        usage.append("[COMMAND [ARGS]...]")
    if arg:
        label = arg.metavar or arg.param.upper()
        usage.append(label if arg.required else f"[{label}]")
    out = [f"Usage: {' '.join(usage)}", "", *_para(summary)]
    for paragraph in paragraphs:
        out += ["", *_para(paragraph)]
    if arg:
        label = arg.metavar or arg.param.upper()
        note = " [required]" if arg.required else ""
        out += ["", "Arguments:", *_rows([(label, arg.help + note)])]
    rows = [(_label(opt), opt.help + _default(opt)) for opt in command.options]
    out += ["", "Options:", *_rows(rows + [(HELP_LABEL, HELP)])]
    if command.name in GROUPS_WITH_COMMANDS:
        out += ["", "Commands:", *_rows(children(command.name))]
    if examples:
        out += ["", "Examples:", *(f"  {example}" for example in examples)]
    return "\n".join(out) + "\n"


def summary_of(command: Command) -> str:
    return parse(command.help)[0]


def parse(text: str) -> tuple[str, list[str], list[str]]:
    """A command's help: its one-line summary, its paragraphs (each one line) and its
    `Example:` lines."""
    lines = text.strip().splitlines()
    paragraphs: list[list[str]] = [[]]
    examples = []
    for line in lines[1:]:
        line = line.strip()
        if line.startswith(("Example:", "Examples:")):
            examples.append(line.partition(":")[2].strip())
            paragraphs.append([])
        elif line:
            paragraphs[-1].append(line)
        else:
            paragraphs.append([])
    return lines[0].strip(), [" ".join(p) for p in paragraphs if p], examples


def _label(opt) -> str:
    flags = ", ".join(sorted(opt.flags, key=lambda f: len(f) - len(f.lstrip("-"))))
    return flags if opt.kind == "flag" else f"{flags} {opt.metavar or METAVARS[opt.kind]}"


def _default(opt) -> str:
    if opt.kind == "flag" or opt.default in (None, "", (), []):
        return ""
    return f" [default: {opt.default}]"


def _rows(rows: list[tuple[str, str]]) -> list[str]:
    """Two columns: labels, then their help wrapped beside them (or below a long label)."""
    column = min(max((width(label) for label, _ in rows), default=0), 26) + 4
    out = []
    for label, text in rows:
        lines = _wrap(text, WIDTH - column)
        if width(label) + 4 > column:
            out.append(f"  {label}")
        else:
            out.append(f"  {label}{' ' * (column - 2 - width(label))}{lines.pop(0)}")
        out += [" " * column + line for line in lines]
    return out


def _para(text: str) -> list[str]:
    return ["  " + line for line in _wrap(text, WIDTH - 2)]


def _wrap(text: str, room: int) -> list[str]:
    """Words onto lines of at most `room` columns (a CJK character is two); a word longer
    than that has a line of its own."""
    lines, line = [], ""
    for word in text.split():
        if line and width(line) + 1 + width(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
