"""Precision and recall of the rule extractor per memory type, over labelled cases.

A proposed memory counts as right only when all of it is: operation, scope, type, key and
value. A wrong value is then both a false positive (what was stored) and a false negative
(what was missed), as it would be for the person relying on it.
"""
from __future__ import annotations

from collections import Counter

from ekko_mem.extract.rules import extract

NOW = "2026-03-01T12:00:00.000Z"
EOD = "2026-03-01T23:59:59.999Z"


def proposed(text: str) -> list[tuple]:
    message = {"id": "msg_1", "sessionId": "s1", "role": "user", "content": text,
               "createdAt": NOW}
    found = extract([message], now=NOW, end_of_day=EOD)["nodes"]
    return [(i["operation"], i["node"].get("scope"), i["node"]["type"], i["node"].get("key"),
             i["node"].get("valueJson")) for i in found]


def score(cases: list[tuple[str, list[tuple]]]) -> dict:
    """{"types": {type: {tp, fp, fn, precision, recall}}, "misses": [(text, got, expected)]}."""
    tp: Counter = Counter()
    fp: Counter = Counter()
    fn: Counter = Counter()
    misses = []
    for text, expected in cases:
        got = proposed(text)
        left = [tuple(e) for e in expected]
        for memory in got:
            if memory in left:
                left.remove(memory)
                tp[memory[2]] += 1
            else:
                fp[memory[2]] += 1
        for memory in left:
            fn[memory[2]] += 1
        if sorted(map(repr, got)) != sorted(repr(tuple(e)) for e in expected):
            misses.append((text, got, expected))
    types = {}
    for kind in sorted(set(tp) | set(fp) | set(fn)):
        t, p, n = tp[kind], fp[kind], fn[kind]
        types[kind] = {"tp": t, "fp": p, "fn": n,
                       "precision": t / (t + p) if t + p else 1.0,
                       "recall": t / (t + n) if t + n else 1.0}
    return {"types": types, "misses": misses, "cases": len(cases)}


def table(result: dict, title: str) -> str:
    lines = [f"{title}: {result['cases']} cases, {len(result['misses'])} not exactly right",
             f"{'type':<12} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>10} {'recall':>7}"]
    for kind, s in result["types"].items():
        lines.append(f"{kind:<12} {s['tp']:>4} {s['fp']:>4} {s['fn']:>4}"
                     f" {s['precision']:>10.2f} {s['recall']:>7.2f}")
    return "\n".join(lines)
