"""Two installed versions side by side: per-process time of the write and read commands, each
version on a workspace its own code built, every run round-robin with the other version and a
bare `python -c "import sqlite3"`, so both see the same background load.

Usage: python -m bench.compare OLD_VENV OLD_CACHE NEW_VENV NEW_CACHE [--sizes 1k,100k]
                               [--runs 9] [--passes 1] [--json]

Each cache holds workspaces made by `python -m bench` (or bench/build.py) with that version;
the size must exist in both, except that a size found only in NEW_CACHE is timed alone. A
version whose schema is newer migrates a workspace the other can then no longer write: give
each version its own copy.

On a shared machine one pass moves by a few tenths of a multiple from the next: `--passes`
repeats the whole round-robin and reports, per command, the median over the passes of its p50
and of its multiple of bare python (with their range), and the same multiple in CPU time (user
+ system), which the load moves less than wall time.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
from pathlib import Path

from .build import bench_env, label, parse_size
from .procs import command_cases, run_measured

COMMANDS = ("ekko-mem log", "ekko-mem remember", "ekko-mem remember TEXT", "ekko-mem query",
            "ekko-mem context")


def _cases(venv: Path, cache: Path, size: int) -> dict | None:
    marker = cache / f"ws-{label(size)}" / "build.json"
    if not marker.exists():
        return None
    stats = json.loads(marker.read_text())
    root = Path(stats["root"])
    cases = command_cases(str(venv / "bin" / "ekko-mem"), str(venv / "bin" / "python"), root,
                          stats["sessionForReads"], stats["ftsTerms"]["zh_mid"][0])
    return {"env": bench_env(Path(stats["home"])), "root": root,
            "cases": {name: cases[name] for name in COMMANDS}}


def _cpu_ms() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def _timed(argv, env, cwd) -> tuple[float, float]:
    """Wall and CPU ms of one process."""
    cpu = _cpu_ms()
    took, _ = run_measured(argv, env, cwd)
    return took * 1000, _cpu_ms() - cpu


def compare(old: tuple, new: tuple, size: int, runs: int, warmup: int = 2) -> dict:
    sides = {"old": _cases(*old, size), "new": _cases(*new, size)}
    sides = {k: v for k, v in sides.items() if v is not None}
    bare_case = command_cases("", str(new[0] / "bin" / "python"), Path("."), "", "")
    bare = bare_case["python3 -c 'import sqlite3'"]
    times: dict[str, list[tuple[float, float]]] = {"bare": []}
    for index in range(warmup + runs):
        took = _timed(bare(index), None, None)
        if index >= warmup:
            times["bare"].append(took)
        for side, spec in sides.items():
            for name, argv in spec["cases"].items():
                took = _timed(argv(index), spec["env"], spec["root"])
                if index >= warmup:
                    times.setdefault(f"{side} {name}", []).append(took)
    wall = statistics.median(t[0] for t in times["bare"])
    cpu = statistics.median(t[1] for t in times["bare"])
    return {name: {"p50": round(statistics.median(t[0] for t in row), 1),
                   "xBare": round(statistics.median(t[0] for t in row) / wall, 2),
                   "cpuXBare": round(statistics.median(t[1] for t in row) / cpu, 2)}
            for name, row in times.items()}


def over_passes(passes: list[dict]) -> dict:
    """Per command, the median over the passes of each figure, and the range of xBare."""
    out = {}
    for name in passes[0]:
        rows = [p[name] for p in passes if name in p]
        out[name] = {key: round(statistics.median(r[key] for r in rows), 2)
                     for key in ("p50", "xBare", "cpuXBare")}
        out[name]["xBareRange"] = [min(r["xBare"] for r in rows), max(r["xBare"] for r in rows)]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_venv")
    parser.add_argument("old_cache")
    parser.add_argument("new_venv")
    parser.add_argument("new_cache")
    parser.add_argument("--sizes", default="1k,100k")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    old = (Path(args.old_venv), Path(args.old_cache))
    new = (Path(args.new_venv), Path(args.new_cache))
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    passes = [{label(size): compare(old, new, size, args.runs) for size in sizes}
              for _ in range(max(1, args.passes))]
    report = {label(size): over_passes([p[label(size)] for p in passes]) for size in sizes}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print_table(report, len(passes))


def print_table(report: dict, passes: int) -> None:
    sizes = list(report)
    print("| command | " + " | ".join(f"{s} before | {s} after" for s in sizes) + " |")
    print("|---|" + "---|---|" * len(sizes))
    for name in COMMANDS:
        cells = []
        for s in sizes:
            for side in ("old", "new"):
                row = report[s].get(f"{side} {name}")
                spread = (f", {row['xBareRange'][0]}-{row['xBareRange'][1]}"
                          if row and passes > 1 else "")
                cells.append(f"{row['p50']} ms (x{row['xBare']}{spread}; cpu x{row['cpuXBare']})"
                             if row else "–")
        print(f"| {name[len('ekko-mem '):]} | " + " | ".join(cells) + " |")
    print("| bare python | " + " | ".join(f"{report[s]['bare']['p50']} ms" for s in sizes
                                          for _ in (0, 1)) + " |")


if __name__ == "__main__":
    main()
