"""What a context costs beyond its answer: the modules it loads, the pages its topic hints read.

A context runs before every model call. Its topic hints (the preferences and constraints under
the question's category) walk a type's best nodes in rank order and keep those under the
category: the walk reads idx_memory_nodes_rank alone, which holds each node's category and
expiry, and only the rows kept are read. Equal-ranked nodes still come in the order they were
written.
"""
from __future__ import annotations

import sqlite3
import subprocess
import sys

from ekko_mem.store import open_store

NOW = "2026-03-01T12:00:00.000Z"
ACTIVE = {"now": NOW, "statuses": ["active"]}


def _node(number: int, path: list[str], *, kind: str = "preference", importance: float = 0.5,
          status: str = "active", expires: str | None = None) -> dict:
    node = {"id": f"mem_cost{number:014d}", "scope": "workspace", "domain": path[0],
            "categoryPath": path, "type": kind, "title": f"偏好 preference {number}",
            "content": f"内容 content {number}", "status": status, "confidence": 0.9,
            "importance": importance, "tags": [], "entities": [], "createdAt": NOW,
            "updatedAt": NOW, "workspaceId": "ws_cost"}
    if expires:
        node["expiresAt"] = expires
    return node


def _store(tmp_path, nodes: list[dict]):
    store = open_store(tmp_path / ".ekko" / "memory.db", create=True)
    with store.db.atomic():
        for node in nodes:
            store.nodes.insert_node(node)
    return store


def _ids(nodes: list[dict]) -> list[int]:
    return [int(n["id"][-14:]) for n in nodes]


def test_topic_hints_read_the_rank_index_alone(tmp_path):
    store = _store(tmp_path, [_node(i, ["生活技能", "做饭"] if i % 3 else ["工程", "backend"])
                              for i in range(30)])
    seen: list[str] = []
    store.db.raw.set_trace_callback(seen.append)
    store.nodes.find_in_category({**ACTIVE, "types": ["preference"],
                                  "categoryPrefix": ["生活技能"]})
    store.db.raw.set_trace_callback(None)
    plan = [row[3] for sql in seen if sql.lstrip().lower().startswith("select")
            for row in store.db.raw.execute(f"explain query plan {sql}")]
    store.close()
    assert "SEARCH n USING COVERING INDEX idx_memory_nodes_rank (status=? AND type=?)" in plan, \
        plan


def test_topic_hints_keep_the_window_and_write_order(tmp_path):
    """Ties in rank come in write order, though their categories sort the other way; the
    window is the type's best nodes, expired and inactive ones aside."""
    cooking = ["生活技能", "做饭"]
    nodes = [_node(0, [*cooking, "早餐"]), _node(1, cooking), _node(2, [*cooking, "川菜"]),
             _node(3, cooking, importance=0.9), _node(4, ["工程"], importance=0.95),
             _node(5, cooking, importance=0.99, expires="2026-01-01T00:00:00.000Z"),
             _node(6, cooking, importance=0.99, status="superseded"),
             _node(7, ["生活技能", "做饭-家常"], importance=0.97),
             _node(8, cooking, kind="constraint", importance=0.98),
             _node(9, cooking, importance=0.1)]
    store = _store(tmp_path, nodes)
    hint = {**ACTIVE, "types": ["preference"], "categoryPrefix": cooking}
    assert _ids(store.nodes.find_in_category(hint)) == [3, 0, 1, 2, 9]
    # The window holds the type's four best live nodes (7, 4, 3, then 0 of the tied ones).
    assert _ids(store.nodes.find_in_category(hint, window=4)) == [3, 0]
    assert _ids(store.nodes.find_in_category(hint, limit=2)) == [3, 0]
    assert _ids(store.nodes.find_nodes({**ACTIVE, "types": ["preference"]})) == \
        [7, 4, 3, 0, 1, 2, 9]
    store.close()


def test_an_older_db_gets_the_category_in_its_rank_index(tmp_path):
    store = _store(tmp_path, [_node(1, ["生活技能", "做饭"])])
    raw = store.db.raw
    raw.execute("drop index idx_memory_nodes_rank")
    raw.execute("create index idx_memory_nodes_rank on memory_nodes"
                " (status, type, importance desc, confidence desc, updated_at desc)")
    raw.execute("drop table memory_entities")
    raw.execute("drop table memory_edges")
    raw.execute("drop table memory_entity_names")
    raw.execute("delete from memory_schema_migrations where version >= 14")
    raw.execute("PRAGMA user_version = 13")
    store.close()
    path = tmp_path / ".ekko" / "memory.db"
    open_store(path).close()
    columns = [row[2] for row in sqlite3.connect(path).execute(
        "PRAGMA index_info(idx_memory_nodes_rank)")]
    assert columns == ["status", "type", "importance", "confidence", "updated_at",
                       "category_path_text", "expires_at"]


def test_a_context_loads_the_view_for_people_only_for_a_warning(cli, ws, tmp_path):
    """The context text is written as packed: the tables, times and explain view that people
    read are not loaded for it. A warning still reaches stderr."""
    assert cli("remember", "记住，我不吃香菜").code == 0
    probe = ("import sys\nfrom ekko_mem.cli import main\n"
             "code = main(['context', sys.argv[1], '-w', sys.argv[2]])\n"
             "print(code, sorted(m for m in sys.modules if m.startswith('ekko_mem.render.')),"
             " file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, "今晚吃什么", str(ws)], cwd=ws,
                          capture_output=True, text=True, timeout=60)
    assert "香菜" in done.stdout
    assert done.stderr == "0 ['ekko_mem.render.context', 'ekko_mem.render.machine']\n"
    missing = tmp_path / "elsewhere"
    missing.mkdir()
    done = subprocess.run([sys.executable, "-c", probe, "今晚吃什么", str(missing)], cwd=ws,
                          capture_output=True, text=True, timeout=60)
    assert "ekko-mem: warning:" in done.stderr and "ekko_mem.render.human" in done.stderr
