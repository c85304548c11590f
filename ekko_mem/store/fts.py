"""Text as FTS5 sees it: pre-tokenised identically at index and at query time.

FTS5's own tokenizers cannot find 香菜 inside 用户不吃香菜 (unicode61 keeps a CJK run as one
token; trigram needs three characters), so text is rewritten before it reaches FTS5:
CJK runs become overlapping bigrams plus their last character alone, Latin words are lower-cased.
A one-character CJK query then becomes a prefix query, which meets every bigram that starts with
the character and the lone last character of each run.
"""
from __future__ import annotations

# CJK ranges: kana, CJK extension A, unified ideographs, compatibility ideographs, hangul.
# A plain character loop: compiling an equivalent regex costs ~3 ms at every start-up.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
               (0xAC00, 0xD7AF))


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _runs(text: str) -> list[str]:
    """Maximal runs of CJK characters, and of other letters and digits, lower-cased."""
    runs: list[str] = []
    current: list[str] = []
    current_cjk = False
    for ch in text.lower():
        if ch.isalnum():
            cjk = _is_cjk(ch)
            if current and cjk != current_cjk:
                runs.append("".join(current))
                current = []
            current.append(ch)
            current_cjk = cjk
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)] + [run[-1]]


def index_text(text: str) -> str:
    """The token stream stored in FTS5 for `text` (space separated)."""
    tokens: list[str] = []
    for run in _runs(text):
        tokens.extend(_bigrams(run) if _is_cjk(run[0]) else [run])
    return " ".join(tokens)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def query_terms(text: str) -> list[str]:
    """FTS5 match terms for user text: each CJK run a phrase of its bigrams, each word quoted.

    Everything the user typed is quoted, so quotes, operators and column filters in the input
    are searched as plain words and never reach FTS5 as syntax.
    """
    terms: list[str] = []
    for run in _runs(text):
        if not _is_cjk(run[0]):
            terms.append(_quote(run))
        elif len(run) == 1:
            terms.append(_quote(run) + "*")
        else:
            pairs = [run[i:i + 2] for i in range(len(run) - 1)]
            terms.append(_quote(" ".join(pairs)))
    return terms


def match_all(text: str) -> str | None:
    terms = query_terms(text)
    return " AND ".join(terms) if terms else None


def match_any(text: str) -> str | None:
    """OR of the terms, with long CJK runs also split into their bigrams for partial matches."""
    terms: list[str] = []
    for run in _runs(text):
        if _is_cjk(run[0]) and len(run) > 2:
            terms.extend(_quote(run[i:i + 2]) for i in range(len(run) - 1))
        else:
            terms.extend(query_terms(run))
    seen = list(dict.fromkeys(terms))
    return " OR ".join(seen) if seen else None
