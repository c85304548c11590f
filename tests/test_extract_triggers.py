"""The guards that spare compiling most extraction patterns: read off each pattern's text
correctly, never turning away a text the pattern matches (in any case), and kept current with
the patterns.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from golden import extraction_cases, heldout_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ekko_mem.extract import text as text_module
from ekko_mem.extract.literals import guard
from ekko_mem.extract.rules import extract
from ekko_mem.extract.text import fold, may_match, may_match_in_part, rx
from ekko_mem.extract.triggers import TRIGGERS

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-03-01T12:00:00.000Z"
EOD = "2026-03-01T23:59:59.999Z"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_triggers",
                                                  ROOT / "scripts" / "gen_triggers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_is_current():
    table = (ROOT / "ekko_mem" / "extract" / "triggers.py").read_text("utf-8")
    assert table == _generator().render(), "run `python scripts/gen_triggers.py`"
    # And each entry reads back as the guard it was written from.
    assert {p: guard(p) for p in TRIGGERS} == text_module._GUARDS


def test_most_patterns_have_a_guard():
    patterns = _generator().collect()
    assert len(patterns) > 100
    assert sum(p in TRIGGERS for p in patterns) >= 0.85 * len(patterns)


@pytest.mark.parametrize(("pattern", "expected"), [
    # An alternation needs one of its branches' words; case folds to lower.
    (r"我们决定|\bWe Decided\b", [[("in", ("我们决定", "we decided"))]]),
    (r"(?i:Foo)|bar", [[("in", ("bar", "foo"))]]),
    # A branch at ^ needs its words at the start; multi-line, anywhere.
    (r"^(?:hi|hello)\b", [[("^", ("hi", "hello"))]]),
    (r"(?m)^(?:hi|hello)\b", [[("in", ("hi", "hello"))]]),
    (r"^(?:不要|别)(?:放|加)", [[("^", ("别加", "别放", "不要加", "不要放"))]]),
    (r"^(?:了|我们|我|已经)+", [[("^", ("了", "我", "已经"))]]),
    # A sequence needs every part: the most selective few are kept, and one that another
    # implies is not ("meat" holds "eat").
    (r"\bi\s+eat\s+(?P<x>[a-z]+)\s+(?:now|again)\b",
     [[("in", ("eat",)), ("in", ("now", "again")), ("in", ("i",))]]),
    (r"\bi\s+eat\s+meat\b", [[("in", ("meat",)), ("in", ("i",))]]),
    (r"(?:可以|能)(?:吃|接受)了", [[("in", ("能吃了", "可以吃了", "能接受了", "可以接受了"))]]),
    (r"[\u4e00-\u9fff]+饭", [[("in", ("饭",))]]),
    # An optional part stands for itself or nothing; a repeat at least once needs its body.
    (r"colou?r", [[("in", ("color", "colour"))]]),
    (r"a{,}b", [[("in", ("b",))]]),
    (r"(?:ab)+c", [[("in", ("ab",)), ("in", ("c",))]]),
    # A lookbehind matches no text, but what it looks at is in the text.
    (r"(?<=[。！])|\n", [[("in", ("\n", "。", "！"))]]),
    (r"(?<!不)过敏", [[("in", ("过敏",))]]),
    # Words that hold another are implied by it.
    (r"ok|okay|好的|好", [[("in", ("好", "ok"))]]),
    # Escapes: a code point written out is its character; {} is text.
    (r"[ \t\u3000]+", [[("in", ("\t", " ", "\u3000"))]]),
    (r"\x41b|x{}y", [[("in", ("ab", "x{}y"))]]),
    (r"a\.b\|c", [[("in", ("a.b|c",))]]),
    # A branch that needs nothing leaves the pattern unguarded, and so does what is not read.
    (r"\w+", None),
    (r"我们决定|\d+", None),
    (r"(?:not)?", None),
    (r"[^a]", None),
    (r"[a-z]x?", None),
    (r"(?x)we \s decided", None),
    (r"(?P<a>x)(?P=a)", None),
    (r"(?(1)a|b)", None),
    (r"a)", None),
])
def test_guards_are_read_off_the_pattern(pattern, expected):
    got = guard(pattern)
    assert (None if got is None else [list(clause) for clause in got]) == expected


def test_folding_keeps_case_blind_equal_characters_equal():
    # Every character a pattern is written with, against every character there is: where the
    # matcher takes them for equal, alone or in a class, folding must make them one character.
    written = sorted({ch for p in _generator().collect() for ch in p}
                     | {chr(i) for i in range(32, 127)})
    everything = "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i <= 0xDFFF)
    unequal = {(ch, found.group()) for ch in written
               for pattern in (re.escape(ch), f"[{re.escape(ch)}]")
               for found in re.finditer(pattern, everything, re.IGNORECASE)
               if fold(found.group()) != fold(ch) or len(fold(found.group())) != 1}
    assert unequal == set()
    assert fold("İSTANBUL ıı ſ") == "istanbul ii s"  # the three the matcher folds its own way


def _texts() -> list[str]:
    said = [text for text, _ in extraction_cases.CASES + heldout_cases.CASES] + EXAMPLES_TEXTS
    pieces = [p for t in said for p in re.split(r"[，,。.;；]", t) if p.strip()]
    exotic = [t.replace("s", "ſ").replace("i", "İ") for t in said]
    return list(dict.fromkeys(t for base in said + pieces + exotic
                              for t in (base, base.upper(), base.title())))


def test_a_guard_never_turns_away_a_text_its_pattern_matches():
    texts = _texts()
    turned_away = 0
    for pattern in TRIGGERS:
        compiled = rx(pattern)
        for text in texts:
            if compiled.search(text):
                assert may_match(pattern, text), (pattern, text)
                whole = f"{text}，{text.lower()}"  # the text as a piece of a longer one
                assert may_match_in_part(pattern, whole), (pattern, whole)
            elif not may_match(pattern, text):
                turned_away += 1
    assert turned_away > 0.8 * len(TRIGGERS) * len(texts)  # and the guards do guard


@pytest.mark.parametrize("pattern", list(TRIGGERS), ids=range(len(TRIGGERS)))
def test_every_text_a_pattern_matches_passes_its_guard(pattern):
    @settings(max_examples=10, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(rx(pattern)))
    def check(text):
        assert may_match(pattern, text), text
    check()


def test_an_edited_pattern_is_tried_until_the_table_is_written_again():
    assert may_match(r"我们约好了|\bwe agreed on\b", "") is True


def test_an_everyday_message_compiles_few_patterns():
    compiled = text_module._COMPILED
    compiled.clear()
    extract([{"id": "m1", "role": "user", "content": "以后做饭别给我推荐香菜，我喜欢少油少辣。"}],
            now=NOW, end_of_day=EOD)
    assert 0 < len(compiled) <= 15 < len(TRIGGERS)


def shape(text: str) -> tuple[list[tuple], list[str]]:
    result = extract([{"id": "m1", "role": "user", "content": text}], now=NOW, end_of_day=EOD)
    return ([(i["operation"], i["node"].get("scope"), i["node"]["type"], i["node"].get("key"),
              i["node"].get("valueJson")) for i in result["nodes"]],
            [i["reason"] for i in result["ignored"]])


LOW = {"spicy": "low", "oil": "low"}
# Each rule behind a guard, said in Chinese, in English upper case, and with the letters the
# matcher folds its own way (ſ for s, İ for i): the guard must let every one through.
EXAMPLES = [
    ("我对花生过敏", [("create", "user", "constraint", "allergy", "花生")], []),
    ("我们决定用 SQLite", [("create", "workspace", "decision", None, None)], []),
    ("测试命令是 pytest -q",
     [("create", "workspace", "fact", "test_command", "pytest -q")], []),
    ("我每天早上七点起床跑步", [("create", "user", "habit", None, None)], []),
    ("以后做饭别给我推荐香菜，我喜欢少油少辣。",
     [("create", "user", "preference", "avoid_ingredient", "香菜"),
      ("create", "user", "preference", "flavor_profile", LOW)], []),
    ("做饭别超过半小时",
     [("create", "session", "preference", "cooking_time_preference", "≤30min")], []),
    ("香菜现在可以接受一点", [("supersede", "user", "preference", "limit_ingredient",
                              {"ingredient": "香菜", "amount": "little"})], []),
    ("如果我不吃辣怎么办", [], ["hypothetical"]),
    ("我的密码是 abc123", [], ["sensitive"]),
    ("I DON'T EAT CILANTRO",
     [("create", "session", "preference", "avoid_ingredient", "cilantro")], []),
    ("WE DECIDED TO USE POSTGRES", [("create", "workspace", "decision", None, None)], []),
    ("THE TEST COMMAND IS pytest -q",
     [("create", "workspace", "fact", "test_command", "pytest -q")], []),
    ("I'M ALLERGIC TO PEANUTS", [("create", "user", "constraint", "allergy", "peanut")], []),
    ("I'M ALLERGİC TO PEANUTS", [("create", "user", "constraint", "allergy", "peanut")], []),
    ("NOT TOO SPICY, LESS OIL PLEASE",
     [("create", "session", "preference", "flavor_profile", {"spicy": "low", "oil": "low"})],
     []),
    ("WE USE PYTHON 3.12 FOR THE BACKEND",
     [("create", "workspace", "fact", "language", "PYTHON 3.12")], []),
    ("Keep cooking UNDER 30 MINUTES",
     [("create", "session", "preference", "cooking_time_preference", "≤30min")], []),
    ("TODO: write the report",
     [("create", "workspace", "task", "task_state", {"state": "open"})], []),
    ("CILANTRO IS FINE NOW",
     [("expire", "user", "preference", "avoid_ingredient", "cilantro")], []),
    ("I USUALLY COOK ON SUNDAYS", [("create", "user", "habit", None, None)], []),
    ("I LOVE SPICY FOOD",
     [("create", "session", "preference", "flavor_profile", {"spicy": "high"})], []),
    ("WHAT SHOULD I COOK TONIGHT", [], ["question"]),
    ("OK THANKS", [], ["small_talk"]),
    ("If I were vegan I would skip cheese", [], ["hypothetical"]),
    ("MY PASSWORD IS hunter2", [], ["sensitive"]),
    ("my paſſword is hunter2", [], ["sensitive"]),
    ("PİN: 4321", [], ["sensitive"]),
]
EXAMPLES_TEXTS = [text for text, _, _ in EXAMPLES]


@pytest.mark.parametrize(("text", "nodes", "ignored"), EXAMPLES, ids=EXAMPLES_TEXTS)
def test_guarded_rules_fire_in_either_language_and_any_case(text, nodes, ignored):
    assert shape(text) == (nodes, ignored)
