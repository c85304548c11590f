"""In-process latency of the read paths, and the db's footprint, at one workspace size."""
from __future__ import annotations

import time
from pathlib import Path

from .datagen import INGREDIENTS
from .procs import capture_sql, summarise


def timed(fn, inputs: list, repeat: int, warmup: int = 3) -> dict:
    for value in inputs[:warmup]:
        fn(value)
    times = []
    for index in range(repeat):
        value = inputs[index % len(inputs)]
        tick = time.perf_counter()
        fn(value)
        times.append((time.perf_counter() - tick) * 1000)
    return summarise(times)


def measure_latency(stats: dict, env: dict, repeat: int) -> dict:
    from ekko_mem import MemoryService
    from ekko_mem.env import Env
    root = Path(stats["root"])
    svc = MemoryService(workspace=root, env=Env(env, cwd=root))
    store = svc.store
    terms = stats["ftsTerms"]
    session = stats["sessionForReads"]
    active = {"statuses": ["active"]}
    projects = [f"p{index:05d}" for index in range(0, max(1, stats["size"] // 200), 7)][:20]
    out = {
        "exact key (retrieve)": timed(lambda v: svc.retrieve(
            {"key": "avoid_ingredient", "valueJson": v, "limit": 20}), INGREDIENTS, repeat),
        "exact key (store)": timed(lambda v: store.nodes.find_nodes(
            {**active, "key": "avoid_ingredient", "valueJson": v}, limit=20),
            INGREDIENTS, repeat),
        "category leaf+project (retrieve)": timed(lambda p: svc.retrieve(
            {"categoryPathPrefix": f"工程/backend/database/{p}", "limit": 20}), projects,
            repeat),
        "category level 2 (retrieve)": timed(lambda p: svc.retrieve(
            {"categoryPathPrefix": p, "limit": 20}),
            ["生活技能/做饭", "工程/backend", "work/meetings", "学习/英语"], repeat),
    }
    for kind in ("zh_mid", "en_mid", "zh_common"):
        out[f"fts {kind} (retrieve)"] = timed(lambda w: svc.retrieve(
            {"queryText": w, "limit": 20}), terms[kind], repeat)
    texts = ["今晚吃什么", "deploy the release 部署", "香菜 recipe for dinner",
             f"{terms['zh_mid'][0]} {terms['en_mid'][0]}"]
    out["context build"] = timed(lambda t: svc.build_context(t, session=session, record=False),
                                 texts, repeat)
    out["context build (no input)"] = timed(lambda t: svc.build_context(
        None, session=session, record=False), [None], repeat)
    out["history (store)"] = timed(lambda s: store.messages.list_recent_messages(s, 20), [session],
                                   repeat)
    plans = query_plans(svc, root, session, terms)
    svc.close()
    return {"latencyMs": out, "plans": plans}


def query_plans(svc, root: Path, session: str, terms: dict) -> dict:
    """EXPLAIN QUERY PLAN of the SQL behind each read path, as evidence in the JSON."""
    db = root / ".ekko" / "memory.db"
    calls = {
        "exact key": lambda: svc.retrieve({"key": "avoid_ingredient", "valueJson": "香菜"}),
        "category": lambda: svc.retrieve({"categoryPathPrefix": "生活技能/做饭"}),
        "fts": lambda: svc.retrieve({"queryText": terms["zh_mid"][0]}),
        "context": lambda: svc.build_context("今晚吃什么", session=session, record=False),
    }
    plans = {}
    for name, call in calls.items():
        svc.close()
        rows = []
        for sql in capture_sql(db, call):
            if sql.lstrip().lower().startswith("select"):
                rows.append({"sql": sql[:160], "plan": _explain(db, sql)})
        plans[name] = rows
    return plans


def _explain(db: Path, sql: str) -> list[str]:
    import sqlite3
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r[3] for r in conn.execute("explain query plan " + sql)]
    finally:
        conn.close()


def footprint(stats: dict) -> dict:
    """Bytes on disk per node and per message, split by table (dbstat)."""
    import sqlite3
    db = Path(stats["root"]) / ".ekko" / "memory.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        sizes = dict(conn.execute("select name, sum(pgsize) from dbstat group by name"))
        nodes = conn.execute("select count(*) from memory_nodes").fetchone()[0]
        messages = conn.execute("select count(*) from memory_messages").fetchone()[0]
    finally:
        conn.close()

    def part(*prefixes: str) -> int:
        return sum(v for k, v in sizes.items() if k.startswith(prefixes))

    def table(name: str) -> int:  # the table, its primary key and its indexes, not its FTS
        return sizes.get(name, 0) + part(f"idx_{name}_", f"sqlite_autoindex_{name}_")

    node_b = table("memory_nodes")
    audit_b = table("memory_audit_events")
    msg_b = table("memory_messages")
    fts_nodes = part("memory_nodes_fts")
    fts_msgs = part("memory_messages_fts")
    total = db.stat().st_size
    return {"fileBytes": total, "nodes": nodes, "messages": messages,
            "bytesPerNode": round((node_b + audit_b) / nodes),
            "bytesPerNodeWithoutAudit": round(node_b / nodes),
            "auditBytesPerNode": round(audit_b / nodes),
            "ftsBytesPerNode": round(fts_nodes / nodes),
            "bytesPerMessage": round(msg_b / messages),
            "ftsBytesPerMessage": round(fts_msgs / messages),
            "fileBytesPerNodePlusMessage": round(total / (nodes + messages)),
            "topTables": sorted(((k, v) for k, v in sizes.items()), key=lambda kv: -kv[1])[:12]}
