"""Unix conventions: usage errors are exit 2 everywhere, nothing a user types is an internal
error, editing never loses what was typed."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from ekko_mem.options import COMMANDS


def _bad_values():
    """Every option with choices or a range, on every command, with a value outside them."""
    for name, command in COMMANDS.items():
        for opt in command.options:
            if opt.choices:
                yield name, opt.flag, "bogus-choice"
            elif opt.range:
                low, high = opt.range
                yield name, opt.flag, str(low - 1 if low is not None else high + 1)


BAD = list(_bad_values())


@pytest.mark.parametrize(("command", "flag", "value"), BAD,
                         ids=[f"{c} {f} {v}" for c, f, v in BAD])
def test_every_bad_option_value_is_a_usage_error(cli, ws, command, flag, value):
    argv = [*command.split(), flag, value]
    if COMMANDS[command].arg is not None and command not in ("audit undo",):
        argv.insert(len(command.split()), "x")
    out = cli(*argv)
    assert out.code == 2, out
    assert out.out == "" and out.err.startswith("ekko-mem: ") and out.err.count("\n") == 1


def test_there_are_bad_values_for_many_commands():
    assert len({command for command, _, _ in BAD}) >= 8


@pytest.mark.parametrize("argv", [["remember", "caf\udce9"], ["log", "a\udcffb"]])
def test_invalid_utf8_in_an_argument_is_refused_by_writers(cli, ws, argv):
    out = cli(*argv)
    assert out.code == 2
    assert "is not valid UTF-8" in out.err
    assert not any("\ud800" <= ch <= "\udfff" for ch in out.err)
    assert cli("history", "--json").out == ""


def test_invalid_utf8_in_the_question_still_gets_a_context(cli, ws):
    cli("remember", "我不吃香菜")
    out = cli("context", "香菜\udcff怎么做")
    assert out.code == 0 and "香菜" in out.out


def test_a_lone_surrogate_in_json_lines_is_a_usage_error(cli, ws):
    out = cli("log", "--jsonl", "-", input='{"content": "\\ud800"}\n')
    assert out.code == 2 and "not valid Unicode" in out.err
    assert cli("history", "--json").out == ""


def test_deeply_nested_json_is_a_usage_error(cli, ws):
    deep = "[" * 5000 + "]" * 5000
    out = cli("remember", "--key", "flavor_profile", "--value", deep, "--title", "t")
    assert out.code == 2 and "nested too deeply" in out.err


def test_a_time_past_the_calendar_is_a_usage_error(cli, ws):
    out = cli("remember", "x", "--expires", "tomorrow",
              env={"EKKO_NOW": "9999-12-31T23:59:59Z"})
    assert out.code == 2 and "falls after the last date" in out.err


def test_a_missing_editor_is_one_line_with_a_hint(cli, ws):
    node = cli("remember", "--title", "t", "--json").jsonl()[0]["nodeId"]
    out = cli("edit", node, env={"VISUAL": "", "EDITOR": "/no/such/editor"})
    assert out.code == 2
    assert out.err == ("ekko-mem: no editor found: '/no/such/editor'; set VISUAL or EDITOR to"
                       " an editor on your PATH (EDITOR=nano)\n")


def test_a_failed_edit_keeps_what_was_typed(cli, ws, tmp_path):
    node = cli("remember", "--title", "t", "--json").jsonl()[0]["nodeId"]
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf \'{"title": "new", "type": "nonsense"\' > "$1"\n')
    editor.chmod(0o755)
    out = cli("edit", node, env={"VISUAL": str(editor)})
    assert out.code == 4
    kept = out.err.rsplit("your text is kept in ", 1)[1].strip()
    with open(kept, encoding="utf-8") as typed:
        assert typed.read().startswith('{"title": "new"')
    assert cli("show", node, "--json").json()["node"]["title"] == "t"


READS = [["history"], ["history", "--json"], ["query", "--json"], ["audit"], ["audit", "--json"],
         ["export"], ["config"], ["doctor"], ["--help"], ["remember", "--help"],
         ["context", "x"], ["schema", "node"]]


@pytest.mark.parametrize("argv", READS, ids=[" ".join(a) for a in READS])
def test_a_reader_that_leaves_is_not_an_error(ws, argv):
    # `ekko-mem export | head -c 10`: the pipe closes before the command writes.
    from conftest import BIN
    with subprocess.Popen([str(BIN), *argv], cwd=ws, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err
    assert err == b""


def _reading_stdin(pid: int) -> bool:
    """The command is blocked reading its stdin pipe: past start-up, inside our own code."""
    with open(f"/proc/{pid}/wchan") as wchan:
        return "pipe_read" in wchan.read()


@pytest.mark.skipif(not os.path.exists("/proc/self/wchan"), reason="reads /proc")
@pytest.mark.parametrize("argv", [["import", "-"], ["remember", "-"], ["log", "-"]])
def test_ctrl_c_exits_130_with_one_line_and_writes_nothing(cli, ws, argv):
    from conftest import BIN, default_sigint
    with subprocess.Popen([str(BIN), *argv], cwd=ws, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=default_sigint) as proc:
        proc.stdin.write('{"content": "half a line')
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not _reading_stdin(proc.pid):
            assert time.monotonic() < deadline, "the process never started"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err == "ekko-mem: interrupted; nothing half-written was kept\n"
    assert cli("history", "--json").out == ""


def test_a_process_ends_with_its_output_whole_and_its_dbs_closed(cli_proc, ws):
    """The binary ends without the interpreter's teardown (cli.entry): what it wrote is
    flushed first, well past a pipe's buffer, and every db it opened was closed before, so
    no write-ahead log is left beside either db."""
    import json
    lines = "".join(json.dumps({"role": "user", "content": f"第{i}条 少油少辣 " + "香菜" * 150})
                    + "\n" for i in range(300))
    assert cli_proc("log", "--jsonl", "-", "-q", input=lines).code == 0
    assert cli_proc("remember", "以后做饭别放香菜，我喜欢少油").code == 0
    shown = cli_proc("history", "-n", "300", "--json")
    assert shown.code == 0 and len(shown.out.encode()) > 200_000
    assert len(shown.out.splitlines()) == 300
    home = ws.parent / "home"
    assert (home / "memory.db").exists()
    left = [p.name for folder in (ws / ".ekko", home) for p in folder.iterdir()
            if p.name.endswith(("-wal", "-shm"))]
    assert left == []
