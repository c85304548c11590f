"""A memory said again and again: what one more `remember TEXT` of it costs, per process and on
disk, after it was already restated K times. An agent that passes each turn through `remember`
restates the same preferences all day; that cost must not grow with K.

Usage: python -m bench.restate OLD_VENV NEW_VENV [--counts 0,300,1000] [--runs 9] [--json]

Each version gets its own fresh workspace and home per count. The K restatements are written
in one process of that version (the text below, as a person would repeat it); then each run
restates it once more in its own process, round-robin with the other version and a bare
`python -c "import sqlite3"`.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from .build import bench_env
from .procs import run_measured

TEXT = "以后做饭别放香菜，我喜欢少油"
SEED = """
import sys
from pathlib import Path
from ekko_mem import MemoryService
from ekko_mem.env import Env
import os
root = Path(sys.argv[1])
svc = MemoryService(workspace=root, env=Env(dict(os.environ), cwd=root))
for _ in range(int(sys.argv[2])):
    svc.remember(sys.argv[3], session="default")
svc.close()
"""


def _bytes(root: Path, home: Path) -> int:
    return sum(p.stat().st_size for base in (root / ".ekko", home) for p in base.glob("memory.db*"))


def _side(venv: Path, base: Path, count: int) -> dict:
    root, home = base / "ws", base / "home"
    root.mkdir(parents=True)
    home.mkdir()
    env = bench_env(home)
    binary = str(venv / "bin" / "ekko-mem")
    subprocess.run([binary, "init", "-q"], env=env, cwd=root, check=True)
    subprocess.run([str(venv / "bin" / "python"), "-c", SEED, str(root), str(count), TEXT],
                   env=env, cwd=root, check=True)  # not here: '' on sys.path is the cwd
    return {"argv": [binary, "remember", TEXT, "-w", str(root), "-q"], "env": env,
            "root": root, "home": home, "seededBytes": _bytes(root, home)}


def measure(old: Path, new: Path, count: int, runs: int, warmup: int = 2) -> dict:
    with tempfile.TemporaryDirectory(prefix="ekko-restate-") as tmp:
        sides = {name: _side(venv, Path(tmp) / name, count)
                 for name, venv in (("old", old), ("new", new))}
        times: dict[str, list[float]] = {"bare": [], "old": [], "new": []}
        for index in range(warmup + runs):
            took, _ = run_measured([str(new / "bin" / "python"), "-c", "import sqlite3"],
                                   None, None)
            if index >= warmup:
                times["bare"].append(took * 1000)
            for name, side in sides.items():
                took, _ = run_measured(side["argv"], side["env"], side["root"])
                if index >= warmup:
                    times[name].append(took * 1000)
        floor = statistics.median(times["bare"])
        out = {"count": count, "bareMs": round(floor, 1)}
        for name, side in sides.items():
            p50 = statistics.median(times[name])
            out[name] = {"p50": round(p50, 1), "xBare": round(p50 / floor, 2),
                         "bytesAfterSeed": side["seededBytes"],
                         "bytesPerRestatement": round(side["seededBytes"] / max(count, 1))}
        return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_venv", type=Path)
    parser.add_argument("new_venv", type=Path)
    parser.add_argument("--counts", default="0,300,1000")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(args.old_venv, args.new_venv, int(c), args.runs)
            for c in args.counts.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| restated before | bare ms | old ms (x bare) | new ms (x bare) | old db bytes"
          " | new db bytes |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['count']:,} | {r['bareMs']} | {r['old']['p50']} ({r['old']['xBare']})"
              f" | {r['new']['p50']} ({r['new']['xBare']}) | {r['old']['bytesAfterSeed']:,}"
              f" | {r['new']['bytesAfterSeed']:,} |")


if __name__ == "__main__":
    main()
