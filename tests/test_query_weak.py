"""`query` keeps the rows under `context`'s relevance floor, marked weak: a row sharing only
one character of a Chinese word, or scoring under the floor's share of the best, follows the
relevant ones (`"weak": true` in JSON and in MCP memory_search, a `weak` section for people)."""
from __future__ import annotations

import json
import sys

from ekko_mem import render
from ekko_mem import results as r

# Shares 周末, 体育, 育馆, 打篮, 篮球… with the question; the other shares only 篮.
MANY = "周末和朋友去体育馆打篮球"
ONE = "我买了一个新篮子"
QUESTION = "周末去体育馆打篮球"
# One rare word: a row sharing only the common one scores under the floor.
RARE = "the kettle descaler needs vinegar and water"
COMMON = [f"water the plants on the balcony, round {i}" for i in range(40)]
RARE_QUESTION = "kettle descaler vinegar water"


def _add(service, title: str) -> str:
    node = {"scope": "workspace", "type": "fact", "title": title, "content": title}
    result = service.propose_update("create", node, reason="t", actor="user")
    assert result["accepted"], result
    return result["nodeId"]


def _weak(rows: list[dict]) -> dict[str, bool]:
    return {row["id"]: bool(row.get("weak")) for row in rows}


def test_a_row_sharing_one_character_is_weak_the_one_sharing_many_is_not(service):
    many, one = _add(service, MANY), _add(service, ONE)
    rows = service.retrieve({"queryText": QUESTION})["relevant"]
    ids = [row["id"] for row in rows]
    assert ids[0] == many and one in ids  # kept, not dropped
    assert _weak(rows)[many] is False and _weak(rows)[one] is True
    assert "weak" not in rows[0]  # a relevant row's shape is as it was
    assert all(row.get("weak") for row in rows[ids.index(one):])  # weak rows come last


def test_a_row_under_the_floor_is_weak(service):
    rare = _add(service, RARE)
    common = [_add(service, text) for text in COMMON]
    rows = service.retrieve({"queryText": RARE_QUESTION, "limit": 100})["relevant"]
    weak = _weak(rows)
    assert [row["id"] for row in rows][0] == rare and weak[rare] is False
    assert all(weak[i] for i in common)  # only `water`: under the floor, still listed


def test_json_marks_the_weak_row(cli, ws):
    assert cli("remember", MANY).code == 0 and cli("remember", ONE).code == 0
    result = cli("query", QUESTION, "--json")
    assert result.code == 0
    rows = {row["title"]: row for row in result.json()["relevant"]}
    assert rows[ONE]["weak"] is True and "weak" not in rows[MANY]


def test_piped_listing_has_a_weak_section_after_relevant(cli, ws):
    assert cli("remember", MANY).code == 0 and cli("remember", ONE).code == 0
    lines = cli("query", QUESTION).out.splitlines()
    titles = [line.split("\t")[3] if "\t" in line else line for line in lines]
    assert titles.index("relevant") < titles.index(MANY) < titles.index("weak") < \
        titles.index(ONE)


def test_a_terminal_shows_weak_matches_as_their_own_table(capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    node = {"id": "mem_1", "scope": "workspace", "type": "fact", "title": MANY,
            "status": "active", "confidence": 0.9}
    found = {"exact": [], "relevant": [node, {**node, "id": "mem_2", "title": ONE,
                                              "weak": True}], "omitted": [], "scores": {}}
    render.emit(r.QueryResult(found), no_color=True)
    out = [line.strip() for line in capsys.readouterr().out.splitlines()]
    heads = [line for line in out if line in ("relevant", "weak matches")]
    assert heads == ["relevant", "weak matches"]
    assert out.index("weak matches") > next(i for i, line in enumerate(out) if MANY in line)
    assert any(ONE in line for line in out[out.index("weak matches"):])


def test_quiet_answers_5_when_only_weak_rows_match(cli, ws):
    assert cli("remember", ONE).code == 0
    shown = cli("query", QUESTION)
    assert shown.code == 0 and "weak" in shown.out.splitlines() and ONE in shown.out
    assert "relevant" not in shown.out.splitlines()
    assert (cli("query", QUESTION, "--quiet").code, cli("query", QUESTION, "-q").out) == (5, "")
    assert cli("remember", MANY).code == 0
    assert cli("query", QUESTION, "--quiet").code == 0


def test_memory_search_marks_the_weak_row(service):
    from ekko_mem.mcp_tools import MemoryTools
    many, one = _add(service, MANY), _add(service, ONE)
    rows = {row["id"]: row for row in MemoryTools(service).search(
        {"queryText": QUESTION})["relevant"]}
    assert rows[one]["weak"] is True and "weak" not in rows[many]


def test_limit_counts_relevant_and_weak_rows_together(service):
    many = _add(service, MANY)
    _add(service, ONE)
    _add(service, "篮子里放着苹果")
    found = len(service.retrieve({"queryText": QUESTION, "limit": 100})["relevant"])
    assert found >= 3
    result = service.retrieve({"queryText": QUESTION, "limit": 2})
    rows = result["relevant"]
    assert [row["id"] for row in rows][0] == many and len(rows) == 2 and rows[1]["weak"]
    assert sum(o["reason"] == "over_limit" for o in result["omitted"]) == found - 2


def test_part_of_a_chinese_word_still_finds_a_relevant_row(cli, ws):
    assert cli("remember", "我喜欢打篮球").code == 0
    rows = cli("query", "打球", "--json").json()["relevant"]
    assert [(row["title"], row.get("weak")) for row in rows] == [("我喜欢打篮球", None)]


def _log(cli, texts: list[str]) -> None:
    lines = [json.dumps({"role": "user", "sessionId": f"s{i}", "content": text},
                        ensure_ascii=False) for i, text in enumerate(texts)]
    assert cli("log", "--jsonl", "-", input="\n".join(lines)).code == 0


def _messages(cli, *args) -> list[dict]:
    result = cli("query", "--messages", *args, "--json")
    assert result.code == 0, result
    return result.json()["messages"]


def test_messages_under_the_floor_are_kept_and_marked_weak(cli, ws):
    _log(cli, [RARE, *COMMON])
    hits = _messages(cli, RARE_QUESTION, "--limit", "100")
    assert hits[0]["message"]["content"] == RARE and "weak" not in hits[0]
    assert len(hits) == 1 + len(COMMON)  # none dropped for the floor
    weak = [hit["message"]["content"] for hit in hits if hit.get("weak")]
    assert weak and set(weak) <= set(COMMON)
    assert all(hit.get("weak") for hit in hits[len(hits) - len(weak):])  # after the rest


def test_messages_sharing_one_character_are_weak(cli, ws):
    _log(cli, [ONE, "今天天气不错"])
    hits = _messages(cli, "打篮球")
    assert [(hit["message"]["content"], hit.get("weak")) for hit in hits] == [(ONE, True)]


def test_message_limit_counts_weak_rows_too(cli, ws):
    _log(cli, [RARE, *COMMON])
    hits = _messages(cli, RARE_QUESTION, "--limit", "3")
    assert len(hits) == 3 and hits[0]["message"]["content"] == RARE


def test_weak_message_rows_have_their_own_section_and_are_no_match_for_quiet(cli, ws):
    cli("log", "晚饭吃剩菜")
    out = cli("query", "--messages", "香菜")
    lines = out.out.splitlines()
    assert lines and lines[0] == "weak" and "晚饭吃剩菜" in lines[1]
    assert cli("query", "--messages", "香菜", "--quiet").code == 5
