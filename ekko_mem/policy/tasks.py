"""Which open task a "done" statement closes: the one that shares its words. Pure."""
from __future__ import annotations

from ..retrieval.analysis import STOP_CHARS, STOP_WORDS
from ..tokens import is_cjk, runs, stem

SHARE = 0.5  # of the statement's words a task must hold to be the one it names


def _words(text: str) -> set[str]:
    """Informative words: stemmed Latin words and CJK bigrams, stop words left out."""
    out = set()
    for run in runs(text):
        if not is_cjk(run[0]):
            if run not in STOP_WORDS:
                out.add(stem(run))
            continue
        grams = [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
        out.update(g for g in grams if not all(ch in STOP_CHARS for ch in g))
    return out


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
