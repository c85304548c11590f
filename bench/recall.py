"""Recall of `context` on every dev set by the shared protocol, beside the BM25 floor.

Usage: python -m bench.recall [--sets mb_cn,mb_en,locomo] [--no-semantic] [--quick N] [--json]
                              [--shared PATH] [--bin PATH]

The protocol is `../shared/eval` (its README): a message counts as recalled only when its text
is in the printed context cut at the budget; BM25 over turns is packed into the same budget in
the same run. Each set is run by the shared harness as a subprocess: ekko-mem lexical, ekko-mem
with semantic recall on (when the [semantic] extra loads in ekko-mem's Python), and BM25.
MemoryBank cn and en at 500 tokens, LoCoMo dev8 at 1,000. The figure is the `overall (1-4)`
row's recall within the budget; LoCoMo also gets its category rows.

Exit codes: 0 done; 1 a harness run failed; 2 a bad option, or no shared folder, data or
ekko-mem where they are looked for.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .recall_protocol import (CATEGORIES, ProtocolError, dataset, find_bin, locate, measure,
                              convert_memorybank, semantic_installed)


@dataclass(frozen=True)
class DevSet:
    label: str
    budget: int
    lang: str = ""          # MemoryBank's language; empty for LoCoMo


SETS = {
    "mb_cn": DevSet("MemoryBank cn", 500, "cn"),
    "mb_en": DevSet("MemoryBank en", 500, "en"),
    "locomo": DevSet("LoCoMo dev8", 1000),
}
NOT_RUN = {"skipped": "semantic: skipped", "not installed": "semantic: not installed"}


def run_sets(eval_dir: Path, names: list[str], ekko_bin: Path, semantic: str,
             quick: int = 0) -> dict:
    """Every named set through the harness; `semantic` is "on", "skipped" or "not installed"."""
    retrievers = ("lexical", "semantic", "bm25") if semantic == "on" else ("lexical", "bm25")
    sets = []
    with tempfile.TemporaryDirectory(prefix="ekko-recall-") as tmp:
        for name in names:
            spec = SETS[name]
            limit = quick if not spec.lang else 0
            if spec.lang:
                data = convert_memorybank(eval_dir, spec.lang, Path(tmp) / f"{name}.json")
            else:
                data = dataset(eval_dir, "locomo", "locomo_dev8.json")
                if not data.is_file():
                    raise ProtocolError(f"bench.recall: no LoCoMo data at {data}; the shared "
                                        "folder must hold datasets/locomo", code=2)
            label = spec.label + (_first(limit) if limit else "")
            figures = measure(eval_dir, data, spec.budget, ekko_bin, retrievers, limit, name)
            sets.append({"set": name, "label": label, "budget": spec.budget,
                         "figures": figures})
    return {"semantic": semantic, "sets": sets}


def rows(results: dict) -> list[dict]:
    """One row per set (its overall figure) and, for LoCoMo, one per category."""
    out = []
    for entry in results["sets"]:
        figures = entry["figures"]
        out.append(_row(entry, "overall", figures["bm25"].questions,
                        {r: f.overall for r, f in figures.items()}))
        if entry["set"] != "locomo":
            continue
        for category in CATEGORIES:
            if category in figures["bm25"].categories:
                questions = figures["bm25"].categories[category][0]
                out.append(_row(entry, category, questions,
                                {r: f.categories[category][1] for r, f in figures.items()}))
    return out


def _row(entry: dict, part: str, questions: int, recall: dict[str, float]) -> dict:
    row = {"set": entry["set"], "label": entry["label"], "part": part, "budget": entry["budget"],
           "questions": questions, "lexical": recall["lexical"],
           "semantic": recall.get("semantic"), "bm25": recall["bm25"]}
    for retriever in ("lexical", "semantic"):
        value = recall.get(retriever)
        row[f"{retriever}-bm25"] = None if value is None else round(value - recall["bm25"], 1)
    return row


def as_json(results: dict) -> str:
    return json.dumps({"semantic": results["semantic"], "rows": rows(results)}, indent=2,
                      ensure_ascii=False)


def table(results: dict) -> str:
    """Markdown, so the table can be pasted as is."""
    lines = ["| set | budget | ekko lexical | ekko semantic | BM25 | lexical−BM25 "
             "| semantic−BM25 |", "|---|---|---|---|---|---|---|"]
    for row in rows(results):
        name = row["label"] if row["part"] == "overall" else f"{row['label']} · {row['part']}"
        cells = [f"{name} ({row['questions']:,} q)", f"{row['budget']:,}",
                 _pct(row["lexical"]), _pct(row["semantic"]), _pct(row["bm25"]),
                 _delta(row["lexical-bm25"]), _delta(row["semantic-bm25"])]
        lines.append("| " + " | ".join(cells) + " |")
    if results["semantic"] in NOT_RUN:
        lines.append("")
        lines.append(NOT_RUN[results["semantic"]])
    return "\n".join(lines)


def _first(limit: int) -> str:
    return ", first conversation" if limit == 1 else f", first {limit} conversations"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _delta(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f}"


def _sets(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETS]
    if unknown or not names:
        raise ProtocolError(f"bench.recall: unknown set {', '.join(unknown) or '(none)'}; "
                            f"--sets takes {','.join(SETS)}", code=2)
    return list(dict.fromkeys(names))


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("takes a number of conversations, 1 or more")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help="sets to run, comma-separated")
    parser.add_argument("--no-semantic", action="store_true",
                        help="skip ekko-mem with semantic recall on")
    parser.add_argument("--quick", type=_positive, default=0, metavar="N",
                        help="LoCoMo: only its first N conversations")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--shared", help="the shared eval folder (default: $EKKO_SHARED, "
                                         "else ../shared/eval beside the clone)")
    parser.add_argument("--bin", help="the ekko-mem to measure (default: the one beside "
                                      "this Python)")
    args = parser.parse_args(argv)
    try:
        names = _sets(args.sets)
        eval_dir = locate(args.shared, os.environ)
        ekko_bin = find_bin(args.bin)
        semantic = ("skipped" if args.no_semantic else
                    "on" if semantic_installed(ekko_bin) else "not installed")
        results = run_sets(eval_dir, names, ekko_bin, semantic, args.quick)
    except ProtocolError as e:
        print(e, file=sys.stderr)
        return e.code
    print(as_json(results) if args.json else table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
