"""What every extraction rule shares: cached patterns, the turn a sentence came from, lists."""
from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import compress

from .triggers import TRIGGERS
from .vocab import (
    EN_ITEM_LEAD,
    EN_ITEM_TAIL,
    FOODS,
    SAY_PREFIX,
    TRIM_END,
    ZH_ITEM_LEAD,
    ZH_ITEM_TAIL,
)


def as_compiled(pattern: str) -> str:
    """The pattern as rx compiles it. A character class over CJK ranges, e.g.
    [\\u4e00-\\u9fff、和], has no case, but under IGNORECASE the compiler folds every one of its
    21,000 characters, which costs more than compiling most whole patterns; (?-i:...) compiles
    it as it is."""
    if "\\u4e00-\\u9fff" not in pattern:
        return pattern
    return _caseless_class().sub(lambda m: f"(?-i:{m.group(0)})", pattern)


@cache
def _caseless_class() -> re.Pattern[str]:
    return re.compile(r"\[\\u4e00-\\u9fff(?:[^\]\\A-Za-z]|\\u[0-9a-fA-F]{4})*\]")


_COMPILED: dict[str, re.Pattern[str]] = {}


def rx(pattern: str) -> re.Pattern[str]:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        compiled = _COMPILED[pattern] = re.compile(as_compiled(pattern), re.IGNORECASE)
    return compiled


# Compiling the patterns a message meets would be most of what a free-text `remember` costs,
# and most of them cannot match it: a pattern is compiled only when the text holds the words
# that any match of it needs (triggers.py, read off the pattern by literals.py). A case-blind
# match of a word is that word after folding: lower case, with the three letters the matcher
# also takes for i or s (İ, ı, ſ) spelt so first, one character for one (str.lower makes İ two).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


@lru_cache(maxsize=256)
def fold(text: str) -> str:
    return text.translate(_FOLD).lower()


Spelt = tuple[tuple[str, ...], tuple[str, ...]]


def longest_first(words) -> Spelt:
    """Words longest first, so that at one position the longer wins, and their folded
    spellings."""
    ordered = tuple(sorted(words, key=len, reverse=True))
    return ordered, tuple(fold(word) for word in ordered)


def held_in(table: Spelt, text: str) -> tuple[str, ...]:
    """The words of a longest_first table whose folded spelling the folded text holds, in
    order. A word the text does not hold cannot match there, and leaving out an alternative
    that matches nowhere changes no match: only these need compiling."""
    words, spelt = table
    return tuple(compress(words, map(fold(text).__contains__, spelt)))


def _decoded(spec: str) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    # triggers.py's format: clauses by #, conditions by +, kind:words, words by |.
    return tuple(tuple((kind, tuple(words.split("|")))
                       for kind, words in (c.split(":", 1) for c in clause.split("+")))
                 for clause in spec.split("#"))


_GUARDS = {pattern: _decoded(spec) for pattern, spec in TRIGGERS.items()}


def may_match(pattern: str, text: str) -> bool:
    """False only when `pattern` cannot match anywhere in `text`."""
    return _passes(pattern, text, anywhere=False)


def may_match_in_part(pattern: str, text: str) -> bool:
    """False only when `pattern` cannot match in `text` nor in any piece of it: a piece holds
    no word the whole does not, and may begin with any word the whole holds."""
    return _passes(pattern, text, anywhere=True)


def worth_trying_in_parts(pattern: str, text: str) -> bool:
    # Once compiled, trying a pattern costs less than its guard.
    return pattern in _COMPILED or may_match_in_part(pattern, text)


def _passes(pattern: str, text: str, anywhere: bool) -> bool:
    clauses = _GUARDS.get(pattern)  # an edited pattern has no entry yet: it is always tried
    if clauses is None:
        return True
    folded = fold(text)
    holds = folded.__contains__
    for clause in clauses:
        for kind, words in clause:
            if not (folded.startswith(words) if kind == "^" and not anywhere
                    else any(map(holds, words))):
                break
        else:
            return True
    return False


# Once compiled, a search costs less than the guard: a long text of many clauses, or a batch
# of messages, would otherwise pay the guard again for every piece.


def search(pattern: str, text: str) -> re.Match[str] | None:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        if not _passes(pattern, text, False):
            return None
        compiled = rx(pattern)
    return compiled.search(text)


def sub(pattern: str, replacement: str, text: str) -> str:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        if not _passes(pattern, text, False):
            return text
        compiled = rx(pattern)
    return compiled.sub(replacement, text)


def split(pattern: str, text: str) -> list[str]:
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        if not _passes(pattern, text, False):
            return [text]
        compiled = rx(pattern)
    return compiled.split(text)


def has(pattern: str, text: str) -> bool:
    return search(pattern, text) is not None


def first(patterns: tuple[str, ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        match = search(pattern, text)
        if match:
            return match
    return None


def chinese(text: str) -> bool:
    """has(CJK, text) without compiling a class of 21,000 characters."""
    return not text.isascii() and any("\u4e00" <= ch <= "\u9fff" for ch in text)


# A proposed memory: {"operation", "node", "reason", "target"?}. Plain `dict`: importing
# `typing` for `Any` alone would slow a free-text `remember`.
Item = dict


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
        parts = split(r"[、,，/]|以及|还有|和|跟|与|及|或者?|"
                      r"也?(?:不吃|不喝|不要|别放|不放|不加|别加)", raw)
        return [p for p in (sub(ZH_ITEM_TAIL, "", sub(ZH_ITEM_LEAD, "", p.strip()))
                            for p in parts) if p]
    raw = sub(EN_ITEM_TAIL, "", sub(EN_ITEM_LEAD, "", raw.lower()))
    parts = split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor|&)\s+", raw)
    return [p for p in (singular(sub(EN_ITEM_LEAD, "", p.strip(" .!?"))) for p in parts) if p]


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
    return sub(TRIM_END, "", sub(SAY_PREFIX, "", text.strip())).strip()
