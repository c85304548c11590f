"""`ekko-mem doctor` finds and repairs what it says it does."""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sqlite3
import stat

import pytest


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
    assert not _checks(out)[("workspace", "open")]["ok"]


# -- faults: each is one FAIL line naming the db and the check, never a crash ------------------

def _fill(cli, ws):
    """A workspace with enough rows that tables and indexes span several pages, then
    checkpointed so every page is in memory.db itself."""
    lines = "\n".join(json.dumps({"content": f"message {i} " + "word " * 40}) for i in range(300))
    assert cli("log", "--jsonl", "-", input=lines).code == 0
    for i in range(3):
        assert cli("remember", "--type", "fact", "--title", f"fact number {i}").code == 0
    db = ws / ".ekko" / "memory.db"
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    return db


def _page_of(db, name: str) -> int:
    """The root page of table or index `name`, or for a table whose root is an interior page,
    its first leaf: a page holding rows."""
    raw = sqlite3.connect(db)
    page = raw.execute("select rootpage from sqlite_master where name = ?", (name,)).fetchone()[0]
    size = raw.execute("PRAGMA page_size").fetchone()[0]
    raw.close()
    data = db.read_bytes()
    while data[(page - 1) * size] == 0x05:  # interior table page: follow the first child
        start = (page - 1) * size
        cell = int.from_bytes(data[start + 12:start + 14], "big")
        page = int.from_bytes(data[start + cell:start + cell + 4], "big")
    return page


def _smash(db, page: int) -> str:
    """Overwrite one page with (repeatable) garbage; the file header on page 1 stays intact.
    Returns the file's digest, to show that --repair leaves it alone."""
    assert page > 1
    raw = sqlite3.connect(db)
    size = raw.execute("PRAGMA page_size").fetchone()[0]
    raw.close()
    with open(db, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(random.Random(page).randbytes(size))
    return _digest(db)


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fails(cli, check, db="workspace", *args):
    """Run doctor (text, then --json): exit 1, a FAIL line for `check` of `db`, no crash."""
    out = cli("doctor", *args)
    assert out.code == 1, out
    assert "internal error" not in out.err and "Traceback" not in out.err, out
    line = next((line for line in out.out.splitlines()
                 if re.match(rf"FAIL\s+{db}\s+{re.escape(check)}\s", line)), None)
    assert line is not None, out
    report = cli("doctor", "--json", *args)
    assert report.code == 1 and "Traceback" not in report.err, report
    assert report.json()["ok"] is False and set(report.json()) == {"ok", "checks", "repaired", "repairable"}
    return line, _checks(report)


def test_corrupt_index_page_is_a_fail_line_and_repair_leaves_the_file_alone(cli, ws):
    db = _fill(cli, ws)
    digest = _smash(db, _page_of(db, "idx_memory_nodes_rank"))
    line, checks = _fails(cli, "integrity")
    assert "damaged" in line and ".recover" in line and "ekko-mem export" in line
    assert checks[("workspace", "schema")]["ok"]  # the other checks still ran
    repaired, _ = _fails(cli, "integrity", "workspace", "--repair")
    assert "cannot repair:" in repaired
    assert _digest(db) == digest


def test_corrupt_table_page_is_a_fail_line(cli, ws):
    db = _fill(cli, ws)
    digest = _smash(db, _page_of(db, "memory_messages"))
    line, checks = _fails(cli, "integrity")
    assert str(db) in line
    assert ("workspace", "supersede chains") in checks
    _fails(cli, "integrity", "workspace", "--repair")
    assert _digest(db) == digest


def test_corrupt_fts_page_is_not_rebuilt_over(cli, ws):
    db = _fill(cli, ws)
    digest = _smash(db, _page_of(db, "memory_nodes_fts_data"))
    _fails(cli, "integrity")
    line, checks = _fails(cli, "full-text index", "workspace", "--repair")
    assert "cannot repair:" in line and not checks[("workspace", "full-text index")]["fixed"]
    assert _digest(db) == digest


def _directory(path):
    path.unlink()
    path.mkdir()


def _junk(path):
    path.write_bytes(random.Random(1).randbytes(8192))


def _truncate(path):
    os.truncate(path, 100)


@pytest.mark.parametrize("db_name", ["workspace", "user"])
@pytest.mark.parametrize(("spoil", "check"), [(_directory, "db file"), (_junk, "open"),
                                              (_truncate, "open")])
def test_unusable_db_file_is_a_fail_line(cli, ws, db_name, spoil, check):
    cli("remember", "--scope", "user", "--type", "fact", "--title", "user db exists")
    db = ws / ".ekko" / "memory.db" if db_name == "workspace" else ws.parent / "home" / "memory.db"
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    spoil(db)
    line, checks = _fails(cli, check, db_name)
    assert "ekko-mem init" in line
    other = "user" if db_name == "workspace" else "workspace"
    assert checks[(other, "integrity")]["ok"]  # the other db was still checked
    repaired, _ = _fails(cli, check, db_name, "--repair")
    assert "cannot repair:" in repaired
    assert db.is_dir() == (spoil is _directory)


def test_schema_from_the_future_is_a_fail_line_and_left_alone(cli, ws):
    db = ws / ".ekko" / "memory.db"
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version = 999")
    raw.close()
    line, _ = _fails(cli, "schema")
    assert "999" in line and "upgrade ekko-mem" in line
    repaired, _ = _fails(cli, "schema", "workspace", "--repair")
    assert "cannot repair:" in repaired
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 999
    raw.close()


def test_missing_table_is_a_fail_line(cli, ws):
    raw = sqlite3.connect(ws / ".ekko" / "memory.db")
    raw.execute("drop table memory_context_runs")
    raw.close()
    line, checks = _fails(cli, "tables")
    assert "table memory_context_runs" in line
    assert checks[("workspace", "integrity")]["ok"]
    repaired, _ = _fails(cli, "tables", "workspace", "--repair")
    assert "cannot repair:" in repaired and "ekko-mem import" in repaired


def test_bad_row_data_fails_one_check_and_the_rest_run(cli, ws):
    cli("remember", "--type", "fact", "--title", "has sources")
    raw = sqlite3.connect(ws / ".ekko" / "memory.db")
    raw.execute("update memory_nodes set source_message_ids_json = '{not json'")
    raw.commit()
    raw.close()
    line, checks = _fails(cli, "source messages")
    assert "malformed JSON" in line
    assert checks[("workspace", "supersede chains")]["ok"]


def test_invalid_wal_is_kept_until_repair_moves_it_aside(cli, ws):
    wal = ws / ".ekko" / "memory.db-wal"
    garbage = random.Random(2).randbytes(5000)
    wal.write_bytes(garbage)
    os.chmod(wal, 0o600)
    line, checks = _fails(cli, "wal file")
    assert "not a write-ahead log" in line and "--repair" in line
    assert checks[("workspace", "integrity")]["ok"]
    assert wal.read_bytes() == garbage  # looking did not touch it
    fixed = cli("doctor", "--repair", "--json")
    assert fixed.code == 0, fixed
    assert _checks(fixed)[("workspace", "wal file")]["fixed"]
    assert (ws / ".ekko" / "memory.db-wal.bad").read_bytes() == garbage
    assert cli("doctor").code == 0


def test_shm_directory_is_moved_aside_by_repair(cli, ws):
    shm = ws / ".ekko" / "memory.db-shm"
    shm.unlink(missing_ok=True)
    shm.mkdir(mode=0o700)
    line, _ = _fails(cli, "shm file")
    assert "is a directory" in line
    fixed = cli("doctor", "--repair")
    assert fixed.code == 0, fixed
    assert (ws / ".ekko" / "memory.db-shm.bad").is_dir()
    assert cli("remember", "--type", "fact", "--title", "writes work again").code == 0
    assert cli("doctor").code == 0


def test_open_folder_mode_is_fixed_by_repair(cli, ws):
    folder = ws / ".ekko"
    os.chmod(folder, 0o777)
    line, _ = _fails(cli, "permissions")
    assert "0o777" in line
    fixed = cli("doctor", "--repair")
    assert fixed.code == 0 and re.search(r"^FIXED\s+workspace\s+permissions", fixed.out, re.M)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_scan_proves_a_text_is_gone_or_says_where_it_is(cli, ws):
    secret = "zebra-scan-4411-quartz"
    msg = cli("log", "--yes", f"vault hint {secret}").out.strip()
    found = cli("doctor", "--scan", secret, "--json")
    assert found.code == 1
    scan = [c for c in found.json()["checks"] if c["check"] == "scan"]
    assert [c["ok"] for c in scan] == [False]
    assert "still in memory.db" in scan[0]["detail"] and secret not in found.out
    assert cli("forget", "--message", msg, "--hard", "--yes").code == 0
    clean = cli("doctor", "--scan", secret)
    assert clean.code == 0, clean
    assert "ok    workspace scan" in clean.out
    assert cli("doctor", "--scan", " ").code == 2


def test_a_foreign_folder_is_reported_and_never_repaired(cli, ws):
    import os
    import pytest
    if os.geteuid() != 0:
        pytest.skip("giving a folder away needs root")
    folder = ws / ".ekko"
    folder.chmod(0o777)
    os.chown(folder, 65534, 65534)
    try:
        result = cli("doctor", "--repair")
        assert result.code == 1
        assert f"FAIL  workspace owner             {folder} belongs to nobody" in result.out
        assert oct(folder.stat().st_mode & 0o777) == "0o777"  # not adopted by a chmod
        assert "workspace integrity" not in result.out  # nor opened
    finally:
        os.chown(folder, 0, 0)
        folder.chmod(0o700)
    assert cli("doctor").code == 0


def test_user_memory_citing_workspace_messages_by_plain_id_is_repaired(cli, ws, tmp_path):
    """User memory written before its sources named their workspace: each workspace that
    can find the message names it, so every other workspace then sees it as external."""
    msg = cli("log", "I prefer tabs").out.strip()
    node = cli("remember", "--scope", "user", "--source", msg, "--title", "prefers tabs",
               "--json").json()["nodeId"]
    user_db = sqlite3.connect(tmp_path / "home" / "memory.db")
    user_db.execute("update memory_nodes set source_message_ids_json = ? where id = ?",
                    (json.dumps([msg]), node))
    user_db.commit()
    user_db.close()
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", cwd=other).code == 0
    found = cli("doctor", "--json", cwd=other)
    assert found.code == 1 and found.json()["repairable"] is True
    line = _checks(found)[("user", "source workspaces")]
    assert not line["ok"] and node in line["detail"]
    assert _checks(found)[("user", "source messages")]["ok"]
    repaired = cli("doctor", "--repair", "--json", cwd=other)
    assert repaired.code == 0, repaired.out
    assert _checks(repaired)[("user", "source workspaces")]["fixed"]
    ws_id = json.loads(cli("show", node, "--json").out)["node"]["sourceMessageIds"][0]
    assert ws_id.endswith(f":{msg}") and ws_id.startswith("ws_")
    again = cli("doctor", "--json", cwd=other)
    assert again.code == 0 and ("user", "external sources") in _checks(again)
    assert ("user", "external sources") not in _checks(cli("doctor", "--json"))
    assert cli("audit", "--node", node).out.count("doctor: sources named") == 1
