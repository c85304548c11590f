"""Words as search sees them, identical at index time and at query time.

FTS5's own tokenizers cannot find 香菜 inside 用户不吃香菜 (unicode61 keeps a CJK run as one
token; trigram needs three characters), so text is rewritten before it reaches FTS5:
- a CJK run becomes its overlapping bigrams, then each of its characters alone: the bigrams
  stay adjacent, so a run can still be searched as a phrase, and a single character (运, 猫)
  still matches;
- a Latin word is lower-cased and lightly stemmed, so "movies", "movie" and "painting",
  "paint" meet.

Pure and cheap: this runs for every message logged. Changing what it produces needs a
migration that re-indexes (see store/migrations.py, m005).
"""
from __future__ import annotations

# Plain comparisons: compiling an equivalent regex costs ~3 ms at every start-up.


def is_cjk(ch: str) -> bool:
    """Kana, CJK extension A, unified and compatibility ideographs, hangul."""
    return ("\u4e00" <= ch <= "\u9fff" or "\u3040" <= ch <= "\u30ff"
            or "\u3400" <= ch <= "\u4dbf" or "\uac00" <= ch <= "\ud7af"
            or "\uf900" <= ch <= "\ufaff")


# ASCII punctuation and controls to spaces: the fast path for plain English text.
_ASCII_SEPARATORS = {i: " " for i in range(128) if not chr(i).isalnum()}


def runs(text: str) -> list[str]:
    """Maximal runs of CJK characters, and of other letters and digits, lower-cased."""
    if text.isascii():
        return text.lower().translate(_ASCII_SEPARATORS).split()
    out: list[str] = []
    current: list[str] = []
    current_cjk = False
    for ch in text.lower():
        if ch.isalnum():
            cjk = ch > "\u303f" and is_cjk(ch)
            if current and cjk != current_cjk:
                out.append("".join(current))
                current = []
            current.append(ch)
            current_cjk = cjk
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


_VOWELS = frozenset("aeiouy")
_KEEP_DOUBLE = frozenset("lsz")


_stems: dict[str, str] = {}  # words repeat a lot across the candidates of one question


def stem(word: str) -> str:
    """A light English stemmer: plurals, -ing and -ed, a final e or y.

    Aims at recall across inflections (movie/movies, like/liked/liking, run/running,
    study/studies/studied), not linguistic accuracy; words of three letters or fewer, digits
    and non-ASCII words are left alone.
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    found = _stems.get(word)
    if found is None:
        found = _stem(word)
        if len(_stems) < 50_000:  # bounded: a long import must not grow it without end
            _stems[word] = found
    return found


def _stem(word: str) -> str:
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWELS & set(base):
            word = base
            if word[-1] == word[-2] and word[-1] not in _VOWELS | _KEEP_DOUBLE:
                word = word[:-1]
            break
    if len(word) > 3 and word[-1] == "e":
        word = word[:-1]
    elif len(word) > 3 and word[-1] == "y":
        word = word[:-1] + "i"
    return word


def cjk_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)] + list(run)


def tokens(text: str) -> list[str]:
    """The token stream of `text`, in order, as stored in FTS5."""
    out: list[str] = []
    for run in runs(text):
        if is_cjk(run[0]):
            out.extend(cjk_tokens(run))
        else:
            out.append(stem(run))
    return out


def index_text(text: str) -> str:
    """The token stream stored in FTS5 for `text` (space separated)."""
    return " ".join(tokens(text))
