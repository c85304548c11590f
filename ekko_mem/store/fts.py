"""FTS5 match expressions built from user text, in the tokens of ekko_mem/tokens.py.

Everything the user typed is quoted, so quotes, operators and column filters in the input are
searched as plain words and never reach FTS5 as syntax.
"""
from __future__ import annotations

from ..tokens import index_text, is_cjk, runs, stem

__all__ = ["index_text", "query_terms", "match_all", "match_terms"]


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def query_terms(text: str) -> list[str]:
    """FTS5 match terms for user text: each CJK run a phrase of its bigrams, each word quoted."""
    terms: list[str] = []
    for run in runs(text):
        if not is_cjk(run[0]):
            terms.append(_quote(stem(run)))
        elif len(run) == 1:
            terms.append(_quote(run))
        else:
            terms.append(_quote(" ".join(run[i:i + 2] for i in range(len(run) - 1))))
    return terms


def match_all(text: str) -> str | None:
    terms = query_terms(text)
    return " AND ".join(terms) if terms else None


def match_term(term: str) -> str:
    """One index token, quoted."""
    return _quote(term)


def match_terms(terms: list[str]) -> str | None:
    """OR of index tokens, each quoted."""
    unique = list(dict.fromkeys(_quote(t) for t in terms if t))
    return " OR ".join(unique) if unique else None
