"""export/import round trips and config.toml."""
from __future__ import annotations

import json
import stat


def _populate(cli):
    cli("log", "以后做饭别给我推荐香菜", "-s", "chat")
    cli("log", "好的", "-s", "chat", "--role", "assistant")
    first = cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--type",
                "preference", "--key", "flavor_profile", "--value", "少油少辣", "--title",
                "少油少辣", "--json").jsonl()[0]["nodeId"]
    cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--type",
        "preference", "--key", "flavor_profile", "--value", '{"spicy": "high"}', "--title",
        "爱吃辣")
    cli("remember", "--type", "decision", "--title", "we use FTS5")
    gone = cli("remember", "--type", "fact", "--title", "temporary fact", "--json"
               ).jsonl()[0]["nodeId"]
    cli("forget", gone)
    cli("summarize", "-s", "chat")
    return first


def test_round_trip_is_lossless_and_idempotent(cli, ws, tmp_path):
    superseded = _populate(cli)
    exported = cli("export")
    assert exported.code == 0
    lines = [json.loads(line) for line in exported.out.splitlines()]
    kinds = {line["kind"] for line in lines}
    assert kinds == {"header", "message", "summary", "node", "event"}
    target = tmp_path / "other"
    target.mkdir()
    home = tmp_path / "other-home"
    env = {"EKKO_HOME": str(home)}
    assert cli("init", cwd=target, env=env).code == 0
    first = cli("import", "-", "--json", "--yes", input=exported.out, cwd=target, env=env)
    assert first.code == 0, first
    assert first.json()["imported"]["node"] == 5  # 4 remembered + 1 extracted
    again = cli("import", "-", "--json", "--yes", input=exported.out, cwd=target,
                env=env).json()
    assert sum(again["imported"].values()) == 0 and again["skipped"] == len(lines) - 1
    # The same records, plus one 'import' event per imported node.
    again_lines = [json.loads(line) for line in cli("export", cwd=target, env=env).out
                   .splitlines()]
    imports = [r for r in again_lines if r["kind"] == "event"
               and r["data"]["eventType"] == "import"]
    assert len(imports) == 5 and all(r["data"]["reason"] == "imported" for r in imports)
    assert [r for r in again_lines if r not in imports] == lines
    shown = cli("show", superseded, "--json", cwd=target, env=env).json()
    assert shown["node"]["status"] == "superseded" and len(shown["chain"]) == 2
    assert stat.S_IMODE((home / "memory.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_export_to_a_private_file_and_by_scope(cli, ws, tmp_path):
    _populate(cli)
    out = tmp_path / "backup.jsonl"
    assert cli("export", "-o", str(out)).code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    users = [json.loads(line) for line in cli("export", "--scope", "user").out.splitlines()]
    assert {line["data"]["scope"] for line in users if line["kind"] == "node"} == {"user"}
    assert not [line for line in users if line["kind"] == "message"]


def test_bad_line_imports_nothing(cli, ws):
    good = cli("export").out
    bad = good + '{"kind": "node", "data": {"id": "mem_x"}}\n'
    cli("log", "x")
    exported = cli("export").out
    result = cli("import", "-", input=exported + "not json\n")
    assert result.code == 4 and "line" in result.err
    broken = cli("import", "-", input=bad)
    assert broken.code == 4 and broken.err.startswith(f"ekko-mem: line {len(good.splitlines()) + 1}: node")


def test_untrusted_import_cannot_write_global_or_unconfirmed_user_scope(cli, ws):
    node = {"id": "mem_evil", "scope": "global", "domain": "x", "categoryPath": ["x"],
            "type": "fact", "title": "evil", "content": "evil", "status": "active",
            "confidence": 1, "importance": 1, "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z"}
    line = json.dumps({"kind": "node", "data": node})
    result = cli("import", "-", input=line)
    assert result.code == 4 and "global scope cannot be imported" in result.err
    sneaky = json.dumps({"kind": "node", "data": {**node, "scope": "user", "explicit": False}})
    asked = cli("import", "-", input=sneaky)
    assert asked.code == 3
    assert cli("query", "evil", "--json").json()["relevant"] == []
    secret = json.dumps({"kind": "node", "data": {**node, "id": "mem_s", "scope": "workspace",
                                                  "title": "token sk-abcdefghijklmnopqrstuv12"}})
    assert cli("import", "-", input=secret).code == 3
    assert cli("import", "-", "--yes", input=secret).code == 0


def test_config_shows_effective_settings_and_sources(cli, ws, hermetic, tmp_path):
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text('[context]\nbudget = 500\ncounter = "estimate"\n')
    (ws / ".ekko" / "config.toml").write_text('[context]\nbudget = 300\n[session]\ndefault = "w"\n')
    settings = {s["key"]: s for s in cli("config", "--json").json()}
    assert settings["context.budget"]["value"] == 300
    assert settings["context.budget"]["source"].endswith(".ekko/config.toml")
    assert settings["context.counter"]["source"].endswith("home/config.toml")
    assert settings["context.recent"]["source"] == "default"
    cli("log", "hello")
    assert cli("history", "-s", "w", "--json").jsonl()[0]["content"] == "hello"


def test_invalid_config_stops_commands_with_file_line_and_key(cli, ws):
    (ws / ".ekko" / "config.toml").write_text('[context]\nbudget = 300\nbugdet = 3\n')
    result = cli("log", "hello")
    assert result.code == 4
    assert ".ekko/config.toml, line 3: unknown setting 'context.bugdet'" in result.err
    (ws / ".ekko" / "config.toml").write_text('[context\n')
    assert cli("config").code == 4
    (ws / ".ekko" / "config.toml").write_text('[sensitive]\npolicy = "maybe"\n')
    bad = cli("remember", "x")
    assert bad.code == 4 and "must be one of confirm, refuse, allow" in bad.err
    assert bad.err.endswith("; run 'ekko-mem config set sensitive.policy confirm'\n")


def test_sensitive_policy_refuse(cli, ws):
    (ws / ".ekko" / "config.toml").write_text('[sensitive]\npolicy = "refuse"\n')
    out = cli("remember", "--title", "password: hunter2hunter2", "--scope", "workspace",
              "--yes")
    assert out.code == 4 and "hunter2" not in out.err


def test_import_killed_at_random_points_is_all_or_nothing(cli, ws, tmp_path):
    import os
    import random
    import shutil
    import signal
    import sqlite3
    import subprocess
    import time

    from conftest import BIN, opened_at
    lines = [json.dumps({"kind": "header", "format": "ekko-mem-export", "version": 1})]
    lines += [json.dumps({"kind": "message", "data": {
        "id": f"msg_bulk{i:06d}", "sessionId": "bulk", "role": "user",
        "content": f"第{i}条 bulk message {i}", "createdAt": "2026-01-01T00:00:00.000Z"}})
        for i in range(3000)]
    source = tmp_path / "bulk.jsonl"
    source.write_text("\n".join(lines))
    command = [str(BIN), "import", str(source), "-q"]
    # One whole import into a copy: how long it works once it has the db open. The kills below
    # land in that work, never in the interpreter's start-up.
    scratch = tmp_path / "scratch"
    shutil.copytree(ws, scratch)
    whole = subprocess.Popen(command, cwd=scratch)
    began = opened_at(whole, os.path.realpath(scratch / ".ekko" / "memory.db"))
    assert whole.wait() == 0 and began is not None
    work = time.perf_counter() - began
    db = ws / ".ekko" / "memory.db"
    rng = random.Random(7)
    for _ in range(8):
        proc = subprocess.Popen(command, cwd=ws)
        if opened_at(proc, os.path.realpath(db)) is not None:
            time.sleep(rng.uniform(0, 1) * work)
        proc.send_signal(signal.SIGKILL)  # nothing to kill if it has finished
        proc.wait()
        raw = sqlite3.connect(db)
        count = raw.execute("select count(*) from memory_messages").fetchone()[0]
        indexed = raw.execute("select count(*) from memory_messages_fts_docsize").fetchone()[0]
        raw.close()
        assert count in (0, 3000) and indexed == count, count
        if count:
            break
    # A killed run that got its commit in leaves nothing to import; otherwise all of it is new.
    again = cli("import", str(source), "--json").json()["imported"]["message"]
    assert again == (0 if count else 3000)
    assert cli("doctor", "--json").json()["ok"] is True
