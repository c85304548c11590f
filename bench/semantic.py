"""What semantic recall costs: vector search time and disk per row as a db grows, embedding
time per message in a bulk `log --jsonl`, and `context` per process with the extra on.

Usage: python -m bench.semantic [--sizes 10k,100k,1m] [--runs 5] [--embed 300] [--json]
                                [--no-context]

Needs the [semantic] extra. Search and disk use synthetic int8 vectors written straight into
`memory_vectors` (their values do not change the cost of a full scan); embedding and the
`context` rows run the installed `ekko-mem` as a process. The `context` workspace has 10,000
nodes and 50,000 messages, every row with a vector, built once into --cache.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .build import bench_env, log_messages, parse_size, write_nodes
from .datagen import Generator

DIM = 384


def _binary() -> str:
    return str(Path(sys.executable).with_name("ekko-mem"))


def fill_vectors(db_path: Path, rows: list[tuple[str, str, str | None]], seed: int = 1) -> None:
    """Synthetic vectors for (ref id, kind, partner id) rows, laid out in blocks as the store
    lays them out, in one transaction."""
    import numpy as np

    from ekko_mem.embedding import MODEL
    from ekko_mem.store import open_store
    from ekko_mem.store.vectors import BLOCK
    store = open_store(str(db_path))
    rng = np.random.default_rng(seed)
    with store.db.atomic() as db:
        for first in range(0, len(rows), BLOCK):
            chunk = rows[first:first + BLOCK]
            codes = rng.integers(-127, 128, size=(len(chunk), DIM), dtype=np.int8)
            scales = np.full(len(chunk), 0.001, dtype="<f4")
            bits = np.packbits(codes > 0, axis=1)
            block = db.execute("insert into memory_vector_blocks (kind, model, refs_json,"
                               " bits, codes, scales) values (?, ?, ?, ?, ?, ?)",
                               (chunk[0][1], MODEL, json.dumps([r[0] for r in chunk]),
                                bits.tobytes(), codes.tobytes(), scales.tobytes())).lastrowid
            db.executemany("insert into memory_vectors (ref_id, kind, partner_id, model,"
                           " block_id) values (?, ?, ?, ?, ?)",
                           [(ref, kind, partner, MODEL, block) for ref, kind, partner in chunk])
    store.close()


def search_cost(size: int, runs: int) -> dict:
    """Time to find the 30 nearest message vectors at `size` rows (the search `context` runs:
    every vector compared up to 20,000, sign bits first past that), and bytes each row adds."""
    import numpy as np

    from ekko_mem.embedding import MODEL
    from ekko_mem.service.semantic import _nearest
    from ekko_mem.store import open_store
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        open_store(str(path), create=True).close()
        before = path.stat().st_size
        fill_vectors(path, [(f"msg_{i:012d}", "message", None) for i in range(size)])
        store = open_store(str(path))
        store.checkpoint()
        added = path.stat().st_size - before
        store.close()
        question = np.random.default_rng(2).standard_normal(DIM).astype(np.float32)
        question /= np.linalg.norm(question)
        first, later = [], []
        for run in range(runs):
            store = open_store(str(path))  # a fresh connection, as each process opens one
            start = time.perf_counter()
            _nearest(store, "message", MODEL, question, 30)
            (first if run == 0 else later).append(1000 * (time.perf_counter() - start))
            store.close()
    return {"rows": size, "searchMsP50": round(statistics.median(later or first), 1),
            "firstMs": round(first[0], 1), "bytesPerRow": round(added / size)}


def embed_cost(count: int) -> dict:
    """ms per message that embedding adds to one bulk `log --jsonl`, half Chinese, half
    English, alternating user and assistant turns (so about one vector per two messages)."""
    rng = random.Random(5)
    cn = ["我最近在学做饭，想试试红烧肉", "周末打算去爬山，天气应该不错",
          "项目的测试命令是 pytest -q", "我对花生过敏，吃东西要注意", "下周三要和客户开会讨论需求"]
    en = ["I switched the build to uv last week", "We decided to keep PostgreSQL 16",
          "My daughter starts school in September", "The flaky test was a race in the cache",
          "Remind me to renew the passport before June"]
    lines = []
    for i in range(count):
        text = rng.choice(cn if i % 4 < 2 else en) + f" ({i})"
        lines.append(json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                                 "content": text, "sessionId": f"s{i // 20}"},
                                ensure_ascii=False))
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for on in (False, True):
            root = Path(tmp) / f"ws-{on}"
            root.mkdir()
            env = bench_env(root / "home")
            binary = _binary()
            subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env,
                           check=True)
            (root / ".ekko" / "config.toml").write_text(
                f"[retrieval]\nsemantic = {str(on).lower()}\n")
            src = root / "in.jsonl"
            src.write_text("\n".join(lines) + "\n", encoding="utf-8")
            start = time.perf_counter()
            subprocess.run([binary, "log", "--jsonl", str(src), "-q"], env=env, cwd=root,
                           check=True)
            out["on" if on else "off"] = time.perf_counter() - start
    return {"messages": count, "secondsOff": round(out["off"], 2),
            "secondsOn": round(out["on"], 2),
            "addedMsPerMessage": round(1000 * (out["on"] - out["off"]) / count, 1)}


def context_workspace(cache: Path) -> Path:
    """10,000 nodes and 50,000 messages, every row with a (synthetic) vector."""
    root = cache / "ws-semantic-10k-50k"
    if (root / "built.json").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    env = bench_env(root / "home")
    binary = _binary()
    subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env, check=True)
    gen = Generator(10_000, 50_000)
    log_messages(gen, root, env, binary)
    write_nodes(gen, root, env)
    import sqlite3
    db = sqlite3.connect(root / ".ekko" / "memory.db")
    rows = [(r[0], "message", None) for r in db.execute("select id from memory_messages")]
    rows += [(r[0], "node", None) for r in db.execute("select id from memory_nodes")]
    db.close()
    fill_vectors(root / ".ekko" / "memory.db", rows)
    (root / "built.json").write_text(json.dumps({"rows": len(rows)}))
    return root


def context_cost(cache: Path, runs: int) -> dict:
    """Per-process wall ms of `context` with semantic recall off and on, beside a bare
    `python -c "import sqlite3"`, run round-robin."""
    root = context_workspace(cache)
    env = bench_env(root / "home")
    binary = _binary()
    config = root / ".ekko" / "config.toml"
    cases = {"bare": [sys.executable, "-c", "import sqlite3"],
             "context (lexical)": [binary, "context", "what did we decide about the database"],
             "context (semantic)": [binary, "context", "what did we decide about the database"]}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            config.write_text(f"[retrieval]\nsemantic = {str('semantic' in name).lower()}\n")
            start = time.perf_counter()
            subprocess.run(argv, env=env, cwd=root, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            times[name].append(1000 * (time.perf_counter() - start))
    bare = statistics.median(times["bare"])
    return {name: {"p50Ms": round(statistics.median(t), 1),
                   "ratio": round(statistics.median(t) / bare, 2)} for name, t in times.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embed", type=int, default=300, help="messages in the bulk log")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "ekko-bench-cache"))
    parser.add_argument("--no-context", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = {"search": [search_cost(parse_size(s), args.runs) for s in args.sizes.split(",")],
              "embedding": embed_cost(args.embed)}
    if not args.no_context:
        report["context"] = context_cost(Path(args.cache), args.runs)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print("| vectors | search p50 | first search | bytes per row |\n|---|---|---|---|")
    for row in report["search"]:
        print(f"| {row['rows']:,} | {row['searchMsP50']} ms | {row['firstMs']} ms |"
              f" {row['bytesPerRow']} |")
    e = report["embedding"]
    print(f"\nbulk log --jsonl of {e['messages']} messages: {e['secondsOff']} s without"
          f" vectors, {e['secondsOn']} s with: +{e['addedMsPerMessage']} ms per message")
    if "context" in report:
        print("\n| command | p50 | x bare |\n|---|---|---|")
        for name, row in report["context"].items():
            print(f"| {name} | {row['p50Ms']} ms | {row['ratio']} |")


if __name__ == "__main__":
    main()
