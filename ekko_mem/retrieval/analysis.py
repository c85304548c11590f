"""Query analysis: a question becomes weighted index terms and, where it names one, a time
window. Pure: no I/O, the clock is passed in."""
from __future__ import annotations

from datetime import datetime

from ..tokens import cjk_tokens, is_cjk, runs, stem
from .timewords import read_window

QUESTION_CHARS = 4_000   # a longer question is read up to here: past it, it only costs time
MAX_TERMS = 64           # informative terms looked up per question

# Words that carry no topic. Chosen from grammar (pronouns, auxiliaries, question words,
# particles), never from any one conversation's wording.
STOP_WORDS = frozenset("""a an the and or but if of at by for with about to from in on into
over under is am are was were be been being do does did done have has had i me my mine myself
you your yours yourself he him his she her hers it its we us our ours they them their theirs
this that these those what which who whom whose when where why how not no so too very can
could will would shall should may might must just than then there here as up down out off
again also any some all each both few more most other such only own same s t don now let
please tell remember recall ever before once said say told mention mentioned talk talked
know think yes ok okay oh hi hello thanks thank really something anything""".split())
# Chinese function characters: pronouns, particles, auxiliaries, question words. A bigram made
# only of these (我们, 什么, 曾经, 时候) is as empty as its characters.
STOP_CHARS = frozenset("的了吗呢吧啊呀么是我你他她它们这那哪什个有在和与就都也还很过曾经当时候"
                       "被把给对向从让会能要想说讲提到记得还记吗嘛哦喔呗之其此些么样怎如何谁"
                       "吗几多少")


class Query:
    """A question as retrieval reads it. (A plain class: dataclasses imports inspect, a
    start-up cost before every model call.)"""
    __slots__ = ("text", "terms", "window", "precise", "yearless")

    def __init__(self, text: str, terms: list[str] | None = None,
                 window: tuple[str, str] | None = None, precise: bool = False,
                 yearless: bool = False) -> None:
        self.text = text
        self.terms = terms or []   # informative index tokens, unique
        self.window = window       # [start, end) in createdAt's form
        self.precise = precise     # the window names a past moment, not just a hint
        self.yearless = yearless   # its words named no year: an earlier year's may be meant

    @property
    def strong_terms(self) -> list[str]:
        """The terms that can make a row relevant on their own: words and CJK bigrams. A
        single CJK character only adds to a match (菜 is in 香菜 and in 蔬菜), unless the
        question has nothing longer."""
        return [t for t in self.terms if not (len(t) == 1 and is_cjk(t))] or self.terms

    @property
    def empty(self) -> bool:
        return not self.terms and self.window is None


def analyse(text: str, now: datetime) -> Query:
    """Terms and time window of a question; stop words go unless nothing else is left."""
    text = (text or "")[:QUESTION_CHARS]
    found = read_window(text, now) if text else None
    lexical = text
    if found:
        for start, end in sorted(found[1], reverse=True):
            lexical = lexical[:start] + " " + lexical[end:]
    kept, dropped = _terms(lexical)
    return Query(text=text, terms=kept or dropped, window=found[0] if found else None,
                 precise=bool(found and found[2]), yearless=bool(found and found[3]))


def informative_terms(text: str) -> list[str]:
    """The terms of `text` a search weighs: stemmed words and CJK tokens, stop words out."""
    return _terms(text)[0]


def _terms(text: str) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    dropped: list[str] = []
    for run in runs(text):
        if is_cjk(run[0]):
            for token in cjk_tokens(run):
                (dropped if all(ch in STOP_CHARS for ch in token) else kept).append(token)
        elif run in STOP_WORDS:
            dropped.append(stem(run))
        else:
            kept.append(stem(run))
    return list(dict.fromkeys(kept))[:MAX_TERMS], list(dict.fromkeys(dropped))[:MAX_TERMS]
