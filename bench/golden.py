"""Precision and recall per memory type of the rule extractor on the labelled cases.

Usage: python -m bench.golden [--misses]

Two sets: the golden cases the rules are tested against (tests/golden/extraction_cases.py),
and held-out cases written apart from the rules (tests/golden/heldout_cases.py), which say how
well the rules carry over to phrasings they were not written for.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from golden import extraction_cases, heldout_cases  # noqa: E402
from golden.scoring import score, table  # noqa: E402


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
