"""Precision and recall per memory type of the rule extractor on the labelled cases.

Usage: python -m bench.golden [--misses]

Three sets: the golden cases the rules are tested against (tests/golden/extraction_cases.py),
and held-out cases written apart from the rules (tests/golden/heldout_cases.py), which say how
well the rules carry over to phrasings they were not written for; and everyday statements
(tests/golden/statements.py), scored on what a model would be told wrongly: values read the
wrong way round, about someone else, from a question, hypothetical or quote, fragments taken
for values, passing states kept as lasting, tasks opened or closed wrongly.

A second section scores the entity reader (tests/golden/entities.py): edges about the wrong
subject, the wrong way round, with times read wrongly, or where none was said, and the recall
of the expected edges.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from golden import entities, extraction_cases, heldout_cases, statements  # noqa: E402
from golden.graph_scoring import graph_score, graph_table  # noqa: E402
from golden.scoring import read_score, read_table, score, table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.golden")
    parser.add_argument("--misses", action="store_true", help="list each case not exactly right")
    args = parser.parse_args(argv)
    for title, cases in (("golden", extraction_cases.CASES), ("held-out", heldout_cases.CASES)):
        result = score(cases)
        print(table(result, title))
        if args.misses:
            for text, got, expected in result["misses"]:
                print(f"  {text!r}\n    got      {got}\n    expected {expected}")
        print()
    result = read_score(statements.CASES)
    print(read_table(result, "everyday statements"))
    if args.misses:
        _misses(result, "stored")
    print()
    result = graph_score(entities.CASES)
    print(graph_table(result, "entities and relationships"))
    if args.misses:
        _misses(result, "read")
    return 0


def _misses(result: dict, what: str) -> None:
    """Each statement read wrongly or not at all: what it gave beside what was expected."""
    for lang, case, text, got, expected, kind in result["misses"]:
        print(f"  [{lang} {case}: {kind}] {text!r}\n    {what:<9}{got}\n"
              f"    expected {expected}")


if __name__ == "__main__":
    sys.exit(main())
