"""What a question is about: trigger words that point at category prefixes, and the topics
that open private memory.

今晚吃什么？ shares no words with 推荐菜谱时避免香菜, so full-text search alone cannot connect
them; these hints map everyday words onto the category tree. Config can add more.

Some memory is private: an allergy, a diet, a medical state, or anything tagged `private` or
`隐私`. It goes into a context only when the question opens one of its topics (GATES), never
beside a question about something else: a coding question gets no peanut allergy.
"""
from __future__ import annotations

from .schema import HEALTH_KEYS

FOOD = ["生活技能", "做饭"]
HEALTH = ["生活技能", "健康"]
TOPICS: list[tuple[list[str], tuple[str, ...]]] = [
    (FOOD, (
        "吃", "饭", "菜", "餐", "做饭", "菜谱", "食谱", "晚餐", "午餐", "早餐", "夜宵", "饿",
        "烹", "煮", "炒", "炖", "烤", "外卖", "口味", "cook", "recipe", "dinner", "lunch",
        "breakfast", "meal", "eat", "food", "hungry", "dish", "menu", "snack", "kitchen")),
    (HEALTH, ("健康", "运动", "睡", "身体", "health", "sleep", "exercise", "gym")),
    (["生活技能", "出行"], ("出行", "旅行", "机票", "酒店", "travel", "flight", "hotel", "trip")),
    (["生活技能", "理财"], ("理财", "预算", "花钱", "budget", "money", "invest", "expense")),
]
# A topic's name, for the gates below: the category it is filed under.
NAMES = {"food": FOOD, "health": HEALTH, "travel": ["生活技能", "出行"],
         "money": ["生活技能", "理财"]}
# Words that open a gated topic besides its category hints: eating and drinking, the body,
# illness and medicine. A question holding none of them is not about the topic.
MORE_WORDS = {
    "food": ("食", "喝", "饮", "零食", "餐厅", "饭店", "馆子", "食材", "配料", "调料", "甜点",
             "水果", "忌口", "吃素", "素食", "花生", "restaurant", "ingredient", "sauce", "drink",
             "dessert", "fruit", "diet", "vegetarian", "vegan", "grocer", "bake", "baking",
             "takeout", "peanut"),
    "health": ("药", "医", "生病", "疾病", "病情", "看病", "病史", "病了", "疼", "痛", "过敏",
               "症", "感冒", "发烧", "咳", "体检", "怀孕", "medic", "doctor", "drug", "allerg",
               "sick", "hospital", "symptom", "pill", "pharmac", "fever", "headache",
               "nutrition", "pregnan", "vaccin", "injur", "clinic", "dentist", "therap",
               "diet"),
}
# Technical words that start like an everyday one: a health check is no question of health.
FALSE_FRIENDS = ("health check", "healthcheck", "health-check", "healthz", "cookie")
# Private memory by category, and the topics that open it. Health and diet limits (the
# schema's HEALTH_KEYS, wherever they are filed) are gated as the diet limits' category.
GATES: list[tuple[list[str], tuple[str, ...]]] = [
    (HEALTH, ("health", "food")),
    (["生活技能", "做饭", "饮食限制"], ("food", "health")),
]
PRIVATE_TAGS = ("private", "隐私")
# The topics' names in English, for a heading written in English: "User preferences
# (cooking)", never a Chinese word inside an English heading.
TOPIC_NAMES = {"做饭": "cooking", "健康": "health", "出行": "travel", "理财": "money",
               "生活技能": "life skills", "爱好": "hobbies", "音乐": "music", "工程": "engineering"}
# A question about how things were: memory since replaced may answer it, marked as earlier.
HISTORY = ("之前", "以前", "原来", "过去", "曾经", "当初", "从前", "历史", "used to", "before",
           "previous", "history", "earlier", "formerly", "originally", "in the past")


def categories_for(text: str, extra: list[tuple[list[str], tuple[str, ...]]] | None = None
                   ) -> list[list[str]]:
    """Category prefixes whose trigger words occur in `text` (case-insensitive)."""
    lowered = _plain(text)
    found: list[list[str]] = []
    for prefix, words in [*(extra or []), *TOPICS]:
        if prefix not in found and any(_occurs(word, lowered) for word in words):
            found.append(prefix)
    return found


def _plain(text: str) -> str:
    lowered = text.lower()
    for phrase in FALSE_FRIENDS:
        lowered = lowered.replace(phrase, " ")
    return lowered


def _occurs(word: str, lowered: str) -> bool:
    """A Latin trigger must start a word ("eat" is in "eating", not in "create" or "great");
    Chinese has no spaces to start one, so anywhere will do."""
    at = lowered.find(word)
    if not word.isascii():
        return at >= 0
    while at > 0 and "a" <= lowered[at - 1] <= "z":
        at = lowered.find(word, at + 1)
    return at >= 0


def opened_by(text: str) -> set[str]:
    """The topics a question is about, by name (food, health, travel, money)."""
    hinted = categories_for(text)
    lowered = _plain(text)
    return {name for name, prefix in NAMES.items() if prefix in hinted
            or any(_occurs(word, lowered) for word in MORE_WORDS.get(name, ()))}


def under(node: dict, prefix: list[str]) -> bool:
    return (node.get("categoryPath") or [])[: len(prefix)] == prefix


def gate_of(node: dict) -> tuple[str, ...] | None:
    """The topics that open a private memory; None for memory that is not private, and ()
    for a private one filed under no topic: only a question that finds it by its own words
    brings that in."""
    for prefix, opening in GATES:
        if under(node, prefix):
            return opening
    if node.get("key") in HEALTH_KEYS:
        return GATES[-1][1]
    if not any(tag.lower() in PRIVATE_TAGS for tag in node.get("tags") or []):
        return None
    return tuple(name for name, prefix in NAMES.items() if under(node, prefix))


def on_topic(node: dict, opened: set[str], found_by_words: bool = False) -> bool:
    """Whether a memory may go into a context whose question opened `opened`."""
    gate = gate_of(node)
    if gate is None:
        return True
    return bool(opened.intersection(gate)) or (not gate and found_by_words)


def asks_history(text: str) -> bool:
    """A question about how things were (以前用什么, what did we use before?)."""
    lowered = text.lower()
    return any(_occurs(word, lowered) for word in HISTORY)


def is_food(node: dict) -> bool:
    """A memory about cooking or eating: anything filed under 生活技能/做饭."""
    return under(node, FOOD)


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
