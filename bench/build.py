"""Build (or reuse from the cache) one synthetic workspace through the real write paths.

Messages go through `ekko-mem log --jsonl` in chunks (its throughput is measured). Nodes are
normalised by `MemoryService.prepare_node` (the real validation, schema and owner binding) and
written by `NodeStore.insert_node` (row + FTS in step) with a create audit event, one
transaction per batch: `propose_update` commits once per call, too slow for a million nodes. A
sample of real `propose_update` calls is timed separately at each size.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .datagen import Generator
from .procs import run_measured

GEN_VERSION = 3  # bump when the generator changes, so cached workspaces are rebuilt
MESSAGE_CHUNK = 50_000
NODE_BATCH = 5_000


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def label(size: int) -> str:
    return f"{size // 1_000_000}m" if size % 1_000_000 == 0 else f"{size // 1000}k"


def bench_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("EKKO_") and k != "PYTHONDONTWRITEBYTECODE"}
    # the lexical workspaces: semantic recall is on by default where the extra is installed
    env.update(EKKO_HOME=str(home), EKKO_USER="bench", EKKO_SEMANTIC="off")
    return env


def ensure_workspace(cache: Path, size: int, binary: str, log=print) -> dict:
    root = cache / f"ws-{label(size)}"
    marker = root / "build.json"
    if marker.exists():
        stats = json.loads(marker.read_text())
        if stats.get("genVersion") == GEN_VERSION:
            return stats
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    home = root / "home"
    env = bench_env(home)
    subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env, check=True)
    gen = Generator(size, size)
    log(f"[{label(size)}] logging {size:,} messages through `ekko-mem log --jsonl`")
    stats = {"genVersion": GEN_VERSION, "size": size, "root": str(root), "home": str(home),
             "messages": log_messages(gen, root, env, binary)}
    log(f"[{label(size)}] writing {size:,} nodes through prepare_node + insert_node")
    stats["nodes"] = write_nodes(gen, root, env)
    stats["proposeUpdate"] = sample_propose_update(root, env)
    stats["sessionForReads"] = gen.sessions[len(gen.sessions) // 2]
    stats["ftsTerms"] = gen.fts_terms()
    marker.write_text(json.dumps(stats, ensure_ascii=False, indent=1))
    return stats


def log_messages(gen: Generator, root: Path, env: dict, binary: str) -> dict:
    rates, rss, total, elapsed = [], [], 0, 0.0
    stream = gen.messages()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chunk.jsonl"
        while True:
            lines = [json.dumps(m, ensure_ascii=False) for _, m in zip(range(MESSAGE_CHUNK),
                                                                        stream)]
            if not lines:
                break
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            took, peak = run_measured([binary, "log", "--jsonl", str(path), "-w", str(root),
                                       "-q"], env, root, rss=True)
            rates.append(len(lines) / took)
            rss.append(peak)
            total += len(lines)
            elapsed += took
    rates.sort()
    return {"count": total, "seconds": round(elapsed, 2), "chunk": MESSAGE_CHUNK,
            "perSecondOverall": round(total / elapsed), "perSecondMedianChunk":
            round(rates[len(rates) // 2]), "peakRssMbMax": round(max(rss) / 1024, 1)}


def write_nodes(gen: Generator, root: Path, env: dict) -> dict:
    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    svc = MemoryService(workspace=root, env=Env(env, cwd=root))
    store = svc.store
    past = "2025-06-01T00:00:00.000Z"
    started = time.perf_counter()
    prepare_s = 0.0
    for first in range(0, gen.n_nodes, NODE_BATCH):
        with store.db.atomic():
            for index in range(first, min(gen.n_nodes, first + NODE_BATCH)):
                draft, status = gen.node_draft(index)
                tick = time.perf_counter()
                node, _ = svc.prepare_node(draft, actor="import", confirm=True)
                prepare_s += time.perf_counter() - tick
                if status == "expired":
                    node.update(status="expired", expiresAt=past)
                elif status == "superseded":
                    node["status"] = "superseded"
                store.nodes.insert_node(node)
                svc.audit_log.record(store, "create", node, "import", "bench import", after=node)
    took = time.perf_counter() - started
    store.checkpoint()
    svc.close()
    return {"count": gen.n_nodes, "seconds": round(took, 2),
            "perSecond": round(gen.n_nodes / took), "prepareNodeShare": round(prepare_s / took, 2),
            "batch": NODE_BATCH, "path": "prepare_node + insert_node + audit event, one"
            " transaction per batch"}


def sample_propose_update(root: Path, env: dict, calls: int = 100) -> dict:
    """Real `propose_update` creates at this size: conflict lookup, audit, one commit each."""
    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    svc = MemoryService(workspace=root, env=Env(env, cwd=root))
    times = []
    for index in range(calls):
        tick = time.perf_counter()
        result = svc.propose_update("create", {
            "scope": "workspace", "domain": "research", "type": "fact",
            "categoryPath": ["research", "papers", "bench"], "title": f"基准 sample {index}",
            "content": f"基准测试 propose_update sample {index}"}, actor="user", confirm=True)
        times.append((time.perf_counter() - tick) * 1000)
        assert result["accepted"], result
    svc.close()
    times.sort()
    return {"calls": calls, "p50Ms": round(times[calls // 2], 2),
            "p95Ms": round(times[int(calls * 0.95)], 2),
            "perSecond": round(1000 / (sum(times) / calls))}
