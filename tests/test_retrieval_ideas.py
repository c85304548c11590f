"""Ranked recall's general mechanics beyond term matching: the answer after a question when
roles do not pair, a session matching as a whole, and a date named without a year."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from ekko_mem.retrieval import Candidate, analyse, asks, rank, score
from ekko_mem.retrieval.timewords import find_window, read_window, years_back
from test_query_plans import _full_scans, _plans, store  # noqa: F401 (the fixture)

NOW = "2026-12-01T12:00:00Z"
CLOCK = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def _log(cli, rows) -> None:
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    assert cli("log", "--jsonl", "-", input=lines).code == 0


def _context(cli, question, budget=400):
    out = cli("context", question, "-s", "asking", "--budget", str(budget), "--json",
              env={"EKKO_NOW": NOW})
    assert out.code == 0, out
    return out.json()


# -- the answer after a question --------------------------------------------------------------
def _chat(session: str, day: str, lines: list[str]) -> list[dict]:
    """Two people talking, every line logged as the user's (no assistant to pair with)."""
    return [{"sessionId": session, "role": "user", "content": text,
             "createdAt": f"{day}T10:{i:02d}:00Z"} for i, text in enumerate(lines)]


def test_a_question_hit_brings_the_next_line_of_its_session(cli, ws):
    _log(cli, _chat("s1", "2026-11-02", [
        "Maria: Did you ever finish building the birdhouse?",
        "John: Yes! Teal, and it hangs by the kitchen window now.",
        "Maria: The birdhouse sounds lovely.",
        "John: Thanks, the cedar smelled great while sanding."]))
    context = _context(cli, "What colour is the birdhouse?")
    assert "Teal" in context["text"]
    ranking = [r["id"] for r in context["ranking"]]
    texts = {m["id"]: m["content"] for m in context["relevantMessages"]}
    answer = next(i for i in ranking if "Teal" in texts.get(i, ""))
    assert "pair" in context["ranking"][ranking.index(answer)]["via"]  # no word of its own
    # it follows a hit: the question it answers, or the line after it, which it comes before
    hit = ranking[ranking.index(answer) - 1]
    assert "lexical" in context["ranking"][ranking.index(hit)]["via"]


def test_a_best_hit_brings_the_line_before_it(cli, ws):
    _log(cli, _chat("s1", "2026-11-02", [
        "Maria: How was the trip?",
        "John: Last month I drove somewhere with mountains, the views were unreal.",
        "Maria: Did you go skiing in Banff while you were there?",
        "John: Sadly no, the lifts were closed."]))
    context = _context(cli, "When did John go to Banff?")
    ranking = [r["id"] for r in context["ranking"]]
    texts = {m["id"]: m["content"] for m in context["relevantMessages"]}
    before = next(i for i in ranking if "drove somewhere" in texts.get(i, ""))
    assert context["ranking"][ranking.index(before)]["via"] == ["pair"]
    assert "Banff" in texts[ranking[ranking.index(before) - 1]]


def test_a_pair_by_role_brings_no_line_before_it(cli, ws):
    lines = [{"sessionId": "s1", "role": role, "content": text,
              "createdAt": f"2026-11-02T10:{i:02d}:00Z"} for i, (role, text) in enumerate([
                  ("user", "I painted the fence green last weekend."),
                  ("assistant", "Green suits a garden fence."),
                  ("user", "Which birdhouse kit should I buy?"),
                  ("assistant", "A cedar birdhouse kit lasts longest.")])]
    _log(cli, lines)
    context = _context(cli, "birdhouse kit")
    assert "Which birdhouse" in context["text"] and "cedar" in context["text"]
    assert "fence" not in context["text"]


def test_a_hit_that_asks_nothing_brings_no_neighbour(cli, ws):
    _log(cli, _chat("s1", "2026-11-02", [
        "Maria: The birdhouse is finished and hung up.",
        "John: Unrelated, my cousin moved to Leeds last spring."]))
    context = _context(cli, "Is the birdhouse finished?")
    assert "Leeds" not in context["text"]


@pytest.mark.parametrize("text, expected", [("Where are you headed?", True),
                                            ("你去哪儿了？", True),
                                            ("I went to the park.", False)])
def test_asks(text, expected):
    assert asks(text) is expected


def test_next_messages_follow_the_session_index(store):  # noqa: F811 (the fixture)
    for sql, steps in _plans(store, lambda s: s.recall.next_messages(
            ["msg_plan00000000000004", "msg_plan00000000000007"])):
        assert not _full_scans(steps), (steps, sql)


def test_next_messages_is_the_next_of_the_same_session(store):  # noqa: F811
    found = store.recall.next_messages(["msg_plan00000000000004", "msg_plan00000000000039"])
    assert found["msg_plan00000000000004"]["id"] == "msg_plan00000000000007"  # s1: 4, 7, 10
    assert "msg_plan00000000000039" not in found  # the last of its session


# -- a session matching as a whole -------------------------------------------------------------
def _message(id_: str, session: str, text: str) -> Candidate:
    return Candidate("message", id_, text, "2026-01-01T00:00:00.000Z",
                     {"id": id_, "sessionId": session})


def test_a_hit_in_the_session_where_the_words_meet_outranks_a_stray_line():
    on_topic = [_message("a1", "trip", "we booked the ferry to the islands"),
                _message("a2", "trip", "the ferry leaves at dawn from the harbour pier"),
                _message("a3", "trip", "pack light for the islands")]
    stray = _message("b1", "other", "islands")  # shorter, so alone it scores higher
    candidates = [*on_topic, stray]
    query = analyse("When does the ferry to the islands leave?", CLOCK)
    score(query, candidates, {"ferri": 2, "island": 4, "leav": 1}, 100)
    ranked, _ = rank(candidates)
    assert ranked.index(on_topic[2]) < ranked.index(stray)


def test_one_session_keeps_its_order():
    texts = ["islands ferry", "islands", "ferry at dawn to the islands today"]
    alone = [_message(f"m{i}", "only", t) for i, t in enumerate(texts)]
    plain = [_message(f"m{i}", None, t) for i, t in enumerate(texts)]
    query = analyse("ferry islands", CLOCK)
    for group in (alone, plain):
        score(query, group, {"ferri": 2, "island": 4}, 100)
    assert [c.id for c in rank(alone)[0]] == [c.id for c in rank(plain)[0]]


# -- a date named without a year -------------------------------------------------------------
@pytest.mark.parametrize("text, yearless", [
    ("What did I cook on May 4th?", True), ("我5月4号做了什么？", True),
    ("the 4th of May", True), ("in April", True), ("5月份", True),
    ("on May 4th, 2023", False), ("2023年5月4日", False), ("in April 2023", False),
    ("yesterday", False), ("last week", False), ("三天前", False)])
def test_a_date_without_a_year_is_marked(text, yearless):
    found = read_window(text, CLOCK)
    assert found is not None and found[3] is yearless
    assert find_window(text, CLOCK) == found[:3]


def test_years_back_keeps_the_day_and_time():
    window = ("2026-05-03T22:00:00.000Z", "2026-05-04T22:00:00.000Z")
    assert years_back(window, 3) == ("2023-05-03T22:00:00.000Z", "2023-05-04T22:00:00.000Z")
    assert years_back(window, 0) == window


def test_a_yearless_date_means_the_latest_such_day_with_messages(cli, ws):
    dishes = ["rice", "soup", "stew", "risotto", "salad", "curry", "pasta", "bread", "tofu"]
    rows = [{"sessionId": f"d{day}", "role": "user", "content": f"I cooked {dish} today.",
             "createdAt": f"2023-05-{day:02d}T09:00:00Z"}
            for day, dish in enumerate(dishes, start=1)]
    rows.append({"sessionId": "now", "role": "user", "createdAt": "2026-05-05T09:00:00Z",
                 "content": "The printer jammed."})  # nothing on this year's May 4th
    _log(cli, rows)
    context = _context(cli, "What did I cook on May 4th?", budget=400)
    texts = {m["id"]: m["content"] for m in context["relevantMessages"]}
    first = context["ranking"][0]
    assert texts[first["id"]] == "I cooked risotto today." and "time" in first["via"]


def test_a_yearless_date_keeps_this_year_when_it_holds_messages(cli, ws):
    _log(cli, [{"sessionId": "a", "role": "user", "createdAt": "2025-05-04T09:00:00Z",
                "content": "I cooked a lemon risotto."},
               {"sessionId": "b", "role": "user", "createdAt": "2026-05-04T09:00:00Z",
                "content": "I cooked a mushroom soup."}])
    context = _context(cli, "What did I cook on May 4th?", budget=400)
    first = next(r for r in context["ranking"] if "time" in r["via"])
    texts = {m["id"]: m["content"] for m in context["relevantMessages"]}
    assert "mushroom" in texts[first["id"]]
    assert not any("time" in r["via"] and "risotto" in texts.get(r["id"], "")
                   for r in context["ranking"])
