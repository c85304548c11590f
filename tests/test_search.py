"""CJK-aware full-text search and its ranking."""
from __future__ import annotations

import pytest

from ekko_mem.store.fts import index_text, match_all


def _add(service, title, content="", **extra):
    node = {"scope": "workspace", "type": "fact", "title": title, "content": content or title}
    node.update(extra)
    result = service.propose_update("create", node, reason="t", actor="user")
    assert result["accepted"], result
    return result["nodeId"]


def _search(service, text):
    result = service.retrieve({"queryText": text})
    return [n["id"] for n in result["relevant"] if not n.get("weak")]


def test_chinese_substrings_and_english_case(service):
    cilantro = _add(service, "用户不吃香菜")
    oil = _add(service, "用户偏好少油少辣")
    english = _add(service, "Avoid Cilantro in recipes")
    assert _search(service, "香菜") == [cilantro]
    assert _search(service, "少油") == [oil]
    assert _search(service, "cilantro") == [english]
    assert _search(service, "CILANTRO") == [english]
    assert cilantro in _search(service, "菜")  # one character, end of a run
    assert oil in _search(service, "辣")
    assert _search(service, "不吃香") == [cilantro]


@pytest.mark.parametrize("text", ['"', "'", "香菜 OR", "NEAR(a b)", "title:香菜", "a AND",
                                  "*", "(", "^x", "-香菜", '"unbalanced', "\\", "ü", "🙂"])
def test_fts_syntax_in_query_text_is_harmless(service, text):
    cilantro = _add(service, "用户不吃香菜")
    # Operators, quotes and column filters are searched as words: found exactly when the
    # words are in the memory, never an error.
    assert (cilantro in _search(service, text)) == ("香菜" in text)


def test_tokens_are_identical_at_index_and_query_time():
    # Bigrams stay adjacent (a run is searched as a phrase), then each character alone.
    assert index_text("少油少辣") == "少油 油少 少辣 少 油 少 辣"
    assert match_all("少油少辣") == '"少油 油少 少辣"'
    assert index_text("Cilantro, 香菜!") == "cilantro 香菜 香 菜"
    # English words are lightly stemmed the same way on both sides.
    assert index_text("Movies I liked") == "movi i lik"
    assert match_all("movie like") == '"movi" AND "lik"'


def test_bm25_ranking_order_is_pinned(service):
    in_title = _add(service, "香菜 notes", "nothing here")
    in_entity = _add(service, "ingredient list", "nothing here", entities=["香菜"])
    in_tag = _add(service, "tagged note", "nothing here", tags=["香菜"])
    in_content = _add(service, "plain note", "这里提到香菜一次")
    assert _search(service, "香菜") == [in_title, in_entity, in_tag, in_content]


def test_common_terms_only_filter_and_rare_terms_rank(service, monkeypatch):
    from ekko_mem.store import search
    monkeypatch.setattr(search, "COMMON", 3)  # anything in more than 3 rows is "common"
    plain = [_add(service, f"香菜 note {i}") for i in range(6)]
    both = _add(service, "香菜 zebra crossing")
    assert _search(service, "香菜 zebra")[0] == both  # the rare term ranks
    assert set(_search(service, "香菜")) == {*plain, both}  # only common: newest matches
    service.log_message("香菜 from chat", session="a")
    for i in range(5):
        service.log_message(f"香菜 again {i}", session="b")
    counts = service.store.recall.term_counts("message", ["香菜", "chat"])
    assert counts["香菜"] == 4  # capped at COMMON + 1
    found = service.store.recall.message_hits(["香菜", "chat"], counts)
    assert [m["content"] for m in found] == ["香菜 from chat"]  # only the rare term ranks
