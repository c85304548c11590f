"""Links that loop back on themselves, as an older ekko-mem or a crafted file could have
stored them: every walk along versions, parent summaries and parent messages ends, doctor
names each loop, and a repair breaks it.

The loops are written straight into the db: import refuses them now, which is the point.
Every command runs under a deadline, so a walk that never ends fails the test instead of
hanging the run.
"""
from __future__ import annotations

import sqlite3

import pytest

DEADLINE = 20  # seconds: a hang guard, never a speed check


def _raw(ws, sql: str, *params) -> None:
    raw = sqlite3.connect(ws / ".ekko" / "memory.db")
    raw.execute(sql, params)
    raw.commit()
    raw.close()


def _remember(cli, title: str) -> str:
    return cli("remember", "--type", "decision", "--title", title, "--json").jsonl()[0]["nodeId"]


def _summaries(cli, count: int) -> list[str]:
    """`count` summaries of session chat, each built on the one before."""
    made = []
    for n in range(count):
        cli("log", "-s", "chat", f"we talked about topic {n}")
        cli("log", "-s", "chat", f"and then about topic {n} again")
        made.append(cli("summarize", "-s", "chat", "--no-extract", "--json",
                        timeout=DEADLINE).json()["summary"]["id"])
    return made


def _checks(result) -> dict:
    return {c["check"]: c for c in result.json()["checks"] if c["db"] == "workspace"}


def _run(cli, *args):
    return cli(*args, timeout=DEADLINE)


@pytest.fixture
def self_superseding(cli, ws):
    node = _remember(cli, "use FTS5 for search")
    _raw(ws, "update memory_nodes set supersedes_id = id where id = ?", node)
    return node


@pytest.fixture
def mutual(cli, ws):
    """Two versions that supersede each other: the older one, superseded, names the newer
    and active one back."""
    old = _remember(cli, "deploy on Fridays")
    new = cli("remember", "--supersedes", old, "--type", "decision", "--title",
              "never deploy on Fridays", "--json").jsonl()[0]["nodeId"]
    _raw(ws, "update memory_nodes set supersedes_id = ? where id = ?", new, old)
    return old, new


def test_show_ends_on_a_version_that_supersedes_itself(cli, self_superseding):
    shown = _run(cli, "show", self_superseding, "--json")
    assert shown.code == 0, shown
    record = shown.json()
    assert [n["id"] for n in record["chain"]] == [self_superseding]
    assert record["chainCut"] == {"at": self_superseding, "why": "cycle"}
    human = _run(cli, "show", self_superseding)
    assert human.code == 0 and "use FTS5 for search" in human.out


def test_show_ends_on_two_versions_that_supersede_each_other(cli, mutual):
    old, new = mutual
    for node in (old, new):
        record = _run(cli, "show", node, "--json").json()
        assert sorted(n["id"] for n in record["chain"]) == sorted([old, new])
        assert record["chainCut"]["why"] == "cycle"
        human = _run(cli, "show", node)
        assert "versions stop at " in human.out and "leads back into its own chain" in human.out


def test_commands_that_read_a_looping_chain_end(cli, mutual):
    old, new = mutual
    for args in (("audit", "--node", old), ("query", "deploy", "--include-superseded"),
                 ("context", "deploy on Fridays"), ("export", "-o", "out.jsonl")):
        assert _run(cli, *args).code == 0, args
    erased = _run(cli, "forget", new, "--hard", "--yes", "--json")
    assert erased.code == 0, erased
    assert _run(cli, "show", old, "--json").code == 5  # the versions went with it


def test_show_ends_on_a_summary_that_is_its_own_parent(cli, ws):
    first, second = _summaries(cli, 2)
    _raw(ws, "update memory_summaries set parent_summary_id = id where id = ?", second)
    record = _run(cli, "show", second, "--json").json()
    assert record["parents"] == [] and record["chainCut"] == {"at": second, "why": "cycle"}
    assert _run(cli, "show", second).code == 0
    assert _run(cli, "summarize", "-s", "chat", "--chain").code == 0


def test_show_ends_on_two_summaries_that_are_each_others_parent(cli, ws):
    first, second = _summaries(cli, 2)
    _raw(ws, "update memory_summaries set parent_summary_id = ? where id = ?", second, first)
    record = _run(cli, "show", second, "--json").json()
    assert record["parents"] == [first] and record["chainCut"] == {"at": first, "why": "cycle"}
    assert _run(cli, "show", first, "--json").json()["parents"] == [second]
    cli("log", "-s", "chat", "one more thing about topic 9")
    assert _run(cli, "summarize", "-s", "chat", "--no-extract").code == 0
    assert _run(cli, "context", "topic", "-s", "chat").code == 0


def test_doctor_names_each_loop_and_repair_breaks_it(cli, ws, self_superseding, mutual):
    old, new = mutual
    first, second = _summaries(cli, 2)
    _raw(ws, "update memory_summaries set parent_summary_id = ? where id = ?", second, first)
    ask, answer = (cli("log", "-s", "chat", text, "--json").json()["id"]
                   for text in ("which port?", "port 8080"))
    _raw(ws, "update memory_messages set parent_id = ? where id = ?", answer, ask)
    _raw(ws, "update memory_messages set parent_id = ? where id = ?", ask, answer)

    found = _run(cli, "doctor", "--json")
    assert found.code == 1 and "doctor --repair" in found.err
    line = _checks(found)["cycles"]
    assert not line["ok"] and not line["fixed"]
    for words in (f"supersede cycle: {self_superseding} -> {self_superseding}",
                  f"supersede cycle: {old} -> {new} -> {old}",
                  f"summary parent cycle: {first} -> {second} -> {first}",
                  f"message parent cycle: {ask} -> {answer} -> {ask}"):
        assert words in line["detail"], line

    fixed = _run(cli, "doctor", "--repair", "--json")
    line = _checks(fixed)["cycles"]
    assert line["fixed"] and fixed.code == 0, fixed.out
    assert "cleared the link that closed each, of" in line["detail"]
    after = _run(cli, "doctor", "--json")
    assert after.code == 0 and after.json()["ok"] is True, after.out

    # The link cleared: the one that names an active version as superseded, else the oldest
    # record's, which names a record made after it.
    trail = [e for e in _run(cli, "audit", "--json").jsonl() if e["actor"] == "system"]
    assert sorted(e["reason"] for e in trail) == sorted([
        f"doctor: broke a supersede cycle; {self_superseding} no longer supersedes"
        f" {self_superseding}",
        f"doctor: broke a supersede cycle; {old} no longer supersedes {new}",
        f"doctor: broke a summary parent cycle; {first} no longer continues {second}",
        f"doctor: broke a message parent cycle; {ask} no longer answers {answer}"])
    assert {e.get("nodeId") for e in trail} == {self_superseding, old, None}
    shown = _run(cli, "show", new, "--json").json()
    assert [n["id"] for n in shown["chain"]] == [old, new] and "chainCut" not in shown
    assert _run(cli, "show", second, "--json").json()["parents"] == [first]
    assert _run(cli, "show", answer, "--json").json()["message"]["parentId"] == ask


def test_a_loop_in_the_user_db_is_found_there(cli, ws):
    node = cli("remember", "--scope", "user", "--type", "preference", "--title",
               "likes green tea", "--json").jsonl()[0]["nodeId"]
    raw = sqlite3.connect(ws.parent / "home" / "memory.db")
    raw.execute("update memory_nodes set supersedes_id = id where id = ?", (node,))
    raw.commit()
    raw.close()
    assert _run(cli, "show", node, "--json").json()["chainCut"]["why"] == "cycle"
    found = _run(cli, "doctor", "--json")
    user = {c["check"]: c for c in found.json()["checks"] if c["db"] == "user"}
    assert not user["cycles"]["ok"] and node in user["cycles"]["detail"]
    assert _run(cli, "doctor", "--repair").code == 0
    assert _run(cli, "doctor").code == 0


def test_long_threads_are_not_loops_and_a_loop_behind_a_long_tail_is(service):
    """One pass finds a loop however far down a thread it sits, and never calls a long
    thread of answers a loop."""
    from ekko_mem.store.health import LinkCycles
    store = service.store
    ids = [m["id"] for m in (service.log_message(f"message {n}", session="thread",
                                                 parent=None) for n in range(3))]
    links = LinkCycles(store.db)
    thread = [f"msg_t{n:05d}" for n in range(3000)]
    with store.db.atomic():
        store.messages.append_messages([
            {"id": mid, "sessionId": "thread", "parentId": thread[n - 1] if n else ids[0],
             "role": "user", "content": f"reply {n}", "metadata": None,
             "createdAt": f"2026-03-01T12:{n // 60 % 60:02d}:{n % 60:02d}Z"}
            for n, mid in enumerate(thread)])
    assert links.cycles("message parent") == []
    with store.db.atomic():
        store.db.execute("update memory_messages set parent_id = ? where id = ?",
                         (ids[2], ids[1]))
        store.db.execute("update memory_messages set parent_id = ? where id = ?",
                         (ids[1], ids[2]))
    assert links.cycles("message parent") == [[ids[1], ids[2]]]


def test_a_runaway_chain_is_cut_at_the_bound(service):
    store = service.store
    first = service.remember(None, fields={"type": "fact", "title": "version 0"})
    current = store.nodes.get_node(first[0]["nodeId"])
    for n in range(1, 6):
        current = store.nodes.get_node(service.remember(
            None, fields={"type": "fact", "title": f"version {n}"},
            supersedes=current["id"])[0]["nodeId"])
    chain, cut = store.nodes.version_chain(current, limit=3)
    assert [n["title"] for n in chain] == ["version 3", "version 4", "version 5"]
    assert cut == {"at": chain[0]["id"], "why": "limit"}
    chain, cut = store.nodes.version_chain(current)
    assert len(chain) == 6 and cut == {}
