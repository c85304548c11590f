"""What semantic recall costs: vector search time and disk per row as a db grows, embedding
time and peak memory in a bulk `log --jsonl` and in `index`, and `context` per process with
the extra on, with the parts of it (numpy, the model, one question) timed on their own.

Usage: python -m bench.semantic [--sizes 10k,100k,1m] [--runs 5] [--embed 300]
                                [--lang mixed|cn] [--bin PATH] [--against PATH]
                                [--workspace 10k,50k] [--json] [--no-context]

Needs the [semantic] extra. Search and disk use synthetic int8 vectors written straight into
`memory_vectors` (their values do not change the cost of a full scan); embedding and the
`context` rows run `ekko-mem` (the one beside this Python, or --bin) as a process, with CPU
time beside wall time (steadier on a busy machine). The `context` workspace has --workspace
nodes and messages (10,000 and 50,000), every row with a (synthetic) vector, built once into
--cache with semantic recall off (so building it embeds nothing).
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
from .procs import run_measured

DIM = 384
QUESTION = "what did we decide about the database"


def _binary() -> str:
    return str(Path(sys.executable).with_name("ekko-mem"))


def _semantic(root: Path, on: bool) -> None:
    """Say in the workspace's config whether semantic recall is on: where the extra is
    installed, it is on unless a config says otherwise."""
    (root / ".ekko" / "config.toml").write_text(f"[retrieval]\nsemantic = {str(on).lower()}\n")


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
    every vector compared up to 20,000, sign bits first past that) with numpy and in plain
    Python (numpy's import not counted), and bytes each row adds."""
    import numpy as np

    from ekko_mem.retrieval import int8
    from ekko_mem.embedding import MODEL
    from ekko_mem.retrieval import fusion
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
        times: dict[str, list[float]] = {"numpy": [], "plain": []}
        for _ in range(runs):
            for name, math, asked in (("numpy", fusion, question),
                                      ("plain", int8, question.tolist())):
                store = open_store(str(path))  # a fresh connection, as each process opens one
                start = time.perf_counter()
                _nearest(store, "message", MODEL, asked, 30, math)
                times[name].append(1000 * (time.perf_counter() - start))
                store.close()
    return {"rows": size, "searchMsP50": round(statistics.median(times["numpy"][1:] or
                                                                 times["numpy"]), 1),
            "firstMs": round(times["numpy"][0], 1),
            "plainMsP50": round(statistics.median(times["plain"]), 1),
            "bytesPerRow": round(added / size)}


def _lines(count: int, lang: str) -> list[str]:
    """`count` short messages as JSON lines, alternating user and assistant turns (so about
    one vector per two messages): half Chinese and half English, or all Chinese."""
    rng = random.Random(5)
    cn = ["我最近在学做饭，想试试红烧肉", "周末打算去爬山，天气应该不错",
          "项目的测试命令是 pytest -q", "我对花生过敏，吃东西要注意", "下周三要和客户开会讨论需求"]
    en = ["I switched the build to uv last week", "We decided to keep PostgreSQL 16",
          "My daughter starts school in September", "The flaky test was a race in the cache",
          "Remind me to renew the passport before June"]
    lines = []
    for i in range(count):
        text = rng.choice(cn if lang == "cn" or i % 4 < 2 else en) + f" ({i})"
        lines.append(json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                                 "content": text, "sessionId": f"s{i // 20}"},
                                ensure_ascii=False))
    return lines


def embed_cost(count: int, binary: str, lang: str = "mixed") -> dict:
    """Wall time and peak RSS of one bulk `log --jsonl` of `count` messages with semantic
    recall off and on, and of `index` embedding the same messages afterwards; ms per
    message that embedding adds."""
    lines = _lines(count, lang)
    out, cpu = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in ("off", "on", "index"):
            root = Path(tmp) / f"ws-{case}"
            root.mkdir()
            env = bench_env(root / "home")
            subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env,
                           check=True)
            _semantic(root, case == "on")
            src = root / "in.jsonl"
            src.write_text("\n".join(lines) + "\n", encoding="utf-8")
            used = _children_cpu()
            out[case] = run_measured([binary, "log", "--jsonl", str(src), "-q"], env, root,
                                     rss=True)
            if case == "index":
                used = _children_cpu()
                out[case] = run_measured([binary, "index", "-q"], env, root, rss=True)
            cpu[case] = _children_cpu() - used
    off = out["off"][0]
    return {"messages": count, "lang": lang, "secondsOff": round(off, 2),
            "secondsOn": round(out["on"][0], 2),
            "addedMsPerMessage": round(1000 * (out["on"][0] - off) / count, 1),
            "addedCpuMsPerMessage": round(1000 * (cpu["on"] - cpu["off"]) / count, 1),
            "peakRssMiBOff": round(out["off"][1] / 1024, 1),
            "peakRssMiBOn": round(out["on"][1] / 1024, 1),
            "indexSeconds": round(out["index"][0], 2),
            "indexMsPerMessage": round(1000 * out["index"][0] / count, 1),
            "indexCpuMsPerMessage": round(1000 * cpu["index"] / count, 1),
            "indexPeakRssMiB": round(out["index"][1] / 1024, 1)}


def context_workspace(cache: Path, binary: str, nodes: int = 10_000,
                      messages: int = 50_000) -> Path:
    """`nodes` nodes and `messages` messages, every row with a (synthetic) vector."""
    from .build import label
    root = cache / f"ws-semantic-{label(nodes)}-{label(messages)}"
    if (root / "built.json").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    env = bench_env(root / "home")
    subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env, check=True)
    _semantic(root, False)
    gen = Generator(nodes, messages)
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


def context_cost(cache: Path, runs: int, binary: str, against: str | None = None,
                 size: tuple[int, int] = (10_000, 50_000)) -> dict:
    """Per-process wall and CPU ms of `context` with semantic recall off and on, beside a
    bare `python -c "import sqlite3"` and the parts of what semantic recall adds (importing
    numpy, loading the model, embedding one question), run round-robin; with `against`,
    another ekko-mem's semantic `context` in the same rounds."""
    root = context_workspace(cache, binary, *size)
    env = bench_env(root / "home")
    python, load = sys.executable, "from ekko_mem.embedding import load; model = load()"
    cases = {"bare": [python, "-c", "import sqlite3"],
             "import numpy": [python, "-c", "import numpy"],
             "model loaded": [python, "-c", load],
             "model loaded, one question": [python, "-c", f"{load}; model.question({QUESTION!r})"],
             "context (lexical)": [binary, "context", QUESTION],
             "context (semantic)": [binary, "context", QUESTION]}
    if against:
        cases["context (semantic), --against"] = [against, "context", QUESTION]
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            _semantic(root, "semantic" in name)
            used = _children_cpu()
            start = time.perf_counter()
            subprocess.run(argv, env=env, cwd=root, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            wall[name].append(1000 * (time.perf_counter() - start))
            cpu[name].append(1000 * (_children_cpu() - used))
    bare, bare_cpu = statistics.median(wall["bare"]), statistics.median(cpu["bare"])
    return {name: {"p50Ms": round(statistics.median(wall[name]), 1),
                   "ratio": round(statistics.median(wall[name]) / bare, 2),
                   "cpuMs": round(statistics.median(cpu[name]), 1),
                   "cpuRatio": round(statistics.median(cpu[name]) / bare_cpu, 2)}
            for name in cases}


def _children_cpu() -> float:
    import resource
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embed", type=int, default=300, help="messages in the bulk log")
    parser.add_argument("--lang", choices=("mixed", "cn"), default="mixed",
                        help="the bulk log's messages: half Chinese, or all Chinese")
    parser.add_argument("--bin", default=_binary(), help="the ekko-mem to run")
    parser.add_argument("--against", help="another ekko-mem whose semantic context runs in"
                        " the same rounds")
    parser.add_argument("--workspace", default="10k,50k",
                        help="nodes,messages of the context workspace")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "ekko-bench-cache"))
    parser.add_argument("--no-context", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = {"search": [search_cost(parse_size(s), args.runs) for s in args.sizes.split(",")],
              "embedding": embed_cost(args.embed, args.bin, args.lang)}
    if not args.no_context:
        nodes, messages = (parse_size(n) for n in args.workspace.split(","))
        report["context"] = context_cost(Path(args.cache), args.runs, args.bin, args.against,
                                         (nodes, messages))
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print("| vectors | search p50 | first search | plain Python p50 | bytes per row |\n"
          "|---|---|---|---|---|")
    for row in report["search"]:
        print(f"| {row['rows']:,} | {row['searchMsP50']} ms | {row['firstMs']} ms |"
              f" {row['plainMsP50']} ms | {row['bytesPerRow']} |")
    e = report["embedding"]
    print(f"\nbulk log --jsonl of {e['messages']} messages ({e['lang']}): {e['secondsOff']} s"
          f" ({e['peakRssMiBOff']} MiB peak) without vectors, {e['secondsOn']} s"
          f" ({e['peakRssMiBOn']} MiB) with: +{e['addedMsPerMessage']} ms per message"
          f" (CPU +{e['addedCpuMsPerMessage']} ms); index after: {e['indexSeconds']} s,"
          f" {e['indexMsPerMessage']} ms per message (CPU {e['indexCpuMsPerMessage']} ms),"
          f" {e['indexPeakRssMiB']} MiB")
    if "context" in report:
        print("\n| command | p50 | x bare | CPU | x bare |\n|---|---|---|---|---|")
        for name, row in report["context"].items():
            print(f"| {name} | {row['p50Ms']} ms | {row['ratio']} | {row['cpuMs']} ms |"
                  f" {row['cpuRatio']} |")


if __name__ == "__main__":
    main()
