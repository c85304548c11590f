"""What `context` tells the model stays true and on topic: a message whose memory was taken
back stays out, and private memory (health, diet, anything tagged private) waits for a
question about its topic."""
from __future__ import annotations

import re

import pytest

from ekko_mem.policy import topics
from ekko_mem.policy.budget import estimate_tokens
from ekko_mem.store import open_store


def _context(cli, question, *args):
    out = cli("context", question, *args, "--format", "json")
    assert out.code == 0, out
    return out.json()


def _left_out(data) -> dict[str, str]:
    return {o["nodeId"]: o["reason"] for o in data["diagnostics"]["omitted"]}


def _id(out) -> dict:
    assert out.code == 0, out
    return out.jsonl()[0]


# -- sources follow their memory -------------------------------------------------------------

@pytest.fixture
def replaced(cli, ws):
    """The test command, said as pnpm, then replaced by bun: the single-valued key's old
    value is superseded."""
    old = _id(cli("remember", "the test command is pnpm test", "--json"))
    new = _id(cli("remember", "the test command is bun test", "--json"))
    assert new["operation"] == "superseded" and new["supersededId"] == old["nodeId"]
    return {"oldMessage": old["sourceMessageId"], "old": old["nodeId"], "new": new["nodeId"]}


@pytest.mark.parametrize("session", [[], ["-s", "chat"]])  # recent line, or an earlier one
def test_a_replaced_value_is_not_printed_beside_the_new_one(cli, replaced, session):
    data = _context(cli, "how do I run the tests?", *session)
    assert "bun test" in data["text"]
    assert "pnpm" not in data["text"]
    assert _left_out(data)[replaced["oldMessage"]] == "source_retired"
    entry = next(o for o in data["diagnostics"]["omitted"]
                 if o["nodeId"] == replaced["oldMessage"])
    assert entry["sourceOf"] == [replaced["old"]]
    # The log keeps what was said.
    history = cli("history", "--json").jsonl()
    assert replaced["oldMessage"] in [m["id"] for m in history]


def test_explain_says_why_a_message_was_left_out(cli, replaced):
    _context(cli, "how do I run the tests?", "-s", "chat")
    explained = cli("explain", "--last", "--json").json()
    assert explained["retrieval"]["leftOut"] == [
        {"id": replaced["oldMessage"], "reason": "source_retired", "kind": "message",
         "title": "the test command is pnpm test"}]
    human = cli("explain", "--last").out
    assert (f"- left out message {replaced['oldMessage']} (the memory taken from it was since"
            " replaced or forgotten): the test command is pnpm test") in human


@pytest.mark.parametrize("question, mark", [
    ("what test command did we use before?", "- (earlier) user: the test command is pnpm test"),
    ("我们以前用什么测试命令？pnpm 还是别的 test", "- （以前）用户：the test command is pnpm test")])
def test_a_question_about_the_past_gets_the_old_line_marked_earlier(cli, replaced, question,
                                                                     mark):
    data = _context(cli, question, "-s", "chat")
    assert mark in data["text"].splitlines()
    assert "source_retired" not in _left_out(data).values()


@pytest.fixture
def rule(cli, ws):
    """A standing rule taken from a chat line."""
    said = cli("log", "always indent with 4 spaces, never tabs", "-s", "chat").out.strip()
    cli("log", "ok", "-s", "chat", "--role", "assistant")
    node = _id(cli("remember", "--type", "constraint", "--title", "Indent with 4 spaces",
                   "--source", said, "-s", "chat", "--json"))["nodeId"]
    return {"message": said, "node": node}


def test_a_forgotten_rule_takes_its_chat_line_with_it(cli, rule):
    before = _context(cli, "how should I indent?", "-s", "chat")
    assert "Indent with 4 spaces" in before["text"]
    assert cli("forget", rule["node"], "--yes").code == 0
    after = _context(cli, "how should I indent?", "-s", "chat")
    assert "4 spaces" not in after["text"]
    assert rule["message"] not in [m["id"] for m in after["recentMessages"]]
    assert _left_out(after)[rule["message"]] == "source_retired"
    assert "4 spaces" in cli("history", "-s", "chat").out


def test_an_erased_rule_takes_its_chat_line_with_it(cli, rule):
    assert cli("forget", rule["node"], "--hard", "--yes").code == 0
    after = _context(cli, "how should I indent?", "-s", "chat")
    assert "4 spaces" not in after["text"]
    assert _left_out(after)[rule["message"]] == "source_retired"


def test_an_expired_memory_takes_its_message_with_it(cli, ws):
    made = _id(cli("remember", "we deploy on fridays this month", "--type", "decision",
                   "--expires", "2026-01-01T00:00:00Z", "--json",
                   env={"EKKO_NOW": "2025-12-31T12:00:00Z"}))
    data = _context(cli, "when do we deploy?")
    assert "fridays" not in data["text"]
    assert _left_out(data)[made["sourceMessageId"]] == "source_retired"


def test_a_memory_that_lost_a_conflict_here_takes_its_message_with_it(cli, ws):
    lost = _id(cli("remember", "the test command is pnpm test", "-s", "chat", "--json"))
    cli("remember", "--scope", "session", "-s", "chat", "--type", "constraint", "--domain",
        "engineering", "--key", "test_command", "--value", "bun test", "--title",
        "This session: run bun test")
    data = _context(cli, "what is the test command?", "-s", "chat")
    assert "bun test" in data["text"] and "pnpm" not in data["text"]
    assert _left_out(data)[lost["nodeId"]] == "conflict_lost"
    assert _left_out(data)[lost["sourceMessageId"]] == "source_retired"


def test_a_message_another_active_memory_came_from_stays(cli, ws):
    said = cli("log", "--role", "user", "我对花生过敏，也不吃肉").out.strip()
    assert cli("extract").code == 0
    allergy = cli("query", "--key", "allergy", "--json").json()["exact"][0]["id"]
    assert cli("forget", allergy, "--yes").code == 0
    data = _context(cli, "how do I run the tests?")
    assert said in [m["id"] for m in data["recentMessages"]]  # the diet still cites it
    assert said not in _left_out(data)


def test_a_message_no_memory_came_from_is_untouched(cli, replaced):
    chat = cli("log", "the test command is pnpm test, I think", "-s", "chat").out.strip()
    data = _context(cli, "how do I run the tests?", "-s", "chat")
    assert chat in [m["id"] for m in data["recentMessages"]]


def _event(node_id: str, kind: str, after) -> dict:
    return {"id": f"evt_{node_id[4:]}{kind}", "eventType": kind, "nodeId": node_id,
            "actor": "user", "reason": kind, "payload": {"before": None, "after": after},
            "createdAt": "2026-03-01T12:00:00.000Z"}


def test_an_erased_node_is_known_by_the_sources_its_hard_delete_names(tmp_path):
    store = open_store(tmp_path / ".ekko" / "memory.db", create=True)
    with store.db.atomic():
        store.nodes.add_event(_event("mem_01m8s00000aaaaaaaa", "create", None))
        store.nodes.add_event(_event("mem_01m8s00000aaaaaaaa", "delete",
                                     {"mode": "hard", "sourceMessageIds": ["msg_1"]}))
        store.nodes.add_event(_event("mem_01m8s00000bbbbbbbb", "delete", {"mode": "soft"}))
        store.nodes.add_event(_event("mem_01m8s00000cccccccc", "delete",
                                     {"mode": "hard", "sourceMessageIds": ["msg_3"]}))
        store.nodes.add_event(_event("mem_01m8t00000dddddddd", "delete",
                                     {"mode": "hard", "sourceMessageIds": ["msg_4"]}))
        store.nodes.insert_node({
            "id": "mem_01m8s00000cccccccc", "scope": "workspace", "domain": "general",
            "categoryPath": ["general"], "type": "fact", "title": "still here", "content": "x",
            "status": "active", "confidence": 0.9, "importance": 0.5,
            "createdAt": "2026-03-01T12:00:00.000Z", "updatedAt": "2026-03-01T12:00:00.000Z"})
    found = store.recall.erased_sources([("mem_01m8s", "mem_01m8t"), ("mem_01m8s", "mem_01m8t")])
    assert found == [{"id": "mem_01m8s00000aaaaaaaa", "status": "erased", "expiresAt": None,
                      "sourceMessageIds": ["msg_1"]}]
    store.close()


def test_the_reads_follow_indexes(tmp_path):
    store = open_store(tmp_path / ".ekko" / "memory.db", create=True)
    seen: list[str] = []
    store.db.raw.set_trace_callback(seen.append)
    windows = [("mem_01m8s", "mem_01m9s"), ("mem_01m9s", "mem_01mas")]
    try:
        store.recall.sources_of(windows, "mem_01m8s", ["msg_1"])
        store.recall.erased_sources(windows)
        store.recall.node_hits(["香菜"], {"香菜": 3}, {"statuses": ["active"]}, retired=[])
    finally:
        store.db.raw.set_trace_callback(None)
    plans = [(sql, [row[3] for row in store.db.raw.execute("explain query plan " + sql)])
             for sql in seen if sql.lstrip().lower().startswith(("select", "with"))]
    assert len(plans) >= 4
    for sql, steps in plans:
        scans = [s for s in steps if re.match(r"SCAN (memory_nodes|memory_audit_events|[nme])\b",
                                              s)]
        assert not scans, f"{steps}\n{sql}"
    store.close()


# -- private memory stays on topic -----------------------------------------------------------

@pytest.fixture
def diet(cli, ws):
    cli("remember", "我对花生过敏", "-s", "life")
    cli("remember", "I'm vegetarian", "-s", "life")
    for index in range(3):
        cli("log", f"the parser fails on empty input, case {index}")
    return ws


def _health_printed(text: str) -> set[str]:
    return {word for word in ("花生", "vegetarian") if word in text}


@pytest.mark.parametrize("question", ["how do I run the tests?", "重构一下这个函数",
                                      "how do health checks work in this service?"])
def test_a_question_about_something_else_gets_no_health_or_diet(cli, diet, question):
    data = _context(cli, question)
    assert _health_printed(data["text"]) == set()
    assert not data["constraints"]


@pytest.mark.parametrize("question", ["今晚吃什么？", "what should I cook tonight?",
                                      "我头疼吃什么药", "do I have any allergies?"])
def test_a_question_about_food_or_health_gets_them(cli, diet, question):
    data = _context(cli, question)
    assert _health_printed(data["text"]) == {"花生", "vegetarian"}


def test_a_plain_context_keeps_them(cli, diet):
    assert _health_printed(cli("context").out) == {"花生", "vegetarian"}


@pytest.mark.parametrize("question", ["今晚吃什么？", "do I have any allergies?"])
def test_a_tight_budget_still_keeps_the_allergy(cli, ws, question):
    allergy = _id(cli("remember", "我对花生过敏", "-s", "life", "--json"))["nodeId"]
    for index in range(3):
        cli("log", f"the parser fails on empty input, case {index}")
    roomy = _context(cli, question)
    assert len(roomy["recentMessages"]) == 3 and allergy in roomy["usedMemoryIds"]
    tight = _context(cli, question, "--budget", "40")
    assert estimate_tokens(tight["text"]) <= 40
    assert tight["usedMemoryIds"] == [allergy]  # before the recent lines
    assert not tight["recentMessages"]


@pytest.fixture
def private(cli, ws):
    return {
        "money": _id(cli("remember", "--scope", "user", "--type", "constraint", "--category",
                         "生活技能/理财", "--title", "Keep subscriptions under 50 a month",
                         "--tag", "private", "--json"))["nodeId"],
        "family": _id(cli("remember", "--scope", "user", "--type", "constraint", "--category",
                          "家庭", "--title", "Never mention the divorce to my mother",
                          "--tag", "隐私", "--json"))["nodeId"],
        "open": _id(cli("remember", "--scope", "user", "--type", "constraint", "--title",
                        "Answer in short sentences", "--json"))["nodeId"],
    }


def test_private_memory_waits_for_its_topic(cli, private):
    coding = _context(cli, "how do I run the tests?")
    assert coding["usedMemoryIds"] == [private["open"]]
    assert _left_out(coding)[private["money"]] == "off_topic"
    money = _context(cli, "what budget should I set for subscriptions?")
    assert private["money"] in money["usedMemoryIds"]
    assert private["family"] not in money["usedMemoryIds"]


def test_private_memory_under_no_topic_comes_only_when_the_words_find_it(cli, private):
    found = _context(cli, "what should I never say to my mother?")
    assert private["family"] in found["usedMemoryIds"]
    assert private["family"] not in _context(cli, "plan my week")["usedMemoryIds"]


def test_explain_names_private_memory_left_out(cli, private):
    _context(cli, "how do I run the tests?")
    left = cli("explain", "--last", "--json").json()["retrieval"]["leftOut"]
    assert {"id": private["money"], "reason": "off_topic", "kind": "node",
            "title": "Keep subscriptions under 50 a month"} in left


@pytest.mark.parametrize("text, opened", [
    ("今晚吃什么？", {"food"}), ("我头疼吃什么药", {"food", "health"}),
    ("what should I cook tonight?", {"food"}), ("my doctor said so", {"health"}),
    ("how do I run the tests?", set()), ("set the session cookie", set()),
    ("the healthcheck endpoint returns 500", set()), ("给这个 DOM 元素加样式", set()),
    ("how much should I budget for the trip?", {"money", "travel"})])
def test_topics_a_question_opens(text, opened):
    assert topics.opened_by(text) == opened


@pytest.mark.parametrize("node, gate", [
    ({"key": "allergy", "categoryPath": ["生活技能", "做饭"]}, ("food", "health")),
    ({"categoryPath": ["生活技能", "健康", "用药"]}, ("health", "food")),
    ({"categoryPath": ["生活技能", "做饭", "饮食限制"]}, ("food", "health")),
    ({"categoryPath": ["生活技能", "做饭", "饮食偏好"]}, None),
    ({"categoryPath": ["生活技能", "理财"], "tags": ["Private"]}, ("money",)),
    ({"categoryPath": ["家庭"], "tags": ["隐私"]}, ()),
    ({"categoryPath": ["工程"], "tags": ["backend"]}, None)])
def test_which_memory_is_gated(node, gate):
    assert topics.gate_of(node) == gate


@pytest.mark.parametrize("text, asks", [
    ("what did we use before?", True), ("我们以前用什么？", True), ("原来的端口是多少", True),
    ("what is the test command?", False), ("今晚吃什么", False)])
def test_questions_about_the_past(text, asks):
    assert topics.asks_history(text) is asks
