"""Reliability stress: many writers at once, and writers killed with SIGKILL mid-transaction.

    python bench/stress.py                       # both phases, 8 processes for 20 s, 100 kills
    python bench/stress.py --procs 8 --duration 60 --kills 300 --json
    python bench/stress.py --phase crash --kills 500 --keep /tmp/stress-run

Concurrency phase: N processes run the installed `ekko-mem` (log, remember, supersede, forget,
context) against one workspace for a bounded time. Afterwards every acknowledged write must be
in the db (id sets compared exactly), no command may have reported a locked db, and the store
invariants below must hold.

Crash phase: a Python driver calling MemoryService (remember, supersede, soft and hard forget,
JSON Lines batches) is killed with SIGKILL after a random delay, many times over; after each
kill the invariants must hold and no batch may be half written.

Prints a summary (a table, or JSON with --json) and exits 1 when any invariant is violated.
The tests in tests/test_reliability_*.py import `check_invariants` and the phases from here.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).with_name("ekko-mem")
SINGLE_KEYS = ("database", "language", "framework")



# -- invariants ------------------------------------------------------------------------------
def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=10, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def check_invariants(db: Path, *, fts_sample: int = 200) -> list[tuple[str, str]]:
    """(name, detail) for every broken invariant of one memory db; [] when consistent."""
    from ekko_mem.store import fts
    out: list[tuple[str, str]] = []
    conn = _connect(db)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if rows != ["ok"]:
            out.append(("integrity", "; ".join(rows[:5])))
        for table in ("memory_nodes", "memory_messages"):
            # Contentless FTS5: 'integrity-check' cannot compare with a content table, so the
            # docsize shadow table (one row per indexed rowid) is compared with the table.
            base = {r[0] for r in conn.execute(f"select rowid from {table}")}
            docs = {r[0] for r in conn.execute(f"select id from {table}_fts_docsize")}
            if base != docs:
                out.append(("fts-rows", f"{table}: {len(base - docs)} rows not indexed,"
                                        f" {len(docs - base)} index rows without a row"))
            try:
                conn.execute(f"insert into {table}_fts ({table}_fts) values ('integrity-check')")
            except sqlite3.Error as exc:
                out.append(("fts-integrity", f"{table}: {exc}"))
        nodes = conn.execute("select rowid, id, title from memory_nodes").fetchall()
        for rowid, node_id, title in random.sample(nodes, min(fts_sample, len(nodes))):
            tokens = fts.index_text(title).split()
            if not tokens:
                continue
            hit = conn.execute("select 1 from memory_nodes_fts where memory_nodes_fts match ?"
                               " and rowid = ?", ('title:"' + tokens[0].replace('"', '""') + '"',
                                                 rowid)).fetchone()
            if hit is None:
                out.append(("fts-tokens", f"{node_id}: title token {tokens[0]!r} not indexed"))
        for (node_id,) in conn.execute(
                "select id from memory_nodes a where status = 'superseded' and not exists"
                " (select 1 from memory_nodes b where b.supersedes_id = a.id)"):
            out.append(("superseded-orphan", f"{node_id} is superseded but has no successor"))
        for old, new in conn.execute(
                "select a.id, b.id from memory_nodes a join memory_nodes b"
                " on b.supersedes_id = a.id where a.status = 'active' and b.status = 'active'"):
            out.append(("active-pair", f"{new} supersedes {old} and both are active"))
        for old, count in conn.execute(
                "select supersedes_id, count(*) from memory_nodes where supersedes_id is not"
                " null group by supersedes_id having count(*) > 1"):
            out.append(("supersede-fork", f"{old} was superseded {count} times"))
        marks = ",".join("?" * len(SINGLE_KEYS))
        for key, scope, count in conn.execute(
                f"select key, scope, count(*) from memory_nodes where status = 'active' and"
                f" key in ({marks}) and scope != 'session' group by key, scope, domain, type"
                " having count(*) > 1", SINGLE_KEYS):
            out.append(("single-valued-cardinality", f"{count} active nodes for {key} ({scope})"))
        for (node_id,) in conn.execute(
                "select id from memory_nodes n where not exists (select 1 from"
                " memory_audit_events e where e.node_id = n.id)"):
            out.append(("audit-missing", f"{node_id} has no audit event"))
        batches = conn.execute(
            "select json_extract(metadata_json, '$.batch'), count(*),"
            " max(json_extract(metadata_json, '$.size')) from memory_messages"
            " where json_extract(metadata_json, '$.batch') is not null group by 1").fetchall()
        for batch, count, size in batches:
            if int(size) != count:
                out.append(("half-batch", f"batch {batch}: {count} of {size} messages"))
    finally:
        conn.close()
    return out


# -- concurrency phase -----------------------------------------------------------------------
def _cli(args: list[str], ws: Path, env: dict, input: str | None = None):
    start = time.monotonic()
    proc = subprocess.run([str(BIN), *args], cwd=ws, env=env, input=input,
                          capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - start


def _pick(db: Path, where: str) -> str | None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        row = conn.execute(f"select id from memory_nodes where {where}"
                           " order by random() limit 1").fetchone()
        return row[0] if row else None
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def worker(ws: Path, seed: int, until: float, out_path: Path) -> None:
    """One process of the concurrency phase: random commands until `until` (time.time())."""
    rng = random.Random(seed)
    env = dict(os.environ)
    db = ws / ".ekko" / "memory.db"
    n = 0
    with open(out_path, "w", encoding="utf-8") as out:
        while time.time() < until:
            n += 1
            tag = f"w{seed}-{n}"
            op = rng.choices(["log", "remember", "remember-key", "supersede", "forget",
                              "context"], [30, 20, 12, 15, 10, 13])[0]
            if op == "log":
                args = ["log", f"message {tag} 香菜 {rng.random()}", "-s", f"s{seed % 3}",
                        "--json"]
            elif op == "remember":
                args = ["remember", "--type", "fact", "--title", f"fact {tag}",
                        "--content", f"content {tag} 少油少辣", "--tag", f"t{seed}", "--json"]
            elif op == "remember-key":
                key = rng.choice(SINGLE_KEYS)
                args = ["remember", "--domain", "engineering", "--type", "fact", "--key", key,
                        "--value", f"v-{tag}", "--title", f"{key} is v-{tag}", "--json"]
            elif op == "supersede":
                target = _pick(db, "status = 'active' and key is null")
                if target is None:
                    continue
                args = ["remember", "--supersedes", target, "--title", f"fact {tag} (new)",
                        "--content", f"content {tag} replaces", "--json"]
            elif op == "forget":
                target = _pick(db, "status = 'active' and key is null")
                if target is None:
                    continue
                args = ["forget", target, "--json"]
            else:
                args = ["context", f"what about {tag} 香菜", "--format", "json"]
            proc, took = _cli(args, ws, env)
            out.write(json.dumps({"op": op, "args": args, "code": proc.returncode,
                                  "out": proc.stdout, "err": proc.stderr,
                                  "took": round(took, 3)}, ensure_ascii=False) + "\n")
            out.flush()


def _acknowledged(records: list[dict]) -> tuple[set, set, set, list[str]]:
    """Message ids, node ids and forgotten ids the commands reported, and user-facing faults."""
    messages, nodes, forgotten, faults = set(), set(), set(), []
    for rec in records:
        err = rec["err"]
        if "Traceback" in err or "internal error" in err:
            faults.append(f"{rec['op']}: {err.strip()[:200]}")
        if rec["op"] != "context" and ("locked" in err or rec["code"] == 6):
            faults.append(f"{rec['op']} saw a locked db after {rec['took']} s: {err.strip()}")
        if rec["op"] == "context":
            if rec["code"] != 0:
                faults.append(f"context exited {rec['code']}: {err.strip()[:200]}")
            continue
        if rec["code"] not in (0, 4, 5):
            faults.append(f"{rec['op']} exited {rec['code']}: {err.strip()[:200]}")
        if rec["code"] != 0:
            continue
        if rec["op"] == "forget":  # one indented JSON object
            forgotten.update(json.loads(rec["out"])["deletedIds"])
            continue
        lines = [json.loads(line) for line in rec["out"].splitlines() if line.strip()]
        if rec["op"] == "log":
            messages.update(m["id"] for m in lines)
        else:
            for result in lines:
                if result.get("accepted") and result["operation"] in ("created", "superseded"):
                    nodes.add(result["nodeId"])
                if result.get("sourceMessageId"):
                    messages.add(result["sourceMessageId"])
    return messages, nodes, forgotten, faults


def run_concurrency(ws: Path, *, procs: int = 8, duration: float = 5.0) -> dict:
    """Run the concurrency phase against an initialised workspace; returns a report."""
    until = time.time() + duration
    outs = [ws.parent / f"worker-{i}.jsonl" for i in range(procs)]
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import stress;"
            " stress.worker(__import__('pathlib').Path(sys.argv[2]), int(sys.argv[3]),"
            " float(sys.argv[4]), __import__('pathlib').Path(sys.argv[5]))")
    children = [subprocess.Popen([sys.executable, "-c", code, str(HERE), str(ws), str(i),
                                  str(until), str(outs[i])]) for i in range(procs)]
    for child in children:
        child.wait(timeout=duration + 300)
    records = [json.loads(line) for path in outs if path.exists()
               for line in path.read_text(encoding="utf-8").splitlines()]
    messages, nodes, forgotten, faults = _acknowledged(records)
    db = ws / ".ekko" / "memory.db"
    conn = _connect(db)
    have_messages = {r[0] for r in conn.execute("select id from memory_messages")}
    have_nodes = {r[0]: r[1] for r in conn.execute("select id, status from memory_nodes")}
    conn.close()
    violations = check_invariants(db)
    violations += [("user-fault", f) for f in faults]
    if have_messages != messages:
        violations.append(("lost-or-unacknowledged-messages",
                           f"{len(messages - have_messages)} acknowledged messages missing,"
                           f" {len(have_messages - messages)} present but never acknowledged"))
    if set(have_nodes) != nodes:
        violations.append(("lost-or-unacknowledged-nodes",
                           f"{len(nodes - set(have_nodes))} acknowledged nodes missing,"
                           f" {len(set(have_nodes) - nodes)} present but never acknowledged"))
    for node_id in sorted(forgotten):
        if have_nodes.get(node_id) != "deleted":
            violations.append(("forget-lost", f"{node_id} was forgotten but is"
                                              f" {have_nodes.get(node_id)}"))
    by_op: dict[str, dict] = {}
    for rec in records:
        row = by_op.setdefault(rec["op"], {"runs": 0, "ok": 0, "maxSeconds": 0.0})
        row["runs"] += 1
        row["ok"] += rec["code"] == 0
        row["maxSeconds"] = max(row["maxSeconds"], rec["took"])
    return {"phase": "concurrency", "procs": procs, "duration": duration,
            "commands": len(records), "byOp": by_op, "messages": len(have_messages),
            "nodes": len(have_nodes), "violations": violations}


# -- crash phase -----------------------------------------------------------------------------
DRIVER = r"""
import json, random, sys
from ekko_mem import MemoryService
ws, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
n = 0
while True:
    n += 1
    with MemoryService(ws, session="crash") as svc:
        op = rng.choice(["remember", "remember-key", "supersede", "forget", "hard", "batch",
                         "text"])
        tag = f"c{seed}-{n}"
        active = svc.store.nodes.find_nodes({"statuses": ["active"]}, limit=50)
        free = [x for x in active if x.get("key") is None]
        if op == "remember":
            svc.remember(fields={"type": "fact", "title": f"fact {tag} 香菜",
                                 "content": f"body {tag} " * 50, "tags": [tag]})
        elif op == "remember-key":
            svc.remember(fields={"domain": "engineering", "type": "fact", "key": "database",
                                 "valueJson": f"v-{tag}", "title": f"database v-{tag}"})
        elif op == "text":
            svc.remember(f"记住，我们项目的测试命令是 pytest {tag}")
        elif op == "supersede" and free:
            svc.remember(fields={"title": f"fact {tag} new", "content": f"new {tag}"},
                         supersedes=rng.choice(free)["id"])
        elif op == "forget" and free:
            svc.forget({"id": rng.choice(free)["id"]})
        elif op == "hard" and active:
            svc.forget({"id": rng.choice(active)["id"]}, mode="hard", confirm=True,
                       purge_sources=rng.random() < 0.5)
        elif op == "batch":
            size = rng.randint(2, 40)
            lines = [json.dumps({"content": f"batch {tag} line {i} " + "x" * 200,
                                 "metadata": {"batch": tag, "size": size}})
                     for i in range(size)]
            svc.log_jsonl(lines)
"""


def run_crash(ws: Path, *, kills: int = 20, max_delay: float = 0.6, seed: int = 0) -> dict:
    """Kill a writer `kills` times at random moments; check the db after each kill."""
    rng = random.Random(seed)
    db = ws / ".ekko" / "memory.db"
    violations: list[tuple[str, str]] = []
    completed = 0
    env = dict(os.environ)
    for i in range(kills):
        child = subprocess.Popen([sys.executable, "-c", DRIVER, str(ws), str(seed * 1000 + i)],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.15 + rng.random() * max_delay)  # start-up takes ~0.1 s
        if child.poll() is not None:
            err = child.stderr.read().decode(errors="replace")
            violations.append(("driver-died", f"kill {i}: exit {child.returncode}: {err[-300:]}"))
            continue
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stderr.close()
        completed += 1
        found = check_invariants(db, fts_sample=50)
        violations += [(name, f"after kill {i}: {detail}") for name, detail in found]
    conn = _connect(db)
    counts = {t: conn.execute(f"select count(*) from {t}").fetchone()[0]
              for t in ("memory_nodes", "memory_messages", "memory_audit_events")}
    conn.close()
    return {"phase": "crash", "kills": completed, "counts": counts, "violations": violations}


# -- command line ----------------------------------------------------------------------------
def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    os.environ["EKKO_HOME"] = str(root / "home")
    os.environ.setdefault("EKKO_USER", "stress")
    subprocess.run([str(BIN), "init", str(ws)], check=True, capture_output=True)
    return ws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", choices=["all", "concurrency", "crash"], default="all")
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load")
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    random.seed(args.seed)
    root = args.keep or Path(tempfile.mkdtemp(prefix="ekko-stress-"))
    reports = []
    if args.phase in ("all", "concurrency"):
        reports.append(run_concurrency(make_workspace(root / "concurrency"), procs=args.procs,
                                       duration=args.duration))
    if args.phase in ("all", "crash"):
        reports.append(run_crash(make_workspace(root / "crash"), kills=args.kills,
                                 seed=args.seed))
    failing = [v for r in reports for v in r["violations"]]
    if args.json:
        print(json.dumps({"seed": args.seed, "reports": reports, "ok": not failing},
                         ensure_ascii=False, indent=2))
    else:
        _print_summary(reports, args.seed)
    if not args.keep:
        import shutil
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failing else 0


def _print_summary(reports: list[dict], seed: int) -> None:
    print(f"seed {seed}")
    for report in reports:
        if report["phase"] == "concurrency":
            print(f"\nconcurrency: {report['procs']} processes, {report['duration']} s,"
                  f" {report['commands']} commands, {report['messages']} messages,"
                  f" {report['nodes']} nodes")
            print(f"  {'op':<14}{'runs':>6}{'ok':>6}{'max s':>8}")
            for op, row in sorted(report["byOp"].items()):
                print(f"  {op:<14}{row['runs']:>6}{row['ok']:>6}{row['maxSeconds']:>8.2f}")
        else:
            print(f"\ncrash: {report['kills']} SIGKILLs, final counts {report['counts']}")
        names: dict[str, list[str]] = {}
        for name, detail in report["violations"]:
            names.setdefault(name, []).append(detail)
        if not names:
            print("  invariants: all hold")
        for name, details in sorted(names.items()):
            print(f"  VIOLATED {name}: {len(details)}x, e.g. {details[0]}")


if __name__ == "__main__":
    sys.exit(main())
