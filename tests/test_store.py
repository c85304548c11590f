"""The SQLite store on real files: messages, migrations, modes, refusal of newer schemas."""
from __future__ import annotations

import sqlite3
import stat

import pytest

from ekko_mem.errors import StoreUnavailable
from ekko_mem.store import apply_migrations, latest_version, migration_status, open_store
from ekko_mem.store import migrations as mig


def _msg(i, session="s1", created="2026-01-01T00:00:00.000Z"):
    return {"id": f"msg_{i:04d}", "sessionId": session, "role": "user",
            "content": f"message {i}", "createdAt": created}


def test_append_then_list_recent_by_session_in_order(tmp_path):
    store = open_store(tmp_path / ".ekko" / "memory.db", create=True)
    store.messages.append_messages([_msg(i, "s1" if i % 2 else "s2") for i in range(10)])
    recent = store.messages.list_recent_messages("s1", 3)
    assert [m["id"] for m in recent] == ["msg_0005", "msg_0007", "msg_0009"]
    assert all(m["sessionId"] == "s1" for m in recent)
    assert store.messages.list_messages_after("s2", "msg_0004")[0]["id"] == "msg_0006"


def test_migrations_from_empty_file_then_second_open_applies_nothing(tmp_path):
    path = tmp_path / "memory.db"
    path.write_bytes(b"")
    store = open_store(path, create=True)
    status = migration_status(store)
    assert status["version"] == latest_version()
    assert [m["version"] for m in status["applied"]] == [n for n, _, _ in mig.MIGRATIONS]
    store.close()
    again = open_store(path)
    assert apply_migrations(again) == []
    assert len(migration_status(again)["applied"]) == len(mig.MIGRATIONS)


def test_migrates_from_an_older_schema(tmp_path):
    path = tmp_path / "memory.db"
    store = open_store(path, create=True, migrate=False)
    apply_migrations(store, upto=1)
    assert store.schema_version() == 1
    store.close()
    store = open_store(path)
    assert store.schema_version() == latest_version()
    assert store.db.one("select count(*) from memory_context_runs")[0] == 0


def test_failed_migration_keeps_previous_version_and_disables_store(tmp_path, monkeypatch):
    path = tmp_path / "memory.db"
    open_store(path, create=True).close()
    released = latest_version()

    def m999_break_things(db):
        db.execute("create table half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(mig, "MIGRATIONS", [*mig.MIGRATIONS, (999, "m999_break_things",
                                                                m999_break_things)])
    with pytest.raises(StoreUnavailable, match="m999_break_things failed"):
        open_store(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == released
    assert raw.execute("select count(*) from sqlite_master where name='half_done'").fetchone()[0] == 0


def test_newer_schema_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "memory.db"
    open_store(path, create=True).close()
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {latest_version() + 5}")
    raw.close()
    before = path.read_bytes()
    with pytest.raises(StoreUnavailable, match="newer than this ekko-mem"):
        open_store(path)
    assert path.read_bytes() == before
    readable = open_store(path, allow_newer=True)
    assert readable.read_only_reason


def test_private_file_modes(tmp_path):
    path = tmp_path / "deep" / ".ekko" / "memory.db"
    store = open_store(path, create=True)
    store.messages.append_messages([_msg(1)])
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for suffix in ("", "-wal", "-shm"):
        f = path.with_name(path.name + suffix)
        if f.exists():
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_every_connection_sets_the_pragmas(tmp_path):
    store = open_store(tmp_path / "memory.db", create=True)
    one = store.db.one
    assert one("PRAGMA journal_mode")[0] == "wal"
    assert one("PRAGMA busy_timeout")[0] >= 1000
    assert one("PRAGMA foreign_keys")[0] == 1
    assert one("PRAGMA secure_delete")[0] == 1


def test_transaction_failure_leaves_no_half_write(tmp_path):
    store = open_store(tmp_path / "memory.db", create=True)
    with pytest.raises(StoreUnavailable):
        store.messages.append_messages([_msg(1), _msg(1)])  # second insert violates the primary key
    assert store.db.one("select count(*) from memory_messages")[0] == 0


def _node(i, **extra):
    node = {"id": f"mem_{i:04d}", "scope": "workspace", "domain": "生活技能",
            "categoryPath": ["生活技能", "做饭", "饮食偏好"], "type": "preference",
            "key": "avoid_ingredient", "valueJson": "香菜", "title": f"用户不吃香菜 {i}",
            "content": "推荐菜谱时避免香菜。", "status": "active", "confidence": 0.9,
            "importance": 0.9, "tags": ["忌口"], "entities": ["香菜"],
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}
    node.update(extra)
    return node




# -- audit events that read their copy from the node's row ---------------------------------------
def _raw_payloads(ws, node_id):
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    rows = db.execute("select event_type, payload_json from memory_audit_events where node_id = ?"
                      " order by rowid", (node_id,)).fetchall()
    db.close()
    return rows


def test_a_create_event_keeps_no_copy_while_the_row_is_unchanged(cli, ws):
    import json
    node = cli("remember", "--type", "fact", "--title", "staging runs postgres 16",
               "--json").json()["nodeId"]
    [(kind, payload)] = _raw_payloads(ws, node)
    assert kind == "create" and json.loads(payload) == {"after": "=node", "before": None}
    shown = cli("audit", "--node", node, "--json").jsonl()[0]
    assert shown["payload"]["after"] == cli("show", node, "--json").json()["node"]


@pytest.mark.parametrize("change", ["edit", "forget", "supersede", "erase predecessor"])
def test_every_change_to_the_row_first_writes_the_copy_out(cli, ws, change):
    """After any in-place change, the create event still shows the node as it was created,
    and undoing the change gives that node back."""
    import json
    first = cli("remember", "--type", "fact", "--title", "the build uses make",
                "--json").json()["nodeId"]
    created = cli("show", first, "--json").json()["node"]
    if change == "edit":
        env = {"EDITOR": "sed -i s/make/ninja/"}
        assert cli("edit", first, env=env).code == 0
    elif change == "forget":
        assert cli("forget", first, "--yes").code == 0
    elif change == "supersede":
        assert cli("remember", "--supersedes", first, "--type", "fact", "--title",
                   "the build uses ninja").code == 0
    else:
        newer = cli("remember", "--supersedes", first, "--type", "fact", "--title",
                    "the build uses ninja", "--json").json()["nodeId"]
        before = cli("show", newer, "--json").json()["node"]
        assert cli("forget", first, "--hard", "--yes").code == 0
        [(kind, payload)] = _raw_payloads(ws, newer)[:1]
        assert json.loads(payload)["after"] == before  # written out before its row changed
        assert cli("show", newer, "--json").json()["node"].get("supersedesId") is None
        return
    events = cli("audit", "--node", first, "--json").jsonl()
    create = [e for e in events if e["eventType"] == "create"][0]
    assert create["payload"]["after"] == created
    assert json.loads(_raw_payloads(ws, first)[0][1])["after"] == created
    if change == "supersede":
        return
    last = events[0]["id"]
    assert cli("audit", "undo", last).code == 0
    restored = cli("show", first, "--json").json()["node"]
    assert {k: restored[k] for k in ("title", "status")} == \
        {k: created[k] for k in ("title", "status")}


def test_an_export_carries_the_copy_the_row_stands_in_for(cli, ws, tmp_path):
    import json
    node = cli("remember", "--type", "fact", "--title", "deploys go out on tuesdays",
               "--json").json()["nodeId"]
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    events = [json.loads(line) for line in dump.read_text().splitlines()
              if json.loads(line).get("kind") == "event"]
    [create] = [e["data"] for e in events if e["data"]["nodeId"] == node]
    assert create["payload"]["after"]["title"] == "deploys go out on tuesdays"


@pytest.mark.parametrize("value", [
    None, 0, -0.0, 1.5, 10**30, float("inf"), "", "香菜\u2028\x00\"\\", [], {},
    {"b": [1, {"d": None, "c": True}], "a": "少油", "10": 2, "9": 3},
])
def test_canonical_json_is_sorted_compact_json(value):
    """Exact valueJson lookups compare this text: it must be json.dumps' own, whichever
    encoder produced it."""
    import json

    from ekko_mem.canonical import canonical_json
    assert canonical_json(value) == json.dumps(value, ensure_ascii=False, sort_keys=True,
                                               separators=(",", ":"))
    with pytest.raises(TypeError):
        canonical_json({"x": object()})
