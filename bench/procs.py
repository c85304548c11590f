"""Per-process wall time and peak memory of ekko-mem commands, beside bare python3 and sqlite3.

Each command runs as a fresh process, as an agent or a git hook runs it. The `sqlite3` shell
rows run the very SQL the same command issues (captured in-process with a trace callback, its
parameters inlined by SQLite), so the gap between the two is ekko-mem's own cost: interpreter
start-up, imports, Python work. Writes are replayed inside a transaction that is rolled back.
"""
from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def run_measured(argv, env, cwd, check: bool = True, rss: bool = False
                 ) -> tuple[float, int | None]:
    """(wall seconds, peak RSS in KiB when `rss`) of one child process.

    Peak RSS comes from /usr/bin/time: a child forked straight from this (large) process
    would report the parent's RSS at fork time as its own peak.
    """
    with tempfile.NamedTemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        prefix = ["/usr/bin/time", "-f", "%M", "-o", peak.name] if rss else []
        start = time.perf_counter()
        proc = subprocess.run([*prefix, *(str(a) for a in argv)], env=env, cwd=cwd, check=False,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        took = time.perf_counter() - start
        if check and proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[:3]} exited {proc.returncode}: {err.read().decode()}")
        kib = int(peak.read().strip().splitlines()[-1]) if rss else None
    return took, kib


def summarise(times_ms: list[float]) -> dict:
    ordered = sorted(times_ms)
    return {"p50": round(statistics.median(ordered), 2),
            "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2),
            "n": len(ordered)}


class _RollingBack:
    """A sqlite3 connection whose COMMIT rolls back: a captured write leaves no trace."""

    def __init__(self, conn) -> None:
        self._conn = conn

    def execute(self, sql, *args):
        return self._conn.execute("ROLLBACK" if sql.strip().upper() == "COMMIT" else sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def capture_sql(db_path: Path, call) -> list[str]:
    """The statements (parameters inlined) that `call()` issues on the db at `db_path`.

    Its writes are rolled back, so replaying the script later meets the same db state.
    """
    import ekko_mem.store as store_pkg
    original = store_pkg.connect
    seen: list[str] = []

    def traced(path, **kwargs):
        conn = original(path, **kwargs)
        if Path(path).resolve() == db_path.resolve():
            conn.set_trace_callback(seen.append)
            return _RollingBack(conn)
        return conn

    store_pkg.connect = traced
    try:
        call()
    finally:
        store_pkg.connect = original
    return seen


_EXPLICIT_ROWID = re.compile(r"^(insert into memory_messages(?:_fts)? \(rowid,.*?\) values \()"
                             r"(\d+)", re.S | re.I)
ROWID_SHIFT = 1_000_000_000


def shell_script(statements: list[str]) -> str:
    lines = [".timeout 5000"]
    for sql in statements:
        text = sql.strip().rstrip(";")
        # Messages are inserted with explicit rowids (max + 1 at capture time); the `log`
        # processes timed alongside take those rowids, so the replay writes far above them.
        # Appending at the right edge of the b-tree costs the same; the replay rolls back.
        text = _EXPLICIT_ROWID.sub(lambda m: m.group(1) + str(int(m.group(2)) + ROWID_SHIFT),
                                   text)
        lines.append(text + ";")
    return "\n".join(lines) + "\n"


def _unique() -> str:
    """A word no two runs share, in letters: a long run of digits reads as a card number, and
    the write would then stop at the question about sensitive data instead of storing."""
    return "".join(chr(ord("a") + int(d)) for d in str(time.time_ns()))


def command_cases(binary: str, python: str, root: Path, session: str, term: str) -> dict:
    """Name -> function(run index) -> argv, for the per-process rows."""
    w = ["-w", str(root)]
    return {
        "python3 -c 'import sqlite3'": lambda i: [python, "-c", "import sqlite3"],
        "ekko-mem log": lambda i: [binary, "log", "-s", session, *w, "-q",
                                   f"基准消息 bench message {i} 少油少辣"],
        "ekko-mem remember": lambda i: [
            binary, "remember", "--scope", "workspace", "--type", "fact", "--domain",
            "research", "--category", "research/papers/cli", "--title",
            f"基准 cli fact {time.time_ns()}", "--content", "基准测试 remember per process",
            *w, "-q"],
        "ekko-mem remember TEXT": lambda i: [
            binary, "remember", f"以后做饭别放香菜，我喜欢少油 {_unique()}", *w, "-q"],
        "ekko-mem query": lambda i: [binary, "query", term, *w, "--json"],
        "ekko-mem context": lambda i: [binary, "context", "今晚吃什么 deploy", "-s", session, *w],
        "ekko-mem history": lambda i: [binary, "history", "-s", session, "-n", "20", *w,
                                       "--json"],
    }


def service_calls(svc, session: str, term: str) -> dict:
    """The in-process service call behind each command, for capturing its SQL."""
    return {
        "ekko-mem log": lambda: svc.log_message("基准消息 bench capture", session=session),
        "ekko-mem remember": lambda: svc.remember(None, fields={
            "scope": "workspace", "type": "fact", "domain": "research",
            "categoryPath": "research/papers/cli", "title": f"基准 capture {time.time_ns()}",
            "content": "基准测试 capture"}, session=session),
        "ekko-mem remember TEXT": lambda: svc.remember(
            f"以后做饭别放香菜，我喜欢少油 {_unique()}", session=session),
        "ekko-mem query": lambda: svc.retrieve({"queryText": term, "limit": 20}),
        "ekko-mem context": lambda: svc.build_context("今晚吃什么 deploy", session=session),
        "ekko-mem history": lambda: svc.history(session=session, limit=20),
    }


def measure_processes(stats: dict, binary: str, python: str, env: dict, runs: int,
                      sqlite_shell: str | None = "sqlite3", warmup: int = 2) -> dict:
    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    root = Path(stats["root"])
    db = root / ".ekko" / "memory.db"
    session, term = stats["sessionForReads"], stats["ftsTerms"]["zh_mid"][0]
    cases = command_cases(binary, python, root, session, term)
    scripts: dict[str, str] = {}
    if sqlite_shell:
        svc = MemoryService(workspace=root, env=Env(env, cwd=root))
        for name, call in service_calls(svc, session, term).items():
            scripts[name] = shell_script(capture_sql(db, call))
            svc.close()
    with tempfile.TemporaryDirectory() as tmp:
        for name, script in scripts.items():
            path = Path(tmp) / f"{name.split(maxsplit=1)[-1].replace(' ', '-')}.sql"
            path.write_text(script, encoding="utf-8")
            cases[f"sqlite3 (same SQL as {name.split(maxsplit=1)[-1]})"] = (
                lambda i, p=path: [sqlite_shell, str(db), f".read {p}"])
        times = {name: [] for name in cases}
        rss = {name: 0 for name in cases}
        for index in range(warmup + runs):  # round-robin, so background noise is shared
            for name, argv in cases.items():
                took, _ = run_measured(argv(index), env, root)
                if index >= warmup:
                    times[name].append(took * 1000)
        for index in range(2):  # peak memory, in separate runs under /usr/bin/time
            for name, argv in cases.items():
                peak = run_measured(argv(index), env, root, rss=True)[1]
                rss[name] = max(rss[name], peak)
    out = {name: {**summarise(t), "peakRssMb": round(rss[name] / 1024, 1)}
           for name, t in times.items()}
    bare = out["python3 -c 'import sqlite3'"]["p50"]
    for name, row in out.items():
        row["xBarePython"] = round(row["p50"] / bare, 2)
        shell = out.get(f"sqlite3 (same SQL as {name.split(maxsplit=1)[-1]})")
        if name.startswith("ekko-mem") and shell:
            row["xSqlite3"] = round(row["p50"] / shell["p50"], 2)
    return {"results": out, "sqlScripts": {k: v.count("\n") - 1 for k, v in scripts.items()}}
