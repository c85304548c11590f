"""Bulk export and import: records per second and peak memory of the installed `ekko-mem`.

Usage (from the repository root):
    python -m bench.transfer                       # 10k and 100k
    python -m bench.transfer --sizes 1m --kinds node --json
    python -m bench.transfer --profile 20k         # cProfile of an in-process node import

Export files are written synthetically (bench/datagen.py's words and category trees): a node
file holds N nodes and their N create events, as an export of N remembered nodes does; a
message file holds N messages. Each file is imported into a fresh workspace by `ekko-mem import`
as a process under /usr/bin/time (wall and CPU time, peak RSS), from a path and, at 10k and
below, through a pipe on stdin too; then the imported workspace is exported to a file. Files
and workspaces live in a temporary folder that is removed at the end.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .build import bench_env, label, parse_size
from .datagen import Generator

HEADER = {"kind": "header", "format": "ekko-mem-export", "version": 1}
PAST = "2025-06-01T00:00:00.000Z"


def _binary() -> str:
    return str(Path(sys.executable).with_name("ekko-mem"))


def _line(kind: str, data: dict) -> str:
    return json.dumps({"kind": kind, "data": data}, ensure_ascii=False,
                      separators=(",", ":")) + "\n"


def node_records(gen: Generator, count: int):
    """(node, create event) pairs that pass import's policy: one active value per
    single-valued slot (the later ones are superseded), keys the schema allows."""
    from ekko_mem.policy.schema import SINGLE_VALUED
    taken: set[tuple] = set()
    for index in range(count):
        draft, status = gen.node_draft(index)
        stamp = f"2025-01-{1 + index % 28:02d}T00:00:{index % 60:02d}.000Z"
        node = {"id": f"mem_bench{index:013d}", **draft, "status": status, "explicit": True,
                "actor": "user", "createdAt": stamp, "updatedAt": stamp}
        node["sourceMessageIds"] = []  # the node file carries no messages to cite
        if status == "expired":
            node["expiresAt"] = PAST
        if node.get("key") in SINGLE_VALUED and status == "active":
            slot = (node["scope"], node["domain"], node["type"], node["key"],
                    node.get("sessionId"))
            if slot in taken:
                node["status"] = "superseded"
            taken.add(slot)
        event = {"id": f"evt_bench{index:013d}", "eventType": "create", "nodeId": node["id"],
                 "actor": "user", "reason": "remembered",
                 "payload": {"before": None, "after": node}, "createdAt": stamp}
        if node.get("sessionId"):
            event["sessionId"] = node["sessionId"]
        yield node, event


def write_node_file(path: Path, count: int, seed: int = 7) -> int:
    """N nodes, then their N events (an export's order); the number of records."""
    gen = Generator(count, 0, seed)
    with open(path, "w", encoding="utf-8") as out, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as events:
        out.write(json.dumps(HEADER) + "\n")
        for node, event in node_records(gen, count):
            out.write(_line("node", node))
            events.write(_line("event", event))
        events.seek(0)
        for line in events:
            out.write(line)
    return 2 * count


def write_message_file(path: Path, count: int, seed: int = 7) -> int:
    gen = Generator(0, count, seed)
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(HEADER) + "\n")
        for message in gen.messages():
            out.write(_line("message", message))
    return count


def run_timed(argv, env, cwd) -> dict:
    """Wall and CPU seconds and peak RSS of one command under /usr/bin/time (a child forked
    straight from this process would report this process's RSS at fork time as its own).
    CPU seconds say more than wall seconds on a shared machine."""
    with tempfile.NamedTemporaryFile("r") as report, tempfile.TemporaryFile() as err:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M %e %U %S", "-o", report.name,
                               *map(str, argv)], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=err, check=False)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[:3]} exited {proc.returncode}: {err.read().decode()}")
        kib, wall, user, system = report.read().split()[-4:]
    return {"seconds": float(wall), "cpuSeconds": round(float(user) + float(system), 2),
            "peakRssMiB": round(int(kib) / 1024, 1)}


def fresh_workspace(folder: Path, binary: str) -> tuple[Path, dict]:
    root, home = folder / "ws", folder / "home"
    env = bench_env(home)
    root.mkdir(parents=True)
    subprocess.run([binary, "init", str(root), "-q", "--no-gitignore"], env=env, check=True)
    return root, env


def measure_import(binary: str, source: Path, folder: Path, *, stdin: bool = False) -> dict:
    """One import into a fresh workspace, then an export of it to a file."""
    root, env = fresh_workspace(folder, binary)
    if stdin:
        # Through a pipe, as `cat backup.jsonl | ekko-mem import -`: it is copied aside first.
        command = ["sh", "-c", 'cat "$2" | "$0" import - -w "$1" -q', binary, root, source]
    else:
        command = [binary, "import", source, "-w", root, "-q"]
    imported = run_timed(command, env, root)
    out = folder / "export.jsonl"
    exported = run_timed([binary, "export", "-o", out, "-w", root, "-q"], env, root)
    with open(out, "rb") as lines:
        count = sum(1 for _ in lines) - 1
    return {**imported, "export": {**exported, "records": count}}


def run_size(binary: str, size: int, tmp: Path, log, kinds=("node", "message")) -> list[dict]:
    rows = []
    writers = {"node": write_node_file, "message": write_message_file}
    for kind, write in ((kind, writers[kind]) for kind in kinds):
        source = tmp / f"{kind}s-{label(size)}.jsonl"
        started = time.perf_counter()
        records = write(source, size)
        log(f"[{label(size)}] {kind} file: {records:,} records,"
            f" {source.stat().st_size / 2**20:.0f} MiB, written in"
            f" {time.perf_counter() - started:.0f}s")
        variants = [False, True] if size <= 10_000 else [False]
        for stdin in variants:
            with tempfile.TemporaryDirectory(dir=tmp) as folder:
                found = measure_import(binary, source, Path(folder), stdin=stdin)
            rows.append({"size": label(size), "kind": kind, "from": "pipe" if stdin else "file",
                         "records": records, "fileMiB": round(source.stat().st_size / 2**20, 1),
                         "perSecond": round(size / found["seconds"]),
                         "perCpuSecond": round(size / found["cpuSeconds"]), **found})
            log(f"[{label(size)}] {json.dumps(rows[-1])}")
        source.unlink()
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'size':>5} {'import':>8} {'from':>5} {'file MiB':>9} {'wall s':>7} {'per s':>7}"
          f" {'cpu s':>7} {'per cpu s':>9} {'peak MiB':>9} | {'export s':>8} {'peak MiB':>8}")
    for r in rows:
        print(f"{r['size']:>5} {r['kind'] + 's':>8} {r['from']:>5} {r['fileMiB']:>9}"
              f" {r['seconds']:>7} {r['perSecond']:>7,} {r['cpuSeconds']:>7}"
              f" {r['perCpuSecond']:>9,} {r['peakRssMiB']:>9} | {r['export']['seconds']:>8}"
              f" {r['export']['peakRssMiB']:>8}")
    print("per s: nodes (each with its create event) or messages imported per second of wall"
          " time, process start-up included; per cpu s: per second of CPU time (user + system)")


def profile(size: int, tmp: Path, top: int = 40) -> None:
    """cProfile of one in-process import of `size` nodes (and their events)."""
    import cProfile
    import pstats

    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    from ekko_mem.service.transfer_files import open_import
    source = tmp / "profile.jsonl"
    write_node_file(source, size)
    root, env = fresh_workspace(tmp / "profiled", _binary())
    svc = MemoryService(workspace=root, env=Env(env, cwd=root))
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    with open_import(str(source), None) as lines:
        result = svc.import_lines(lines, confirm=True)
    profiler.disable()
    took = time.perf_counter() - started
    svc.close()
    print(f"{size:,} nodes in {took:.2f}s under the profiler ({size / took:,.0f}/s): {result}")
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k", help="comma list: 10k,100k,1m")
    parser.add_argument("--kinds", default="node,message", help="comma list: node,message")
    parser.add_argument("--profile", metavar="SIZE", help="profile an in-process import instead")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ekko-bench-transfer-") as tmp:
        if args.profile:
            return profile(parse_size(args.profile), Path(tmp))
        rows = []
        for size in (parse_size(s) for s in args.sizes.split(",")):
            rows += run_size(_binary(), size, Path(tmp), lambda text: print(text, file=sys.stderr),
                             tuple(args.kinds.split(",")))
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
