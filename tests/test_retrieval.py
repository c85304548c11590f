"""retrieval/: tokens, query analysis, time words and scoring, as pure functions."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ekko_mem.retrieval import Candidate, analyse, rank, score, with_partners
from ekko_mem.retrieval.timewords import find_window
from ekko_mem.tokens import index_text, stem

NOW = datetime(2023, 5, 10, 12, 0, tzinfo=timezone.utc)  # a Wednesday


@pytest.mark.parametrize("words", [("movie", "movies"), ("like", "liked", "liking"),
                                   ("run", "running"), ("study", "studies", "studied"),
                                   ("paint", "painting", "paintings"), ("stop", "stopped"),
                                   ("hike", "hiking", "hikes")])
def test_inflections_meet(words):
    assert len({stem(w) for w in words}) == 1


@pytest.mark.parametrize("word", ["this", "bus", "sing", "bring", "red", "2023", "香菜", "café"])
def test_short_odd_and_foreign_words_are_left_alone(word):
    assert stem(word) == word


def test_index_keeps_bigrams_adjacent_then_single_characters():
    assert index_text("喜欢打篮球") == "喜欢 欢打 打篮 篮球 喜 欢 打 篮 球"


def test_stop_words_and_function_characters_go_unless_nothing_else_is_left():
    assert analyse("What sports do you like to play?", NOW).terms == ["sport", "lik", "plai"]
    zh = analyse("你平时喜欢什么运动呀？", NOW).terms
    assert "运动" in zh and "喜欢" in zh and "什么" not in zh and "你" not in zh
    assert analyse("what is it?", NOW).terms  # all stop words: they are all there is


def test_operators_and_junk_are_only_words():
    for text in ['"', "NEAR(a b)", "title:香菜", "a* OR b", "\x00", "🙂🙂", "？！。,.;", ""]:
        query = analyse(text, NOW)
        assert all(t.isalnum() for t in query.terms), (text, query.terms)


def test_a_huge_question_is_bounded():
    query = analyse("词语" * 20_000 + " word" * 5_000, NOW)
    assert 0 < len(query.terms) <= 64


@pytest.mark.parametrize("text, start, end", [
    ("What dish did I make on May 5th?", "2023-05-05", "2023-05-06"),
    ("我在5月4号做了什么菜？", "2023-05-04", "2023-05-05"),
    ("2023年4月27日的事", "2023-04-27", "2023-04-28"),
    ("what did I do yesterday", "2023-05-09", "2023-05-10"),
    ("前天我说了什么", "2023-05-08", "2023-05-09"),
    ("last week", "2023-05-01", "2023-05-08"),
    ("上周", "2023-05-01", "2023-05-08"),
    ("上周三我们聊了什么", "2023-05-03", "2023-05-04"),
    ("in April", "2023-04-01", "2023-05-01"),
    ("in May 2022", "2022-05-01", "2022-06-01"),
    ("去年", "2022-01-01", "2023-01-01"),
    ("the 4th of May", "2023-05-04", "2023-05-05"),
    ("December 25th", "2022-12-25", "2022-12-26"),  # no year: the latest one not after today
    ("3 days ago", "2023-05-06", "2023-05-09"),
    ("三天前", "2023-05-06", "2023-05-09"),
    ("五月四号我做了什么", "2023-05-04", "2023-05-05"),
    ("四月二十七日", "2023-04-27", "2023-04-28"),
    ("十二月", "2022-12-01", "2023-01-01"),
    ("last weekend", "2023-05-06", "2023-05-08"),
    ("上周末我去了哪里", "2023-05-06", "2023-05-08"),
])
def test_time_words_become_local_day_windows(text, start, end, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    window, spans, _ = find_window(text, NOW)
    assert window == (f"{start}T00:00:00.000Z", f"{end}T00:00:00.000Z")
    assert spans


@pytest.mark.parametrize("text", ["I may go", "5 apples", "早上好", "what is 2 + 2",
                                  "May I ask?", "a sun hat"])
def test_ordinary_words_are_not_time(text):
    assert find_window(text, NOW) is None


@pytest.mark.parametrize("text, precise", [
    ("on May 4th", True), ("yesterday", True), ("上周三", True), ("3 days ago", True),
    ("last Monday", True), ("today", False), ("今晚吃什么", False), ("Monday blues", False),
    ("this month", False), ("前几天", False)])
def test_only_a_precise_past_moment_narrows(text, precise):
    assert find_window(text, NOW)[2] is precise


def test_habits_are_not_dates():
    assert find_window("what do I usually do on weekends?", NOW) is None
    assert find_window("周末我一般做什么？", NOW) is None


def test_time_words_are_not_searched_as_text():
    query = analyse("What did I cook on May 5th?", NOW)
    assert query.window and "5th" not in query.terms and "cook" in query.terms


def _cand(cid, text, when="2023-05-01T20:00:00.000Z", kind="message", role="user"):
    return Candidate(kind, cid, text, when, {"id": cid, "role": role})


def test_rare_words_outrank_common_ones():
    cands = [_cand("a", "I like apples"), _cand("b", "I like the zither"),
             _cand("c", "I like pears")]
    query = analyse("do I like the zither", NOW)
    score(query, cands, {"lik": 90, "zither": 1}, 100)
    ranked, _ = rank(cands)
    assert ranked[0].id == "b"


def test_a_lone_character_needs_company():
    cands = [_cand("veg", "多吃蔬菜"), _cand("cil", "不吃香菜")]
    score(analyse("香菜", NOW), cands, {"香菜": 1, "香": 1, "菜": 2}, 10)
    ranked, _ = rank(cands)
    assert [c.id for c in ranked] == ["cil"]
    score(analyse("菜", NOW), cands, {"菜": 2}, 10)  # nothing longer to ask for
    assert {c.id for c in rank(cands)[0]} == {"veg", "cil"}


def test_a_day_window_puts_that_day_first_and_a_wide_one_boosts():
    on_day = _cand("day", "we talked about work", "2023-05-05T20:00:00.000Z")
    other = _cand("other", "the dish I cooked", "2023-05-01T20:00:00.000Z")
    query = analyse("What dish did I cook on May 5th?", NOW)
    score(query, [on_day, other], {"dish": 1, "cook": 1}, 50)
    ranked, _ = rank([on_day, other])
    assert [c.id for c in ranked] == ["day", "other"] and "time" in ranked[0].via


def test_floor_and_near_duplicates():
    long = "the staging database runs on port 5433 behind the vpn gateway today"
    cands = [_cand("a", long), _cand("b", long + "!"), _cand("c", "port"),
             _cand("d", "staging database port notes, all of them, in one very long list " * 9)]
    score(analyse("staging database port vpn", NOW), cands,
          {"stag": 3, "databas": 3, "port": 4, "vpn": 1}, 100)
    ranked, below = rank(cands, floor=0.5)
    ids = [c.id for c in ranked]
    assert ids[0] == "a" and "b" not in ids and below >= 1


def test_partners_follow_their_hit():
    hit, other, next_hit = _cand("q", "x"), _cand("r", "y", role="assistant"), _cand("z", "w")
    hit.score, next_hit.score = 3.0, 2.0
    before = _cand("p", "v")
    out = with_partners([hit, next_hit], {"q": [before, other]})
    assert [c.id for c in out] == ["q", "p", "r", "z"] and out[2].via == ["pair"]
    assert out[1].score == out[2].score == hit.score


@pytest.mark.parametrize("text", ["Hello, World! it's 2026-05-04_ok", "a\tb\nc\x00d", "",
                                  "ALL CAPS and-dashes/slashes", "x" * 300])
def test_the_ascii_fast_path_splits_as_the_general_one(text):
    from ekko_mem.tokens import runs
    # " 香" makes the text non-ASCII, so it takes the general path
    assert runs(text) == [r for r in runs(text + " 香") if r != "香"]


def test_only_near_meanings_count_without_a_word():
    from ekko_mem.retrieval import by_meaning
    found, near, far, stray = (_cand(i, "x") for i in ("found", "near", "far", "stray"))
    hits = [(near, 0.86), (found, 0.70), (far, 0.79), (stray, 0.805)]
    # a word found `found`; `far` is under the floor, `stray` too far behind the nearest
    assert [c.id for c in by_meaning(hits, {"found"})] == ["near", "found"]
    assert by_meaning([(stray, 0.805)], set()) == [stray]
