"""Per-process wall time of ekko-mem commands beside a bare `python -c "import sqlite3"`, and
what the post-commit hook adds to a `git commit`.

Usage: python bench/startup.py [--runs 20] [--json] [--no-hook]
Runs in a temporary workspace with its own EKKO_HOME; uses the ekko-mem next to this Python.
Commands run round-robin (one run of each, then the next round), so background noise lands on
the bare row too. Help and reads run with stdout piped, as a script or `| less` would. Beside
wall time, the CPU time (user + system) of each process is reported: on a busy machine it
moves much less than wall time, so its ratio to the bare row is the steadier one.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = "python -c 'import sqlite3'"
GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def once(argv, env, cwd) -> tuple[float, float]:
    """Wall and CPU ms of one run (CPU of the processes waited for: not a detached child)."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode()}")
    return elapsed, (_cpu() - cpu) * 1000


def summary(times: list[tuple[float, float]]) -> dict:
    wall = sorted(t[0] for t in times)
    return {"median_ms": round(statistics.median(wall), 1),
            "p95_ms": round(wall[min(len(wall) - 1, int(len(wall) * 0.95))], 1),
            "cpu_ms": round(statistics.median(t[1] for t in times), 1)}


def round_robin(cases: dict, env, cwd, runs: int) -> dict:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            times[name].append(once(argv, env, cwd))
    return {name: summary(row) for name, row in times.items()}


def output_of(argv, env, cwd) -> str:
    return subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def workspace(binary: Path, env: dict, tmp: str) -> dict:
    """A workspace with some history, a memory and a context run; the ids to read back."""
    quiet = {"env": env, "cwd": tmp, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([binary, "init", tmp], **quiet)
    for i in range(200):  # some history to read back
        subprocess.run([binary, "log", "-s", "bench", f"消息 message {i}"], **quiet)
    made = json.loads(output_of([binary, "remember", "--scope", "workspace", "--type", "fact",
                                 "--title", "staging db port 5433", "--json"], env, tmp))
    subprocess.run([binary, "context", "今晚吃什么", "-s", "bench"], **quiet)
    return {"node": made["nodeId"]}


def cases_for(python: Path, binary: Path, ids: dict) -> dict:
    b = str(binary)
    return {
        BARE: [python, "-c", "import sqlite3"],
        "ekko-mem --version": [b, "--version"],
        "ekko-mem --help": [b, "--help"],
        "ekko-mem remember --help": [b, "remember", "--help"],
        "ekko-mem audit undo -h": [b, "audit", "undo", "-h"],
        "ekko-mem log": [b, "log", "-s", "bench", "少油少辣 less oil"],
        "ekko-mem history": [b, "history", "-s", "bench", "-n", "5"],
        "ekko-mem show": [b, "show", ids["node"]],
        "ekko-mem audit": [b, "audit", "-n", "5"],
        "ekko-mem explain --last": [b, "explain", "--last"],
        "ekko-mem config": [b, "config"],
        "ekko-mem export": [b, "export"],
        "ekko-mem context": [b, "context", "今晚吃什么", "-s", "bench"],
        "ekko-mem query": [b, "query", "香菜"],
        "ekko-mem __complete ids": [b, "__complete", "ids"],
    }


def runnable(cases: dict, env, cwd) -> dict:
    """Leave out what this build cannot run (an older one has no __complete)."""
    return {name: argv for name, argv in cases.items()
            if subprocess.run(argv, env=env, cwd=cwd, capture_output=True).returncode == 0}


# -- the post-commit hook -----------------------------------------------------------------------


def git(repo, *args, env):
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def recorded(db: Path, session: str = "git") -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute("select count(*) from memory_messages where session_id = ?",
                           (session,)).fetchone()[0]
    finally:
        con.close()


def wait_for(db: Path, count: int, limit: float = 30.0) -> float:
    """Wait until `count` commits are recorded (a background record may land after the commit
    returns); the ms it took after the commit, or -1 if it never came."""
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        if recorded(db) >= count:
            return (time.perf_counter() - start) * 1000
        time.sleep(0.002)
    return -1.0


def hook_cost(binary: Path, env: dict, runs: int) -> dict:
    """`git commit` with hooks off (core.hooksPath at an empty folder) and on, alternating."""
    with tempfile.TemporaryDirectory() as repo:
        env = {**env, **GIT_ENV}
        git(repo, "init", "-q", "-b", "main", env=env)
        subprocess.run([binary, "init", "--git-hooks", repo], env=env, cwd=repo, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        no_hooks = Path(repo) / ".git" / "no-hooks"
        no_hooks.mkdir()
        db = Path(repo) / ".ekko" / "memory.db"
        plain, hooked, landed, lost = [], [], [], 0
        for i in range(runs):
            base = ["git", "commit", "-q", "--allow-empty", "-m", f"bench {i}"]
            plain.append(once(["git", "-c", f"core.hooksPath={no_hooks}", *base[1:]], env, repo))
            before = recorded(db)
            hooked.append(once([*base[:-1], f"bench {i}, hooked"], env, repo))
            after = wait_for(db, before + 1)
            if after < 0:
                lost += 1
            else:
                landed.append(after)
        without, with_hook = summary(plain), summary(hooked)
        return {"git commit, no hook": without, "git commit, hook": with_hook,
                "added_ms": round(with_hook["median_ms"] - without["median_ms"], 1),
                "recorded_after_return_ms": round(statistics.median(landed), 1) if landed
                else None,
                "records_lost": lost}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-hook", action="store_true", help="skip the git commit timing")
    args = parser.parse_args()
    python = Path(sys.executable)
    binary = python.with_name("ekko-mem")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EKKO_HOME": f"{tmp}/home"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
        for var in ("EKKO_WORKSPACE", "EKKO_SESSION", "NO_COLOR"):
            env.pop(var, None)
        cases = runnable(cases_for(python, binary, workspace(binary, env, tmp)), env, tmp)
        results = round_robin(cases, env, tmp, args.runs)
        hook = None if args.no_hook else hook_cost(binary, env, args.runs)
    base, base_cpu = results[BARE]["median_ms"], results[BARE]["cpu_ms"]
    for row in results.values():
        row["ratio"] = round(row["median_ms"] / base, 2)
        row["cpu_ratio"] = round(row["cpu_ms"] / base_cpu, 2)
    report = {"machine": f"{platform.machine()} {os.cpu_count()} cpu, Python"
                         f" {platform.python_version()}", "runs": args.runs, "results": results,
              "hook": hook}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['machine']}, {args.runs} runs each, round-robin")
    print(f"{'command':32} {'median ms':>10} {'p95 ms':>8} {'x bare':>7} {'cpu ms':>7}"
          f" {'x bare':>7}")
    for name, row in results.items():
        print(f"{name:32} {row['median_ms']:>10} {row['p95_ms']:>8} {row['ratio']:>7}"
              f" {row['cpu_ms']:>7} {row['cpu_ratio']:>7}")
    if hook:
        print()
        for name in ("git commit, no hook", "git commit, hook"):
            row = hook[name]
            print(f"{name:32} {row['median_ms']:>10} {row['p95_ms']:>8}")
        landed = hook["recorded_after_return_ms"]
        print(f"the hook adds {hook['added_ms']} ms per commit (median);"
              f" {hook['records_lost']} of {args.runs} records lost"
              + (f"; recorded {landed} ms after the commit returned (median)"
                 if landed else ""))


if __name__ == "__main__":
    main()
