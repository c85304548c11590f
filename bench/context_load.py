"""`ekko-mem context` per process on a workspace of 10,000 nodes and 50,000 messages.

Usage: python -m bench.context_load [--venv /tmp/ekko-bench-venv] [--runs 20] [--cache DIR]
Builds the workspace once (cached), through the same generator and write path as `python -m
bench`, then times `context` beside a bare `python -c "import sqlite3"` of the same venv.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from .build import bench_env, log_messages, write_nodes
from .datagen import Generator
from .procs import run_measured, summarise


def build(root: Path, binary: str) -> dict:
    marker = root / "build.json"
    if marker.exists():
        return json.loads(marker.read_text())
    root.mkdir(parents=True, exist_ok=True)
    env = bench_env(root / "home")
    run_measured([binary, "init", str(root), "-q"], env, root)
    gen = Generator(nodes=10_000, messages=50_000)
    stats = {"messages": log_messages(gen, root, env, binary),
             "nodes": write_nodes(gen, root, env),
             "session": gen.sessions[len(gen.sessions) // 2]}
    marker.write_text(json.dumps(stats))
    return stats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", default="/tmp/ekko-bench-venv")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "ekko-ctx-50k"))
    args = parser.parse_args()
    binary = str(Path(args.venv) / "bin" / "ekko-mem")
    python = str(Path(args.venv) / "bin" / "python")
    if not Path(binary).exists():
        raise SystemExit(f"no {binary}: run python -m bench --install first")
    root = Path(args.cache)
    stats = build(root, binary)
    env = bench_env(root / "home")
    cases = {"python -c 'import sqlite3'": [python, "-c", "import sqlite3"],
             "ekko-mem context (question)": [binary, "context", "今晚吃什么？ dinner ideas",
                                             "-s", stats["session"]],
             "ekko-mem context (no input)": [binary, "context", "-s", stats["session"]]}
    rows = {}
    for _ in range(2):  # warm the page cache and bytecode
        for argv in cases.values():
            run_measured(argv, env, root)
    for name, argv in cases.items():
        rows[name] = summarise([run_measured(argv, env, root)[0] * 1000
                                for _ in range(args.runs)])
    base = rows["python -c 'import sqlite3'"]["p50"]
    print(f"workspace: {stats['nodes']['count']:,} nodes, {stats['messages']['count']:,}"
          f" messages; {args.runs} runs each")
    for name, row in rows.items():
        print(f"{name:32} p50 {row['p50']:7.1f} ms  p95 {row['p95']:7.1f} ms"
              f"  {row['p50'] / base:5.2f}x bare")
    shutil.rmtree(root / "tmp", ignore_errors=True)


if __name__ == "__main__":
    main()
