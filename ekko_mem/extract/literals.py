"""What any text an extraction pattern matches in must hold, read off the pattern's own text.

triggers.py holds it (scripts/gen_triggers.py writes it with this module), and text.py compiles
a pattern only for a text that passes: reading a pattern costs about as much as compiling it,
so this runs when the table is written and in its tests, never per process.

A guard is a few clauses, one per branch of the pattern's outer alternation; a text may match
only if all the conditions of some clause hold. A condition is a set of words: one of them is
in the text, or, for a branch that starts with ^, begins it. Why they are safe to rely on:
- a part that can match only a few exact strings (a literal, a class of a few characters, a
  group of such alternatives, an optional one) stands for those strings, and a run of such
  parts for their concatenations; anchors and lookarounds stand for the empty string, though
  what a positive lookaround needs is in the text all the same;
- a sequence's match holds the match of each of its parts, and a part repeated at least once
  holds its body's; an alternation's match is one branch's, so it needs one of what each
  branch needs;
- a branch that starts with ^ (never multi-line here) matches at the start of the text, so the
  text begins with what the run of exact parts after the ^ matches;
- anything else (a wide class, \\w, ., a back-reference) needs nothing, a construct not read
  here leaves the pattern without a guard, and so does a branch that needs nothing.
Each word is folded as text.fold folds the text, so a case-blind match passes too; the tests
check, character by character, that folding keeps every case-blind equal pair equal.
"""
from __future__ import annotations

import re

from .text import fold

_LIMIT = 64  # exact strings a part may stand for before it is taken as needing nothing
_SYNTAX = "\\[()|.^$?*+{"
_ESCAPE = r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|N\{[^}]*\}|[0-9]+|.)"
_ITEMS = re.compile(_ESCAPE + "|.", re.DOTALL)  # of a class
_TOKENS = re.compile(_ESCAPE + r"""
  | \[\^?\]?(?:\\.|[^\]\\])*\]                      # a class
  | \((?:\?(?:P<\w+>|:|<?[=!]|[aiLmsux-]+[:)])?)?   # a group or flags; "(?" alone is not read
  | [)|.^$]
  | \{\d*,?\d*\}[?+]? | [?*+][?+]?                  # a repeat, or {} as literal text
  | [^\\\[()|.^$?*+{]+ | .                          # literal text
""", re.VERBOSE | re.DOTALL)

_KEPT = 3  # conditions kept per clause, the most selective: a few rule out nearly all texts

Words = frozenset[str]
Exact = set[str] | None  # the strings a part can match, when they are few
Condition = tuple[str, Words]  # ("in" or "^": in the text or beginning it, words)
# What a part matches exactly, the words it needs one of (the rarest it found), and strings
# one of which begins every match of it.
Part = tuple[Exact, "Words | None", Exact]


class _Unread(Exception):
    """A construct this module does not read."""


def guard(pattern: str) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] | None:
    """The clauses a text must pass one of for `pattern` to match in it, case-blind; None
    when nothing can be told from the pattern."""
    tokens = _TOKENS.findall(pattern)
    # (?m) lets ^ match after any newline, not only at the start.
    anchored = not any(t[:2] == "(?" and t[-1] == ")" and "m" in t for t in tokens)
    clauses, at = [], 0
    try:
        while True:
            begins = at < len(tokens) and tokens[at] == "^"
            _, needs, starts, at = _sequence(tokens, at)
            clause = _clause(needs, starts if anchored and begins else None)
            if not clause:
                return None
            clauses.append(clause)
            if at == len(tokens):
                break
            if tokens[at] != "|":
                return None  # an unbalanced ")": the compiler says what is wrong
            at += 1
    except _Unread:
        return None
    return tuple(tuple((kind, tuple(sorted(words, key=lambda w: (len(w), w))))
                       for kind, words in clause) for clause in _merged(clauses))


def _clause(needs: list[Words], start: Exact) -> list[Condition]:
    conditions = {("in", _minimal(words, "in")) for words in needs}
    if start and "" not in start:
        conditions.add(("^", _minimal(start, "^")))
    # A condition met wherever another is adds nothing: holding or beginning with "from now on
    # no" is holding "no".
    kept = [c for c in conditions if c[0] == "^" or not any(
        d != c and all(any(word in other for word in c[1]) for other in d[1])
        for d in conditions)]
    return sorted(kept, key=lambda c: (c[0] == "^", _strength(c[1]), sorted(c[1])),
                  reverse=True)[:_KEPT]


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
    return tuple(merged + list(dict.fromkeys(rest)))


def _minimal(words, kind: str) -> Words:
    # A word that holds another is implied by it: "okay" is found whenever "ok" is; at the
    # start, "okay" begins a text only where "ok" does.
    def implied(word: str, other: str) -> bool:
        return word != other and (word.startswith(other) if kind == "^" else other in word)
    return frozenset(w for w in words if not any(implied(w, o) for o in words))


def _alternation(tokens: list[str], at: int) -> tuple[Part, int]:
    """A group's alternatives: what any of them matches exactly, one of what each needs most
    selectively (None when one needs nothing), and what any of them begins with."""
    exact: Exact = set()
    starts: Exact = set()
    picks: list[Words] | None = []
    while True:
        branch_exact, needs, branch_starts, at = _sequence(tokens, at)
        exact = _union(exact, branch_exact)
        starts = _union(starts, branch_starts)
        picks = None if picks is None or not needs else [*picks, max(needs, key=_strength)]
        if at < len(tokens) and tokens[at] == "|":
            at += 1
            continue
        return (exact, None if picks is None else frozenset().union(*picks), starts), at


def _sequence(tokens: list[str], at: int) -> tuple[Exact, list[Words], Exact, int]:
    """What a sequence matches exactly, the sets of words it needs one of each, and strings
    one of which begins every match of it."""
    needs: list[Words] = []
    starts: Exact = None  # decided at the first part that is not exact
    run: set[str] = {""}  # the concatenations of the exact parts read last
    whole: Exact = {""}
    while at < len(tokens) and tokens[at] not in ("|", ")"):
        token = tokens[at]
        if len(token) > 1 and token[0] not in _SYNTAX and _repeat(tokens, at + 1):
            tokens[at: at + 1] = [token[:-1], token[-1]]  # a repeat takes the last letter only
            continue
        (exact, needed, begins), at = _atom(tokens, at)
        if _repeat(tokens, at):
            (exact, needed, begins), at = _repeated(exact, needed, begins, tokens[at]), at + 1
        if needed and (exact is None or exact == {""}):  # else the run holds what it needs
            needs.append(needed)
        if exact is None:
            if whole is not None:
                starts = _joined(run, begins or {""})
            needs.append(frozenset(run))
            run, whole = {""}, None
            continue
        grown = _joined(run, exact)
        if grown is None:
            starts = run if whole is not None else starts
            needs.append(frozenset(run))
            grown, whole = exact, None
        run = grown
        whole = _joined(whole, exact)
    needs.append(frozenset(run))
    return whole, [words for words in needs if "" not in words], (
        run if whole is not None else starts), at


def _atom(tokens: list[str], at: int) -> tuple[Part, int]:
    token = tokens[at]
    if token[0] == "\\":
        exact = _escape(token)
    elif token[0] == "[":
        exact = _class(token)
    elif token in ("^", "$"):
        exact = {""}
    elif token == ".":
        exact = None
    elif token[0] == "(":
        return _group(tokens, at)
    elif _repeat(tokens, at) or (token.startswith("{}") and token != "{}"):
        raise _Unread  # a repeat of nothing, or {}? and the like
    else:
        exact = {fold(token)}
    return (exact, None, exact), at + 1


def _group(tokens: list[str], at: int) -> tuple[Part, int]:
    token = tokens[at]
    if token == "(?" or (token[2:3] in tuple("aiLmsux-") and "x" in token):
        raise _Unread  # a conditional, a comment, a reference by name, verbose syntax
    if token.endswith(")"):
        return ({""}, None, {""}), at + 1  # flags for the whole pattern
    (exact, best, starts), end = _alternation(tokens, at + 1)
    if end >= len(tokens):
        raise _Unread
    if token in ("(?=", "(?<="):  # what is looked at is in the text, beside the match
        return ({""}, _stronger(best, exact), {""}), end + 1
    if token in ("(?!", "(?<!"):
        return ({""}, None, {""}), end + 1
    return (exact, best, starts), end + 1


def _escape(token: str) -> Exact:
    if token[1:] in ("b", "B", "A", "Z"):
        return {""}
    char = _char(token)
    return None if char is None else {fold(char)}


def _char(escape: str) -> str | None:
    """The character an escape stands for; None for \\d \\s \\w, a reference or a name."""
    letter = escape[1:2]
    if letter in ("u", "U", "x") and len(escape) > 2:
        return chr(int(escape[2:], 16))
    if letter and letter in "ntrfva":
        return "\n\t\r\f\v\a"["ntrfva".index(letter)]
    return None if not letter or letter.isalnum() else letter


def _class(token: str) -> Exact:
    items = _ITEMS.findall(token[1:-1])
    if items[:1] == ["^"] or "-" in items[1:-1] or len(items) > _LIMIT:
        return None  # negated, a range, or too many
    chars = [_char(item) if item[0] == "\\" else item for item in items]
    return None if None in chars else {fold(char) for char in chars}


def _repeat(tokens: list[str], at: int) -> bool:
    # {2,5} and {,} repeat; {} and a { that is not closed so are literal text.
    token = tokens[at] if at < len(tokens) else " "
    return token[0] in "?*+" or (token[0] == "{" and "}" in token and token[:2] != "{}")


def _repeated(exact: Exact, best: Words | None, starts: Exact, token: str) -> Part:
    least = 1 if token[0] == "+" else 0 if token[0] in "?*" else int(
        token[1:].split(",")[0].rstrip("}?+") or 0)
    if least:
        return None, _stronger(best, exact), starts
    once = token[0] == "?" or token.rstrip("?+") in ("{0,1}", "{,1}")
    optional = exact | {""} if once and exact is not None else None
    return optional, None, optional


def _joined(heads: Exact, tails: Exact) -> Exact:
    if heads is None or tails is None or len(heads) * len(tails) > _LIMIT:
        return None
    return {a + b for a in heads for b in tails}


def _union(some: Exact, more: Exact) -> Exact:
    if some is None or more is None or len(some | more) > _LIMIT:
        return None
    return some | more


def _stronger(best: Words | None, found: Exact) -> Words | None:
    if not found or "" in found:
        return best
    return frozenset(found) if best is None else max(best, frozenset(found), key=_strength)


def _strength(words: Words) -> tuple[int, int]:
    # A Chinese character is rarer in a text than a Latin letter (a byte against three, in
    # UTF-8); fewer words test faster.
    return min(len(w.encode()) for w in words), -len(words)
