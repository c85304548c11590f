"""bash, zsh and fish completion scripts, written from the option table (ekko_mem/options.py).

Commands, subcommands, flags and fixed choices are in the script itself, so a TAB on them
starts no process. Values that live in the memory dbs (recent ids, sessions, keys, categories,
domains) come from `ekko-mem __complete KIND`, the hidden command that runs without Typer;
`Opt.complete` / `Arg.complete` say which KIND, or give the words. Anything else that takes a
value falls back to file names. Used by scripts/gen_docs.py.
"""
from __future__ import annotations

from dataclasses import dataclass

from ekko_mem.cli import COMPLETE
from ekko_mem.helptext import GROUPS, HELP, PROG, children
from ekko_mem.options import COMMANDS, HELP_FLAGS, VERSION, Opt

FUNCTION = "_ekko_mem"


@dataclass
class Spot:
    """Where the words typed so far lead: a command path ("" for the program itself)."""

    path: str
    subcommands: list[tuple[str, str]]  # (name, summary)
    options: list[Opt]
    arg_complete: object = ()  # Arg.complete: words, a KIND, or () for files

    @property
    def flags(self) -> list[str]:
        return [f for opt in self.options for f in opt.flags] + list(HELP_FLAGS)


def spots() -> list[Spot]:
    out = [Spot("", children(""), [VERSION])]
    out += [Spot(name, children(name), []) for name in GROUPS]
    for command in COMMANDS.values():
        below = children(command.name) if any(
            n.startswith(command.name + " ") for n in COMMANDS) else []
        out.append(Spot(command.name, below, list(command.options),
                        command.arg.complete if command.arg else ()))
    return out


def valued(spot: Spot) -> list[Opt]:
    return [opt for opt in spot.options if opt.kind != "flag"]


def _sq(text: str) -> str:
    """A single-quoted word for sh, bash and zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fish_sq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _transitions(sep: str = "|") -> str:
    """case patterns `parent:word` for every word that names a (sub)command."""
    names = [*GROUPS, *COMMANDS]
    return sep.join(f"{n.rpartition(' ')[0]}:{n.rpartition(' ')[2]}" for n in names)


def _by_action(pairs: list[tuple[str, object]]) -> dict[object, list[str]]:
    grouped: dict[object, list[str]] = {}
    for pattern, action in pairs:
        key = action if isinstance(action, str) else tuple(action or ())
        grouped.setdefault(key, []).append(pattern)
    return grouped


def _value_pairs() -> list[tuple[str, object]]:
    return [(f"{spot.path}:{flag}", opt.complete) for spot in spots() for opt in valued(spot)
            for flag in opt.flags]


# -- bash -----------------------------------------------------------------------------------


def bash(header: list[str]) -> str:
    q = _sq
    lines = [*header,
             f"{FUNCTION}() {{",
             "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
             "    local cmdpath= word i",
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             "        word=${COMP_WORDS[i]}",
             '        case "$cmdpath:$word" in',
             f"            {_transitions()}) cmdpath=${{cmdpath:+$cmdpath }}$word ;;",
             "        esac",
             "    done",
             "    # --flag=value: bash splits it at the =",
             '    [[ $cur == = ]] && return 0',
             '    [[ $prev == = ]] && ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD-2]}',
             '    case "$cmdpath:$prev" in']
    for action, patterns in _by_action(_value_pairs()).items():
        pattern = "|".join(q(p) for p in patterns)
        lines.append(f"        {pattern}) {_bash_action(action)}; return 0 ;;")
    lines += ["    esac",
              "    if [[ $cur == -* ]]; then",
              '        case "$cmdpath" in']
    for spot in spots():
        lines.append(f"            {q(spot.path)}) {FUNCTION}_words {q(' '.join(spot.flags))} ;;")
    lines += ["        esac",
              "        return 0",
              "    fi",
              '    case "$cmdpath" in']
    for spot in spots():
        action = (tuple(n for n, _ in spot.subcommands) if spot.subcommands
                  else spot.arg_complete)
        if action:
            lines.append(f"        {q(spot.path)}) {_bash_action(action)} ;;")
    lines += ["    esac",
              "}",
              "",
              f"{FUNCTION}_words() {{",
              "    local IFS=$' \\t\\n'",
              '    COMPREPLY=($(compgen -W "$1" -- "$cur"))',
              "}",
              "",
              f"{FUNCTION}_ask() {{",
              "    local line",
              "    COMPREPLY=()",
              "    while IFS= read -r line; do",
              '        COMPREPLY+=("$line")',
              f'    done < <("${{COMP_WORDS[0]}}" {COMPLETE} "$1" "$cur" 2>/dev/null)',
              "}",
              "",
              f"complete -o default -F {FUNCTION} {PROG}",
              ""]
    return "\n".join(lines)


def _bash_action(action) -> str:
    if isinstance(action, str):
        return f"{FUNCTION}_ask {action}"
    if action:
        return f"{FUNCTION}_words {_sq(' '.join(action))}"
    return "COMPREPLY=()"  # a value of its own: file names (complete -o default)


# -- zsh ------------------------------------------------------------------------------------


def zsh(header: list[str]) -> str:
    """An autoload file: `#compdef` first, then the body of the completion function."""
    q = _sq
    lines = [f"#compdef {PROG}", *header,
             "local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmdpath= word i",
             "local -a found",
             "for ((i = 2; i < CURRENT; i++)); do",
             "    word=${words[i]}",
             '    case "$cmdpath:$word" in',
             f"        ({_transitions()}) cmdpath=${{cmdpath:+$cmdpath }}$word ;;",
             "    esac",
             "done",
             "if [[ $cur == --*=* ]]; then",
             "    prev=${cur%%=*}",
             "    compset -P '*='",
             "fi",
             'case "$cmdpath:$prev" in']
    for action, patterns in _by_action(_value_pairs()).items():
        pattern = "|".join(q(p) for p in patterns)
        lines.append(f"    ({pattern}) {_zsh_action(action)}; return ;;")
    lines += ["esac",
              "if [[ $cur == -* ]]; then",
              '    case "$cmdpath" in']
    for spot in spots():
        described = [f"{f}:{_zsh_describe(opt.help)}" for opt in spot.options
                     for f in opt.flags] + [f"{f}:{HELP}" for f in HELP_FLAGS]
        lines.append(f"        ({q(spot.path)}) found=({' '.join(q(d) for d in described)}) ;;")
    lines += ["    esac",
              "    _describe -t options option found",
              "    return",
              "fi",
              'case "$cmdpath" in']
    for spot in spots():
        if spot.subcommands:
            described = [f"{name}:{_zsh_describe(summary)}" for name, summary in spot.subcommands]
            lines.append(f"    ({q(spot.path)}) found=({' '.join(q(d) for d in described)});"
                         " _describe -t commands command found ;;")
        elif spot.arg_complete:
            lines.append(f"    ({q(spot.path)}) {_zsh_action(spot.arg_complete)} ;;")
        else:
            lines.append(f"    ({q(spot.path)}) _files ;;")
    lines += ["esac", ""]
    return "\n".join(lines)


def _zsh_describe(text: str) -> str:
    return " ".join(text.split()).replace(":", "\\:")


def _zsh_action(action) -> str:
    if isinstance(action, str):
        return (f'found=(${{(f)"$(${{words[1]}} {COMPLETE} {action} 2>/dev/null)"}});'
                " compadd -a found")
    if action:
        return f"compadd -- {' '.join(_sq(w) for w in action)}"
    return "_files"


# -- fish -----------------------------------------------------------------------------------


def fish(header: list[str]) -> str:
    q = _fish_sq
    cases = "            case " + " ".join(q(t) for t in _transitions("\n").splitlines())
    lines = [*header,
             "function __ekko_mem_path",
             "    set -l cmdpath ''",
             "    set -l typed (commandline -opc)",
             "    set -e typed[1]",
             "    for word in $typed",
             '        switch "$cmdpath:$word"',
             cases,
             "                set cmdpath (string trim -- \"$cmdpath $word\")",
             "        end",
             "    end",
             '    echo "$cmdpath"',
             "end",
             "",
             "function __ekko_mem_at",
             "    set -l here (__ekko_mem_path)",
             '    test "$here" = "$argv"',
             "end",
             "",
             f"complete -c {PROG} -e"]
    for spot in spots():
        at = f"-n {q('__ekko_mem_at ' + spot.path if spot.path else '__ekko_mem_at')}"
        takes_files = not spot.subcommands and not spot.arg_complete
        if not takes_files:
            lines.append(f"complete -c {PROG} {at} -f")
        for name, summary in spot.subcommands:
            lines.append(f"complete -c {PROG} {at} -f -a {q(name)} -d {q(summary)}")
        if spot.arg_complete:
            lines.append(f"complete -c {PROG} {at} -f -a {_fish_values(spot.arg_complete)}")
        for opt in spot.options:
            names = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}"
                             for f in opt.flags)
            value = ""
            if opt.kind != "flag":
                value = f" -x -a {_fish_values(opt.complete)}" if opt.complete else " -r"
            lines.append(f"complete -c {PROG} {at} {names}{value} -d {q(opt.help)}")
        lines.append(f"complete -c {PROG} {at} -s h -l help -d {q(HELP)}")
    return "\n".join(lines) + "\n"


def _fish_values(action) -> str:
    if isinstance(action, str):
        return _fish_sq(f"({PROG} {COMPLETE} {action} 2>/dev/null)")
    return _fish_sq(" ".join(action))


def scripts(header_for) -> dict[str, str]:
    """file -> text; `header_for(how)` gives the comment lines naming how to install it."""
    return {
        "completions/ekko-mem.bash": bash(header_for(
            "source it from ~/.bashrc, or copy it to"
            " ~/.local/share/bash-completion/completions/ekko-mem")),
        "completions/_ekko-mem": zsh(header_for(
            "copy it into a folder on $fpath (e.g. ~/.zfunc) before compinit runs")),
        "completions/ekko-mem.fish": fish(header_for(
            "copy it to ~/.config/fish/completions/")),
    }

