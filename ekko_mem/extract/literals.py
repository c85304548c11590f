"""What any text a rule's pattern matches in must hold, read from the pattern's parse tree.

The answer is a guard in triggers.py: a pattern is compiled only when the text passes it
(text.may_match). Parsing costs about a third of compiling, so this runs only when the table
is made (scripts/gen_triggers.py) and in its tests, never per process.

A guard is a few clauses, one per branch of the pattern's outer alternation; a text may match
only if all the conditions of some clause hold. A condition is a set of words: one of them is
in the text, or, for a branch that starts with ^, begins it. Why they are safe to rely on:
- a part that can match only a few exact strings (a literal, a class of a few characters, a
  group of such alternatives, an optional or briefly repeated one) stands for those strings,
  and a run of such parts for their concatenations;
- anchors and lookarounds match no text: they stand for the empty string; but what a
  positive lookaround needs is in the text all the same, beside the match;
- a sequence's match contains the match of each of its parts, so it needs what every part or
  run needs; an alternation's match is one branch's match, so it needs one of what each branch
  needs; a repeat needs what its body needs when it must occur at least once;
- a branch that starts with ^ (never multi-line here) matches at the start of the text, so
  the text begins with what the branch's match begins with;
- anything else (a wide class, \\w, ., a back-reference) needs nothing, and a pattern with a
  branch that needs nothing, or only the empty string, gets no guard.
Each word is folded as text.fold folds the text, so a case-blind match passes too; the tests
check, character by character, that folding keeps every case-blind equal pair equal.
"""
from __future__ import annotations

import re

try:
    from re import _constants as _c
    from re import _parser as _sre
except ImportError:  # Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _sre  # type: ignore[no-redef]

from .text import as_compiled, fold

_LIMIT = 64  # exact strings a part may stand for before it is taken as needing nothing
_KEPT = 3  # conditions kept per clause, the most selective: a few rule out nearly all texts
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT))
_START = (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING)

Condition = tuple[str, tuple[str, ...]]  # ("in" or "^": in the text or beginning it, words)


def guard(pattern: str) -> tuple[tuple[Condition, ...], ...] | None:
    """The clauses a text must pass one of for `pattern`, as rx compiles it, to match in it;
    None when nothing can be told from the pattern."""
    tree = _sre.parse(as_compiled(pattern), re.IGNORECASE)
    anchored = not tree.state.flags & re.MULTILINE  # else ^ also matches after a newline
    items = list(tree)
    outer = items[0][1][1] if len(items) == 1 and items[0][0] is _c.BRANCH else [items]
    clauses = []
    for branch in outer:
        clause = _clause(branch, anchored)
        if not clause:
            return None
        clauses.append(clause)
    return _merged(clauses)


def _clause(items, anchored: bool) -> list[Condition]:
    conditions = [("in", _minimal(words, "in")) for words in _options(items)]
    if anchored and items and items[0][0] is _c.AT and items[0][1] in _START:
        start = _starts(items[1:])
        if start and "" not in start:
            begins = _minimal(start, "^")
            # Beginning with "what" implies holding "what": that condition adds nothing.
            conditions = [("^", begins)] + [c for c in conditions if not all(
                any(word in head for word in c[1]) for head in begins)]
    return sorted(set(conditions), key=lambda c: (_strength(c), c), reverse=True)[:_KEPT]


def _merged(clauses: list[list[Condition]]) -> tuple[tuple[Condition, ...], ...]:
    """Clauses of one condition of a kind become one condition: "has a or has b" is "has one
    of a, b"."""
    single: dict[str, set[str]] = {}
    rest = []
    for clause in clauses:
        if len(clause) == 1:
            single.setdefault(clause[0][0], set()).update(clause[0][1])
        else:
            rest.append(tuple(clause))
    merged = [((kind, _minimal(words, kind)),) for kind, words in sorted(single.items())]
    return tuple(merged + sorted(set(rest)))


def _minimal(words, kind: str) -> tuple[str, ...]:
    # A word that holds another is implied by it: "okay" is found whenever "ok" is; at the
    # start, "okay" begins a text only where "ok" does.
    def implied(word: str, other: str) -> bool:
        return word != other and (word.startswith(other) if kind == "^" else other in word)
    kept = {w for w in words if not any(implied(w, o) for o in words)}
    return tuple(sorted(kept, key=lambda w: (len(w), w)))


def _exact_seq(items) -> set[str] | None:
    out = {""}
    for item in items:
        part = _exact(item)
        if part is None:
            return None
        out = {a + b for a in out for b in part}
        if len(out) > _LIMIT:
            return None
    return out


def _exact(item) -> set[str] | None:
    """Every string `item` can match, when they are few."""
    op, av = item
    if op is _c.LITERAL:
        return {fold(chr(av))}
    if op is _c.IN:
        if len(av) <= _LIMIT and all(o is _c.LITERAL for o, _ in av):
            return {fold(chr(code)) for _, code in av}
        return None
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return {""}
    if op is _c.SUBPATTERN:
        return _exact_seq(av[-1])
    if op is _c.BRANCH:
        out = _union(av[1], _exact_seq)
        return out if out is not None and len(out) <= _LIMIT else None
    if op in _REPEATS:
        low, high, body = av
        one = _exact_seq(body) if high <= 3 else None
        if one is None:
            return None
        out, run = set(), {""}
        for count in range(high + 1):
            if count >= low:
                out |= run
            run = {a + b for a in run for b in one}
            if len(run) > _LIMIT:
                return None
        return out
    return None


def _options(items) -> list[set[str]]:
    """Sets of words, each needed by every match of the sequence `items`."""
    options: list[set[str]] = []
    run: list[set[str]] = []
    for item in items:
        if item[0] is _c.ASSERT:
            options.append(_needs_seq(item[1][1]) or set())
        exact = _exact(item)
        if exact is not None:
            run.append(exact)
            continue
        options += _runs(run)
        run = []
        options.append(_needs(item) or set())
    options += _runs(run)
    return [o for o in options if o and "" not in o]


def _needs_seq(items) -> set[str] | None:
    return max(_options(items), key=lambda words: _strength(("in", words)), default=None)


def _runs(run: list[set[str]]) -> list[set[str]]:
    """The concatenations of consecutive exact parts, cut where they would grow too many."""
    out, joined = [], {""}
    for part in run:
        grown = {a + b for a in joined for b in part}
        if len(grown) > _LIMIT:
            out.append(joined)
            grown = part
        joined = grown
    return [*out, joined]


def _needs(item) -> set[str] | None:
    op, av = item
    if op is _c.SUBPATTERN:
        return _needs_seq(av[-1])
    if op is _c.BRANCH:  # a branch that needs nothing lets the whole alternation through
        return _union(av[1], _needs_seq, empty_is_none=True)
    if op in _REPEATS and av[0] >= 1:
        return _needs_seq(av[2])
    return None


def _starts(items) -> set[str] | None:
    """Strings one of which begins every match of the sequence `items` ("" when unknown)."""
    out = {""}
    for item in items:
        exact = _exact(item)
        if exact is None:
            return _joined(out, _starts_of(item))
        out = _joined(out, exact)
        if out is None:
            return None
    return out


def _starts_of(item) -> set[str] | None:
    op, av = item
    if op is _c.SUBPATTERN:
        return _starts(av[-1])
    if op is _c.BRANCH:
        return _union(av[1], _starts)
    if op in _REPEATS and av[0] >= 1:
        return _starts(av[2])
    return {""}


def _joined(heads: set[str] | None, tails: set[str] | None) -> set[str] | None:
    if heads is None or tails is None:
        return None
    out = {a + b for a in heads for b in tails}
    return out if len(out) <= _LIMIT else None


def _strength(condition: Condition) -> tuple[int, int, int]:
    # Beginning the text is rarer than being in it; a Chinese character is rarer in a text than
    # a Latin letter; fewer words test faster.
    kind, words = condition
    return (kind == "^", min(sum(1 if ch.isascii() else 3 for ch in w) for w in words),
            -len(words))


def _union(branches, read, *, empty_is_none: bool = False) -> set[str] | None:
    """What `read` gives each branch of an alternation, together; None as soon as a branch
    gives None (or nothing, with `empty_is_none`)."""
    out: set[str] = set()
    for branch in branches:
        part = read(branch)
        if part is None or (empty_is_none and not part):
            return None
        out |= part
    return out
