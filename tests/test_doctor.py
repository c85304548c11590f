"""`ekko-mem doctor` finds and repairs what it says it does."""
from __future__ import annotations

import os
import sqlite3
import stat


def _checks(result):
    return {(c["db"], c["check"]): c for c in result.json()["checks"]}


def test_healthy_workspace_is_ok(cli, ws):
    cli("remember", "--type", "decision", "--title", "use FTS5")
    out = cli("doctor", "--json")
    assert out.code == 0 and out.json()["ok"] is True
    assert all(c["ok"] for c in out.json()["checks"])


def test_finds_and_repairs_fts_drift_modes_and_expiry(cli, ws):
    cli("remember", "--type", "fact", "--title", "zebra crossing")
    cli("remember", "--scope", "session", "--type", "fact", "--title", "short lived",
        "--expires", "2026-01-01T00:00:00Z", env={"EKKO_NOW": "2025-12-31T00:00:00Z"})
    db = ws / ".ekko" / "memory.db"
    raw = sqlite3.connect(db)
    rowid = raw.execute("select rowid, title from memory_nodes where title = 'zebra crossing'"
                        ).fetchone()[0]
    raw.execute("insert into memory_nodes_fts (memory_nodes_fts, rowid, title, content, tags,"
                " entities) values ('delete', ?, 'zebra crossing', 'zebra crossing', '', '')",
                (rowid,))
    raw.commit()
    raw.close()
    os.chmod(db, 0o644)
    found = cli("doctor", "--json")
    assert found.code == 1 and "doctor --repair" in found.err
    checks = _checks(found)
    assert not checks[("workspace", "full-text index")]["ok"]
    assert not checks[("workspace", "permissions")]["ok"]
    assert not checks[("workspace", "expiry")]["ok"]
    assert cli("query", "zebra", "--json").json()["relevant"] == []
    fixed = cli("doctor", "--repair", "--json")
    assert fixed.code == 0, fixed
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert [n["title"] for n in cli("query", "zebra", "--json").json()["relevant"]] == [
        "zebra crossing"]
    assert cli("doctor", "--json").json()["ok"] is True


def test_reports_broken_chains_and_pending_migrations(cli, ws):
    old = cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--type",
              "preference", "--key", "flavor_profile", "--value", "少辣", "--title", "少辣",
              "--json").jsonl()[0]["nodeId"]
    cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--type",
        "preference", "--key", "flavor_profile", "--value", "{\"spicy\": \"high\"}",
        "--title", "辣")
    home_db = ws.parent / "home" / "memory.db"
    raw = sqlite3.connect(home_db)
    raw.execute("update memory_nodes set status = 'active' where id = ?", (old,))
    raw.commit()
    raw.close()
    out = cli("doctor", "--json")
    assert out.code == 1
    chains = _checks(out)[("user", "supersede chains")]
    assert not chains["ok"] and old in chains["detail"]
    raw = sqlite3.connect(ws / ".ekko" / "memory.db")
    raw.execute("PRAGMA user_version = 2")
    raw.close()
    pending = _checks(cli("doctor", "--json"))[("workspace", "schema")]
    assert not pending["ok"] and "version 2" in pending["detail"]


def test_corrupt_db_is_reported_not_crashed(cli, ws):
    db = ws / ".ekko" / "memory.db"
    db.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (ws / ".ekko" / f"memory.db{suffix}").unlink(missing_ok=True)
    out = cli("doctor", "--json")
    assert out.code == 1 and "Traceback" not in out.err
    assert not _checks(out)[("workspace", "open")]["ok"] or not _checks(out).get(
        ("workspace", "integrity"), {"ok": True})["ok"]
