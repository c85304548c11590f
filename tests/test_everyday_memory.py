"""Memory that behaves as people expect: health and diet heard as constraints, one memory per
statement, updates that merge, reasons that match the decision, habits and project facts from
plain chat, and bounded free text."""
from __future__ import annotations

import itertools

import pytest

from ekko_mem.policy.reasons import WHERE, explain


def _active(cli, *args: str) -> list[dict]:
    return cli("query", *args, "--json").json()["exact"]


@pytest.mark.parametrize(("text", "key", "value"), [
    ("我对花生过敏", "allergy", "花生"),
    ("I'm allergic to shellfish", "allergy", "shellfish"),
    ("我是素食主义者", "dietary_restriction", "素食"),
    ("I'm vegetarian", "dietary_restriction", "vegetarian"),
    ("我乳糖不耐受", "dietary_restriction", "乳糖不耐受"),
])
def test_health_and_diet_are_user_constraints_never_a_dislike(cli, ws, text, key, value):
    assert cli("remember", text).code == 0
    [node] = _active(cli, "--key", key)
    assert (node["scope"], node["type"], node["valueJson"]) == ("user", "constraint", value)
    assert node["importance"] >= 0.9
    assert _active(cli, "--key", "avoid_ingredient") == []


def test_a_diet_said_in_chat_reaches_user_scope_through_extraction(cli, ws):
    cli("log", "--role", "user", "我对花生过敏，也不吃肉")
    assert cli("extract").code == 0
    found = {n["key"]: (n["scope"], n["valueJson"]) for n in _active(cli, "--type",
                                                                     "constraint")}
    assert found == {"allergy": ("user", "花生"), "dietary_restriction": ("user", "素食")}


def test_remember_then_extract_makes_one_memory(cli, ws):
    cli("remember", "我不吃香菜")
    out = cli("extract", "--json")
    assert out.code == 0
    assert out.json()["results"] == []
    assert len(_active(cli, "--key", "avoid_ingredient")) == 1
    cli("summarize")
    assert len(_active(cli, "--key", "avoid_ingredient")) == 1


def test_extraction_still_reads_the_messages_no_memory_came_from(cli, ws):
    cli("remember", "我不吃香菜")
    cli("log", "--role", "user", "我不吃葱")
    cli("extract")
    assert sorted(n["valueJson"] for n in _active(cli, "--key", "avoid_ingredient")) == [
        "葱", "香菜"]


def test_a_change_of_one_flavour_keeps_the_others_and_says_so(cli, ws):
    cli("remember", "以后做饭少油少辣")
    out = cli("remember", "我现在喜欢吃辣了", "--json").jsonl()[0]
    assert out["operation"] == "superseded"
    [node] = _active(cli, "--key", "flavor_profile")
    assert node["valueJson"] == {"oil": "low", "spicy": "high"}
    assert "少油" in node["content"] and "吃辣" in node["content"]
    event = cli("audit", "--json", "--limit", "1").jsonl()[-1]
    assert event["eventType"] == "supersede"
    assert "oil: low (kept); spicy: low -> high" in event["payload"]["notes"]


def test_a_statement_that_replaces_everything_replaces_everything(cli, ws):
    cli("remember", "以后做饭少油少辣少盐")
    cli("remember", "以后口味完全听我的：重辣重油")
    [node] = _active(cli, "--key", "flavor_profile")
    assert node["valueJson"] == {"spicy": "high", "oil": "high"}


def test_english_flavour_change_merges_too(cli, ws):
    cli("remember", "From now on, less oil and not too spicy")
    cli("remember", "From now on, low salt")
    [node] = _active(cli, "--key", "flavor_profile")
    assert node["valueJson"] == {"oil": "low", "spicy": "low", "salt": "low"}
    assert node["content"] == "Prefer less oil, not too spicy, low salt when recommending recipes."


def test_the_reason_names_the_scope_the_memory_went_to(cli, ws):
    out = cli("remember", "我喜欢川菜", "--json").jsonl()[0]
    assert out["scope"] == "user"
    assert out["reason"].endswith("kept in user scope, for every workspace")
    assert "session" not in out["reason"]
    shown = cli("show", out["nodeId"], "--json").json()
    assert shown["events"][-1]["reason"] == out["reason"]


SCOPES = ("user", "workspace", "session")


@pytest.mark.parametrize(("scope", "actor", "explicit", "expires"),
                         list(itertools.product(SCOPES, ("user", "agent", "extractor"),
                                                (True, False), (None, "2026-03-01T23:59:59Z"))))
def test_every_reason_agrees_with_its_decision(scope, actor, explicit, expires):
    node = {"scope": scope, "explicit": explicit, "expiresAt": expires}
    reason = explain("a dietary preference", node, actor)
    assert reason.startswith("a dietary preference; ")
    assert WHERE[scope] in reason
    assert not any(WHERE[other] in reason for other in SCOPES if other != scope)
    assert ("until 2026-03-01 23:59 UTC" in reason) == bool(expires)
    said = {"user": "stated by the user"}.get(actor) or (
        "said explicitly" if explicit else "inferred, not said explicitly")
    assert said in reason


@pytest.mark.parametrize(("text", "path"), [
    ("我每天早上七点起床跑步", ["生活", "习惯"]),
    ("I usually cook on Sundays", ["life", "habits"]),
])
def test_habits_are_the_users_own(cli, ws, text, path):
    out = cli("remember", text, "--json").jsonl()[0]
    node = cli("show", out["nodeId"], "--json").json()["node"]
    assert (node["type"], node["scope"], node["categoryPath"]) == ("habit", "user", path)


def test_developer_chat_teaches_the_stack_and_the_commands(cli, ws):
    for text in ("We use Python 3.12 and PostgreSQL 16", "The test command is pytest -q",
                 "From now on, always run tests with pytest -q before committing"):
        cli("log", "--role", "user", text)
    assert cli("extract").code == 0
    facts = {n["key"]: n["valueJson"] for n in _active(cli, "--domain", "engineering")}
    assert facts == {"language": "Python 3.12", "database": "PostgreSQL 16",
                     "test_command": "pytest -q"}
    rules = _active(cli, "--type", "constraint", "--key", "test_command")
    assert [n["scope"] for n in rules] == ["workspace"]
    answer = cli("context", "What's the test command again?", "--budget", "300").out
    assert "pytest -q" in answer


def test_chinese_developer_chat_uses_the_same_keys(cli, ws):
    cli("log", "--role", "user", "我们用 FastAPI 和 Redis，测试命令是 pytest -q")
    cli("extract")
    facts = {n["key"]: n["valueJson"] for n in _active(cli, "--domain", "工程")}
    assert facts["framework"] == "FastAPI" and facts["test_command"] == "pytest -q"


def test_an_oversized_text_is_refused_with_a_pointer_to_the_log(cli, ws):
    out = cli("remember", "香菜" * 15000)
    assert out.code == 4
    assert "over the limit" in out.err and "ekko-mem log" in out.err
    assert [n for n in _active(cli) if n["scope"] != "global"] == []
