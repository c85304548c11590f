"""Text as FTS5 sees it: pre-tokenised identically at index and at query time.

FTS5's own tokenizers cannot find 香菜 inside 用户不吃香菜 (unicode61 keeps a CJK run as one
token; trigram needs three characters), so text is rewritten before it reaches FTS5:
CJK runs become overlapping bigrams plus their last character alone, Latin words are lower-cased.
A one-character CJK query then becomes a prefix query, which meets every bigram that starts with
the character and the lone last character of each run.
"""
from __future__ import annotations

# CJK: kana, CJK extension A, unified ideographs, compatibility ideographs, hangul.
# Plain comparisons: compiling an equivalent regex costs ~3 ms at every start-up, and this
# runs for every character logged.


def _is_cjk(ch: str) -> bool:
    return ("\u4e00" <= ch <= "\u9fff" or "\u3040" <= ch <= "\u30ff"
            or "\u3400" <= ch <= "\u4dbf" or "\uac00" <= ch <= "\ud7af"
            or "\uf900" <= ch <= "\ufaff")


def _runs(text: str) -> list[str]:
    """Maximal runs of CJK characters, and of other letters and digits, lower-cased."""
    runs: list[str] = []
    current: list[str] = []
    current_cjk = False
    for ch in text.lower():
        if ch.isalnum():
            cjk = ch > "\u303f" and _is_cjk(ch)
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


def split_expression(match: str) -> tuple[list[str], str]:
    """The terms of an expression built by match_all/match_any, and their joiner.

    Safe to split on the upper-case operators: every term is quoted and lower-cased.
    """
    for joiner in (" AND ", " OR "):
        if joiner in match:
            return match.split(joiner), joiner
    return [match], " AND "
