"""Plain help without Typer, the hidden `__complete` command, and what the read commands import.

Help through a pipe (or with NO_COLOR) is plain text made from the option table and says what
Typer's rich help says; on a colour terminal rich help stays. `ekko-mem __complete KIND` lists
the values shell completion offers and never fails loudly.
"""
from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

import pytest

from ekko_mem import helptext
from ekko_mem.options import COMMANDS

FRAMES = re.compile("[\u2500-\u257f]")  # box drawing
PATHS = ["", *helptext.GROUPS, *COMMANDS]


def plain(text: str) -> bool:
    return not FRAMES.search(text) and "\x1b" not in text


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p or "ekko-mem")
def test_piped_help_is_plain_and_complete(cli, path):
    words = path.split()
    out = cli(*words, "--help")
    assert out.code == 0 and out.err == "", out
    assert plain(out.out)
    assert out.out.startswith(f"Usage: ekko-mem {path + ' ' if path else ''}[OPTIONS]")
    assert cli(*words, "-h").out == out.out
    if path in COMMANDS:
        command = COMMANDS[path]
        summary, _, examples = helptext.parse(command.help)
        assert " ".join(summary.split()) in " ".join(out.out.split())
        for opt in command.options:
            for flag in opt.flags:
                assert re.search(rf"(^|[\s,]){re.escape(flag)}\b", out.out), flag
            assert " ".join(opt.help.split()) in " ".join(out.out.split()), opt.flag
        if command.arg:
            label = command.arg.metavar or command.arg.param.upper()
            assert label in out.out and " ".join(command.arg.help.split()) in " ".join(
                out.out.split())
        for example in examples:
            assert f"  {example}\n" in out.out  # whole, on a line of its own
    for name, _ in helptext.children(path):
        assert re.search(rf"^  {re.escape(name)}\s", out.out, re.MULTILINE), name
    assert "__complete" not in out.out


def test_program_help_lists_every_top_level_command_and_the_exit_codes(cli):
    out = cli("--help").out
    tops = {name.split()[0] for name in COMMANDS} | set(helptext.GROUPS)
    listed = set(re.findall(r"^  ([a-z]+)\s", out.split("Commands:")[1], re.MULTILINE))
    assert listed == tops
    said = " ".join(out.split())
    assert "7 done but not printed, 130 interrupted" in said and "-V, --version" in out


def test_help_keeps_text_that_rich_would_read_as_markup(cli):
    assert "masked as [secret removed] by default" in " ".join(cli("show", "--help").out.split())


@pytest.mark.parametrize("argv", [[], ["hooks"]], ids=["ekko-mem", "hooks"])
def test_a_group_without_a_command_prints_its_help_and_exits_2(cli, argv):
    out = cli(*argv)
    assert out.code == 2 and out.out.startswith("Usage: ekko-mem") and plain(out.out)


@pytest.mark.parametrize("argv", [
    ["remember", "--scope", "user", "--help"], ["history", "-n", "3", "-h"],
    ["hooks", "run", "--rev", "HEAD", "--help"], ["audit", "undo", "--help"],
])
def test_help_after_other_options_is_still_help(cli, argv):
    out = cli(*argv)
    assert out.code == 0 and out.out.startswith("Usage: ") and plain(out.out)


@pytest.mark.parametrize("argv,line", [
    (["remember", "--bogus", "--help"], "ekko-mem: No such option: --bogus"),
    (["log", "--", "--help"], None),  # after --, --help is the text to log
])
def test_what_plain_help_does_not_read_is_left_to_typer(cli, argv, line):
    assert helptext.request(argv) is None
    out = cli(*argv)
    if line:
        assert out.code == 2 and out.err.startswith(line) and out.err.count("\n") == 1


class Terminal:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("environ,argv,tty,wanted", [
    ({}, ["--help"], False, True),
    ({}, ["--help"], True, False),
    ({"NO_COLOR": ""}, ["--help"], True, True),
    ({"TERM": "dumb"}, ["--help"], True, True),
    ({}, ["history", "--no-color", "--help"], True, True),
])
def test_plain_help_unless_stdout_is_a_colour_terminal(environ, argv, tty, wanted):
    assert helptext.plain_wanted(argv, environ, Terminal(tty)) is wanted


def test_a_colour_terminal_still_gets_rich_help(hermetic):
    from conftest import BIN
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    proc = subprocess.run([str(BIN), "remember", "--help"], stdout=follower,
                          stderr=subprocess.PIPE, env={**env, "TERM": "xterm", "COLUMNS": "100"},
                          timeout=60)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.returncode == 0
    assert FRAMES.search(b"".join(chunks).decode("utf-8", "replace"))


def _imported(argv: list[str], cwd) -> set[str]:
    """The heavy modules one run of main(argv) imports, in a fresh interpreter."""
    code = ("import sys; from ekko_mem import cli; code = cli.main(sys.argv[1:]);"
            " heavy = {'typer', 'rich', 'pydantic', 'click'} & {m.split('.')[0] for m in"
            " sys.modules}; sys.stderr.write('HEAVY ' + ' '.join(sorted(heavy)) + '\\n');"
            " sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stderr.rsplit("HEAVY ", 1)[1].split())


@pytest.fixture
def workspace(cli, hermetic):
    assert cli("init").code == 0
    made = cli("remember", "--scope", "workspace", "--type", "fact", "--title",
               "staging db port 5433", "--json").json()
    logged = cli("log", "-s", "chat", "你好 hello").out.strip()
    assert cli("context", "port", "-s", "chat").code == 0
    event = cli("audit", "--json").jsonl()[0]["id"]
    return {"node": made["nodeId"], "message": logged, "event": event}


@pytest.mark.parametrize("argv", [
    ["--help"], ["remember", "--help"], ["audit", "undo", "-h"], ["hooks", "--help"],
    ["history", "-s", "chat"], ["audit"], ["explain", "--last"], ["export"], ["show", "NODE"],
    ["show", "NODE", "--json"], ["__complete", "ids"], ["__complete", "keys"],
])
def test_help_and_reads_import_no_typer_rich_or_pydantic_when_piped(workspace, hermetic, argv):
    argv = [workspace["node"] if a == "NODE" else a for a in argv]
    assert _imported(argv, hermetic) == set()


# -- the hidden completion command --------------------------------------------------------


def lines(out) -> list[str]:
    assert out.code == 0 and out.err == "", out
    return out.out.splitlines()


def test_ids_of_each_kind_most_recent_first(cli, workspace):
    assert workspace["node"] in lines(cli("__complete", "nodes"))
    assert workspace["message"] in lines(cli("__complete", "messages"))
    assert workspace["event"] in lines(cli("__complete", "events"))
    every = lines(cli("__complete", "ids"))
    assert {workspace["node"], workspace["message"], workspace["event"]} <= set(every)
    assert len(every) == len(set(every))
    newer = cli("remember", "--scope", "workspace", "--type", "fact", "--title", "later",
                "--json").json()["nodeId"]
    assert lines(cli("__complete", "nodes"))[0] == newer


def test_a_prefix_narrows_the_list(cli, workspace):
    assert lines(cli("__complete", "ids", "mem_")) == lines(cli("__complete", "nodes"))
    assert lines(cli("__complete", "ids", workspace["event"][:-2])) == [workspace["event"]]
    assert lines(cli("__complete", "ids", "nothing_")) == []


def test_sessions_keys_categories_and_domains(cli, workspace):
    assert "chat" in lines(cli("__complete", "sessions"))
    cli("remember", "--scope", "workspace", "--domain", "engineering", "--category",
        "engineering/tooling", "--type", "fact", "--key", "lint_command", "--value", "ruff")
    keys = lines(cli("__complete", "keys"))
    assert {"avoid_ingredient", "allergy", "task_state", "lint_command"} <= set(keys)
    assert lines(cli("__complete", "keys", "avoid")) == ["avoid_ingredient"]
    categories = lines(cli("__complete", "categories"))
    assert {"生活技能/做饭", "engineering/tooling"} <= set(categories)
    assert lines(cli("__complete", "categories", "生活")) == ["生活技能/做饭", "生活技能/健康"]
    assert {"生活技能", "engineering"} <= set(lines(cli("__complete", "domains")))


def test_outside_a_workspace_it_is_silent(cli, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for kind in ("ids", "nodes", "messages", "events", "sessions"):
        assert lines(cli("__complete", kind, cwd=elsewhere)) == []
    assert "avoid_ingredient" in lines(cli("__complete", "keys", cwd=elsewhere))
    assert not (tmp_path / "home" / "memory.db").exists()  # asking wrote nothing


@pytest.mark.parametrize("argv", [["__complete"], ["__complete", "bogus"],
                                  ["__complete", "ids", "a", "b"]])
def test_anything_else_prints_nothing_and_exits_0(cli, workspace, argv):
    assert lines(cli(*argv)) == []


def test_a_broken_db_prints_nothing(cli, workspace, hermetic):
    db = hermetic / ".ekko" / "memory.db"
    db.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (hermetic / ".ekko" / f"memory.db{suffix}").unlink(missing_ok=True)
    assert lines(cli("__complete", "ids")) == []


def test_typer_completion_offers_the_same_values(cli_proc, workspace):
    out = cli_proc(env={"_EKKO_MEM_COMPLETE": "complete_bash", "COMP_WORDS": "ekko-mem show ",
                        "COMP_CWORD": "2"})
    assert workspace["node"] in out.out.split()


def test_the_hidden_command_is_in_no_help_page_or_list(cli):
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    assert "__complete" not in cli("--help").out
    assert not any("__complete" in page.read_text() for page in (root / "man").glob("*.1"))
    assert "__complete" not in helptext.GROUPS and "__complete" not in COMMANDS
    assert all("__complete" not in line for line in helptext.render("").splitlines())
