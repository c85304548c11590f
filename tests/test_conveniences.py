"""Everyday conveniences of the memory commands: forget by words, remember --dry-run,
undo twice and undo an undo, an expiry already past, --since in words, and query from a pipe."""
from __future__ import annotations

import os
import pty
import select
import sqlite3
import time

import pytest

from conftest import BIN

COOK = "生活技能/做饭/饮食偏好"
NOW = "2026-03-01T12:00:00Z"
TABLES = ("memory_nodes", "memory_messages", "memory_audit_events")


def _remember(cli, text, *extra, env=None):
    out = cli("remember", text, "--json", *extra, env=env)
    assert out.code == 0, out
    return out.jsonl()[0]["nodeId"]


def _status(cli, node_id):
    return cli("show", node_id, "--json").json()["node"]["status"]


def _counts(path) -> dict:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return {t: db.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}


# -- forget TEXT --------------------------------------------------------------------------------

@pytest.fixture
def wife(cli, ws):
    """Three memories: the one named, one sharing a word with it, one sharing a bigram."""
    return {"spicy": _remember(cli, "我老婆不吃辣"), "sweet": _remember(cli, "我老婆喜欢吃甜的"),
            "cilantro": _remember(cli, "以后做饭别给我推荐香菜")}


def test_forget_words_without_a_terminal_lists_the_match_and_needs_yes(cli, wife):
    out = cli("forget", "我老婆不吃辣")
    assert out.code == 3
    assert out.out.splitlines() == [f"{wife['spicy']}\tworkspace\tactive\t我老婆不吃辣"]
    assert out.err == ("ekko-mem: 1 memory matches '我老婆不吃辣'; rerun with --yes to go"
                       " ahead\n")
    assert _status(cli, wife["spicy"]) == "active"
    done = cli("forget", "我老婆不吃辣", "--yes", "--json")
    assert done.code == 0 and done.json()["deletedIds"] == [wife["spicy"]]
    assert [_status(cli, wife[k]) for k in ("spicy", "sweet", "cilantro")] == [
        "deleted", "active", "active"]


def test_forget_words_shared_by_several_lists_each_and_keeps_weak_hits_out(cli, wife):
    out = cli("forget", "老婆", "--json")
    assert out.code == 3 and out.json()["requiresConfirmation"] is True
    assert {c["id"] for c in out.json()["candidates"]} == {wife["spicy"], wife["sweet"]}
    english = cli("forget", "staging port")
    assert english.code == 5


def test_forget_words_that_match_nothing_exit_5_with_one_line(cli, wife):
    out = cli("forget", "火星人不吃土豆")
    assert out.code == 5 and out.out == ""
    assert out.err == ("ekko-mem: no active memory matches '火星人不吃土豆'; run 'ekko-mem"
                       " query' to see what is remembered\n")


def test_forget_words_keep_to_the_other_selectors(cli, wife):
    user = cli("forget", "香菜", "--scope", "workspace")
    assert user.code == 5
    found = cli("forget", "香菜", "--scope", "user", "--json")
    assert [c["id"] for c in found.json()["candidates"]] == [wife["cilantro"]]


def test_an_id_or_its_prefix_is_still_an_id(cli, wife):
    out = cli("forget", wife["sweet"][:14], "--json")
    assert out.code == 0 and out.json()["deletedIds"] == [wife["sweet"]]
    missing = cli("forget", "mem_nothere")
    assert missing.code == 5 and "no memory record with id 'mem_nothere'" in missing.err


def test_forget_words_hard_needs_yes_and_erases(cli, wife):
    refused = cli("forget", "我老婆不吃辣", "--hard")
    assert refused.code == 3 and wife["spicy"] in refused.out
    gone = cli("forget", "我老婆不吃辣", "--hard", "--yes", "--json")
    assert gone.code == 0 and gone.json()["mode"] == "hard"
    assert cli("show", wife["spicy"]).code == 5


def _at_terminal(args, answer: bytes, cwd) -> tuple[int, str]:
    """Run the installed command with a pseudo-terminal as stdin, stdout and stderr, and type
    `answer` when the question shows."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: nothing of pytest's may run here
        try:
            os.chdir(cwd)
            os.execv(str(BIN), [str(BIN), *args])
        finally:
            os._exit(127)
    seen, asked, deadline = b"", False, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if not asked and b"[y/N]" in seen:
                os.write(fd, answer)
                asked = True
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace")


@pytest.mark.parametrize("answer, code, status", [(b"n\n", 3, "active"), (b"y\n", 0, "deleted"),
                                                  ("是\n".encode(), 0, "deleted")])
def test_at_a_terminal_forget_asks_and_does_what_the_answer_says(cli, wife, ws, answer, code,
                                                                status):
    got, screen = _at_terminal(["forget", "老婆"], answer, ws)
    assert "forget these 2 memories? [y/N]" in screen
    assert wife["spicy"] in screen and "我老婆喜欢吃甜的" in screen
    assert got == code, screen
    if code:
        assert "nothing was forgotten: the answer was no" in screen
    assert {_status(cli, wife["spicy"]), _status(cli, wife["sweet"])} == {status}
    assert _status(cli, wife["cilantro"]) == "active"


# -- remember --dry-run -------------------------------------------------------------------------

def _snapshot(ws, home):
    dbs = [ws / ".ekko" / "memory.db", home / "memory.db"]
    return {str(p): (p.read_bytes(), _counts(p)) for p in dbs if p.exists()}


def test_a_dry_run_writes_nothing_and_makes_no_user_db(cli, ws, tmp_path):
    home = tmp_path / "home"
    before = _snapshot(ws, home)
    out = cli("remember", "以后做饭别给我推荐香菜，我喜欢少油少辣", "--dry-run", "--json")
    assert out.code == 0, out
    plans = out.jsonl()
    assert [(p["operation"], p["scope"], p["key"]) for p in plans] == [
        ("create", "user", "avoid_ingredient"), ("create", "user", "flavor_profile")]
    assert all(p["dryRun"] and p["title"] and p["reason"] and p["categoryPath"] for p in plans)
    assert not (home / "memory.db").exists() and _snapshot(ws, home) == before
    assert cli("history", "--json").out == ""  # the text was not logged either


def test_a_dry_run_outside_any_workspace_makes_no_user_db(cli, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = cli("remember", "我对花生过敏", "--dry-run", "--json", cwd=elsewhere)
    assert out.code == 0, out
    assert [(p["operation"], p["scope"], p["key"]) for p in out.jsonl()] == [
        ("create", "user", "allergy")]
    assert not (tmp_path / "home").exists() or not (tmp_path / "home" / "memory.db").exists()


def test_a_dry_run_says_what_the_real_remember_then_does(cli, ws, tmp_path):
    home = tmp_path / "home"
    cli("remember", "--key", "flavor_profile", "--value", "少辣", "--category", COOK,
        "--scope", "user", "--json")
    old = cli("query", "--key", "flavor_profile", "--json").json()["exact"][0]["id"]
    args = ("--key", "flavor_profile", "--value", "重辣", "--category", COOK, "--scope", "user")
    before = _snapshot(ws, home)
    (plan,) = cli("remember", *args, "--dry-run", "--json").jsonl()
    assert _snapshot(ws, home) == before
    assert plan["operation"] == "supersede" and plan["supersededId"] == old
    real = cli("remember", *args, "--json").jsonl()[0]
    assert real["operation"] == "superseded" and real["supersededId"] == old
    node = cli("show", real["nodeId"], "--json").json()["node"]
    assert {k: plan[k] for k in ("type", "scope", "key", "valueJson", "categoryPath", "title")} \
        == {k: node[k] for k in ("type", "scope", "key", "valueJson", "categoryPath", "title")}
    again = cli("remember", *args, "--dry-run")
    assert again.code == 0
    assert again.out.splitlines()[0] == f"would refresh {real['nodeId']}, the same user preference"
    assert "  key       flavor_profile = " in again.out
    assert again.err == "dry run: nothing was written\n"


def test_a_dry_run_of_a_refusal_ends_as_the_refusal_would(cli, ws, tmp_path):
    before = _snapshot(ws, tmp_path / "home")
    out = cli("remember", "--title", "x", "--scope", "global", "--dry-run", "--json")
    assert out.code == 4
    (plan,) = out.jsonl()
    assert plan["operation"] == "refused" and plan["accepted"] is False and plan["code"] == 4
    assert out.err.startswith("ekko-mem: global scope is read-only")
    human = cli("remember", "--title", "x", "--scope", "global", "--dry-run")
    assert human.out.startswith("would refuse: global scope is read-only")
    assert _snapshot(ws, tmp_path / "home") == before


# -- audit undo, twice and of an undo -----------------------------------------------------------

def _events(cli, node_id):
    return cli("audit", "--node", node_id, "--json").jsonl()


def test_a_second_undo_of_the_same_event_changes_nothing(cli, ws):
    nid = _remember(cli, "周五下午不开会")
    create = _events(cli, nid)[0]["id"]
    first = cli("audit", "undo", create, "--json")
    assert first.code == 0 and _status(cli, nid) == "deleted"
    undo_id = first.json()["eventId"]
    second = cli("audit", "undo", create, "--json")
    assert second.code == 0
    assert second.json() == {"undoneEventId": create, "eventId": undo_id, "changedIds": [],
                             "alreadyUndone": True}
    assert len(_events(cli, nid)) == 2 and _status(cli, nid) == "deleted"
    human = cli("audit", "undo", create[:16])
    assert human.out == f"{create} is already undone by {undo_id}; nothing changed\n"


def test_undoing_an_undo_makes_the_change_again(cli, ws):
    nid = _remember(cli, "周五下午不开会")
    forget = cli("forget", nid, "--json")
    assert forget.code == 0
    delete = _events(cli, nid)[0]["id"]
    undo = cli("audit", "undo", delete, "--json").json()["eventId"]
    assert _status(cli, nid) == "active"
    redo = cli("audit", "undo", undo, "--json")
    assert redo.code == 0 and redo.json()["changedIds"] == [nid]
    assert _status(cli, nid) == "deleted"
    assert cli("audit", "undo", undo).out.startswith(f"{undo} is already undone by")
    # The redo undone in turn: the first undo is in force again, so the delete is undone.
    cli("audit", "undo", redo.json()["eventId"])
    assert _status(cli, nid) == "active"
    assert cli("audit", "undo", delete, "--json").json()["alreadyUndone"] is True


def test_undo_of_an_undone_supersede_supersedes_again(cli, ws):
    args = ("--key", "flavor_profile", "--category", COOK, "--scope", "user")
    old = cli("remember", *args, "--value", "少辣", "--json").jsonl()[0]["nodeId"]
    new = cli("remember", *args, "--value", "重辣", "--json").jsonl()[0]["nodeId"]
    supersede = _events(cli, new)[0]["id"]
    undo = cli("audit", "undo", supersede, "--json").json()
    assert (_status(cli, old), _status(cli, new)) == ("active", "deleted")
    redo = cli("audit", "undo", undo["eventId"], "--json").json()
    assert sorted(redo["changedIds"]) == sorted([new, old])
    assert (_status(cli, old), _status(cli, new)) == ("superseded", "active")
    cli("audit", "undo", redo["eventId"])
    assert (_status(cli, old), _status(cli, new)) == ("active", "deleted")


# -- an expiry already past ---------------------------------------------------------------------

def test_an_expiry_in_the_past_needs_yes_and_then_is_expired_at_once(cli, ws):
    before = len(cli("audit", "--json").jsonl())
    out = cli("remember", "deploy freeze", "--expires", "2020-01-01", env={"EKKO_NOW": NOW})
    assert out.code == 3 and out.out == ""
    assert out.err == ("ekko-mem: the expiry '2020-01-01' (2020-01-01T00:00:00.000Z) has"
                       " passed: the memory would be expired at once; rerun with --yes to"
                       " store it anyway\n")
    assert len(cli("audit", "--json").jsonl()) == before
    stored = cli("remember", "deploy freeze", "--expires", "2020-01-01", "--yes", "--json",
                 env={"EKKO_NOW": NOW})
    assert stored.code == 0
    (answer,) = stored.jsonl()
    assert answer["notes"][-1].startswith("expired at once")
    node = cli("show", answer["nodeId"], "--json").json()["node"]
    assert node["expiresAt"] == "2020-01-01T00:00:00.000Z"
    found = cli("query", "deploy freeze", "--json", env={"EKKO_NOW": NOW}).json()
    assert found["relevant"] == [] and {"nodeId": answer["nodeId"], "reason": "expired"} \
        in found["omitted"]


def test_an_expiry_still_ahead_needs_no_yes(cli, ws):
    out = cli("remember", "deploy freeze", "--expires", "+2h", env={"EKKO_NOW": NOW})
    assert out.code == 0, out


# -- --since in words ---------------------------------------------------------------------------



@pytest.fixture
def dated(cli, ws, utc):
    old = _remember(cli, "the wiki moved to confluence",
                    env={"EKKO_NOW": "2026-02-20T12:00:00Z"})
    new = _remember(cli, "the staging db is on port 5433",
                    env={"EKKO_NOW": "2026-03-01T11:00:00Z"})
    return old, new


@pytest.mark.parametrize("since, both", [
    ("yesterday", False), ("昨天", False), ("today", False), ("今天", False), ("-2d", False),
    ("-3h", False), ("last week", True), ("上周", True), ("2026-02-01", True),
    ("2026-02-25T00:00:00Z", False)])
def test_audit_since_reads_words_as_query_does(cli, dated, since, both):
    old, new = dated
    out = cli("audit", "--since", since, "--json", env={"EKKO_NOW": NOW})
    assert out.code == 0, out
    nodes = {e["nodeId"] for e in out.jsonl()}
    assert nodes == ({old, new} if both else {new})


def test_a_since_that_is_no_time_is_one_usage_line(cli, ws):
    for argv in (("audit", "--since", "someday"), ("query", "x", "--messages", "--since",
                                                    "someday")):
        out = cli(*argv)
        assert out.code == 2 and out.out == ""
        assert out.err.startswith("ekko-mem: cannot read 'someday' as a time to start from;")
        assert len(out.err.splitlines()) == 1


def test_query_messages_since_counts_back_too(cli, ws):
    cli("log", "the deploy key rotates", env={"EKKO_NOW": "2026-02-20T12:00:00Z"})
    cli("log", "the deploy key moved", env={"EKKO_NOW": "2026-03-01T11:00:00Z"})
    out = cli("query", "deploy key", "--messages", "--since", "-2d", "--json",
              env={"EKKO_NOW": NOW})
    assert [h["message"]["content"] for h in out.json()["messages"]] == ["the deploy key moved"]


# -- query from a pipe --------------------------------------------------------------------------

def test_query_searches_for_piped_text(cli, wife):
    piped = cli("query", "--json", input="香菜\n").json()
    assert [n["id"] for n in piped["relevant"] if not n.get("weak")] == [wife["cilantro"]]
    assert piped["exact"] == []
    explicit = cli("query", "-", "--json", input="香菜\n").json()
    assert explicit == piped


def test_an_empty_pipe_is_a_query_without_text(cli, wife):
    empty = cli("query", "--json", input="").json()
    blank = cli("query", "--json", input="  \n").json()
    assert empty == blank and not [n for n in empty["relevant"] if not n.get("weak")]
    assert {wife["spicy"], wife["sweet"], wife["cilantro"]} <= {n["id"] for n in empty["exact"]}


def test_with_fields_to_match_a_pipe_is_left_unread(cli, wife):
    out = cli("query", "--type", "preference", "--json", input="我老婆\n").json()
    assert out["relevant"] == [] and [n["id"] for n in out["exact"]
                                      if n["scope"] != "global"] == [wife["cilantro"]]


def test_the_installed_command_reads_a_real_pipe(cli_proc, wife):
    out = cli_proc("query", "--json", input="我老婆不吃辣\n")
    assert out.code == 0, out
    assert [n["id"] for n in out.json()["relevant"]][0] == wife["spicy"]
