"""What a question is about: trigger words that point at category prefixes.

今晚吃什么？ shares no words with 推荐菜谱时避免香菜, so full-text search alone cannot connect
them; these hints map everyday words onto the category tree. Config can add more.
"""
from __future__ import annotations

TOPICS: list[tuple[list[str], tuple[str, ...]]] = [
    (["生活技能", "做饭"], (
        "吃", "饭", "菜", "餐", "做饭", "菜谱", "食谱", "晚餐", "午餐", "早餐", "夜宵", "饿",
        "烹", "煮", "炒", "炖", "烤", "外卖", "口味", "cook", "recipe", "dinner", "lunch",
        "breakfast", "meal", "eat", "food", "hungry", "dish", "menu", "snack", "kitchen")),
    (["生活技能", "健康"], ("健康", "运动", "睡", "身体", "health", "sleep", "exercise", "gym")),
    (["生活技能", "出行"], ("出行", "旅行", "机票", "酒店", "travel", "flight", "hotel", "trip")),
    (["生活技能", "理财"], ("理财", "预算", "花钱", "budget", "money", "invest", "expense")),
]


def categories_for(text: str, extra: list[tuple[list[str], tuple[str, ...]]] | None = None
                   ) -> list[list[str]]:
    """Category prefixes whose trigger words occur in `text` (case-insensitive)."""
    lowered = text.lower()
    found: list[list[str]] = []
    for prefix, words in [*(extra or []), *TOPICS]:
        if prefix not in found and any(word in lowered for word in words):
            found.append(prefix)
    return found


def is_chinese(text: str) -> bool:
    """Mostly CJK among letters: the language to write section headings in."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return cjk * 2 >= latin and cjk > 0
