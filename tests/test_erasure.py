"""`forget --hard` erases every copy: versions, index, audit payloads, context runs, summaries,
extraction state, source messages in this or another workspace; one transaction per db, a
rerun finishes an interrupted purge, and a reader that keeps old pages alive is reported."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest
from conftest import BIN, opened_at

SECRET = "zq-erase-7781-rotatekey"


def files_holding(folder, text=SECRET) -> list[str]:
    """Every file under `folder` whose raw bytes contain `text` (or its JSON form)."""
    forms = {text.encode(), json.dumps(text, ensure_ascii=False)[1:-1].encode()}
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                data = handle.read()
            if any(form in data for form in forms):
                found.append(name)
    return found


def node_id(result) -> str:
    assert result.code == 0, result
    return result.json()["nodeId"]


def seed_everywhere(cli):
    """The secret in a message, a summary, an extracted task, a remembered node with a newer
    version, a context run and the extraction watermark."""
    msg = cli("log", f"TODO: rotate the deploy credentials {SECRET}").out.strip()
    assert cli("summarize").code == 0
    old = node_id(cli("remember", "--scope", "workspace", "--source", msg, "--json",
                      f"deploy credentials are {SECRET}"))
    new = node_id(cli("remember", "--scope", "workspace", "--supersedes", old, "--json",
                      "--title", "deploy credentials were rotated", "--content",
                      "deploy credentials were rotated"))
    assert SECRET in cli("context", f"rotate {SECRET}").out
    return msg, old, new


def test_purge_leaves_no_byte_in_any_copy(cli, ws):
    msg, old, new = seed_everywhere(cli)
    folder = ws / ".ekko"
    assert files_holding(folder) == ["memory.db"]
    result = cli("forget", new, "--hard", "--purge-sources", "--yes", "--json", "--verify")
    assert result.code == 0, result
    out = result.json()
    assert {old, new} <= set(out["deletedIds"])
    assert msg in out["purgedMessageIds"]
    assert out["summariesDropped"]
    assert out["verify"]["clean"] is True and out["verify"]["textsChecked"] >= 2
    assert files_holding(folder) == []
    assert SECRET not in cli("context", "rotate the deploy credentials").out
    assert cli("explain").code == 0
    assert SECRET not in cli("audit", "--json").out


def test_purge_leaves_no_byte_of_an_entity_the_graph_read(cli, ws):
    """The graph has read the memory (edges, an entity, its names indexed): a hard erase
    takes every row, index entry and free page that held the name, in the db and its WAL;
    a copy taken before is the only place it stays."""
    folder = ws / ".ekko"
    node = node_id(cli("remember", "--scope", "workspace", "--json",
                       "我同事王小舟是前端，他生日是3月5日"))
    named = node_id(cli("remember", "--scope", "workspace", "--entity", "Quillon:project",
                        "--json", "we meet on Fridays"))
    assert cli("graph", "王小舟", "--json").json()["entity"]["aliases"] == ["我同事王小舟"]
    assert cli("graph", "Quillon", "--json").json()["entity"]["kind"] == "project"
    shutil.copy(folder / "memory.db", ws / "copy.db")
    for name in ("王小舟", "Quillon"):
        assert files_holding(folder, name) == ["memory.db"]
    for gone in (node, named):
        result = cli("forget", gone, "--hard", "--purge-sources", "--yes", "--json",
                     "--verify")
        assert result.code == 0, result
        assert result.json()["verify"]["clean"] is True
    for name in ("王小舟", "Quillon"):
        assert cli("graph", name).code == 5
        assert files_holding(folder, name) == []
    assert files_holding(ws, "王小舟") == ["copy.db"]


def test_an_entity_named_outright_goes_with_its_memory_before_the_graph_read_it(cli, ws):
    node = node_id(cli("remember", "--scope", "workspace", "--entity", "Quillon:project",
                       "--json", "we meet on Fridays"))
    assert files_holding(ws / ".ekko", "Quillon") == ["memory.db"]
    assert cli("forget", node, "--hard", "--purge-sources", "--yes").code == 0
    assert files_holding(ws / ".ekko", "Quillon") == []
    assert cli("graph", "Quillon").code == 5


def test_a_purge_is_not_undone_and_the_refusal_is_one_line(cli, ws):
    msg, old, new = seed_everywhere(cli)
    assert cli("forget", new, "--hard", "--purge-sources", "--yes").code == 0
    [purge] = [e for e in cli("audit", "--json", "-n", "1000").jsonl()
               if e["eventType"] == "purge"]
    before = cli("audit", "--json", "-n", "1000").out
    refused = cli("audit", "undo", purge["id"])
    assert refused.code == 4, refused
    assert refused.err == (f"ekko-mem: {purge['id']} (purge) cannot be undone; only create,"
                           " import, update, refresh, supersede, expire, soft delete and undo"
                           " can\n")
    assert cli("audit", "--json", "-n", "1000").out == before


def test_erasing_an_old_version_scrubs_the_successors_before(cli, ws):
    old = node_id(cli("remember", "--scope", "workspace", "--json", f"vpn code {SECRET}"))
    new = node_id(cli("remember", "--scope", "workspace", "--supersedes", old, "--json",
                      "--title", "vpn code changed", "--content", "vpn code changed"))
    assert cli("forget", old, "--hard", "--yes").code == 0
    events = [json.loads(line) for line in cli("audit", "--json").out.splitlines()]
    before = [e["payload"]["before"] for e in events
              if e.get("nodeId") == new and e["eventType"] == "supersede"]
    assert before == [{"id": old, "erased": True}]
    assert cli("show", new, "--json").json()["node"]["title"] == "vpn code changed"
    # Without --purge-sources the message it was remembered from stays, and only that.
    assert files_holding(ws / ".ekko") == ["memory.db"]
    assert SECRET in cli("history").out
    assert cli("forget", "--message", cli("history", "--json").jsonl()[0]["id"], "--hard",
               "--yes").code == 0
    assert files_holding(ws / ".ekko") == []


def test_forget_message_by_id_takes_what_was_derived(cli, ws):
    msg = cli("log", f"我的密钥提示是 {SECRET}，下周换掉").out.strip()
    assert cli("log", "别的消息").code == 0
    assert cli("summarize").code == 0
    assert cli("forget", "--message", msg, "--hard").code == 3
    assert cli("forget", "--message", msg).code == 4
    result = cli("forget", "--message", msg, "--hard", "--yes", "--verify")
    assert result.code == 0, result
    assert f"purged message {msg}" in result.out
    assert files_holding(ws / ".ekko") == []
    assert [m["content"] for m in cli("history", "--json").jsonl()] == ["别的消息"]
    assert cli("forget", "--message", "msg_nope", "--hard", "--yes").code == 5


def test_purging_a_user_memory_from_another_workspace_reaches_the_first(cli, ws, tmp_path):
    msg = cli("log", f"记住：我的门禁密码提示 {SECRET}").out.strip()
    mem = node_id(cli("remember", "--scope", "user", "--yes", "--source", msg, "--json",
                      f"门禁提示 {SECRET}"))
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", cwd=other).code == 0
    ws_ekko = ws / ".ekko"
    ws_ekko.chmod(0o777)  # the first workspace cannot be opened safely: say so, claim nothing
    try:
        stuck = cli("forget", mem, "--hard", "--purge-sources", "--yes", cwd=other)
    finally:
        ws_ekko.chmod(0o700)
    assert stuck.code == 6, stuck
    assert str(ws) in stuck.err
    assert f"run 'ekko-mem forget {mem} --hard --purge-sources --yes' there" in stuck.err
    pending = cli("doctor", cwd=other)
    assert pending.code == 1 and "FAIL  user      pending purges" in pending.out
    assert files_holding(ws_ekko) == ["memory.db"]
    done = cli("forget", mem, "--hard", "--purge-sources", "--yes", cwd=other)
    assert done.code == 0, done
    assert files_holding(ws_ekko) == []
    assert files_holding(tmp_path / "home") == []
    assert "FAIL  user      pending purges" not in cli("doctor", cwd=other).out


@pytest.mark.slow
def test_a_reader_keeping_old_pages_alive_is_reported_not_hidden(cli, ws):
    old = node_id(cli("remember", "--scope", "workspace", "--json", f"api hint {SECRET}"))
    reader = sqlite3.connect(ws / ".ekko" / "memory.db")
    reader.execute("begin")
    reader.execute("select count(*) from memory_nodes").fetchone()
    try:
        result = cli("forget", old, "--hard", "--purge-sources", "--yes")
        assert result.code == 6, result
        assert "keeps the old pages" in result.err
    finally:
        reader.rollback()
        reader.close()
    again = cli("forget", old, "--hard", "--purge-sources", "--yes")
    assert again.code == 0, again
    assert "already erased" in again.out
    assert files_holding(ws / ".ekko") == []


@pytest.mark.slow
def test_purge_killed_at_random_points_is_finished_by_a_rerun(cli, ws, tmp_path):
    if not os.path.isdir(f"/proc/{os.getpid()}/fd"):
        pytest.skip("needs /proc to see when the purge opens the db")
    lines = "\n".join(json.dumps({"content": f"filler {i} about builds, tests and deploys"})
                      for i in range(1000))  # enough log for the purge to take a while
    assert cli("log", "--jsonl", "-", input=lines).code == 0
    msg, old, new = seed_everywhere(cli)
    template = tmp_path / "template"
    shutil.copytree(ws / ".ekko", template)
    db = os.path.realpath(ws / ".ekko" / "memory.db")
    command = [str(BIN), "forget", new, "--hard", "--purge-sources", "--yes"]

    def start():
        """The installed command on a fresh copy, and when it opened the db."""
        shutil.rmtree(ws / ".ekko")
        shutil.copytree(template, ws / ".ekko")
        proc = subprocess.Popen(command, cwd=ws, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        return proc, opened_at(proc, db)

    # Whole runs: how long the purge works once it has the db open. The interpreter's
    # start-up comes before that and is never where a kill lands. The quickest of three:
    # a run slowed by other work on the machine would set a window most kills land after.
    works = []
    for _ in range(3):
        proc, began = start()
        assert proc.wait() == 0 and began is not None
        works.append(time.perf_counter() - began)
    work = min(works)
    rng = random.Random(1303)
    killed = runs = 0
    while killed < 30:  # at least 30 purges killed inside their work, each finished by a rerun
        runs += 1
        assert runs <= 120, f"only {killed} of {runs} runs were still going when killed"
        proc, began = start()
        if began is not None:
            time.sleep(rng.uniform(0, 1) * work)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
        proc.wait()
        rerun = cli(*command[1:])
        assert rerun.code == 0, rerun
        assert files_holding(ws / ".ekko") == [], rerun


def test_verify_fails_when_the_text_is_still_there(cli, ws):
    text = f"the staging vault hint is {SECRET}"
    first = node_id(cli("remember", "--scope", "workspace", "--type", "fact", "--json",
                        "--title", text, "--content", text))
    cli("remember", "--scope", "session", "--type", "fact", "--title", "again",
        "--content", f"note: {text}")
    result = cli("forget", first, "--hard", "--yes", "--verify")
    assert result.code == 1, result
    assert "the text is still in" in result.err and "live records say the same" in result.err


@pytest.mark.slow
def test_a_purge_stopped_between_the_dbs_is_finished_by_a_rerun(cli, ws, tmp_path):
    msg = cli("log", f"remember my locker code {SECRET}").out.strip()
    assert cli("remember", "--scope", "user", "--yes", "--source", msg, "--title",
               f"locker code {SECRET}").code == 0
    user_db = sqlite3.connect(tmp_path / "home" / "memory.db", isolation_level=None)
    user_db.execute("begin immediate")  # another process writing the user db
    try:
        stopped = cli("forget", "--message", msg, "--hard", "--yes")
    finally:
        user_db.execute("rollback")
        user_db.close()
    assert stopped.code == 6 and "locked" in stopped.err
    assert files_holding(ws / ".ekko") == []  # the workspace part is done
    assert files_holding(tmp_path / "home") == ["memory.db"]
    assert "FAIL  workspace pending purges" in cli("doctor").out
    again = cli("forget", "--message", msg, "--hard", "--yes")
    assert again.code == 0, again
    assert files_holding(tmp_path / "home") == []
    assert cli("doctor").code == 0


def test_a_refused_user_write_records_nothing(cli, ws, tmp_path):
    msg = cli("log", "plain words").out.strip()
    other = node_id(cli("remember", "--scope", "workspace", "--json", "a workspace fact"))
    refused = cli("remember", "--scope", "user", "--yes", "--source", msg, "--supersedes",
                  other, "--title", "moved to user scope")
    assert refused.code == 4, refused
    assert not (tmp_path / "home" / "memory.db").exists()
