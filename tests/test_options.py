"""The option table is the one source: the fast parser and the Typer app built from it accept
and refuse the same command lines, with the same parameters, exit codes and error lines; the
design's field names come from it; and no other module spells a flag."""
from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from typer._click import core as click

from ekko_mem import cli
from ekko_mem.app import app
from ekko_mem.options import COMMANDS, flag

PACKAGE = Path(cli.__file__).resolve().parent
TABLE = "ekko_mem/options.py"

# Parsed by the fast parser itself and accepted by both.
ACCEPTED = [
    ["log", "hi"], ["log"], ["log", "-"], ["log", ""],
    ["log", "-s", "x", "--role", "tool", "hi"],
    ["log", "--role=assistant", "--meta", "a=b", "--meta=c=d", "x"],
    ["log", "-y", "-q", "--json", "x", "--yes"],
    ["log", "--parent", "msg_1", "--jsonl", "-"],
    ["log", "--session", "--json", "x"],  # a value may look like a flag
    ["log", "--session=", "x", "-w", "/a", "--workspace", "/b"],  # empty value; last wins
    ["log", "x", "--role", " TOOL"],  # a choice is matched as the service matches it
    ["history"], ["history", "-n", "5"], ["history", "--limit=7"],
    ["history", "-n", "+3"], ["history", "-n", " 4"], ["history", "-n", "1_000"],
    ["history", "--sessions", "--reveal", "--no-color", "--json", "-s", "a", "-s", "b"],
    ["context", "q"], ["context", "-", "-q"], ["context", "q", "-b", "300", "-f", "json"],
    ["context", "--budget=0", "q", "--counter", "cl100k", "--strict", "--with-input"],
    ["context", "q", "--format", "MARKDOWN"],
    ["remember", "x", "--scope", "user", "--category", "a/b", "--key", "k", "--value", "v"],
    ["remember", "--tag", "a", "--tag=b", "--entity", "e", "--source", "s1", "--source", "s2",
     "--title", "t"],
    ["remember", "--confidence", "0.5", "--importance=1", "--confidence", "1e-1",
     "--title", "t"],
    ["remember", "--actor", "agent", "--reason", "r", "-y", "--expires", "+2h",
     "--supersedes", "mem_x", "--content", "c", "--type", "fact", "--domain", "d"],
    ["query", "香菜"], ["query"],
    ["query", "--scope", "user", "--scope", "workspace", "--type", "fact", "--type=task"],
    ["query", "--include-expired", "--include-superseded", "-n", "3", "--messages",
     "--since", "yesterday", "q"],
    ["query", "--key", "k", "--value", '{"a": 1}', "--tag", "t", "--entity", "e",
     "--domain", "d", "--category", "c", "--reveal", "--no-color", "--json"],
]

# Handed to Typer by the fast parser (None); the code is Typer's answer on either path.
HANDED_OVER = [
    (["log", "--bogus", "x"], 2), (["history", "--nope"], 2), (["query", "-x"], 2),
    (["log", "x", "--role"], 2), (["history", "-n"], 2), (["context", "q", "-b"], 2),
    (["query", "--scope"], 2), (["remember", "--tag"], 2),
    (["history", "-n", "five"], 2), (["history", "--limit=1.5"], 2), (["query", "-n", ""], 2),
    (["context", "q", "--budget", "abc"], 2), (["context", "q", "-b", "1.5"], 2),
    (["remember", "--confidence", "high"], 2), (["remember", "--importance="], 2),
    (["log", "x", "--json=1"], 2), (["query", "--messages=yes"], 2), (["log", "-y=1"], 2),
    (["log", "a", "b"], 2), (["history", "x"], 2), (["query", "a", "b"], 2),
    (["log", "--help"], 0), (["history", "-h"], 0),
    (["query", "--", "-x"], 0),  # after --, a word that looks like a flag is the text
    (["log", "-qy", "x"], 0),  # clustered short flags
    (["log", "-s=x", "hi"], 0), (["log", "-sx", "hi"], 0),  # Click reads "=x" and "x"
    (["history", "-n5"], 0),
]

# Parsed by the fast parser, then refused by the table's checks. Every bad value of an option is a usage error (exit 2), on both parsers.
REFUSED = [
    (["log", "x", "--role", "robot"], 2, "ekko-mem: unknown role 'robot'; use one of: user,"),
    (["context", "q", "-f", "xml"], 2, "ekko-mem: unknown format 'xml'; use one of: text,"),
    (["context", "q", "--counter", "bogus"], 2, "ekko-mem: unknown token counter 'bogus'"),
    (["context", "q", "-b", "-1"], 2,
     "ekko-mem: --budget must be from 0 to 1,000,000, not -1; pass --budget 1200"),
    (["context", "q", "-b", "1000001"], 2, "ekko-mem: --budget must be from 0 to 1,000,000"),
    (["history", "-n", "0"], 2, "ekko-mem: --limit must be at least 1, not 0; pass --limit 20"),
    (["query", "--scope", "user", "--scope", "bogus"], 2, "ekko-mem: unknown scope 'bogus';"),
    (["query", "--limit=-3"], 2, "ekko-mem: --limit must be from 1 to 10,000, not -3"),
    (["query", "-n", "10001"], 2, "ekko-mem: --limit must be from 1 to 10,000, not 10001"),
    (["remember", "--confidence", "3", "--title", "t"], 2,
     "ekko-mem: --confidence must be from 0 to 1, not 3.0; pass --confidence 0.8"),
    (["remember", "--importance", "nan"], 2, "ekko-mem: --importance must be from 0 to 1"),
    (["remember", "x", "--type", "opinion"], 2, "ekko-mem: unknown type 'opinion'"),
    (["remember", "--actor", "robot"], 2, "ekko-mem: unknown actor 'robot'"),
    # ekko-mem's own actors (a commit someone else made, a repair) are not a person's to give
    (["remember", "x", "--actor", "system"], 2,
     "ekko-mem: unknown actor 'system'; use one of: user, agent, extractor\n"),
    (["remember", "x", "--actor", "import"], 2, "ekko-mem: unknown actor 'import';"),
]


def through(argv, monkeypatch, capsys, *, fast: bool):
    """Exit code, the actions it would run (name, parameters) and stderr, through main()."""
    calls = []
    with monkeypatch.context() as patch:
        patch.setattr(cli, "invoke", lambda command, params: calls.append(
            (command.name, dict(params))))
        if not fast:
            patch.setattr(cli, "parse_fast", lambda argv: None)
        code = cli.main(list(argv))
    return code, calls, capsys.readouterr().err


def both(argv, monkeypatch, capsys):
    fast = through(argv, monkeypatch, capsys, fast=True)
    full = through(argv, monkeypatch, capsys, fast=False)
    assert fast == full, argv
    return fast


@pytest.mark.parametrize("argv", ACCEPTED, ids=" ".join)
def test_fast_and_typer_parse_the_same_parameters(argv, monkeypatch, capsys):
    assert cli.parse_fast(argv) is not None, "the fast parser should take this itself"
    code, calls, err = both(argv, monkeypatch, capsys)
    assert (code, err) == (0, "") and len(calls) == 1
    assert calls[0] == cli.parse_fast(argv)


@pytest.mark.parametrize("argv,code", HANDED_OVER, ids=[" ".join(a) for a, _ in HANDED_OVER])
def test_what_the_fast_parser_does_not_take_fails_or_runs_as_typer_says(argv, code, monkeypatch,
                                                                       capsys):
    assert cli.parse_fast(argv) is None
    got, calls, err = both(argv, monkeypatch, capsys)
    assert got == code, err
    if code:
        assert not calls and err.startswith("ekko-mem: ") and err.count("\n") == 1
    elif "-h" not in argv and "--help" not in argv:
        assert len(calls) == 1


@pytest.mark.parametrize("argv,code,line", REFUSED, ids=[" ".join(a) for a, _, _ in REFUSED])
def test_choices_and_ranges_are_usage_errors_on_both_paths(argv, code, line, monkeypatch,
                                                               capsys):
    assert cli.parse_fast(argv) is not None
    got, calls, err = both(argv, monkeypatch, capsys)
    assert (got, calls) == (code, [])
    assert err.startswith(line) and err.count("\n") == 1


def test_the_workspace_variable_is_left_to_where_the_workspace_is_found(monkeypatch, capsys):
    # Neither parser reads EKKO_WORKSPACE: env.Env.workspace_root does, for every caller.
    monkeypatch.setenv("EKKO_WORKSPACE", "/from/env")
    _, calls, _ = both(["log", "x"], monkeypatch, capsys)
    assert calls[0][1]["workspace"] is None
    _, calls, _ = both(["history", "-w", "/given"], monkeypatch, capsys)
    assert calls[0][1]["workspace"] == "/given"


def test_version_on_the_fast_path(capsys):
    assert cli.parse_fast(["--version"]) == cli.parse_fast(["-V"]) == ("version", {})
    assert cli.main(["-V"]) == 0 and capsys.readouterr().out.startswith("ekko-mem ")


# -- the Typer app is generated from the table -------------------------------------------------


def _click_commands():
    def visit(command, path, parent):
        ctx = click.Context(command, info_name=path[-1], parent=parent)
        yield " ".join(path[1:]), command, ctx
        for name in command.list_commands(ctx) if hasattr(command, "list_commands") else ():
            yield from visit(command.get_command(ctx, name), path + (name,), ctx)
    return {name: (command, ctx) for name, command, ctx in
            visit(typer.main.get_command(app), ("ekko-mem",), None) if name}


def test_every_command_and_option_comes_from_the_table():
    commands = _click_commands()
    assert set(commands) - {"hooks"} == set(COMMANDS)
    click_types = {"value": "str", "int": "int", "float": "float", "flag": "boolean",
                   "append": "str"}
    for name, spec in COMMANDS.items():
        command, ctx = commands[name]
        options = [p for p in command.get_params(ctx)
                   if p.param_type_name == "option" and p.name != "help"]
        assert [(p.name, tuple(p.opts), p.default, p.multiple, p.type.name)
                for p in options] == [(o.param, o.flags, o.default, o.kind == "append",
                                       click_types[o.kind]) for o in spec.options], name
        arguments = [p.name for p in command.get_params(ctx) if p.param_type_name == "argument"]
        assert arguments == ([spec.arg.param] if spec.arg else []), name
        assert command.help == inspect.cleandoc(spec.help), name


# -- the design's names, mapped once ------------------------------------------------------------


def _design(name: str, argv: list[str], monkeypatch) -> dict:
    """What the action receives under the command's design keyword."""
    seen = {}
    command = COMMANDS[name]
    monkeypatch.setattr(command, "run", lambda *args, **kwargs: seen.update(kwargs))
    cli.dispatch(*cli.parse_fast([name, *argv]))
    return seen[command.design]


def test_options_reach_the_actions_under_the_design_names(monkeypatch):
    assert _design("remember", ["--category", "a/b", "--value", "v", "--tag", "t", "--expires",
                                "+2h", "--source", "m"], monkeypatch) == {
        "scope": None, "domain": None, "categoryPath": "a/b", "type": None, "key": None,
        "valueJson": "v", "title": None, "content": None, "tags": ["t"], "entities": None,
        "confidence": None, "importance": None, "expiresAt": "+2h", "sourceMessageIds": ["m"]}
    query = _design("query", ["--category", "a", "--scope", "user", "--type", "fact",
                              "--include-expired"], monkeypatch)
    assert {k: v for k, v in query.items() if v} == {
        "categoryPathPrefix": "a", "scopes": ["user"], "types": ["fact"],
        "includeExpired": True, "limit": 20}


def test_query_and_forget_fields_are_the_models_fields():
    from ekko_mem.models import ForgetRequest, MemoryQuery
    query = {o.field for o in COMMANDS["query"].options if o.field}
    assert query <= set(MemoryQuery.model_fields)
    forget = {o.field for o in COMMANDS["forget"].options if o.field}
    assert forget - {"sourceMessageId", "workspace", "user"} <= set(ForgetRequest.model_fields)


def test_forget_selector_is_mapped_from_the_table():
    assert {o.flag: o.field for o in COMMANDS["forget"].options if o.field} == {
        "--scope": "scope", "--domain": "domain", "--category": "categoryPathPrefix",
        "--type": "type", "--key": "key", "--value": "valueJson",
        "--source-message": "sourceMessageId", "--all-workspace": "workspace",
        "--all-user": "user"}


def test_hints_name_flags_from_the_table():
    assert flag("repair") == "--repair" and flag("as_json") == "--json"
    with pytest.raises(KeyError):
        flag("no_such_option")


def test_the_fast_path_imports_no_typer_rich_or_pydantic(tmp_path):
    code = ("import sys; from ekko_mem import cli; cli.parse_fast(['query', '-n', '3', 'x']);"
            " heavy = {'typer', 'rich', 'pydantic', 'typing_extensions'} & set(sys.modules);"
            " print(*sorted(heavy)); sys.exit(bool(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, f"imported: {proc.stdout} {proc.stderr}"


# -- no flag is spelt twice ---------------------------------------------------------------------

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# Other programs' flags that happen to share a name with one of ours.
FOREIGN = {("ekko_mem/service/hooks.py", "--format"),  # git log --format
           ("ekko_mem/policy/sensitive_patterns.py", "--user")}  # curl --user name:password


def flag_literals() -> dict[str, set[str]]:
    """flag -> the modules whose string literals (messages, docstrings, f-string parts) name it."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for name in FLAG.findall(node.value):
                    found[name].add(module)
    return found


def test_each_flag_is_spelt_in_one_module():
    spelt = {(module, name) for name, modules in flag_literals().items() if len(modules) > 1
             for module in modules if module != TABLE}
    unexpected = sorted(spelt - FOREIGN)
    assert not unexpected, (
        "these modules spell a flag that options.py declares; name it with options.flag()"
        f" or reword: {unexpected}")


def test_every_flag_the_table_declares_is_found_by_the_scan():
    declared = {f for c in COMMANDS.values() for o in c.options for f in o.flags
                if f.startswith("--")}
    assert declared <= {name for name, modules in flag_literals().items() if TABLE in modules}
