"""Which open task a "done" statement closes: the one that shares its words. Pure."""
from __future__ import annotations

from ..retrieval.analysis import informative_terms
from ..tokens import is_cjk

SHARE = 0.5  # of the statement's words a task must hold to be the one it names


def _words(text: str) -> set[str]:
    """Informative words: stemmed Latin words and CJK bigrams (a lone character only when no
    bigram holds it), as retrieval weighs them."""
    terms = set(informative_terms(text))
    pairs = "".join(t for t in terms if len(t) == 2 and is_cjk(t[0]))
    return {t for t in terms if not (len(t) == 1 and is_cjk(t) and t in pairs)}


def named_tasks(said: str, tasks: list[dict]) -> list[dict]:
    """The tasks among `tasks` that `said` names: those holding the largest share of its words,
    at least SHARE of them. More than one means the statement is ambiguous."""
    wanted = _words(said)
    if not wanted:
        return []
    scored = [(len(wanted & _words(f"{t['title']} {t['content']}")) / len(wanted), t)
              for t in tasks]
    best = max((share for share, _ in scored), default=0.0)
    if best < SHARE:
        return []
    return [t for share, t in scored if share == best]
