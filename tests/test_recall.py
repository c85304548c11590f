"""Ranked recall end to end: `context` fills its budget by rank, `query` ranks partial matches,
`query --messages` searches the log; every question gets an answer, never an error."""
from __future__ import annotations

import json
import random

import pytest

from ekko_mem.policy.budget import estimate_tokens

NOW = "2026-05-20T12:00:00Z"
TOPICS = ["went hiking by the river with my sister", "finished the quarterly report at work",
          "watched a documentary about octopuses", "repaired the bicycle chain again",
          "planted tomatoes on the balcony", "read a novel about a lighthouse keeper",
          "called my grandmother in the evening", "practised the piano scales for an hour",
          "washed every dish after the party", "tried a new route to the office"]


def _day_jsonl(day: str, pairs: list[tuple[str, str]]) -> str:
    rows = []
    for i, (question, answer) in enumerate(pairs):
        for role, text in (("user", question), ("assistant", answer)):
            rows.append({"sessionId": f"chat-{day}", "role": role, "content": text,
                         "createdAt": f"{day}T20:{i:02d}:00Z"})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


@pytest.fixture
def diary(cli, ws):
    """150 question/answer pairs (300 turns) over fifty days; one holds the dish of May 5th."""
    rng = random.Random(7)
    lines = ""
    for offset in range(50):
        day = f"2026-{4 + (offset + 1) // 31:02d}-{(offset % 30) + 1:02d}"
        pairs = [(f"Today I {rng.choice(TOPICS)}.", f"That sounds nice; {rng.choice(TOPICS)}?")
                 for _ in range(3)]
        if day == "2026-05-05":
            pairs[1] = ("For dinner I made braised pork belly with star anise.",
                        "Braised pork belly takes patience; did the sauce thicken?")
        lines += _day_jsonl(day, pairs)
    assert cli("log", "--jsonl", "-", input=lines).code == 0
    return ws


def _context(cli, question, budget, **env):
    out = cli("context", question, "-s", "asking", "--budget", str(budget), "--json",
              env={"EKKO_NOW": NOW, **env})
    assert out.code == 0, out
    return out.json()


def test_the_answer_of_a_dated_question_is_inside_200_tokens(cli, diary):
    context = _context(cli, "What dish did I make on May 5th?", 200)
    assert "braised pork belly with star anise" in context["text"]
    assert estimate_tokens(context["text"]) <= 200
    answer = next(r for r in context["ranking"] if r["kind"] == "message")
    assert "time" in answer["via"]


def test_the_other_half_of_a_pair_comes_along(cli, diary):
    context = _context(cli, "star anise", 200)
    contents = [m["content"] for m in context["relevantMessages"]]
    assert contents[:2] == ["For dinner I made braised pork belly with star anise.",
                            "Braised pork belly takes patience; did the sauce thicken?"]
    assert [r["via"] for r in context["ranking"][:2]] == [["lexical"], ["pair"]]


def test_the_budget_is_filled_by_rank_not_by_a_count(cli, diary):
    small = _context(cli, "octopuses documentary river hiking", 200)
    large = _context(cli, "octopuses documentary river hiking", 2000)
    assert len(large["relevantMessages"]) > len(small["relevantMessages"]) > 3
    diag = large["diagnostics"]
    assert diag["candidatesConsidered"] >= diag["ranked"] >= diag["packed"]
    assert diag["packed"] == len(large["usedMemoryIds"])
    assert set(small["diagnostics"]["cutForBudget"]) & {m["id"] for m in
                                                       large["relevantMessages"]}


def test_chinese_question_finds_a_persona_sentence(cli, ws):
    cli("log", "我喜欢打篮球，周末常和同事一起打。", "-s", "day1")
    cli("log", "今天的天气很好，适合出去走走。", "-s", "day2")
    context = cli("context", "你喜欢什么运动？", "-s", "new", "--json").json()
    assert "我喜欢打篮球" in context["text"]
    result = cli("query", "你平时喜欢什么运动呀？", "--messages", "--json").json()
    assert result["messages"][0]["message"]["content"].startswith("我喜欢打篮球")


def test_a_long_question_matches_partially(cli, ws):
    cli("remember", "--type", "fact", "--title", "The staging database listens on port 5433")
    cli("remember", "--type", "fact", "--title", "Deploys happen on Fridays")
    question = ("I am setting up my laptop again after the reinstall and I cannot remember "
                "which port the staging database listens on, could you remind me please?")
    result = cli("query", question, "--json").json()
    titles = [n["title"] for n in result["relevant"]]
    assert titles and titles[0].startswith("The staging database")
    assert result["scores"][result["relevant"][0]["id"]] > 0
    context = cli("context", question, "--json").json()
    assert "port 5433" in context["text"]


def test_time_words_follow_ekko_now(cli, ws):
    lines = _day_jsonl("2026-05-18", [("I baked sourdough bread.", "Lovely crust?")]) + \
        _day_jsonl("2026-05-11", [("I baked a lemon cake.", "How did it turn out?")])
    cli("log", "--jsonl", "-", input=lines)
    yesterday = _context(cli, "what did I bake yesterday?", 200, EKKO_NOW="2026-05-19T09:00:00Z")
    last_week = _context(cli, "what did I bake last week?", 200, EKKO_NOW="2026-05-19T09:00:00Z")
    assert yesterday["relevantMessages"][0]["content"] == "I baked sourdough bread."
    assert last_week["relevantMessages"][0]["content"] == "I baked a lemon cake."
    cli("log", "--jsonl", "-", input=_day_jsonl("2026-05-10", [("我烤了一个柠檬蛋糕。", "好吃吗？")])
        + _day_jsonl("2026-05-16", [("我烤了一条全麦面包。", "真棒！")]))
    zh = _context(cli, "我9天前烤了什么？", 200, EKKO_NOW="2026-05-19T09:00:00Z")
    assert zh["relevantMessages"][0]["content"] == "我烤了一个柠檬蛋糕。"


def test_priority_order_holds_with_a_ranked_list(cli, ws):
    cli("log", "--jsonl", "-", "-s", "old", input="".join(
        json.dumps({"content": f"older note {i} about the zebra enclosure and its feeding"
                    " plan"}) + "\n" for i in range(30)))
    cli("remember", "--type", "constraint", "--title", "Never feed the zebras after six")
    for i in range(3):
        cli("log", f"current chat line {i}", "-s", "now")
    full = cli("context", "zebra feeding", "-s", "now", "--json").json()
    assert full["relevantMessages"] and len(full["recentMessages"]) == 3
    need = estimate_tokens(full["text"])
    tight = cli("context", "zebra feeding", "-s", "now", "--budget", str(need // 2),
                "--json").json()
    assert len(tight["recentMessages"]) == 3 and tight["constraints"]
    assert len(tight["relevantMessages"]) < len(full["relevantMessages"])


@pytest.mark.parametrize("question", ['"', "NEAR(香菜 5)", "a* OR b AND", "\x01\x02", "🙂🍜",
                                      "？？！！。。", "x" * 10_000, "香菜 " * 3_000,
                                      "title:secret", "drop table memory_messages; --"])
def test_any_question_gets_an_answer_never_an_error(cli, ws, question):
    cli("log", "用户不吃香菜 and hates cilantro", "-s", "a")
    for argv in (("context", question, "--json"), ("query", question, "--json"),
                 ("query", question, "--messages", "--json")):
        out = cli(*argv)
        assert out.code == 0 and out.err == "", (argv[0], out)
        json.loads(out.out)


def test_nul_bytes_in_a_question_from_stdin(cli, ws):
    cli("log", "用户不吃香菜", "-s", "a")
    out = cli("query", "-", "--messages", "--json", input=b"\x00\xe9\xa6\x99\xe8\x8f\x9c\x00")
    assert out.code == 0 and out.json()["messages"]


@pytest.mark.parametrize("argv, needle", [
    (("context", "x", "--budget", "99999999999999999999"),
     "--budget must be from 0 to 1,000,000, not 99999999999999999999"),
    (("query", "x", "--limit", "99999999999"), "--limit must be from 1 to 10,000, not 999"),
    (("query", "x", "--messages", "--limit", "99999999999"), "--limit must be from 1 to"),
    (("query", "x", "--messages", "--since", "someday maybe"), "'someday maybe' as a time"),
    (("query", "x", "--since", "yesterday"), "--messages"),
])
def test_huge_or_bad_bounds_are_one_clear_line(cli, ws, argv, needle):
    out = cli(*argv)
    assert out.code == 2 and out.out == ""
    assert len(out.err.strip().splitlines()) == 1 and needle in out.err


def test_query_messages_filters_by_session_and_since(cli, ws):
    lines = _day_jsonl("2026-05-01", [("The deploy key rotates monthly.", "Noted.")]) + \
        _day_jsonl("2026-05-15", [("The deploy key moved to the vault.", "Good.")])
    cli("log", "--jsonl", "-", input=lines)
    every = cli("query", "deploy key", "--messages", "--json").json()["messages"]
    assert [h["message"]["sessionId"] for h in every][:2] != []
    assert {h["message"]["sessionId"] for h in every} == {"chat-2026-05-01", "chat-2026-05-15"}
    one = cli("query", "deploy key", "--messages", "--session", "chat-2026-05-01",
              "--json").json()["messages"]
    assert {h["message"]["sessionId"] for h in one} == {"chat-2026-05-01"}
    recent = cli("query", "deploy key", "--messages", "--since", "2026-05-10",
                 "--json").json()["messages"]
    assert recent and all(h["message"]["createdAt"] >= "2026-05-10" for h in recent)
    assert all(h["score"] > 0 for h in every)
    scores = [h["score"] for h in every]
    assert scores == sorted(scores, reverse=True)
    human = cli("query", "deploy key", "--messages", env={"COLUMNS": "200"})
    assert human.code == 0 and "The deploy key moved to the vault." in human.out


def test_forgotten_and_superseded_memories_stay_out_of_the_ranked_list(cli, ws):
    old = cli("remember", "--type", "fact", "--title", "The zebra eats hay",
              "--json").jsonl()[0]["nodeId"]
    cli("remember", "--supersedes", old, "--title", "The zebra eats grass pellets",
        "--content", "The zebra eats grass pellets")
    gone = cli("remember", "--type", "fact", "--title", "The zebra likes apples",
               "--json").jsonl()[0]["nodeId"]
    cli("forget", gone)
    text = cli("context", "what does the zebra eat?").out
    assert "grass pellets" in text and "hay" not in text and "apples" not in text


def test_an_older_db_is_reindexed_in_the_new_tokens(tmp_path):
    """m005: rows indexed before stems and single characters are found by them afterwards."""
    from ekko_mem.store import apply_migrations, open_store
    from ekko_mem.store.connection import Connection, connect
    from ekko_mem.store.sqlite import SqliteMemoryStore
    path = tmp_path / "old.db"
    store = SqliteMemoryStore(Connection(connect(str(path)), str(path)))
    apply_migrations(store, upto=4)
    with store.db.atomic() as db:  # written as the version-4 tokenizer wrote it
        db.execute("insert into memory_messages (rowid, id, session_id, role, content,"
                   " created_at) values (1, 'msg_old1', 's', 'user', 'I love movies 香菜',"
                   " '2026-01-01T00:00:00.000Z')")
        db.execute("insert into memory_messages_fts (rowid, content) values"
                   " (1, 'i love movies 香菜 菜')")
    store.close()
    store = open_store(path)
    assert store.schema_version() >= 5
    assert [m["id"] for m in store.recall.message_hits(["movi"], {"movi": 1})] == ["msg_old1"]
    assert [m["id"] for m in store.recall.message_hits(["香"], {"香": 1})] == ["msg_old1"]
    assert store.health.fts_index_ok() and not any(
        v["missing"] or v["extra"] for v in store.health.fts_out_of_step().values())
    store.close()


def test_explain_says_how_the_ranked_list_was_built(cli, diary):
    context = _context(cli, "star anise pork", 120)
    explained = cli("explain", context["contextId"], "--json").json()
    found = explained["retrieval"]
    assert found["packed"] == context["diagnostics"]["packed"] > 0
    assert found["candidatesConsidered"] == context["diagnostics"]["candidatesConsidered"]
    assert found["cutForBudget"] == len(context["diagnostics"]["cutForBudget"])
    ranked = [i for i in explained["items"] if "via" in i]
    assert ranked and ranked[0]["via"] == ["lexical"] and ranked[1]["via"] == ["pair"]
    assert not any("score" in i for i in explained["items"])  # the design: no scores
    human = cli("explain", context["contextId"]).out
    assert "candidates considered" in human and "found by lexical" in human


def test_credentials_never_reach_a_context(cli, ws):
    key = "sk-abcdefghijklmnopqrstuvwxyz123456"
    # Kept as said (--yes): the context still masks what the log holds.
    cli("log", "--yes", f"my openai key for the deploy bot is {key}", "-s", "old")
    cli("log", "--yes", "数据库密码是 hunter2x9，部署时用", "-s", "old")
    cli("log", "--yes", f"and again {key} for the deploy bot", "-s", "now")
    for fmt in ("text", "markdown", "json"):
        out = cli("context", "deploy bot key", "-s", "now", "--format", fmt).out
        assert key not in out and "[secret removed]" in out, fmt
    zh = cli("context", "数据库密码", "-s", "new", "--json").out
    assert "hunter2x9" not in zh and "[secret removed]" in zh
    assert key not in cli("history", "-s", "old").out  # views mask too
    assert key in cli("history", "-s", "old", "--reveal").out  # the log keeps what was said
