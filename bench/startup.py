"""Per-process wall time of ekko-mem commands beside a bare `python -c "import sqlite3"`.

Usage: python bench/startup.py [--runs 20] [--json]
Runs in a temporary workspace with its own EKKO_HOME; uses the ekko-mem next to this Python.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(argv, env, cwd, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        times.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"{argv} failed: {proc.stderr.decode()}")
    times.sort()
    return {"median_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    python = Path(sys.executable)
    binary = python.with_name("ekko-mem")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EKKO_HOME": f"{tmp}/home"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
        subprocess.run([binary, "init", tmp], env=env, check=True, stdout=subprocess.DEVNULL)
        for i in range(200):  # some history to read back
            subprocess.run([binary, "log", "-s", "bench", f"消息 message {i}"], env=env,
                           cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        cases = {
            "python -c 'import sqlite3'": [python, "-c", "import sqlite3"],
            "ekko-mem --version": [binary, "--version"],
            "ekko-mem log": [binary, "log", "-s", "bench", "少油少辣 less oil"],
            "ekko-mem history": [binary, "history", "-s", "bench", "-n", "5"],
        }
        extra = {name: argv for name, argv in {
            "ekko-mem context": [binary, "context", "今晚吃什么", "-s", "bench"],
            "ekko-mem query": [binary, "query", "香菜"],
        }.items()}
        for name, argv in extra.items():
            if subprocess.run(argv, env=env, cwd=tmp, capture_output=True).returncode == 0:
                cases[name] = argv
        results = {name: measure(argv, env, tmp, args.runs) for name, argv in cases.items()}
    base = results["python -c 'import sqlite3'"]["median_ms"]
    for row in results.values():
        row["ratio"] = round(row["median_ms"] / base, 2)
    report = {"machine": f"{platform.machine()} {os.cpu_count()} cpu, Python"
                         f" {platform.python_version()}", "runs": args.runs, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['machine']}, {args.runs} runs each")
    print(f"{'command':32} {'median ms':>10} {'p95 ms':>8} {'x bare':>7}")
    for name, row in results.items():
        print(f"{name:32} {row['median_ms']:>10} {row['p95_ms']:>8} {row['ratio']:>7}")


if __name__ == "__main__":
    main()
