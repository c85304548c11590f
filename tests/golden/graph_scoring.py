"""Wrong edges and recall of the entity reader over labelled statements.

What counts as wrong is what a later answer would be told that was never said: an edge about
the wrong subject, a relation the wrong way round, a time read backwards or otherwise wrong, an
edge where none was expected, and an entity that is no entity (a common word taken for a name)
or of the wrong kind. An expected edge not found only lowers recall.
"""
from __future__ import annotations

from collections import Counter

from ekko_mem.extract.entities import read_graph

from .entities import NOW

# A case whose statement must give nothing: what an edge from it gets wrong.
NOTHING = {"negation": "polarity", "question": "mood", "hypothetical": "mood",
           "hearsay": "hearsay", "noun": "not a name"}


def edges(text: str) -> list[tuple]:
    """The edges read from `text`, in the golden set's shape."""
    return [(e.subject, e.relation, e.object if e.object is not None else e.value,
             e.value if e.object is not None else None, e.valid_from, e.valid_to)
            for e in read_graph(text, NOW).edges]


def entities(text: str) -> set[tuple[str, str]]:
    return {(e.kind, e.name) for e in read_graph(text, NOW).entities}


def expected_entities(spec: str) -> set[tuple[str, str]]:
    return {tuple(part.strip().split(":", 1)) for part in spec.split(";") if part.strip()}


def wrong_kind(got: tuple, expected: list[tuple], case: str) -> str:
    """Why an edge not among the expected ones is wrong."""
    subject, relation, target, word, since, until = got
    for e in expected:
        if e[1] != relation:
            continue
        if (e[0], e[2]) == (target, subject):
            return "direction"
        if e[2] == target and e[0] == subject:
            if e[3] != word:
                return "role word"
            return "time backwards" if (e[4], e[5]) == (until, since) else "time"
        if e[2] == target:
            return "subject"
    return NOTHING.get(case, "unexpected")


def graph_score(cases: list[tuple]) -> dict:
    """{"rows": {(lang, case): {statements, wrong, kinds, expected, found, entities,
    entities_found}}, "misses": [(lang, case, text, got, expected, kind)]}."""
    rows: dict = {}
    misses = []
    for lang, text, case, expected, spec in cases:
        row = rows.setdefault((lang, case), {"statements": 0, "wrong": 0, "kinds": Counter(),
                                             "expected": 0, "found": 0, "entities": 0,
                                             "entities_found": 0})
        row["statements"] += 1
        left = [tuple(e) for e in expected]
        row["expected"] += len(left)
        for got in edges(text):
            if got in left:
                left.remove(got)
                row["found"] += 1
                continue
            kind = wrong_kind(got, expected, case)
            row["wrong"] += 1
            row["kinds"][kind] += 1
            misses.append((lang, case, text, got, expected, kind))
        for e in left:
            misses.append((lang, case, text, None, e, "missed"))
        want, have = expected_entities(spec), entities(text)
        row["entities"] += len(want)
        row["entities_found"] += len(want & have)
        for kind, name in sorted(have - want):
            why = "entity kind" if any(n == name for _, n in want) else "not an entity"
            row["wrong"] += 1
            row["kinds"][why] += 1
            misses.append((lang, case, text, (kind, name), spec, why))
    return {"rows": rows, "misses": misses}


def wrong(result: dict) -> list[tuple]:
    return [m for m in result["misses"] if m[5] != "missed"]


def recall(result: dict) -> tuple[int, int]:
    rows = result["rows"].values()
    return sum(r["found"] for r in rows), sum(r["expected"] for r in rows)


def graph_table(result: dict, title: str) -> str:
    rows = result["rows"]
    lines = [f"{title}: {sum(r['statements'] for r in rows.values())} statements, "
             f"{sum(r['wrong'] for r in rows.values())} wrong edges or entities",
             f"{'lang':<5}{'case':<14}{'n':>4}{'wrong':>7}  {'edges':>7}  {'entities':>8}  kinds"]
    for (lang, case), r in sorted(rows.items()):
        found = f"{r['found']}/{r['expected']}" if r["expected"] else "-"
        named = f"{r['entities_found']}/{r['entities']}" if r["entities"] else "-"
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["kinds"].items()))
        lines.append(f"{lang:<5}{case:<14}{r['statements']:>4}{r['wrong']:>7}  {found:>7}  "
                     f"{named:>8}  {kinds}")
    found, total = recall(result)
    named = sum(r["entities_found"] for r in rows.values())
    names = sum(r["entities"] for r in rows.values())
    lines.append(f"recall of the expected edges: {found}/{total} ({100 * found / max(total, 1):.1f}%)"
                 f", of the expected entities: {named}/{names}")
    return "\n".join(lines)
