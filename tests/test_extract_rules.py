"""Golden tests for the rule-based extractor: one utterance in, the memories it must propose."""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re

import pytest
from conftest import deadline

from ekko_mem.extract.rules import extract

NOW = "2026-03-01T12:00:00.000Z"
EOD = "2026-03-01T23:59:59.999Z"
LOW_OIL_SPICY = {"oil": "low", "spicy": "low"}


def run(*texts: str, role: str = "user") -> dict:
    messages = [{"id": f"msg_{i}", "sessionId": "s1", "role": role, "content": text,
                 "createdAt": NOW} for i, text in enumerate(texts, 1)]
    return extract(messages, now=NOW, end_of_day=EOD)


def shape(item: dict) -> tuple:
    node = item["node"]
    return (item["operation"], node.get("scope"), node.get("type"), node.get("key"),
            node.get("valueJson"), node.get("explicit"), "expiresAt" in node)


# (utterance, [(operation, scope, type, key, valueJson, explicit, has expiresAt), ...])
GOLDEN = [
    # The design's own examples.
    ("记住，我以后做饭不要香菜。",
     [("create", "user", "preference", "avoid_ingredient", "香菜", True, False)]),
    ("以后做饭别给我推荐香菜，我喜欢少油少辣。",
     [("create", "user", "preference", "avoid_ingredient", "香菜", True, False),
      ("create", "user", "preference", "flavor_profile", LOW_OIL_SPICY, True, False)]),
    ("香菜现在可以接受一点，但不要太多。",
     [("supersede", "user", "preference", "limit_ingredient",
       {"ingredient": "香菜", "amount": "little"}, True, False)]),
    ("今天胃不舒服，少辣",
     [("create", "session", "constraint", "flavor_profile", {"spicy": "low"}, False, True)]),
    ("我们决定用 SQLite FTS5 做全文检索",
     [("create", "workspace", "decision", None, None, True, False)]),
    ("最近胃不舒服，先别推荐辣的",
     [("create", "session", "constraint", "flavor_profile", {"spicy": "low"}, False, True)]),
    ("以后都不吃辣",
     [("supersede", "user", "preference", "flavor_profile", {"spicy": "none"}, True, False)]),
    # Chinese.
    ("我不吃香菜和葱",
     [("create", "session", "preference", "avoid_ingredient", "香菜", False, False),
      ("create", "session", "preference", "avoid_ingredient", "葱", False, False)]),
    ("以后推荐菜谱的时候不要放葱、姜、蒜",
     [("create", "user", "preference", "avoid_ingredient", food, True, False)
      for food in ("葱", "姜", "蒜")]),
    ("我喜欢川菜",
     [("create", "session", "preference", "preferred_cuisine", "川菜", False, False)]),
    ("记住我爱吃牛肉",
     [("create", "user", "preference", "preferred_ingredient", "牛肉", True, False)]),
    ("今天胃不舒服", [("create", "session", "constraint", None, None, False, True)]),
    ("我现在可以吃香菜了",
     [("expire", "user", "preference", "avoid_ingredient", "香菜", True, False)]),
    ("其实香菜可以吃一点",
     [("supersede", "user", "preference", "limit_ingredient",
       {"ingredient": "香菜", "amount": "little"}, True, False)]),
    ("必须用 ruff 做代码检查",
     [("create", "workspace", "constraint", "lint_command", "ruff", True, False)]),
    ("禁止在主分支直接提交", [("create", "workspace", "constraint", None, None, True, False)]),
    ("TODO: 给 store 加索引",
     [("create", "workspace", "task", "task_state", {"state": "open"}, True, False)]),
    ("待办：写 README",
     [("create", "workspace", "task", "task_state", {"state": "open"}, True, False)]),
    ("完成了迁移测试",
     [("update", "workspace", "task", "task_state", {"state": "done"}, True, False)]),
    ("我对花生过敏",
     [("create", "user", "constraint", "allergy", "花生", True, False)]),
    ("你能记住我不吃香菜吗？",
     [("create", "user", "preference", "avoid_ingredient", "香菜", True, False)]),
    ("我不太喜欢吃辣",
     [("create", "session", "preference", "flavor_profile", {"spicy": "low"}, False, False)]),
    ("我不吃辣椒",
     [("create", "session", "preference", "avoid_ingredient", "辣椒", False, False)]),
    ("我最近不吃牛肉",
     [("create", "session", "constraint", "avoid_ingredient", "牛肉", False, True)]),
    ("记住，今天少辣",
     [("create", "session", "constraint", "flavor_profile", {"spicy": "low"}, True, True)]),
    ("我喜欢吃咸的",
     [("create", "session", "preference", "flavor_profile", {"salt": "high"}, False, False)]),
    ("我爱吃甜食",
     [("create", "session", "preference", "flavor_profile", {"sugar": "high"}, False, False)]),
    # English.
    ("I love sweets",
     [("create", "session", "preference", "flavor_profile", {"sugar": "high"}, False, False)]),
    ("I love salty food",
     [("create", "session", "preference", "flavor_profile", {"salt": "high"}, False, False)]),
    # ſ and İ match s and i case-blind: the phrase is looked up by its folded spelling.
    ("I love ſpicy food",
     [("create", "session", "preference", "flavor_profile", {"spicy": "high"}, False, False)]),
    ("Remember: I don't eat cilantro.",
     [("create", "user", "preference", "avoid_ingredient", "cilantro", True, False)]),
    ("From now on, don't recommend cilantro or onions.",
     [("create", "user", "preference", "avoid_ingredient", "cilantro", True, False),
      ("create", "user", "preference", "avoid_ingredient", "onion", True, False)]),
    ("I don't eat pork",
     [("create", "session", "preference", "avoid_ingredient", "pork", False, False)]),
    ("no cilantro please",
     [("create", "session", "preference", "avoid_ingredient", "cilantro", False, False)]),
    ("I hate onions",
     [("create", "session", "preference", "avoid_ingredient", "onion", False, False)]),
    ("I'm allergic to peanuts and shellfish",
     [("create", "user", "constraint", "allergy", "peanut", True, False),
      ("create", "user", "constraint", "allergy", "shellfish", True, False)]),
    ("I always avoid pork",
     [("create", "user", "preference", "avoid_ingredient", "pork", True, False)]),
    ("Never use cilantro.",
     [("create", "user", "preference", "avoid_ingredient", "cilantro", True, False)]),
    ("I love Sichuan food",
     [("create", "session", "preference", "preferred_cuisine", "Sichuan", False, False)]),
    ("I prefer less oil and not too spicy",
     [("create", "session", "preference", "flavor_profile", LOW_OIL_SPICY, False, False)]),
    ("Going forward, mild and low salt please.",
     [("create", "user", "preference", "flavor_profile", {"spicy": "low", "salt": "low"},
       True, False)]),
    ("I don't eat cilantro, but I love garlic.",
     [("create", "session", "preference", "avoid_ingredient", "cilantro", False, False),
      ("create", "session", "preference", "preferred_ingredient", "garlic", False, False)]),
    ("Actually cilantro is fine now in small amounts.",
     [("supersede", "user", "preference", "limit_ingredient",
       {"ingredient": "cilantro", "amount": "little"}, True, False)]),
    ("cilantro is fine now",
     [("expire", "user", "preference", "avoid_ingredient", "cilantro", True, False)]),
    ("I no longer eat spicy food",
     [("supersede", "user", "preference", "flavor_profile", {"spicy": "low"}, True, False)]),
    ("I'm not feeling well today, nothing spicy",
     [("create", "session", "constraint", "flavor_profile", {"spicy": "low"}, False, True)]),
    ("I'm not feeling well today", [("create", "session", "constraint", None, None, False, True)]),
    ("We decided to use SQLite FTS5 for full-text search.",
     [("create", "workspace", "decision", None, None, True, False)]),
    ("We must not commit secrets to the repo.",
     [("create", "workspace", "constraint", None, None, True, False)]),
    ("Never use print in library code.",
     [("create", "workspace", "constraint", None, None, True, False)]),
    ("TODO: write the migration test",
     [("create", "workspace", "task", "task_state", {"state": "open"}, True, False)]),
    ("Done: migration test",
     [("update", "workspace", "task", "task_state", {"state": "done"}, True, False)]),
    ("I need to buy cilantro",
     [("create", "workspace", "task", "task_state", {"state": "open"}, True, False)]),
    ("Can you remember that I don't eat pork?",
     [("create", "user", "preference", "avoid_ingredient", "pork", True, False)]),
    # Cooking time: a cooking word, a bound and a duration, in either language.
    ("做饭别超过半小时",
     [("create", "session", "preference", "cooking_time_preference", "≤30min", False, False)]),
    ("以后晚饭控制在四十五分钟以内",
     [("create", "user", "preference", "cooking_time_preference", "≤45min", True, False)]),
    ("Keep cooking under 30 minutes please",
     [("create", "session", "preference", "cooking_time_preference", "≤30min", False, False)]),
    ("From now on, recipes should take no more than an hour",
     [("create", "user", "preference", "cooking_time_preference", "≤60min", True, False)]),
]

# (utterance, reason): nothing may be stored, and the reason says why.
NEGATIVE = [
    ("今晚吃什么？", "question"),
    ("要不要放葱？", "question"),
    ("what should I cook?", "question"),
    ("Can you recommend a recipe?", "question"),
    ("如果我不吃香菜会怎样", "hypothetical"),
    ("what if I didn't eat pork", "hypothetical"),
    ("Imagine I didn't eat pork", "hypothetical"),
    ("我老婆不吃香菜", "third_party"),
    ("我朋友讨厌洋葱", "third_party"),
    ("my friend hates onions", "third_party"),
    ("He doesn't eat beef", "third_party"),
    ("你好", "small_talk"),
    ("谢谢！", "small_talk"),
    ("thanks!", "small_talk"),
    ("hello there", "small_talk"),
    ("我的密码是 abc123456", "sensitive"),
    ("我的手机号是13800138000，记住", "sensitive"),
    ("my password is hunter2", "sensitive"),
    ("remember my key sk-abcdef1234567890", "sensitive"),
    ("My card number is 4111 1111 1111 1111", "sensitive"),
    ("我喜欢编程", "no_rule_matched"),
    ("别给我推荐 MySQL", "no_rule_matched"),
    ("这个方案现在可以接受一点", "no_rule_matched"),
    ("I love you", "no_rule_matched"),
    ("The API is fine now", "no_rule_matched"),
    ("The meeting is under 30 minutes", "no_rule_matched"),
    ("我不是素食主义者", "no_rule_matched"),
    ("I'm not allergic to anything", "no_rule_matched"),
    ("I went for a run this morning", "no_rule_matched"),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN, ids=[t for t, _ in GOLDEN])
def test_golden(text, expected):
    result = run(text)
    assert [shape(item) for item in result["nodes"]] == expected
    assert result["ignored"] == []
    for item in result["nodes"]:
        assert item["node"]["sourceMessageIds"] == ["msg_1"]
        assert item["reason"]


@pytest.mark.parametrize(("text", "reason"), NEGATIVE, ids=[t for t, _ in NEGATIVE])
def test_negative(text, reason):
    result = run(text)
    assert result["nodes"] == []
    assert result["ignored"] == [{"messageId": "msg_1", "reason": reason}]
    assert result["summaryPatch"] is None


def test_design_write_example_exact_output():
    result = run("以后做饭别给我推荐香菜，我喜欢少油少辣。")
    path = ["生活技能", "做饭", "饮食偏好"]
    assert result == {
        "summaryPatch": "记忆更新：用户不吃香菜；用户偏好少油少辣",
        "nodes": [
            {"operation": "create", "reason": "a dietary preference stated as lasting",
             "node": {"scope": "user", "domain": "生活技能", "categoryPath": path,
                      "type": "preference", "key": "avoid_ingredient", "valueJson": "香菜",
                      "title": "用户不吃香菜", "content": "推荐菜谱时避免香菜。",
                      "tags": ["忌口", "菜谱推荐"], "confidence": 0.95, "importance": 0.9,
                      "entities": ["香菜"], "sourceMessageIds": ["msg_1"], "explicit": True}},
            {"operation": "create", "reason": "a dietary preference stated as lasting",
             "node": {"scope": "user", "domain": "生活技能", "categoryPath": path,
                      "type": "preference", "key": "flavor_profile", "valueJson": LOW_OIL_SPICY,
                      "title": "用户偏好少油少辣", "content": "推荐菜谱时优先少油少辣。",
                      "tags": ["口味", "菜谱推荐"], "confidence": 0.95, "importance": 0.85,
                      "entities": ["少油", "少辣"], "sourceMessageIds": ["msg_1"],
                      "explicit": True}},
        ],
        "ignored": [],
    }


def test_remember_is_the_strongest_signal():
    node = run("记住，我以后做饭不要香菜。")["nodes"][0]["node"]
    assert (node["title"], node["confidence"], node["importance"]) == ("用户不吃香菜", 0.99, 0.95)


def test_english_wording_mirrors_chinese():
    node = run("From now on, no cilantro please.")["nodes"][0]["node"]
    assert node["domain"] == "生活技能"
    assert node["categoryPath"] == ["生活技能", "做饭", "饮食偏好"]
    assert (node["title"], node["content"]) == ("Avoid cilantro",
                                                "Avoid cilantro when recommending recipes.")
    assert node["tags"] == ["avoid", "recipes"]
    assert node["entities"] == ["cilantro"]


def test_correction_targets_the_old_avoidance():
    item = run("香菜现在可以接受一点，但不要太多。")["nodes"][0]
    assert item["target"] == {"type": "preference", "key": "avoid_ingredient", "valueJson": "香菜",
                              "categoryPathPrefix": ["生活技能", "做饭"]}
    assert item["node"]["title"] == "用户可接受少量香菜"


def test_lasting_change_of_taste_targets_the_flavour_slot():
    item = run("以后都不吃辣")["nodes"][0]
    assert item["target"] == {"type": "preference", "key": "flavor_profile",
                              "categoryPathPrefix": ["生活技能", "做饭"]}


def test_temporary_state_ends_today_and_outranks_preferences():
    for text in ("今天胃不舒服，少辣", "I'm not feeling well today, nothing spicy"):
        node = run(text)["nodes"][0]["node"]
        assert node["expiresAt"] == EOD
        assert node["scope"] == "session"
        assert node["importance"] == 0.9
    node = run("今天胃不舒服，少辣")["nodes"][0]["node"]
    assert node["title"] == "临时：少辣"
    assert node["content"] == "推荐菜谱时优先少辣（临时：今天胃不舒服）。"


def test_task_done_names_the_task_it_closes():
    item = run("完成了迁移测试")["nodes"][0]
    assert item["target"] == {"type": "task", "text": "迁移测试"}
    assert item["node"]["importance"] < 0.5  # finished work matters less from now on


def test_project_memory_has_no_key_and_a_short_title():
    node = run("我们决定用 SQLite FTS5 做全文检索")["nodes"][0]["node"]
    assert node["categoryPath"] == ["工程", "决策"]
    assert node["title"] == "我们决定用 SQLite FTS5 做全文检索"
    assert node["entities"] == ["SQLite", "FTS5"]
    assert "key" not in node
    english = run("Never use print in library code.")["nodes"][0]["node"]
    assert english["categoryPath"] == ["engineering", "constraints"]
    long = "We decided to use " + "a very long explanation of the storage layer " * 3
    node = run(long)["nodes"][0]["node"]
    assert len(node["title"]) <= 60
    assert node["content"].startswith(long.strip())


@pytest.mark.parametrize(("text", "expected"), GOLDEN, ids=[t for t, _ in GOLDEN])
def test_weights_follow_intent(text, expected):
    for item in run(text)["nodes"]:
        node = item["node"]
        if node["type"] == "preference" and not node["explicit"]:
            # Inferred preferences never reach user scope.
            assert node["scope"] == "session"
            assert node["confidence"] <= 0.6
        elif node["type"] == "preference":
            assert 0.95 <= node["confidence"] <= 0.99
            assert 0.5 <= node["importance"] <= 0.95
        elif node["type"] in ("decision", "constraint") and node["scope"] == "workspace":
            assert node["importance"] == 0.85
        if "expiresAt" in node:
            assert node["scope"] == "session"
            assert node["importance"] == 0.9


@pytest.mark.parametrize("role", ["assistant", "system", "tool"])
def test_only_user_messages_become_memories(role):
    assert run("记住，我以后做饭不要香菜。", role=role) == {
        "summaryPatch": None, "nodes": [], "ignored": []}


def test_batch_merges_repeats_and_reports_what_it_skipped():
    result = run("我不吃香菜", "今晚吃什么？", "真的，我不吃香菜")
    assert [shape(item) for item in result["nodes"]] == [
        ("create", "session", "preference", "avoid_ingredient", "香菜", False, False)]
    assert result["nodes"][0]["node"]["sourceMessageIds"] == ["msg_1", "msg_3"]
    assert result["ignored"] == [{"messageId": "msg_2", "reason": "question"}]


def test_summary_follows_the_language_of_the_messages():
    assert run("I always avoid pork")["summaryPatch"] == "Memory: Avoid pork"
    assert run("完成了迁移测试")["summaryPatch"] == "记忆更新：已完成：迁移测试"
    mixed = run("我不吃香菜", "我不吃葱", "I hate onions")
    assert mixed["summaryPatch"].startswith("记忆更新：")


def test_a_statement_beside_a_question_is_kept():
    result = run("我不吃香菜。今晚吃什么？")
    assert [shape(item)[3:5] for item in result["nodes"]] == [("avoid_ingredient", "香菜")]


@pytest.mark.parametrize("text", ["From now on, my taste is completely different: very spicy",
                                  "From now on, start over: I like spicy food",
                                  "以后口味完全听我的：重辣"])
def test_a_statement_that_replaces_the_whole_profile_says_so(text):
    [item] = run(text)["nodes"]
    assert item["node"]["valueJson"] == {"spicy": "high"}
    assert item.get("replace") is True


@pytest.mark.parametrize("text", ["From now on, very spicy", "以后口味重辣",
                                  "my buddy puts hot sauce on everything. make it very spicy"
                                  " from now on"])
def test_a_change_of_one_flavour_replaces_nothing_else(text):
    [item] = run(text)["nodes"]
    assert item["node"]["valueJson"] == {"spicy": "high"}
    assert "replace" not in item


def test_an_english_statement_that_replaces_everything_replaces_everything(cli, ws):
    cli("remember", "From now on, less oil and less salt")
    cli("remember", "From now on, my taste is completely different: very spicy")
    [node] = cli("query", "--key", "flavor_profile", "--json").json()["exact"]
    assert node["valueJson"] == {"spicy": "high"}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, re.Pattern):
        yield value.pattern
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _strings(item)


def _rule_modules() -> list[str]:
    import ekko_mem.extract
    import ekko_mem.policy
    # printable.py and nul.py are about control characters: they must name them.
    return [f"{package.__name__}.{info.name}"
            for package in (ekko_mem.extract, ekko_mem.policy)
            for info in pkgutil.iter_modules(package.__path__)
            if info.name not in ("printable", "nul")]


@pytest.mark.parametrize("name", _rule_modules())
def test_no_pattern_holds_a_control_character(name):
    # Outside a raw string "\b" is a backspace, not a word boundary, and a pattern holding
    # one never matches the text it was written for.
    module = importlib.import_module(name)
    found = {(attr, text) for attr, value in vars(module).items()
             for text in _strings(value) if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)}
    assert not found


PURE = ("rules", "text", "health", "habits", "engineering", "vocab", "triggers", "literals")


@pytest.mark.parametrize("name", PURE)
def test_module_stays_pure(name):
    tree = ast.parse(inspect.getsource(__import__(f"ekko_mem.extract.{name}", fromlist=["x"])))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import)
                              else [ast.alias(node.module or "")])}
    assert imported <= {"__future__", "json", "re", "dataclasses", "functools", "itertools",
                        "typing", *PURE}
    vocab = ast.parse(inspect.getsource(__import__("ekko_mem.extract.vocab",
                                                   fromlist=["x"])))
    assert not [n for n in ast.walk(vocab) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name) and n.func.id in {"print", "open", "input"}]
    calls = {node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not calls & {"print", "open", "input"}


@pytest.mark.parametrize("blob", ["a" * 20000, "哈" * 5000 + "x", "no " * 3000 + "x",
                                  "我不要" * 2000, "1 " * 3000])
def test_long_input_stays_linear(blob):
    # A hang guard, not a speed check: a pasted log must not hang the extractor. A pattern
    # that scans from every position took ~1 s on 20k characters, so minutes on 5x that.
    with deadline(60, "extracting a long text"):
        run(blob * 5)
