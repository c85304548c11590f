"""init, log, history, migrate as a shell script runs them: argv, stdin, exit codes, streams
(in process; the closed-pipe and two-process cases start the installed binary)."""
from __future__ import annotations

import pytest

import json
import sqlite3
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor

from conftest import BIN


def test_init_twice_is_idempotent_and_gitignore_updated_once(cli, hermetic):
    subprocess.run(["git", "init", "-q"], cwd=hermetic, check=True)
    first = cli("init", "--json")
    assert first.code == 0 and first.json()["created"] is True
    assert first.json()["gitignore"] == "added"
    second = cli("init")
    assert second.code == 0 and "nothing changed" in second.out
    assert (hermetic / ".gitignore").read_text().count(".ekko/") == 1
    assert (hermetic / ".ekko" / "config.toml").exists()


def test_init_outside_git_leaves_no_gitignore(cli, hermetic):
    assert cli("init").code == 0
    assert not (hermetic / ".gitignore").exists()


def test_file_modes_are_private(cli, ws):
    cli("log", "hello")
    folder = ws / ".ekko"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("memory.db", "memory.db-wal", "config.toml"):
        if (folder / name).exists():
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name


def test_log_then_history_in_order(cli, ws):
    ids = [cli("log", f"第{i}条 message {i}", "-s", "chat").out.strip() for i in range(5)]
    assert all(i.startswith("msg_") for i in ids)
    rows = cli("history", "-s", "chat", "--json").jsonl()
    assert [r["id"] for r in rows] == ids
    assert rows[0]["content"] == "第0条 message 0" and rows[0]["role"] == "user"
    assert [r["id"] for r in cli("history", "-s", "chat", "-n", "2", "--json").jsonl()] == ids[3:]


def test_log_reads_stdin_and_metadata(cli, ws):
    out = cli("log", "--role", "tool", "-s", "git", "--meta", "sha=abc", "--json",
              input="commit subject\n")
    assert out.code == 0, out
    (msg,) = out.jsonl()
    assert msg["content"] == "commit subject" and msg["metadata"] == {"sha": "abc"}
    assert cli("log", "-", "-s", "git", input="dash text").code == 0
    assert cli("history", "-s", "git", "--json").jsonl()[-1]["content"] == "dash text"


def test_session_from_environment(cli, ws):
    cli("log", "from env", env={"EKKO_SESSION": "envsession"})
    assert cli("history", "-s", "envsession", "--json").jsonl()[0]["content"] == "from env"


def test_jsonl_batch_is_all_or_nothing_and_names_the_line(cli, ws):
    good = [{"content": "a", "sessionId": "imp", "createdAt": "2025-01-01T10:00:00Z",
             "id": "msg_imported1", "metadata": {"k": 1}},
            {"content": "b", "sessionId": "imp", "role": "assistant"}]
    bad = good + [{"content": "c", "role": "robot"}]
    text = "\n".join(json.dumps(x) for x in bad)
    result = cli("log", "--jsonl", "-", input=text)
    assert result.code == 4
    assert result.err.startswith("ekko-mem: line 3: unknown role 'robot'")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert cli("history", "-s", "imp", "--json").out == ""
    broken = cli("log", "--jsonl", "-", input='{"content": "x"}\n{not json\n')
    assert broken.code == 4 and "line 2" in broken.err
    ok = cli("log", "--jsonl", "-", "--json", input="\n".join(json.dumps(x) for x in good))
    assert ok.code == 0
    rows = cli("history", "-s", "imp", "--json").jsonl()
    assert rows[0]["id"] == "msg_imported1"
    assert rows[0]["createdAt"] == "2025-01-01T10:00:00.000Z"  # the export's time is kept
    assert rows[0]["metadata"] == {"k": 1}


@pytest.mark.slow
def test_two_processes_appending_500_each_lose_nothing(cli, ws):
    def burst(tag):
        lines = "\n".join(json.dumps({"content": f"{tag} {i}", "sessionId": tag})
                          for i in range(500))
        # 50 separate transactions of 10 per process, racing each other
        results = []
        for start in range(0, 500, 10):
            chunk = "\n".join(lines.splitlines()[start:start + 10])
            results.append(subprocess.run([str(BIN), "log", "--jsonl", "-"], input=chunk,
                                          text=True, capture_output=True, cwd=ws).returncode)
        return results

    with ThreadPoolExecutor(2) as pool:
        codes = [c for r in pool.map(burst, ["p1", "p2"]) for c in r]
    assert set(codes) == {0}
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    counts = dict(db.execute("select session_id, count(*) from memory_messages group by 1"))
    assert counts == {"p1": 500, "p2": 500}


def test_two_processes_with_single_logs(ws):
    procs = [subprocess.Popen(
        ["bash", "-c", f'for i in $(seq 1 40); do "{BIN}" log -s {tag} "m $i" >/dev/null'
                       ' || echo FAIL; done'], cwd=ws, stdout=subprocess.PIPE, text=True)
        for tag in ("a", "b")]
    outs = [p.communicate()[0] for p in procs]
    assert "FAIL" not in "".join(outs)
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    assert db.execute("select count(*) from memory_messages").fetchone()[0] == 80


def test_workspace_found_from_a_subfolder(cli, ws):
    sub = ws / "src" / "deep"
    sub.mkdir(parents=True)
    assert cli("log", "from below", "-s", "sub", cwd=sub).code == 0
    assert cli("history", "-s", "sub", "--json").jsonl()[0]["content"] == "from below"


def test_workspace_override_by_flag_and_env(cli, ws, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli("log", "x", "-w", str(ws), cwd=elsewhere).code == 0
    assert cli("log", "y", cwd=elsewhere, env={"EKKO_WORKSPACE": str(ws)}).code == 0
    assert len(cli("history", "--json").jsonl()) == 2


def test_no_workspace_is_exit_6_with_one_line(cli, tmp_path):
    lone = tmp_path / "lone"
    lone.mkdir()
    result = cli("log", "hello", cwd=lone)
    assert result.code == 6
    assert result.err.startswith("ekko-mem: no workspace memory found")
    assert "ekko-mem init" in result.err and result.err.count("\n") == 1


def test_user_home_is_not_mistaken_for_a_workspace(cli, tmp_path):
    home = tmp_path / "home"
    (home).mkdir(exist_ok=True)
    inside = tmp_path / "home_parent"
    inside.mkdir()
    (inside / ".ekko").mkdir()
    result = cli("log", "x", cwd=inside, env={"EKKO_HOME": str(inside / ".ekko")})
    assert result.code == 6


def test_bad_input_errors_and_exit_codes(cli, ws):
    cases = [
        (["log", "x", "--role", "robot"], 2, "ekko-mem: unknown role 'robot'; use one of:"),
        (["log", "x", "--meta", "novalue"], 2, "ekko-mem: metadata 'novalue' is not key=value"),
        (["log", "x", "--parent", "msg_nope"], 5, "ekko-mem: parent message msg_nope"),
        (["log", "--jsonl", "/no/such/file"], 2, "ekko-mem: cannot read /no/such/file"),
        (["history", "--limit", "zero"], 2, "ekko-mem: Invalid value for '--limit'"),
        (["history", "--limit", "0"], 2, "ekko-mem: --limit must be at least 1"),
        (["frobnicate"], 2, "ekko-mem: No such command 'frobnicate'"),
    ]
    for args, code, start in cases:
        result = cli(*args)
        assert result.code == code, (args, result)
        assert result.err.startswith(start), (args, result.err)
        assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert cli("history", "--json").out == ""  # nothing was written


def test_invalid_utf8_on_stdin_is_refused(cli, ws):
    result = cli("log", "-", input=b"\xff\xfe bad")
    assert result.code == 2 and "not valid UTF-8" in result.err


def test_newer_db_refused_with_exit_6_and_nothing_written(cli, ws):
    path = ws / ".ekko" / "memory.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    result = cli("log", "should not land")
    assert result.code == 6 and "newer than this ekko-mem" in result.err
    db = sqlite3.connect(path)
    assert db.execute("select count(*) from memory_messages").fetchone()[0] == 0


def test_migrate_status_and_dry_run(cli, ws):
    status = cli("migrate", "--status", "--json").json()
    assert status["version"] == status["latest"] and status["pending"] == []
    assert cli("migrate").out.strip().endswith("nothing to apply")
    path = ws / ".ekko" / "memory.db"
    db = sqlite3.connect(path)
    db.execute("drop table memory_vectors")
    db.execute("drop table memory_vector_blocks")
    db.execute("drop table memory_tombstones")
    db.execute("drop table memory_entities")
    db.execute("drop table memory_edges")
    db.execute("drop table memory_entity_names")
    db.execute("delete from memory_schema_migrations where version >= 8")
    db.execute("PRAGMA user_version = 7")
    db.commit()
    db.close()
    dry = cli("migrate", "--dry-run", "--json").json()
    assert dry["pending"] == [[8, "m008_create_vectors"], [9, "m009_slim_node_indexes"],
                              [10, "m010_slim_audit_node_index"],
                              [11, "m011_index_audit_copies_by_reference"],
                              [12, "m012_mark_audit_differences"],
                              [13, "m013_create_tombstones"],
                              [14, "m014_rank_index_holds_category"],
                              [15, "m015_create_graph"], [16, "m016_index_entity_names"]]
    assert dry["appliedNow"] == []
    applied = cli("migrate", "--json").json()
    assert applied["appliedNow"] == ["m008_create_vectors", "m009_slim_node_indexes",
                                     "m010_slim_audit_node_index",
                                     "m011_index_audit_copies_by_reference",
                                     "m012_mark_audit_differences",
                                     "m013_create_tombstones",
                                     "m014_rank_index_holds_category",
                                     "m015_create_graph", "m016_index_entity_names"]
    assert cli("migrate", "--json").json()["appliedNow"] == []


def test_fixed_clock(cli, ws):
    cli("log", "at noon", env={"EKKO_NOW": "2026-03-01T12:00:00Z"})
    assert cli("history", "--json").jsonl()[0]["createdAt"] == "2026-03-01T12:00:00.000Z"


def test_version_and_python_dash_m(cli, ws):
    assert cli("--version").out.startswith("ekko-mem ")
    proc = subprocess.run([str(BIN.with_name("python")), "-m", "ekko_mem", "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("ekko-mem ")


def test_broken_pipe_is_quiet(ws, cli):
    for i in range(50):
        cli("log", f"line {i}")
    proc = subprocess.run(f'"{BIN}" history -n 50 --json | head -1', shell=True, cwd=ws,
                          capture_output=True, text=True)
    assert proc.stderr == "" and proc.stdout.count("\n") == 1


def test_fast_path_and_typer_path_agree():
    from typer.main import get_command

    from ekko_mem.app import app
    from ekko_mem.cli import FAST_COMMANDS, defaults, parse_fast
    group = get_command(app)
    for name, spec in FAST_COMMANDS.items():
        command = group
        for word in name.split():  # `hooks run` is a command of the hooks group
            command = command.commands[word]
        typer_opts = {opt: p.name for p in command.params for opt in p.opts}
        for opt in spec.options:
            for flag in opt.flags:
                assert typer_opts.get(flag) == opt.param, (name, flag)
        has_text = any(p.param_type_name == "argument" for p in command.params)
        assert has_text == (spec.arg is not None), name
    log = defaults(FAST_COMMANDS["log"])
    assert parse_fast(["log", "-s", "x", "--meta", "a=b", "--meta", "c=d", "hi"]) == (
        "log", {**log, "session": "x", "meta": ["a=b", "c=d"], "text": "hi"})
    assert parse_fast(["history", "-n", "5"]) == (
        "history", {**defaults(FAST_COMMANDS["history"]), "limit": 5})
    assert parse_fast(["history", "-n", "five"]) is None  # Typer reports the usage error
    assert parse_fast(["history", "extra"]) is None
    assert parse_fast(["query", "--type", "fact", "--type", "task", "香菜"]) == (
        "query", {**defaults(FAST_COMMANDS["query"]), "type": ["fact", "task"], "text": "香菜"})
    assert parse_fast(["log", "--help"]) is None
    assert parse_fast(["log", "--jsonl", "-"]) == ("log", {**log, "jsonl": "-"})


def test_fast_and_full_paths_print_the_same(cli, ws):
    import subprocess
    cli("log", "same either way", "-s", "p")
    cli("remember", "--type", "fact", "--title", "same either way")
    for args in (["history", "-s", "p", "--json"], ["query", "same", "--json"],
                 ["context", "same", "-s", "p"]):
        fast = cli(*args)
        full = subprocess.run([str(BIN.with_name("python")), "-c",
                               "import sys; from ekko_mem.app import run; sys.exit(run(sys.argv[1:]))",
                               *args], capture_output=True, text=True, cwd=ws)
        strip = (lambda t: t) if args[0] != "context" else (lambda t: t)
        assert fast.code == full.returncode == 0
        if args[0] == "query":
            assert json.loads(fast.out)["relevant"][0]["id"] == json.loads(full.stdout)["relevant"][0]["id"]
        else:
            assert strip(fast.out) == strip(full.stdout), args


def test_history_lists_sessions(cli, ws):
    cli("log", "a", "-s", "one", env={"EKKO_NOW": "2026-01-01T00:00:00Z"})
    cli("log", "b", "-s", "two", env={"EKKO_NOW": "2026-01-02T00:00:00Z"})
    cli("log", "c", "-s", "two", env={"EKKO_NOW": "2026-01-03T00:00:00Z"})
    rows = cli("history", "--sessions", "--json").jsonl()
    assert [(r["sessionId"], r["messages"]) for r in rows] == [("two", 2), ("one", 1)]
    assert "two\t2" in cli("history", "--sessions").out
