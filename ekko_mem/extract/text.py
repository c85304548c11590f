"""What every extraction rule shares: cached patterns, the turn a sentence came from, lists."""
from __future__ import annotations

import re
from functools import cache

from .vocab import (
    EN_ITEM_LEAD,
    EN_ITEM_TAIL,
    FOODS,
    SAY_PREFIX,
    TRIM_END,
    ZH_ITEM_LEAD,
    ZH_ITEM_TAIL,
)


# A character class over CJK ranges, e.g. [\u4e00-\u9fff、和]: it has no case, but under
# IGNORECASE the compiler folds every one of its 21,000 characters, ~6 ms a pattern, which
# made compiling the rules most of a free-text `remember`. (?-i:...) compiles it as it is.
_CASELESS_CLASS = re.compile(r"\[\\u4e00-\\u9fff(?:[^\]\\A-Za-z]|\\u[0-9a-fA-F]{4})*\]")


@cache
def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(_CASELESS_CLASS.sub(lambda m: f"(?-i:{m.group(0)})", pattern),
                      re.IGNORECASE)


def has(pattern: str, text: str) -> bool:
    return rx(pattern).search(text) is not None


def first(patterns: tuple[str, ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        match = rx(pattern).search(text)
        if match:
            return match
    return None


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class Turn:
    """What a whole message says about every memory in it: source, language, intent, time.
    A plain class, not a dataclass: importing dataclasses (and inspect with it) cost more
    than the rest of a free-text `remember`'s imports."""

    __slots__ = ("message_id", "zh", "explicit", "remember", "change", "temporary", "health",
                 "end_of_day", "food", "replace")

    def __init__(self, message_id: str, zh: bool, explicit: bool, remember: bool,
                 change: bool, temporary: bool, health: str | None, end_of_day: str,
                 food: bool = False, replace: bool = False) -> None:
        self.message_id = message_id
        self.zh = zh
        self.explicit = explicit  # 记住 / 以后 / from now on / always: a lasting rule
        self.remember = remember  # asked outright to remember: the strongest signal there is
        self.change = change  # 以后都不 / no longer: replaces what was true before
        self.temporary = temporary  # today, tonight, a passing ailment: never beyond this session
        self.health = health  # the clause naming the ailment, quoted in the memory's content
        self.end_of_day = end_of_day
        self.food = food  # about food, so "keep it under 30 minutes" is cooking
        self.replace = replace  # 口味完全听我的: the new value replaces the old one whole


def split_items(raw: str, zh: bool) -> list[str]:
    """香菜和葱 -> [香菜, 葱]; "cilantro, onions or garlic please" -> [cilantro, onion, garlic]."""
    raw = raw.strip(" \t。！？，,.!?；;：:")
    if zh:
        parts = rx(r"[、,，/]|以及|还有|和|跟|与|及|或者?").split(raw)
        return [p for p in (rx(ZH_ITEM_TAIL).sub("", rx(ZH_ITEM_LEAD).sub("", p.strip()))
                            for p in parts) if p]
    raw = rx(EN_ITEM_TAIL).sub("", rx(EN_ITEM_LEAD).sub("", raw.lower()))
    parts = rx(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor|&)\s+").split(raw)
    return [p for p in (singular(rx(EN_ITEM_LEAD).sub("", p.strip(" .!?"))) for p in parts) if p]


def singular(word: str) -> str:
    # Values are matched exactly later, so "onions" and "onion" must be one value.
    if word in FOODS:
        return word
    for suffix in ("es", "s"):  # tomatoes, onions
        if word.endswith(suffix) and word[: -len(suffix)] in FOODS:
            return word[: -len(suffix)]
    return word


def without_request(text: str) -> str:
    """What is to be remembered, without the request around it ("Remember that …", 记住：…)."""
    return rx(TRIM_END).sub("", rx(SAY_PREFIX).sub("", text.strip())).strip()
