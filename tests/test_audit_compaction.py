"""`doctor --compact`: audit copies an older ekko-mem stored in full are stored again by
reference and difference, every event reads exactly as before, and the file shrinks."""
from __future__ import annotations

import json
import sqlite3

import pytest

USER_TEXT = "以后做饭别放香菜，我喜欢少油"  # user memory: an ingredient and the flavour profile
WORKSPACE_TEXT = "我们项目用 pnpm 管理依赖"
TIMES = 8


def _dbs(ws):
    return [ws / ".ekko" / "memory.db", ws.parent / "home" / "memory.db"]


def _payloads(db) -> dict:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("select id, payload_json from memory_audit_events"))
    finally:
        conn.close()


def _in_full(db) -> None:
    """Every event's payload as an ekko-mem before schema 11 stored it: whole copies."""
    from ekko_mem.store import open_store
    store = open_store(db)
    try:
        events = store.nodes.list_events(limit=100_000)
        with store.db.atomic():
            for event in events:
                store.db.execute("update memory_audit_events set payload_json = ? where id = ?",
                                 (json.dumps(event["payload"], ensure_ascii=False,
                                             sort_keys=True), event["id"]))
    finally:
        store.close()


def _recorded(cli) -> list:
    return sorted(cli("audit", "--json", "--limit", "100000", "--reveal").jsonl(),
                  key=lambda e: e["id"])


def _exported(cli) -> list:
    """The export's records as values: a key's place in an object is not part of it."""
    return [json.loads(line) for line in cli("export").out.splitlines()]


@pytest.fixture
def old_style(cli, ws):
    for _ in range(TIMES):
        assert cli("remember", USER_TEXT, "-q").code == 0
        assert cli("remember", WORKSPACE_TEXT, "-q").code == 0
    for db in _dbs(ws):
        _in_full(db)
    return ws


def test_compacting_keeps_every_event_as_recorded_and_shrinks_the_file(cli, old_style):
    recorded, exported = _recorded(cli), _exported(cli)
    before = {db: _payloads(db) for db in _dbs(old_style)}
    sizes = [db.stat().st_size for db in _dbs(old_style)]
    done = cli("doctor", "--compact", "--json")
    assert done.code == 0, done.out
    rows = [c for c in done.json()["checks"] if c["check"] == "audit copies"]
    assert [r["db"] for r in rows] == ["workspace", "user"] and all(r["ok"] for r in rows)
    assert _recorded(cli) == recorded
    assert _exported(cli) == exported
    for db, size in zip(_dbs(old_style), sizes):
        after = _payloads(db)
        assert after.keys() == before[db].keys()
        assert sum(map(len, after.values())) < sum(map(len, before[db].values())) * 0.6
        assert db.stat().st_size < size
        refreshes = [json.loads(p) for p in after.values() if '"=diff"' in p]
        assert len(refreshes) >= TIMES - 1
        assert any(json.loads(p)["after"] == "=node" for p in after.values())


def test_compacting_twice_rewrites_nothing_more(cli, old_style):
    assert cli("doctor", "--compact", "-q").code == 0
    first = {db: _payloads(db) for db in _dbs(old_style)}
    again = cli("doctor", "--compact", "--json")
    assert again.code == 0
    assert all(r["detail"].startswith("0 of ") for r in again.json()["checks"]
               if r["check"] == "audit copies")
    assert {db: _payloads(db) for db in _dbs(old_style)} == first


def test_the_compacted_history_still_undoes_and_grows(cli, old_style):
    assert cli("doctor", "--compact", "-q").code == 0
    conn = sqlite3.connect(_dbs(old_style)[0])
    [(node_id,)] = conn.execute("select id from memory_nodes where key = 'package_manager'")
    conn.close()
    node = {"id": node_id}
    events = cli("audit", "--node", node["id"], "--json").jsonl()
    assert cli("audit", "undo", events[0]["id"]).code == 0
    shown = cli("show", node["id"], "--json").json()["node"]
    assert shown["sourceMessageIds"] == events[0]["payload"]["before"]["sourceMessageIds"]
    assert cli("remember", WORKSPACE_TEXT, "-q").code == 0
    assert cli("audit", "--node", node["id"], "--json").jsonl()[2:] == events


def test_a_db_at_an_older_schema_is_not_compacted(cli, old_style):
    db = _dbs(old_style)[0]
    conn = sqlite3.connect(db)
    conn.execute("pragma user_version = 11")
    conn.close()
    before = _payloads(db)
    done = cli("doctor", "--compact", "--json")
    assert done.code == 1
    row = next(c for c in done.json()["checks"]
               if c["check"] == "audit copies" and c["db"] == "workspace")
    assert not row["ok"] and "not migrated" in row["detail"]
    assert _payloads(db) == before


def test_a_payload_that_only_looks_like_a_reference_still_reads_as_it_is(cli, old_style):
    """A stored source list that is not a list is no head of the row's: compacted or not, it
    reads as it was stored, never as the row's sources."""
    db = _dbs(old_style)[0]
    conn = sqlite3.connect(db)
    event_id, payload = conn.execute(
        "select id, payload_json from memory_audit_events where event_type = 'refresh'"
        " order by rowid limit 1").fetchone()
    odd = json.loads(payload)
    odd["before"]["sourceMessageIds"] = {"=head": "x"}
    conn.execute("update memory_audit_events set payload_json = ? where id = ?",
                 (json.dumps(odd, ensure_ascii=False, sort_keys=True), event_id))
    conn.commit()
    conn.close()
    recorded = _recorded(cli)
    assert cli("doctor", "--compact", "-q").code == 0
    assert _recorded(cli) == recorded
    mine = next(e for e in recorded if e["id"] == event_id)
    assert mine["payload"]["before"]["sourceMessageIds"] == {"=head": "x"}


@pytest.mark.parametrize("stored", ['[["before", null], ["after", "=node"]]', '"a note"', "7"])
def test_a_payload_that_is_not_an_object_is_left_as_it_is(cli, old_style, stored):
    db = _dbs(old_style)[0]
    conn = sqlite3.connect(db)
    event_id = conn.execute("select id from memory_audit_events where event_type = 'refresh'"
                            " order by rowid limit 1").fetchone()[0]
    conn.execute("update memory_audit_events set payload_json = ? where id = ?",
                 (stored, event_id))
    conn.commit()
    conn.close()
    recorded = _recorded(cli)
    done = cli("doctor", "--compact", "-q")
    assert done.code == 0, done.err
    assert _payloads(db)[event_id] == stored
    assert _recorded(cli) == recorded
