"""Per-process cost of the entity graph's reads on a built workspace: `graph NAME` and a
`context` whose question names an entity, beside a plain `context` and a bare python, every
run round-robin so all see the same background load.

Usage: python -m bench.graph_cost WORKSPACE [--name NAME] [--runs 11] [--bin PATH] [--json]

WORKSPACE is one `python -m bench` built (its build.json says where its home is); copy it
first, as the first `graph` reads every memory the graph has not read yet (timed and reported
on its own: a one-time cost, not a per-call one). NAME defaults to an entity the generator
gives many memories.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

from .build import bench_env
from .procs import run_measured


def cases(binary: str, python: str, root: Path, name: str) -> dict:
    w = ["-w", str(root)]
    return {
        "python3 -c 'import sqlite3'": [python, "-c", "import sqlite3"],
        "ekko-mem graph NAME": [binary, "graph", name, *w, "--json"],
        "ekko-mem context (names NAME)": [binary, "context", f"{name}是谁？", *w],
        "ekko-mem context (names nobody)": [binary, "context", "今晚吃什么 deploy", *w],
    }


def measure(root: Path, binary: str, name: str, runs: int) -> dict:
    stats = json.loads((root / "build.json").read_text())
    home = Path(stats["home"])
    if not home.exists():  # a copied workspace: its home moved with it
        home = root / "home"
    env = bench_env(home)
    python = str(Path(binary).parent / "python")
    started = time.perf_counter()
    run_measured([binary, "graph", name, "-w", str(root), "--json"], env, root)
    first = time.perf_counter() - started
    argv = cases(binary, python, root, name)
    times: dict[str, list[float]] = {label: [] for label in argv}
    for _ in range(2):  # warm the page cache
        for command in argv.values():
            run_measured(command, env, root)
    for _ in range(runs):
        for label, command in argv.items():
            took, _ = run_measured(command, env, root)
            times[label].append(took * 1000)
    bare = statistics.median(times["python3 -c 'import sqlite3'"])
    return {"workspace": str(root), "name": name, "firstGraphSeconds": round(first, 2),
            "rows": {label: {"p50Ms": round(statistics.median(t), 1),
                             "xBare": round(statistics.median(t) / bare, 2)}
                     for label, t in times.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graph_cost")
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--name", default="客户1")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--bin", default=shutil.which("ekko-mem") or "ekko-mem")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (args.workspace / "build.json").is_file():
        print(f"bench.graph_cost: no build.json in {args.workspace}; build one with"
              " `python -m bench` and copy it", file=sys.stderr)
        return 2
    result = measure(args.workspace.resolve(), args.bin, args.name, args.runs)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    print(f"{result['workspace']}: first `graph` (reads every memory once):"
          f" {result['firstGraphSeconds']} s")
    print(f"{'command':<34} {'p50 ms':>8} {'x bare':>7}")
    for label, row in result["rows"].items():
        print(f"{label:<34} {row['p50Ms']:>8} {row['xBare']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
