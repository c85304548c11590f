"""The floor under bulk import: the steps no import of a record can skip, each timed alone.

Usage (from the repository root):
    python -m bench.import_floor                  # 20k nodes and 20k messages
    python -m bench.import_floor --size 50k --json

A node record, as an export carries it (the node and its create event), must be parsed,
validated, scanned for secrets (the write policy), tokenised for full-text search, and
inserted: its row, its FTS entry and its event. A message the same, without the event. Each
step runs over every record of a bench file (bench/transfer.py's) with the real functions and
a real db of `ekko-mem init`, in batches as import writes them, inside a transaction that is
rolled back. The sum of the steps is what one process pays at least per record, whatever the
rest of an import costs; its inverse is the best rate a single-process import could reach.
The real import of the same file is timed in-process beside it.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from .build import parse_size
from .transfer import _binary, fresh_workspace, write_message_file, write_node_file

BATCH = 1000


def _records(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as lines:
        next(lines)  # the header
        return [line for line in lines if line.strip()]


def _service(root: Path, env: dict):
    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    return MemoryService(workspace=root, env=Env(env, cwd=root))


def _timed(steps: dict, name: str, fn):
    started = time.perf_counter()
    result = fn()
    steps[name] = steps.get(name, 0.0) + time.perf_counter() - started
    return result


def _batches(items: list):
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]


def node_steps(svc, lines: list[str], steps: dict) -> None:
    from ekko_mem.errors import NeedsConfirmation
    from ekko_mem.models import MemoryAuditEvent, MemoryNode
    from ekko_mem.store import codec
    from ekko_mem.store.nodes import fts_values

    def check(node):
        with suppress(NeedsConfirmation):  # import asks once, after the whole file
            svc.drafts.check_sensitive(node, False)

    db = svc.store.db
    items = _timed(steps, "parse JSON", lambda: [json.loads(line) for line in lines])
    nodes = _timed(steps, "validate", lambda: [
        MemoryNode.model_validate(i["data"]).model_dump(exclude_none=True)
        for i in items if i["kind"] == "node"])
    events = _timed(steps, "validate", lambda: [
        MemoryAuditEvent.model_validate(i["data"]).model_dump(exclude_none=True)
        for i in items if i["kind"] == "event"])
    _timed(steps, "secret scan", lambda: [check(node) for node in nodes])
    texts = _timed(steps, "tokenise", lambda: [fts_values(node) for node in nodes])
    rows = _timed(steps, "to rows", lambda: [codec.node_to_row(node) for node in nodes])
    event_rows = _timed(steps, "to rows", lambda: [codec.event_to_row(
        {**e, "payload": {**e["payload"], "after": codec.SAME_AS_NODE}}) for e in events])
    first = db.one("select coalesce(max(rowid), 0) + 1 from memory_nodes")[0]
    if rows:
        _timed(steps, "insert rows", lambda: db.executemany(
            f"insert into memory_nodes (rowid, {codec.NODE_COLUMNS}) values"
            f" ({','.join('?' * (len(rows[0]) + 1))})",
            [(first + i, *row) for i, row in enumerate(rows)]))
        _timed(steps, "insert FTS", lambda: db.executemany(
            "insert into memory_nodes_fts (rowid, title, content, tags, entities)"
            " values (?, ?, ?, ?, ?)", [(first + i, *t) for i, t in enumerate(texts)]))
    if event_rows:
        _timed(steps, "insert events", lambda: db.executemany(
            f"insert into memory_audit_events ({codec.EVENT_COLUMNS}) values"
            f" ({','.join('?' * len(event_rows[0]))})", event_rows))


def message_steps(svc, lines: list[str], steps: dict) -> None:
    from ekko_mem.models import MemoryMessage
    from ekko_mem.policy.sensitive import credentials_in_json
    from ekko_mem.store import codec, fts

    db = svc.store.db
    items = _timed(steps, "parse JSON", lambda: [json.loads(line) for line in lines])
    messages = _timed(steps, "validate", lambda: [
        MemoryMessage.model_validate(item["data"]).model_dump(exclude_none=True)
        for item in items])
    _timed(steps, "secret scan", lambda: [credentials_in_json(
        {k: v for k, v in m.items() if k not in ("id", "createdAt")}) for m in messages])
    texts = _timed(steps, "tokenise", lambda: [fts.index_text(m["content"]) for m in messages])
    rows = _timed(steps, "to rows", lambda: [codec.message_to_row(m) for m in messages])
    first = db.one("select coalesce(max(rowid), 0) + 1 from memory_messages")[0]
    _timed(steps, "insert rows", lambda: db.executemany(
        f"insert into memory_messages (rowid, {codec.MESSAGE_COLUMNS}) values"
        f" ({','.join('?' * (len(rows[0]) + 1))})", [(first + i, *r) for i, r in enumerate(rows)]))
    _timed(steps, "insert FTS", lambda: db.executemany(
        "insert into memory_messages_fts (rowid, content) values (?, ?)",
        [(first + i, t) for i, t in enumerate(texts)]))


def floor_steps(svc, kind: str, lines: list[str]) -> dict:
    """Every step over every record, a batch at a time and with the page cache that import
    writes with, rolled back."""
    from ekko_mem.store.transfer import roomy_cache
    steps: dict[str, float] = {}
    run = node_steps if kind == "node" else message_steps
    db = svc.store.db
    with roomy_cache([db]):
        db.execute("begin immediate")
        try:
            for chunk in _batches(lines):
                run(svc, chunk, steps)
        finally:
            db.execute("rollback")
    return steps


def real_import(svc, path: Path) -> float:
    from ekko_mem.service.transfer_files import open_import
    started = time.perf_counter()
    with open_import(str(path), None) as lines:
        svc.import_lines(lines, confirm=True)
    return time.perf_counter() - started


def measure(kind: str, size: int, tmp: Path) -> dict:
    source = tmp / f"{kind}.jsonl"
    (write_node_file if kind == "node" else write_message_file)(source, size)
    lines = _records(source)
    root, env = fresh_workspace(tmp / f"{kind}-floor", _binary())
    svc = _service(root, env)
    try:
        steps = floor_steps(svc, kind, lines)
    finally:
        svc.close()
    root, env = fresh_workspace(tmp / f"{kind}-import", _binary())
    svc = _service(root, env)
    try:
        took = real_import(svc, source)
    finally:
        svc.close()
    per = {name: round(seconds / size * 1e6, 1) for name, seconds in steps.items()}
    floor = sum(steps.values()) / size * 1e6
    return {"kind": kind, "size": size, "stepsMicroseconds": per,
            "floorMicroseconds": round(floor, 1), "floorPerSecond": round(1e6 / floor),
            "importMicroseconds": round(took / size * 1e6, 1),
            "importPerSecond": round(size / took)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="20k", help="records of each kind (20k, 100k...)")
    parser.add_argument("--kinds", default="node,message", help="comma list: node,message")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    size = parse_size(args.size)
    import gc
    gc.set_threshold(100_000)  # as the command line runs (ekko_mem/cli.py)
    with tempfile.TemporaryDirectory(prefix="ekko-bench-floor-") as tmp:
        results = [measure(kind, size, Path(tmp)) for kind in args.kinds.split(",")]
    if args.json:
        json.dump(results, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return
    for r in results:
        print(f"{r['kind']}s ({r['size']:,}), microseconds per record:")
        for name, value in r["stepsMicroseconds"].items():
            print(f"  {name:14s} {value:7.1f}")
        print(f"  {'floor (sum)':14s} {r['floorMicroseconds']:7.1f}"
              f"  -> at most {r['floorPerSecond']:,}/s in one process")
        print(f"  {'real import':14s} {r['importMicroseconds']:7.1f}"
              f"  -> {r['importPerSecond']:,}/s (in-process)")


if __name__ == "__main__":
    main()
