"""`doctor` sees what the other guards refuse or clean up, and its repair finishes the work: a
file outside the dbs still quoting an erased record, a context run still naming one, a pipe
in place of the user's config or of a db's side file, a db on read-only media."""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import stat
import tempfile

from conftest import deadline
from test_erasure import node_id
from test_erasure_everywhere import ALLERGY, _runs
from test_special_files import _ReadOnlyMedia, read_only_mount  # noqa: F401 (a fixture)

HANG_GUARD_S = 30  # a pipe is never opened, so doctor answers at once; this only stops a hang


def _checks(result) -> dict:
    return {(c["db"], c["check"]): c for c in result.json()["checks"]}


def _line(result, db: str, name: str) -> str:
    """The human line of check `name` for `db` ('' when there is none)."""
    return next((line for line in result.out.splitlines()
                 if re.match(rf"\S+\s+{db}\s+{re.escape(name)}\s", line)), "")


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- leftovers of an erasure, outside the dbs ---------------------------------------------------
def test_files_quoting_an_erased_record_fail_and_repair_removes_them(cli, ws, tmp_path,
                                                                       monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    secret = "zq-doctor-7712-badge"
    mem = node_id(cli("remember", "--scope", "workspace", "--json", f"badge hint {secret}"))
    keep = node_id(cli("remember", "--scope", "workspace", "--json", "deploys go via staging"))
    export = cli("export").out
    assert cli("forget", mem, "--hard", "--yes").code == 0
    # Made after the erasure: restored from a backup, or left by an older ekko-mem.
    edit = temp / f"{mem}-k3p9x.json"
    edit.write_text(json.dumps({"id": mem, "title": f"badge hint {secret}"}))
    kept_edit = temp / f"{keep}-q8z2m.json"
    kept_edit.write_text(json.dumps({"id": keep}))
    killed = ws / ".backup.jsonl.0011223344556677.tmp"
    killed.write_text(export)

    found = cli("doctor", "--json")
    assert found.code == 1 and "doctor --repair" in found.err, found
    line = _checks(found)[("workspace", "erased leftovers")]
    assert not line["ok"] and not line["fixed"]
    assert str(edit) in line["detail"] and str(killed) in line["detail"]
    assert str(kept_edit) not in line["detail"] and secret not in found.out
    assert edit.exists() and killed.exists()  # looking removed nothing

    fixed = cli("doctor", "--repair", "--json")
    assert fixed.code == 0, fixed
    assert _checks(fixed)[("workspace", "erased leftovers")]["fixed"]
    assert not edit.exists() and not killed.exists() and kept_edit.exists()
    again = cli("doctor")
    assert again.code == 0, again
    assert "no file outside the db holds a record erased from it" in _line(
        again, "workspace", "erased leftovers")


# -- context runs that still name an erased record ----------------------------------------------
def test_runs_in_a_workspace_the_erasure_never_reached_fail_and_repair_settles_them(cli, ws,
                                                                                    tmp_path):
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    assert cli("init", cwd=stranger).code == 0
    assert cli("context", "deploys", cwd=stranger).code == 0
    mem = node_id(cli("remember", "--json", ALLERGY))  # user memory; names no workspace
    assert "KIWIZQ" in cli("context", "我对什么过敏", cwd=stranger).out
    assert cli("forget", mem, "--hard", "--yes").code == 0
    assert len(_runs(stranger)) == 2  # the erasure could not know this workspace

    found = cli("doctor", "--json", cwd=stranger)
    assert found.code == 1 and found.json()["repairable"] is True, found
    line = _checks(found)[("workspace", "context runs")]
    assert not line["ok"] and mem in line["detail"] and "1 context runs" in line["detail"]
    assert "KIWIZQ" not in found.out and "我对什么过敏" not in found.out
    assert len(_runs(stranger)) == 2  # looking dropped nothing

    fixed = cli("doctor", "--repair", "--json", cwd=stranger)
    assert fixed.code == 0, fixed
    line = _checks(fixed)[("workspace", "context runs")]
    assert line["fixed"] and "dropped 1 context runs" in line["detail"]
    assert [question for question, _ in _runs(stranger)] == ["deploys"]
    assert cli("doctor", cwd=stranger).code == 0


def test_a_run_recorded_after_its_memory_was_erased_is_found(cli, ws):
    """A context that started before a hard erase and recorded its run after it."""
    mem = node_id(cli("remember", "--scope", "workspace", "--json",
                      "the staging password hint is zq-run-4471-hint"))
    assert cli("context", "staging password hint").code == 0
    db = ws / ".ekko" / "memory.db"
    raw = sqlite3.connect(db)
    raw.row_factory = sqlite3.Row
    run = dict(raw.execute("select * from memory_context_runs").fetchone())
    raw.close()
    assert mem in run["used_memory_ids_json"]
    assert cli("forget", mem, "--hard", "--yes").code == 0
    raw = sqlite3.connect(db)
    raw.execute(f"insert into memory_context_runs ({', '.join(run)}) values"
                f" ({', '.join('?' * len(run))})", list(run.values()))
    raw.commit()
    raw.close()
    found = cli("doctor", "--json")
    assert found.code == 1, found
    assert mem in _checks(found)[("workspace", "context runs")]["detail"]
    assert cli("doctor", "--repair").code == 0
    assert _runs(ws) == []
    assert cli("doctor").code == 0


# -- a pipe where the user's config belongs, with no user db ------------------------------------
def test_a_pipe_as_the_user_config_is_a_fail_without_a_user_db(cli, ws):
    home = ws.parent / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    assert not (home / "memory.db").exists()
    config = home / "config.toml"
    os.mkfifo(config, 0o600)
    with deadline(HANG_GUARD_S):
        result = cli("doctor")
    assert result.code == 1, result
    assert _line(result, "user", "config") == (
        f"FAIL  user      config            {config} is a named pipe (FIFO), not a regular"
        " file or folder; move it aside or remove it; ekko-mem keeps memory and settings only"
        " in regular files")
    config.unlink()
    config.write_text("[context]\nbudget = 900\n")
    config.chmod(0o600)
    fine = cli("doctor")
    assert fine.code == 0, fine
    assert _line(fine, "user", "config").startswith("ok ")


# -- read-only media: the checks that only read still run --------------------------------------
def _with_memory(cli) -> None:
    assert cli("remember", "--scope", "user", "--yes", "我对猕猴桃过敏").code == 0
    assert cli("remember", "--type", "fact", "--title", "the api runs on postgres 16").code == 0


def test_a_read_only_db_is_checked_and_repairs_say_they_need_a_writable_one(cli, ws,
                                                                          monkeypatch):
    _with_memory(cli)
    cli("remember", "--scope", "session", "--type", "fact", "--title", "short lived",
        "--expires", "2026-01-01T00:00:00Z", env={"EKKO_NOW": "2025-12-31T00:00:00Z"})
    db = ws / ".ekko" / "memory.db"
    before = _digest(db)
    media = _ReadOnlyMedia(monkeypatch, ws.parent)
    result = cli("doctor", "--json")
    assert result.code == 1, result  # the expired node; nothing else
    checks = _checks(result)
    for name in ("workspace", "user"):
        opened = checks[(name, "open")]
        assert opened["ok"] and opened["detail"].startswith("warning: the memory db")
        assert "is read-only, so it was opened only for reading" in opened["detail"]
        assert "repairs need a writable db" in opened["detail"]
        assert checks[(name, "integrity")]["ok"] and checks[(name, "cycles")]["ok"]
    assert [k for k, c in checks.items() if not c["ok"]] == [("workspace", "expiry")]
    assert "where the db can be written" in checks[("workspace", "expiry")]["detail"]
    repaired = cli("doctor", "--repair", "--json")
    assert repaired.code == 1, repaired
    expiry = _checks(repaired)[("workspace", "expiry")]
    assert not expiry["fixed"] and "cannot repair:" in expiry["detail"]
    monkeypatch.setattr(sqlite3, "connect", media.real)
    assert _digest(db) == before
    assert cli("doctor", "--repair").code == 0  # where it can be written, it is repaired


def test_doctor_reads_a_read_only_mount(cli, read_only_mount, monkeypatch):  # noqa: F811
    point, remount_ro = read_only_mount
    ws, home = point / "ws", point / "home"
    ws.mkdir()
    home.mkdir(mode=0o700)
    monkeypatch.setenv("EKKO_HOME", str(home))
    assert cli("init", cwd=ws).code == 0
    _with_memory(lambda *a, **k: cli(*a, cwd=ws, **k))
    remount_ro()
    result = cli("doctor", cwd=ws)
    assert result.code == 0, result
    assert "repairs need a writable db" in _line(result, "workspace", "open")
    assert _line(result, "workspace", "integrity").startswith("ok ")


# -- a pipe in place of a side file -------------------------------------------------------------
def test_a_pipe_as_the_wal_is_moved_aside_by_repair_never_opened(cli, ws):
    assert cli("remember", "--type", "fact", "--title", "kept through the move").code == 0
    folder = ws / ".ekko"
    wal = folder / "memory.db-wal"
    raw = sqlite3.connect(folder / "memory.db")
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    wal.unlink(missing_ok=True)
    os.mkfifo(wal, 0o600)
    with deadline(HANG_GUARD_S):
        found = cli("doctor")
    assert found.code == 1 and "doctor --repair" in found.err, found
    assert f"{wal} is a named pipe (FIFO), not SQLite's write-ahead log" in _line(
        found, "workspace", "wal file")
    assert stat.S_ISFIFO(os.lstat(wal).st_mode)  # looking moved nothing
    with deadline(HANG_GUARD_S):
        fixed = cli("doctor", "--repair")
    assert fixed.code == 0, fixed
    moved = [p for p in folder.iterdir() if p.name.startswith("memory.db-wal.bad-")]
    assert len(moved) == 1 and stat.S_ISFIFO(os.lstat(moved[0]).st_mode)
    assert re.fullmatch(r"memory\.db-wal\.bad-\d{8}T\d{6}Z", moved[0].name)
    line = _line(fixed, "workspace", "wal file")
    assert line.startswith("FIXED") and f"moved aside to {moved[0].name}" in line
    assert _line(fixed, "workspace", "integrity").startswith("ok ")
    assert cli("query", "kept through the move").code == 0
    assert cli("doctor").code == 0


def test_the_owner_line_says_what_was_checked(cli, ws):
    result = cli("doctor")
    assert result.code == 0, result
    assert _line(result, "workspace", "owner") == (
        "ok    workspace owner             yours, regular files, not links")
