"""Scale benchmark: build synthetic workspaces, time every hot path, print a table and JSON.

Usage (from the repository root):
    python -m bench                                   # 1k and 10k, a few minutes
    python -m bench --sizes 1k,10k,100k,1m --json-out /tmp/ekko-bench.json
    python -m bench --install                         # (re)make the non-editable venv first

Per-process rows run the `ekko-mem` of a separate, non-editable venv (--venv, made by
--install with `pip install <repo>`), because the editable finder adds import cost that users
do not pay, and with PYTHONDONTWRITEBYTECODE unset so start-up reads cached bytecode.
Workspaces are cached under --cache (never in the repository) and reused by later runs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from . import report
from .build import bench_env, ensure_workspace, label, parse_size
from .inproc import footprint, measure_latency
from .procs import measure_processes

REPO = Path(__file__).resolve().parent.parent


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1k,10k", help="comma list: 1k,10k,100k,1m")
    parser.add_argument("--cache", default="/tmp/ekko-bench-cache",
                        help="folder for built workspaces (reused across runs)")
    parser.add_argument("--venv", default="/tmp/ekko-bench-venv",
                        help="venv with a non-editable install, for per-process timings")
    parser.add_argument("--install", action="store_true",
                        help="create --venv and pip install this repository into it")
    parser.add_argument("--runs", type=int, default=10, help="process runs per command")
    parser.add_argument("--repeat", type=int, default=40, help="in-process calls per path")
    parser.add_argument("--skip-procs", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--no-sql", action="store_true",
                        help="skip the sqlite3 rows (they capture SQL with the code in this"
                             " checkout, which migrates the db: not for timing another"
                             " version's venv)")
    parser.add_argument("--json-out", help="also write the full JSON report here")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    return parser.parse_args(argv)


def install_venv(venv: Path) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--force-reinstall",
                    "--no-deps", str(REPO)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO)], check=True)


def tools(args) -> tuple[str, str, str]:
    """(ekko-mem binary, python for the bare row, provenance note)."""
    venv = Path(args.venv)
    if args.install:
        install_venv(venv)
    binary = venv / "bin" / "ekko-mem"
    if binary.exists():
        return str(binary), str(venv / "bin" / "python"), f"non-editable venv {venv}"
    here = Path(sys.executable).with_name("ekko-mem")
    print(f"note: {binary} missing (pass --install); timing {here} instead, which may be"
          " an editable install", file=sys.stderr)
    return str(here), sys.executable, f"current environment {here.parent}"


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import sqlite3
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(),
            "memGb": round(mem, 1), "os": platform.platform(),
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version}


def main(argv=None) -> None:
    args = parse_args(argv)
    cache = Path(args.cache).expanduser().resolve()
    if cache == REPO or REPO in cache.parents:
        raise SystemExit("--cache must be outside the repository")
    binary, python, provenance = tools(args)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    result = {"machine": machine(), "install": provenance, "runs": args.runs,
              "repeat": args.repeat, "sizes": {}}
    shell = shutil.which("sqlite3")
    for size in sizes:
        name = label(size)
        stats = ensure_workspace(cache, size, binary, log=lambda m: print(m, file=sys.stderr))
        env = bench_env(Path(stats["home"]))
        entry = {"build": {k: stats[k] for k in ("messages", "nodes", "proposeUpdate")},
                 "footprint": footprint(stats)}
        if not args.skip_latency:
            print(f"[{name}] in-process latency", file=sys.stderr)
            entry.update(measure_latency(stats, env, args.repeat))
        if not args.skip_procs:
            print(f"[{name}] per-process timings ({args.runs} runs)", file=sys.stderr)
            entry["processes"] = measure_processes(stats, binary, python, env, args.runs,
                                                   None if args.no_sql else shell)
        result["sizes"][name] = entry
    report.add_growth(result)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, ensure_ascii=False, indent=1))
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        report.print_tables(result)


if __name__ == "__main__":
    main()
