"""The hot read paths are index-backed: EXPLAIN QUERY PLAN of the SQL the store really issues.

Each path runs against a small db built through the real store; its statements are captured
from the connection (parameters inlined by SQLite) and explained. A `SCAN` of memory_nodes or
memory_messages (under its own name or its alias) means a full table or index walk, which grows
with the db; a `SEARCH` of an index, a primary-key lookup, or a scan of an FTS virtual table is
what these paths should do.
"""
from __future__ import annotations

import re

import pytest

from ekko_mem.store import open_store

NOW = "2026-03-01T12:00:00.000Z"
# Table names and the aliases store/ gives them in its queries.
BIG_TABLES = {"memory_nodes", "memory_messages", "n", "m"}


def _node(index: int, **extra) -> dict:
    path = ["生活技能", "做饭", "饮食偏好"] if index % 2 else ["工程", "backend", "database"]
    node = {"id": f"mem_plan{index:014d}", "scope": "workspace", "domain": path[0],
            "categoryPath": path, "type": "preference" if index % 2 else "fact",
            "key": "avoid_ingredient" if index % 2 else None,
            "valueJson": "香菜" if index % 4 == 1 else ("葱" if index % 2 else None),
            "title": f"不吃香菜 cilantro {index}", "content": f"用户不吃香菜 note {index}",
            "status": "active", "confidence": 0.9, "importance": 0.5 + index / 100,
            "tags": ["饮食"], "entities": [], "sessionId": "s1" if index % 3 == 0 else None,
            "createdAt": NOW, "updatedAt": NOW, "workspaceId": "ws_plan"}
    node.update(extra)
    return node


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("plans") / ".ekko" / "memory.db"
    st = open_store(path, create=True)
    with st.db.atomic():
        st.messages.append_messages([{"id": f"msg_plan{i:014d}", "sessionId": f"s{i % 3}",
                             "role": "user", "content": f"消息 message {i} 香菜",
                             "createdAt": f"2026-01-01T00:00:{i:02d}.000Z"} for i in range(40)])
        for i in range(40):
            st.nodes.insert_node(_node(i))
        st.summaries.append_summary({"id": "sum_plan1", "sessionId": "s1", "fromMessageId":
                           "msg_plan00000000000001", "toMessageId": "msg_plan00000000000004",
                           "summary": "摘要 summary", "createdAt": NOW})
    yield st
    st.close()


def _plans(store, call) -> list[tuple[str, list[str]]]:
    """(sql, plan steps) of every SELECT that `call(store)` issues."""
    seen: list[str] = []
    store.db.raw.set_trace_callback(seen.append)
    try:
        call(store)
    finally:
        store.db.raw.set_trace_callback(None)
    out = []
    for sql in seen:
        if sql.lstrip().lower().startswith(("select", "with")):
            steps = [row[3] for row in store.db.raw.execute("explain query plan " + sql)]
            out.append((sql, steps))
    assert out, "the path issued no SELECT: the capture is broken"
    return out


def _full_scans(steps: list[str]) -> list[str]:
    bad = []
    for step in steps:
        found = re.match(r"SCAN (\S+)", step)
        if found and found.group(1) in BIG_TABLES:
            bad.append(step)
    return bad


ACTIVE = {"statuses": ["active"], "now": NOW}
PATHS = {
    "get node by id": lambda s: s.nodes.get_node("mem_plan00000000000003"),
    "exact key and value": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "key": "avoid_ingredient", "valueJson": "香菜"}),
    "exact key, value, scope, type, domain": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "scopes": ["workspace"], "types": ["preference"], "domain": "生活技能",
         "key": "avoid_ingredient", "valueJson": "香菜"}),
    "exact key across statuses (query)": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "statuses": ["active", "superseded", "expired"],
         "key": "avoid_ingredient", "valueJson": "香菜"}),
    "category prefix": lambda s: s.nodes.find_nodes({**ACTIVE, "categoryPrefix": ["生活技能", "做饭"]}),
    "conflict lookup: same key, scope, type and domain": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "scopes": ["workspace"], "types": ["preference"], "domain": "生活技能",
         "key": "avoid_ingredient"}, limit=20),
    "conflict lookup: tasks in rank order": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "scopes": ["workspace"], "types": ["preference"], "domain": "生活技能",
         "key": "avoid_ingredient", "rankWalk": True}, limit=200),
    "session nodes": lambda s: s.nodes.find_nodes(
        {**ACTIVE, "scopes": ["session"], "sessionId": "s1"}),
    "successors": lambda s: s.nodes.successors("mem_plan00000000000003"),
    "due for expiry": lambda s: s.nodes.due_for_expiry(NOW),
    "message by id": lambda s: s.messages.get_message("msg_plan00000000000005"),
    "messages by ids": lambda s: s.messages.get_messages(["msg_plan00000000000005",
                                                 "msg_plan00000000000006"]),
    "message ids exist": lambda s: s.messages.message_ids_exist(["msg_plan00000000000005"]),
    "recent messages of a session": lambda s: s.messages.list_recent_messages("s1", 8),
    "session messages from the start": lambda s: s.messages.list_messages_after("s1", None, 50),
    "session messages after a watermark": lambda s: s.messages.list_messages_after(
        "s1", "msg_plan00000000000004", 50),
    "latest summary": lambda s: s.summaries.get_latest_summary("s1"),
    "node audit trail": lambda s: s.nodes.list_events(node_id="mem_plan00000000000003"),
    "id prefix": lambda s: s.ids_with_prefix("node", "mem_plan0000"),
    # ranked recall (service/recall.py)
    "recall: term counts": lambda s: s.recall.term_counts("message", ["香菜", "messag"]),
    "recall: row estimate": lambda s: s.recall.row_estimate("message"),
    "recall: message hits, rare terms": lambda s: s.recall.message_hits(
        ["香菜", "messag"], {"香菜": 40, "messag": 40}),
    "recall: message hits, common terms only": lambda s: s.recall.message_hits(
        ["香菜"], {"香菜": 10**6}),
    "recall: message hits in a session since": lambda s: s.recall.message_hits(
        ["香菜"], {"香菜": 40}, session="s1", since="2026-01-01T00:00:10.000Z"),
    "recall: common message hits in a session": lambda s: s.recall.message_hits(
        ["香菜"], {"香菜": 10**6}, session="s1"),
    "recall: node hits": lambda s: s.recall.node_hits(["香菜", "cilantro"], {"香菜": 40,
                                                                      "cilantro": 40}, ACTIVE),
    "recall: messages in a time window": lambda s: s.recall.messages_between(
        "2026-01-01T00:00:05.000Z", "2026-01-01T00:00:20.000Z"),
    "recall: the other halves of pairs": lambda s: s.recall.message_partners(
        ["msg_plan00000000000004", "msg_plan00000000000007"]),
    "recall: recent summaries": lambda s: s.recall.recent_summaries(limit=10),
}


@pytest.mark.parametrize("name", list(PATHS))
def test_hot_path_does_not_scan_big_tables(store, name):
    for sql, steps in _plans(store, PATHS[name]):
        assert not _full_scans(steps), f"{name}: {steps}\n{sql}"


def test_exact_key_lookup_uses_a_key_index(store):
    steps = [s for _, plan in _plans(store, PATHS["exact key and value"]) for s in plan]
    assert any(re.match(r"SEARCH n USING (COVERING )?INDEX idx_memory_nodes_key", s)
               for s in steps), steps


@pytest.mark.parametrize("name, index", [
    ("conflict lookup: same key, scope, type and domain", "idx_memory_nodes_key_value"),
    ("conflict lookup: tasks in rank order", "idx_memory_nodes_rank"),
    ("session nodes", "idx_memory_nodes_session"),
    ("successors", "idx_memory_nodes_supersedes"),
])
def test_each_lookup_uses_its_own_index(store, name, index):
    """The write path's conflict lookup reads the few nodes with that key, not every active
    node of the type; the partial indexes (keyed, session and superseding nodes only) serve
    the queries that need them."""
    steps = [s for _, plan in _plans(store, PATHS[name]) for s in plan]
    assert any(index in s for s in steps), steps


def test_node_indexes_are_the_ones_queries_use(store):
    """Every index on memory_nodes earns its bytes: each is named by some plan above."""
    used = {re.search(r"INDEX (\S+)", s).group(1) for call in PATHS.values()
            for _, plan in _plans(store, call) for s in plan if "INDEX idx_" in s}
    indexes = {r[0] for r in store.db.raw.execute(
        "select name from sqlite_master where type = 'index' and tbl_name = 'memory_nodes'"
        " and name like 'idx_%'")}
    assert indexes <= used, indexes - used


def test_events_that_read_a_row_are_found_by_the_index_alone(store):
    """Before a node's row changes, the events that read it are found through the index's
    own expression, however many events the node has (a memory restated every turn)."""
    steps = [s for _, plan in _plans(store, lambda s: s.nodes._keep_copies(
        "mem_plan00000000000003")) for s in plan]
    assert any("idx_memory_audit_events_node (node_id=? AND <expr>>?)" in s for s in steps), \
        steps


def test_category_prefix_uses_the_category_index(store):
    steps = [s for _, plan in _plans(store, PATHS["category prefix"]) for s in plan]
    assert any("idx_memory_nodes_category" in s for s in steps), steps


def test_expiry_sweep_uses_the_expiry_index(store):
    steps = [s for _, plan in _plans(store, PATHS["due for expiry"]) for s in plan]
    assert any("expires" in s for s in steps), steps


@pytest.mark.parametrize("name", ["recall: message hits, common terms only",
                                  "recall: common message hits in a session",
                                  "recall: node hits"])
def test_recall_reads_never_sort_every_match(store, name):
    """A word in most rows must not be sorted in full: FTS5 gives its matches in rowid or
    rank order itself, and only the few winners' rows are read."""
    for sql, steps in _plans(store, PATHS[name]):
        if "memory_messages_fts match" in sql or "memory_nodes_fts match" in sql:
            assert not any("TEMP B-TREE" in s for s in steps) or "bm25" in sql, (steps, sql)


def test_time_window_uses_the_time_index(store):
    steps = [s for _, plan in _plans(store, PATHS["recall: messages in a time window"])
             for s in plan]
    assert any("idx_memory_messages_created" in s for s in steps), steps


def test_the_scan_detector_catches_a_full_scan(store):
    steps = [row[3] for row in store.db.raw.execute(
        "explain query plan select * from memory_nodes n where n.title like '%香菜%'")]
    assert _full_scans(steps)
