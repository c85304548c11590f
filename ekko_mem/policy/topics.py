"""What a question is about: trigger words that point at category prefixes.

今晚吃什么？ shares no words with 推荐菜谱时避免香菜, so full-text search alone cannot connect
them; these hints map everyday words onto the category tree. Config can add more.
"""
from __future__ import annotations

FOOD = ["生活技能", "做饭"]
TOPICS: list[tuple[list[str], tuple[str, ...]]] = [
    (FOOD, (
        "吃", "饭", "菜", "餐", "做饭", "菜谱", "食谱", "晚餐", "午餐", "早餐", "夜宵", "饿",
        "烹", "煮", "炒", "炖", "烤", "外卖", "口味", "cook", "recipe", "dinner", "lunch",
        "breakfast", "meal", "eat", "food", "hungry", "dish", "menu", "snack", "kitchen")),
    (["生活技能", "健康"], ("健康", "运动", "睡", "身体", "health", "sleep", "exercise", "gym")),
    (["生活技能", "出行"], ("出行", "旅行", "机票", "酒店", "travel", "flight", "hotel", "trip")),
    (["生活技能", "理财"], ("理财", "预算", "花钱", "budget", "money", "invest", "expense")),
]
# The topics' names in English, for a heading written in English: "User preferences
# (cooking)", never a Chinese word inside an English heading.
TOPIC_NAMES = {"做饭": "cooking", "健康": "health", "出行": "travel", "理财": "money",
               "生活技能": "life skills", "爱好": "hobbies", "音乐": "music", "工程": "engineering"}


def categories_for(text: str, extra: list[tuple[list[str], tuple[str, ...]]] | None = None
                   ) -> list[list[str]]:
    """Category prefixes whose trigger words occur in `text` (case-insensitive)."""
    lowered = text.lower()
    found: list[list[str]] = []
    for prefix, words in [*(extra or []), *TOPICS]:
        if prefix not in found and any(_occurs(word, lowered) for word in words):
            found.append(prefix)
    return found


def _occurs(word: str, lowered: str) -> bool:
    """A Latin trigger must start a word ("eat" is in "eating", not in "create" or "great");
    Chinese has no spaces to start one, so anywhere will do."""
    at = lowered.find(word)
    if not word.isascii():
        return at >= 0
    while at > 0 and "a" <= lowered[at - 1] <= "z":
        at = lowered.find(word, at + 1)
    return at >= 0


def is_food(node: dict) -> bool:
    """A memory about cooking or eating: anything filed under 生活技能/做饭."""
    return (node.get("categoryPath") or [])[: len(FOOD)] == FOOD


def involves_food(text: str, nodes: list[dict]) -> bool:
    """Whether a context touches food: its question is about eating, or a memory it gathered
    is filed under cooking. Health and diet limits then go with it, whatever was asked."""
    return any(is_food(node) for node in nodes) or (
        bool(text) and FOOD in categories_for(text))


def topic_name(path: list[str], chinese: bool) -> str:
    """The category a heading may name (the second level of `path`) in the heading's language,
    or "" when it has no name in that language."""
    if len(path) < 2:
        return ""
    name = " ".join(path[1].split())
    if is_chinese(name) == chinese:
        return name
    if chinese:
        return next((zh for zh, en in TOPIC_NAMES.items() if en == name.lower()), "")
    return TOPIC_NAMES.get(name, "")


def is_chinese(text: str) -> bool:
    """Mostly CJK among letters: the language to write section headings in."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return cjk * 2 >= latin and cjk > 0


def language_of(question: str, titles: list[str]) -> bool:
    """True for Chinese: the question's language when it has words, else the memory's."""
    if any(ch.isalpha() for ch in question):
        return is_chinese(question)
    return is_chinese("".join(titles))
