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


# --- statements read the right way round ---------------------------------------------------
# What counts as wrong is what a model would be told that the user never said: a value stored
# the wrong way round, about someone else, from a question, hypothetical or quote, a fragment
# taken for a value, a passing state kept as lasting, or a task opened or closed wrongly.
WRONG_KINDS = {"question": "mood", "hypothetical": "mood", "quote": "mood",
               "third_party": "subject", "negation": "polarity", "correction": "polarity",
               "task_open": "task", "task_done": "task", "temporary": "time"}


def values(text: str) -> list[tuple[str, object, bool]]:
    """The structured values proposing `text` would store: (key, value, temporary). A task is
    ("task", "open" | "done"); a lifted avoidance stores nothing and is left out."""
    message = {"id": "msg_1", "sessionId": "s1", "role": "user", "content": text,
               "createdAt": NOW}
    out = []
    for item in extract([message], now=NOW, end_of_day=EOD)["nodes"]:
        node = item["node"]
        if item["operation"] == "expire":
            continue
        if node.get("type") == "task":
            out.append(("task", (node.get("valueJson") or {}).get("state"), False))
        elif node.get("key"):
            out.append((node["key"], node.get("valueJson"), bool(node.get("expiresAt"))))
    return out


def _same(got: object, want: object) -> bool:
    if isinstance(got, str) and isinstance(want, str):
        return got.strip().casefold() == want.strip().casefold()
    return got == want


def read_score(cases: list[tuple[str, str, str, list[tuple]]]) -> dict:
    """{(lang, case): {"wrong": n, "kinds": Counter, "expected": n, "found": n}, plus "misses":
    [(lang, case, text, got, expected, kind)]}: per language and case, the values stored wrongly
    and the recall of the right ones."""
    rows: dict = {}
    misses = []
    for lang, text, case, expected in cases:
        row = rows.setdefault((lang, case), {"wrong": 0, "kinds": Counter(), "expected": 0,
                                             "found": 0, "statements": 0})
        row["statements"] += 1
        temporary = ("temporary", True) in [tuple(e) for e in expected]
        wanted = [tuple(e) for e in expected if tuple(e) != ("temporary", True)]
        row["expected"] += len(wanted)
        for key, value, passing in values(text):
            hit = next((w for w in wanted if w[0] == key and _same(value, w[1])), None)
            kind = None
            if hit is None:
                kind = "task" if key == "task" else WRONG_KINDS.get(case, "value")
            elif key != "task" and passing != (temporary and key != "allergy"):
                kind = "time"
            if kind:
                row["wrong"] += 1
                row["kinds"][kind] += 1
                misses.append((lang, case, text, (key, value, passing), expected, kind))
            if hit is not None:
                wanted.remove(hit)
                row["found"] += 1
    return {"rows": rows, "misses": misses}


def read_table(result: dict, title: str) -> str:
    rows = result["rows"]
    lines = [f"{title}: {sum(r['statements'] for r in rows.values())} statements, "
             f"{sum(r['wrong'] for r in rows.values())} wrong structured values",
             f"{'lang':<5}{'case':<14}{'n':>4}{'wrong':>7}  {'recall':>13}  kinds"]
    for (lang, case), r in sorted(rows.items()):
        recall = f"{r['found']}/{r['expected']}" if r["expected"] else "-"
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["kinds"].items()))
        lines.append(f"{lang:<5}{case:<14}{r['statements']:>4}{r['wrong']:>7}  {recall:>13}  "
                     f"{kinds}")
    found = sum(r["found"] for r in rows.values())
    total = sum(r["expected"] for r in rows.values())
    lines.append(f"recall of the right values: {found}/{total}"
                 f" ({100 * found / max(total, 1):.1f}%)")
    return "\n".join(lines)
