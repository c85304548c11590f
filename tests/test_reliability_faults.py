"""Faults: disk full, read-only db, missing or unwritable folder, corrupt file, newer schema,
locked db. Writes fail with one clear line and exit 6 and lose nothing; context degrades."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest


def db_of(ws: Path) -> Path:
    return ws / ".ekko" / "memory.db"


def one_clear_line(result, *needles):
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result
    assert lines[0].startswith("ekko-mem: "), result
    assert "Traceback" not in result.err and "internal error" not in result.err, result
    for needle in needles:
        assert needle in lines[0], result


def contents(ws: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db_of(ws)}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("select content from memory_messages order by rowid")]
    finally:
        conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def context_json(cli, *args, text="今晚吃什么", cwd=None):
    result = cli("context", text, "--format", "json", *args, cwd=cwd)
    assert result.code == 0, result
    assert "Traceback" not in result.err
    return result.json()


@pytest.fixture
def tmpfs(tmp_path):
    """A small filesystem of our own (root only), unmounted afterwards."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a tmpfs")
    point = tmp_path / f"fs-{uuid.uuid4().hex[:6]}"
    point.mkdir()

    def mount(size: str) -> Path:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                               str(point)], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        return point

    yield mount
    subprocess.run(["umount", "-l", str(point)], capture_output=True)


def remount_ro(point: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)


# -- disk full ---------------------------------------------------------------------------------
RAISED_LIMITS = "[limits]\nmessage = 3000000\ncontent = 3000000\nline = 30000000\n"


def test_disk_full_is_a_clear_error_and_loses_nothing(cli, tmpfs):
    point = tmpfs("1m")
    ws = point / "ws"
    ws.mkdir()
    assert cli("init", cwd=ws).code == 0
    (ws / ".ekko" / "config.toml").write_text(RAISED_LIMITS)  # a write big enough to fail
    assert cli("log", "before the disk filled", cwd=ws).code == 0
    filler = point / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:  # fill the filesystem to the last byte
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    big = "x" * 300_000
    result = cli("log", "-", input=big, cwd=ws)
    assert result.code == 6, result
    one_clear_line(result, "disk")
    result = cli("remember", "-", "--type", "fact", "--title", "t", input=big, cwd=ws)
    assert result.code == 6, result
    one_clear_line(result)
    read = cli("context", "anything", "--format", "json", cwd=ws)
    assert read.code == 0, read
    filler.unlink()
    assert contents(ws) == ["before the disk filled"]
    conn = sqlite3.connect(db_of(ws))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert cli("log", "after space was freed", cwd=ws).code == 0
    assert contents(ws) == ["before the disk filled", "after space was freed"]


def test_file_size_limit_is_a_clear_error(ws, cli):
    """RLIMIT_FSIZE (works without root): writes past the limit fail like a full disk."""
    import resource
    assert cli("log", "small").code == 0
    (ws / ".ekko" / "config.toml").write_text(RAISED_LIMITS)
    size = db_of(ws).stat().st_size + (db_of(ws).with_name("memory.db-wal").stat().st_size
                                       if db_of(ws).with_name("memory.db-wal").exists() else 0)
    limit = size + 64 * 1024

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ)
    from conftest import BIN
    proc = subprocess.run([str(BIN), "log", "-"], input="y" * 2_000_000, capture_output=True,
                          text=True, cwd=ws, env=env, preexec_fn=limited, timeout=60)
    assert proc.returncode == 6, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("ekko-mem: ") and "Traceback" not in proc.stderr
    assert contents(ws) == ["small"]


# -- read-only ---------------------------------------------------------------------------------
def test_read_only_db_refuses_writes_and_context_still_reads(cli, tmpfs):
    point = tmpfs("4m")
    ws = point / "ws"
    ws.mkdir()
    assert cli("init", cwd=ws).code == 0
    assert cli("remember", "--type", "constraint", "--title", "Never push to main directly",
               cwd=ws).code == 0
    assert cli("log", "kept", cwd=ws).code == 0
    remount_ro(point)
    result = cli("log", "refused", cwd=ws)
    assert result.code == 6, result
    one_clear_line(result)
    result = cli("remember", "--type", "fact", "--title", "refused too", cwd=ws)
    assert result.code == 6, result
    one_clear_line(result)
    context = cli("context", "push", "--format", "json", cwd=ws)
    assert context.code == 0, context
    data = context.json()
    assert data["diagnostics"]["storeStatus"] == "degraded"  # read-only: read, not recorded
    assert "Never push to main directly" in data["text"], data
    assert "Traceback" not in context.err


def test_unwritable_folder_for_init_is_a_clear_error(cli, tmpfs):
    point = tmpfs("1m")
    (point / "ws").mkdir()
    remount_ro(point)
    result = cli("init", str(point / "ws"))
    assert result.code == 6, result
    one_clear_line(result)
    assert not (point / "ws" / ".ekko").exists()


# -- missing -----------------------------------------------------------------------------------
def test_missing_workspace_or_db(cli, tmp_path):
    nowhere = tmp_path / "nowhere"
    for args in (["log", "x", "-w", str(nowhere)], ["remember", "--type", "fact", "--title", "t",
                                                     "-w", str(nowhere)],
                 ["history", "-w", str(nowhere)], ["log", "x"]):
        result = cli(*args)
        assert result.code == 6, result
        one_clear_line(result, "init")
    data = context_json(cli, "-w", str(nowhere))
    assert data["diagnostics"]["storeStatus"] == "disabled"
    assert data["diagnostics"]["warnings"]
    assert cli("context", "x", "--strict", "-w", str(nowhere)).code == 6


def test_db_file_deleted_under_an_initialised_workspace(ws, cli):
    db_of(ws).unlink()
    result = cli("log", "x")
    assert result.code == 6, result
    one_clear_line(result, "init")
    assert not db_of(ws).exists()  # a write never silently creates an empty db
    assert context_json(cli)["diagnostics"]["storeStatus"] == "disabled"


# -- corrupt -----------------------------------------------------------------------------------
def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def _checkpointed(ws: Path) -> None:
    conn = sqlite3.connect(db_of(ws))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize("where", ["header", "pages"])
def test_corrupt_db_is_refused_with_a_clear_error(ws, cli, where):
    from ekko_mem import MemoryService
    with MemoryService(ws) as svc:
        for i in range(30):
            assert svc.remember(fields={"type": "fact", "title": f"fact {i}",
                                        "content": "c" * 300})[0]["accepted"]
    _checkpointed(ws)
    size = db_of(ws).stat().st_size
    if where == "header":
        _overwrite(db_of(ws), 0, b"this is not sqlite at all" * 4)
    else:
        _overwrite(db_of(ws), 4096, os.urandom(size - 4096))
    before = digest(db_of(ws))
    for args in (["log", "x"], ["remember", "--type", "fact", "--title", "new"],
                 ["query", "fact", "--json"]):
        result = cli(*args)
        assert result.code == 6, result
        one_clear_line(result)
    data = context_json(cli)
    assert data["diagnostics"]["storeStatus"] == "disabled"  # the only db is unreadable
    assert data["diagnostics"]["warnings"]
    assert cli("context", "x", "--strict").code == 6
    assert digest(db_of(ws)) == before  # never "repaired" by accident


# -- newer schema ------------------------------------------------------------------------------
def test_newer_schema_is_refused_and_never_written(ws, cli):
    assert cli("remember", "--type", "constraint", "--title", "Never push to main").code == 0
    _checkpointed(ws)
    conn = sqlite3.connect(db_of(ws))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    before = digest(db_of(ws))
    for args in (["log", "x"], ["remember", "--type", "fact", "--title", "new"],
                 ["migrate"]):
        result = cli(*args)
        assert result.code == 6, result
        one_clear_line(result, "newer")
    data = context_json(cli, text="push")
    assert data["diagnostics"]["warnings"]
    assert "Never push to main" in data["text"]
    assert digest(db_of(ws)) == before


def test_context_strict_on_a_newer_schema_exits_6(ws, cli):
    conn = sqlite3.connect(db_of(ws))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = cli("context", "push", "--strict")
    assert result.code == 6, result


def test_forget_on_an_unavailable_db_exits_6(ws, cli):
    conn = sqlite3.connect(db_of(ws))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = cli("forget", "--all-workspace", "--yes")
    one_clear_line(result, "newer")
    assert result.code == 6, result


# -- locked ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_locked_db_write_times_out_with_exit_6_and_context_degrades(ws, cli):
    assert cli("log", "kept").code == 0
    holder = sqlite3.connect(db_of(ws), isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("insert into ekko_meta values ('held', 'yes')")
    try:
        # A reader waits briefly for a lock, then goes on without the db: a hang fails the call.
        read = cli("context", "kept", "--format", "json", timeout=10)
        assert read.code == 0, read
        data = read.json()
        assert data["diagnostics"]["storeStatus"] == "disabled"  # the only db is locked
        assert any("locked" in w for w in data["diagnostics"]["warnings"]), data
        result = cli("log", "refused")
        assert result.code == 6, result
        one_clear_line(result, "locked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert contents(ws) == ["kept"]
    assert json.loads(cli("history", "--json").out.splitlines()[-1])["content"] == "kept"
