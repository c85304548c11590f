"""One ranked list from memory nodes, earlier messages and summaries. Pure: the store has
already fetched the candidates and the term counts.

Each candidate is scored by Okapi BM25 over its own tokens (so every kind is scored on one
scale), weighted by how much a structured memory is trusted, raised by its nearness in
meaning when semantic recall is on, lifted by how well its session matched as a whole, and
lifted when it falls in the question's time window. The list is then cut at a relevance
floor, near-duplicates are dropped, and the lines that belong with a hit (the other half of
its question/answer pair, the line before it, the reply to a question) come right after it.
"""
from __future__ import annotations

import math

from ..tokens import tokens
from .analysis import Query

K1 = 1.2
B = 0.75
FLOOR = 0.15         # a candidate scoring below this share of the best one is not relevant
NARROW_DAYS = 3      # a precise window this short narrows (everything in it first); others boost
WIDE_BOOST = 1.5
NEAR_DUPLICATE = 0.9   # Jaccard similarity of token sets above which a lower hit is dropped
DEDUP_WINDOW = 30
SESSION_LIFT = 2.0     # a message hit gains up to this multiple of its score from its session
VECTOR_WEIGHT = 0.5    # the nearest in meaning gains this share of the best word score
MEANING_FLOOR = 0.80   # similarity a candidate no word found needs to count (see by_meaning)
MEANING_SPREAD = 0.05
SHORT = 8              # texts with fewer distinct tokens are never called duplicates: two
                       # short notes share most of their words by chance


class Candidate:
    """One node, message or summary competing for a place in the ranked list."""
    __slots__ = ("kind", "id", "text", "created_at", "record", "weight", "origin", "fields",
                 "score", "matched", "via", "_tokens", "_parts")

    def __init__(self, kind: str, id: str, text: str, created_at: str, record: dict, *,
                 weight: float = 1.0, origin: str = "workspace", fields: tuple = ()) -> None:
        self.kind = kind              # "node", "message" or "summary"
        self.id = id
        self.text = text
        self.created_at = created_at
        self.record = record
        self.weight = weight          # trust in this kind of memory
        self.origin = origin          # which db it was read from
        self.fields = fields          # (text, weight) parts, when some parts say more
        self.score = 0.0
        self.matched: list[str] = []
        self.via: list[str] = []      # "lexical", "time", "pair"
        self._tokens: list[str] | None = None
        self._parts: list[tuple[list[str], float]] | None = None

    @property
    def token_list(self) -> list[str]:
        if self._tokens is None:
            self._tokens = [t for part in self.field_tokens() for t in part[0]]
        return self._tokens

    def field_tokens(self) -> list[tuple[list[str], float]]:
        """(tokens, weight) of each part: the fields when there are, else the whole text."""
        if self._parts is None:
            self._parts = [(tokens(text), weight)
                           for text, weight in self.fields or ((self.text, 1.0),)]
        return self._parts


def idf(df: int, total: int) -> float:
    total = max(total, df)
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def score(query: Query, candidates: list[Candidate], df: dict[str, int], total: int,
          near: list[Candidate] | None = None) -> None:
    """Set each candidate's score, matched terms and `via`, in place. `near` are the
    candidates nearest the question in meaning, nearest first (semantic recall), all of
    them among `candidates`.

    A single CJK character is too ambiguous to make a candidate relevant on its own (菜 is in
    香菜 and in 蔬菜): it adds to a candidate that matched a word or a bigram, unless the
    question has nothing longer.
    """
    if not candidates:
        return
    avgdl = sum(len(c.token_list) for c in candidates) / len(candidates) or 1.0
    weights = {t: idf(df.get(t, 0), total) for t in query.terms}
    strong = set(query.strong_terms)
    for cand in candidates:
        counts = _term_counts(cand, weights)
        if not strong & counts.keys():
            counts = {}
        norm = K1 * (1 - B + B * len(cand.token_list) / avgdl)
        cand.score = cand.weight * sum(weights[t] * n * (K1 + 1) / (n + norm)
                                       for t, n in counts.items())
        cand.matched = list(counts)
        if counts:
            cand.via = ["lexical"]
    if near:
        _add_meaning(candidates, near)
    _lift_sessions(candidates)
    if query.window:
        _apply_window(query.window, query.precise, candidates)


def by_meaning(hits: list[tuple[Candidate, float]], held: set[str]) -> list[Candidate]:
    """The candidates nearest in meaning that may count, nearest first: those the words
    found too, and the others only when they are near enough on their own (MEANING_FLOOR)
    and about as near as the nearest (within MEANING_SPREAD). A small model puts every text
    somewhat near every question (0.71-0.82 for unrelated pairs measured in both languages,
    0.80-0.88 for related ones), so without the floor the nearest memory came with every
    question, however unrelated. 0.80 and 0.05 cost the dev sets 0.1-0.4 points against no
    floor; 0.82 cost MemoryBank a point."""
    top = max((sim for _, sim in hits), default=0.0)
    return [cand for cand, sim in hits
            if cand.id in held or (sim >= MEANING_FLOOR and sim >= top - MEANING_SPREAD)]


def _add_meaning(candidates: list[Candidate], near: list[Candidate]) -> None:
    """With semantic recall on, each candidate near the question in meaning gains up to
    VECTOR_WEIGHT of the best word score, the nearest most, falling in a line by its place
    among the nearest. Added before sessions and dates lift the scores, so the meaning's
    candidates get those lifts too; a fusion of the two finished rankings (reciprocal rank)
    left them out and recalled less than words alone on the English dev sets. Ranks, not
    cosines: similarities of a small model crowd into a narrow band that differs by model."""
    best = max((c.score for c in candidates), default=0.0) or 1.0
    for place, cand in enumerate(near):
        cand.score += VECTOR_WEIGHT * best * (1 - place / len(near))
        if "vector" not in cand.via:
            cand.via.append("vector")


def _lift_sessions(candidates: list[Candidate]) -> None:
    """Lift each message hit by how much its session as a whole matched: a conversation
    keeps to a topic for a while, so the session where the question's words meet most
    holds its answer more often than a stray line that shares one word (measured on the
    recall sets, with and without unrelated chat mixed into each session). The session
    matching most lifts its hits by SESSION_LIFT of their score, the others in proportion;
    when everything is one session, the order does not change."""
    mass: dict[tuple, float] = {}
    for cand in candidates:
        if cand.kind == "message" and cand.score > 0:
            key = (cand.origin, cand.record.get("sessionId"))
            mass[key] = mass.get(key, 0.0) + cand.score
    if not mass:
        return
    top = max(mass.values())
    for cand in candidates:
        if cand.kind == "message" and cand.score > 0:
            cand.score *= 1 + SESSION_LIFT * mass[cand.origin, cand.record.get("sessionId")] / top


def _term_counts(cand: Candidate, weights: dict[str, float]) -> dict[str, float]:
    """Occurrences of each query term, a field's weight per occurrence (BM25F-style)."""
    counts: dict[str, float] = {}
    for part, weight in cand.field_tokens():
        for token in part:
            if token in weights:
                counts[token] = counts.get(token, 0) + weight
    return counts


def _apply_window(window: tuple[str, str], precise: bool, candidates: list[Candidate]) -> None:
    start, end = window
    narrow = precise and _days(start, end) <= NARROW_DAYS
    lift = max(c.score for c in candidates) or 1.0
    for cand in candidates:
        if not start <= cand.created_at < end:
            continue
        if narrow:  # everything said then comes first, best matches first among it
            cand.score = cand.score + lift + 1e-3
            cand.via.append("time")
        elif cand.score > 0:
            cand.score *= WIDE_BOOST
            cand.via.append("time")


def _days(start: str, end: str) -> float:
    from datetime import datetime
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))
            ).total_seconds() / 86400


def rank(candidates: list[Candidate], floor: float | None = None
         ) -> tuple[list[Candidate], int]:
    """Scored candidates, best first (newer first among equals), without those under the
    floor or repeating a better one; and how many were dropped for the floor."""
    floor = FLOOR if floor is None else floor
    scored = [c for c in candidates if c.score > 0]
    if not scored:
        return [], 0
    best = max(c.score for c in scored)
    kept = [c for c in scored if c.score >= floor * best]
    kept.sort(key=lambda c: c.created_at, reverse=True)
    kept.sort(key=lambda c: c.score, reverse=True)
    return _distinct(kept), len(scored) - len(kept)


def _distinct(ranked: list[Candidate]) -> list[Candidate]:
    """Drop repeats: the same token set anywhere, a near duplicate among the first
    DEDUP_WINDOW kept (where a repeat would waste budget; comparing every pair of a long
    list would cost more than it saves)."""
    out: list[Candidate] = []
    seen_ids: set[str] = set()
    seen_shapes: set[frozenset] = set()
    shapes: list[frozenset[str]] = []
    for cand in ranked:
        if cand.id in seen_ids:
            continue
        shape = frozenset(cand.token_list)
        if len(shape) >= SHORT and (shape in seen_shapes or len(out) < DEDUP_WINDOW and any(
                _near(shape, other) for other in shapes)):
            continue
        seen_ids.add(cand.id)
        if len(shape) >= SHORT:
            seen_shapes.add(shape)
            if len(out) < DEDUP_WINDOW:
                shapes.append(shape)
        out.append(cand)
    return out


def _near(a: frozenset[str], b: frozenset[str]) -> bool:
    # Sets of very different sizes cannot be that similar: skip the intersection.
    if min(len(a), len(b)) < NEAR_DUPLICATE * max(len(a), len(b)):
        return False
    return len(a & b) >= NEAR_DUPLICATE * len(a | b)


def asks(text: str) -> bool:
    """Whether a message asks something: the message after it is then most likely its
    answer. Only the reply to a question is brought along; after any other line the next
    one is as often a new topic, and costs budget for nothing (measured on the recall sets:
    every hit's next line recalls less than only a question's)."""
    return "?" in text or "？" in text


def with_partners(ranked: list[Candidate], partners: dict[str, list[Candidate]]
                  ) -> list[Candidate]:
    """Each message hit followed by the lines that come with it (unless already placed):
    the answer to a remembered question is usually in the reply, and the reverse. Measured:
    right beside its hit, the other half beats the same half ranked on its own at any lower
    share of the hit's score (measured with an earlier recall harness)."""
    out: list[Candidate] = []
    placed: set[str] = set()
    for cand in ranked:
        if cand.id in placed:
            continue
        out.append(cand)
        placed.add(cand.id)
        for other in partners.get(cand.id, ()):
            if other.id in placed:
                continue
            other.score = max(other.score, cand.score)
            if "pair" not in other.via:
                other.via.append("pair")
            out.append(other)
            placed.add(other.id)
    return out
