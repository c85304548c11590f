"""Words as search sees them, identical at index time and at query time.

FTS5's own tokenizers cannot find 香菜 inside 用户不吃香菜 (unicode61 keeps a CJK run as one
token; trigram needs three characters), so text is rewritten before it reaches FTS5:
- a CJK run becomes its overlapping bigrams, then each of its characters alone: the bigrams
  stay adjacent, so a run can still be searched as a phrase, and a single character (运, 猫)
  still matches;
- a Latin word is lower-cased and lightly stemmed, so "movies", "movie" and "painting",
  "paint" meet.

Pure and cheap: this runs for every message logged and for each field of every memory
written, so characters are looked at in C, not one by one in Python: ASCII text through
str.translate and split; other text through small regular expressions, each compiled the
first time a text needs it (never for ASCII), with its CJK check on UTF-8 bytes
and its bigrams cut from one string instead of built one by one. Changing what it produces
needs a migration that re-indexes (see store/migrations.py, m005).
"""
from __future__ import annotations

# CJK is a set of code point ranges, compared directly here and as UTF-8 bytes below: a
# regular expression spelling the ranges out is slow to compile (re enumerates each
# code point of a class), at every start-up or on the first Chinese text of each process.


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
    return _split(text.lower())[0]


# Lower-cased letters and digits, the ASCII ones and the others in separate pieces.
_PIECES = r"[0-9a-z]+|[^\W_0-9a-z]+"
# Letters and digits of any script (\w less the underscore: exactly str.isalnum).
_WORDS = r"[^\W_]+"
# UTF-8 of letters and digits: a letter or digit led by E4-E9 (U+4000-U+9FFF) or EB-EC
# (U+B000-U+CFFF) is always CJK, one led by C2-E2, EE or F0-F4 never is. E3, EA, ED and EF
# lead both kinds; _NOT_CJK_UTF8 finds the non-CJK ones by their next bytes.
_BYTES = bytes.maketrans(b"", b"")  # 0x00 to 0xFF, built in C: bytes(range()) is slower
_ALWAYS_CJK = _BYTES[:0xC0] + _BYTES[0xE4:0xEA] + b"\xeb\xec"
_NEVER_CJK = _BYTES[:0xC0] + _BYTES[0xC2:0xE3] + b"\xee" + _BYTES[0xF0:0xF5]
_NOT_CJK_UTF8 = (rb"\xe3[\x80\x84-\x8f]"  # U+3000-303F, U+3100-33FF
                 rb"|\xea[\x80-\xaf]"  # U+A000-ABFF
                 rb"|\xed\x9e[\xb0-\xbf]|\xed[\x9f-\xbf]"  # U+D7B0-D7FF
                 rb"|\xef[\x80-\xa3\xac-\xbf]"  # U+F000-F8FF, U+FB00-FFFF
                 rb"|[\xc2-\xe2\xee\xf0-\xf4]")
_compiled: dict = {}


def _re(pattern):
    """`pattern` compiled on first use: a process that only sees ASCII never compiles it."""
    found = _compiled.get(pattern)
    if found is None:
        import re
        found = _compiled[pattern] = re.compile(pattern)
    return found


def _split(low: str) -> tuple[list[str], str | None]:
    """The runs of lower-cased text, and their concatenation if every non-ASCII run is CJK.

    In that common case (Chinese, with or without English) the runs are simply the ASCII and
    the non-ASCII pieces; otherwise each word is split on its own.
    """
    pieces = _re(_PIECES).findall(low)
    joined = "".join(pieces)
    if _only_cjk(joined.encode()):
        return pieces, joined
    return [run for word in _re(_WORDS).findall(low) for run in _word_runs(word)], None


def _only_cjk(utf8: bytes) -> bool:
    """Whether each non-ASCII character of these letters and digits is CJK."""
    return not utf8.translate(None, _ALWAYS_CJK) or _re(_NOT_CJK_UTF8).search(utf8) is None


def _word_runs(word: str) -> list[str]:
    """The runs of one word of letters and digits."""
    if word.isascii():
        return [word]
    utf8 = word.encode()
    if not utf8.translate(None, _NEVER_CJK):
        return [word]
    if _only_cjk(utf8):
        return _re(_PIECES).findall(word)
    # CJK beside é, ａ or ① in one word: rare enough to take a character at a time
    from itertools import groupby
    return ["".join(group) for _, group in groupby(word, is_cjk)]


_VOWELS = frozenset("aeiouy")
_KEEP_DOUBLE = frozenset("lsz")


_stems: dict[str, str] = {}  # words repeat a lot across the candidates of one question


def stem(word: str) -> str:
    """A light English stemmer: plurals, -ing and -ed, a final e or y.

    Aims at recall across inflections (movie/movies, like/liked/liking, run/running,
    study/studies/studied), not linguistic accuracy; words of three letters or fewer, digits
    and non-ASCII words are left alone.
    """
    if len(word) <= 3:
        return word
    found = _stems.get(word)  # before the checks below: most words were seen already
    if found is None:
        if not word.isascii() or not word.isalpha():
            return word
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


# A caller may swap cjk_tokens (and stem) to measure what they add: index_text takes its
# shortcut only while cjk_tokens is this one.
_CJK_TOKENS = cjk_tokens
# Below this many letters and digits, building the few bigrams one by one is cheaper than
# laying out the string they are cut from (that has a fixed cost; bench/README.md).
_CUT_FROM = 16


def tokens(text: str) -> list[str]:
    """The token stream of `text`, in order, as stored in FTS5."""
    # no token is empty or holds a space, so splitting gives back the stream
    return index_text(text).split()


def index_text(text: str) -> str:
    """The token stream stored in FTS5 for `text` (space separated)."""
    if text.isascii():
        return " ".join([stem(word) for word in runs(text)])
    found, joined = _split(text.lower())
    if joined is not None and len(joined) >= _CUT_FROM and cjk_tokens is _CJK_TOKENS:
        return _cut_index_text(found, joined)
    out: list[str] = []
    for run in found:
        if is_cjk(run[0]):
            out.extend(cjk_tokens(run))
        else:
            out.append(stem(run))
    return " ".join(out)


def _cut_index_text(found: list[str], joined: str) -> str:
    """index_text of runs whose non-ASCII ones are all CJK, `joined` their concatenation.

    A new two-character string per bigram is most of the cost of CJK text; here a run's
    bigrams, and its characters, are each one slice of _pairs_then_singles(joined).
    """
    laid = _pairs_then_singles(joined)
    singles = 3 * len(joined)
    parts: list[str] = []
    start = 0
    for run in found:
        end = start + len(run)
        if run.isascii():
            parts.append(stem(run))
        elif end - start == 1:
            parts.append(run)
        else:
            parts.append(laid[3 * start:3 * end - 4])
            parts.append(laid[singles + 2 * start:singles + 2 * end - 1])
        start = end
    return " ".join(parts)


# "utf-16" is a codec Python has built in (native byte order, after a byte order mark); one
# with the order in its name imports a module on first use.
_SPACE_UTF16 = " ".encode("utf-16")[2:]


def _pairs_then_singles(text: str) -> str:
    """Each character, the next one and a space; then each character and a space.

    "香菜好" gives "香菜 菜好 好  香 菜 好 ". Laid out in UTF-16 by extended-slice assignment,
    which copies in C; one code unit per character, as `text` holds only ASCII and CJK.
    """
    n = len(text)
    utf16 = text.encode("utf-16")
    first, second = utf16[2::2], utf16[3::2]  # the two bytes of each code unit
    laid = bytearray(_SPACE_UTF16 * (5 * n))
    pairs = 6 * n
    laid[0:pairs:6] = first
    laid[1:pairs:6] = second
    laid[2:pairs - 6:6] = first[1:]
    laid[3:pairs - 6:6] = second[1:]
    laid[pairs::4] = first
    laid[pairs + 1::4] = second
    # read in native order: letters and digits never start with a byte order mark
    return laid.decode("utf-16")
