"""Files that are not what they seem, and media that cannot be written.

A named pipe, socket or device where a config or db belongs is refused the way a symbolic
link is (exit 6, one line, the fix), without ever being opened: opening a pipe waits for a
writer forever. On a read-only file system or folder, commands that only read open the dbs
read-only and work, as `context` does; a write is refused before it starts.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import BIN, Result, deadline

from ekko_mem.errors import StoreUnavailable
from ekko_mem.trust import check_path

HANG_GUARD_S = 30  # a refused pipe answers at once; this only stops a hang


def _fix(path) -> str:
    return (f"ekko-mem: {path} is a named pipe (FIFO), not a regular file or folder; move it"
            " aside or remove it; ekko-mem keeps memory and settings only in regular files")


def _home(ws: Path) -> Path:
    return ws.parent / "home"


def _with_user_memory(cli) -> None:
    assert cli("remember", "--scope", "user", "--yes", "我对猕猴桃过敏").code == 0
    assert cli("remember", "--type", "fact", "--title", "the api runs on postgres 16").code == 0


def _pipe_at(path: Path) -> None:
    if path.exists():
        path.rename(path.with_name(path.name + ".aside"))
    os.mkfifo(path, 0o600)


# -- the rule -----------------------------------------------------------------------------------
def test_a_pipe_a_socket_and_a_device_are_refused_without_being_opened(tmp_path, monkeypatch):
    pipe = tmp_path / "config.toml"
    os.mkfifo(pipe, 0o600)
    with deadline(HANG_GUARD_S), pytest.raises(StoreUnavailable) as caught:
        check_path(str(pipe))
    assert caught.value.line() == _fix(pipe)
    monkeypatch.chdir(tmp_path)  # a socket's path must be short
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("memory.db")
        with pytest.raises(StoreUnavailable, match=r"is a socket, not a regular file"):
            check_path(str(tmp_path / "memory.db"))
    finally:
        server.close()
    with pytest.raises(StoreUnavailable, match=r"is a character device, not a regular file"):
        check_path(os.devnull)


def test_a_link_to_a_pipe_is_refused_even_where_links_are_allowed(tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe, 0o600)
    link = tmp_path / "memory.db"
    link.symlink_to(pipe)
    with deadline(HANG_GUARD_S), pytest.raises(StoreUnavailable, match="named pipe"):
        check_path(str(link), allow_symlinks=True)


def test_config_reading_never_waits_on_a_pipe(tmp_path):
    """Below the trust check too: the file is opened without waiting and looked at first."""
    from ekko_mem.config import load
    (tmp_path / ".ekko").mkdir()
    os.mkfifo(tmp_path / ".ekko" / "config.toml", 0o600)
    with deadline(HANG_GUARD_S):
        config = load(str(tmp_path / "home"), str(tmp_path))
    assert [p.where() for p in config.problems] == [
        f"{tmp_path / '.ekko' / 'config.toml'} is a named pipe (FIFO), not a regular file"]


def test_a_pipe_in_place_of_a_new_db_is_refused(tmp_path):
    from ekko_mem.store.connection import ensure_private_file
    pipe = tmp_path / "memory.db"
    os.mkfifo(pipe, 0o600)
    with deadline(HANG_GUARD_S), pytest.raises(StoreUnavailable, match="not a regular file"):
        ensure_private_file(str(pipe))


# -- end to end: each file ekko-mem opens ---------------------------------------------------------
TARGETS = {"workspace config": lambda ws: ws / ".ekko" / "config.toml",
           "user config": lambda ws: _home(ws) / "config.toml",
           "workspace db": lambda ws: ws / ".ekko" / "memory.db",
           "workspace -wal": lambda ws: ws / ".ekko" / "memory.db-wal",
           "workspace -shm": lambda ws: ws / ".ekko" / "memory.db-shm",
           "user db": lambda ws: _home(ws) / "memory.db",
           "user -wal": lambda ws: _home(ws) / "memory.db-wal"}


@pytest.mark.parametrize("where", TARGETS)
def test_a_pipe_is_refused_as_a_link_is(cli, cli_proc, ws, where):
    _with_user_memory(cli)
    path = TARGETS[where](ws)
    _pipe_at(path)
    result = cli_proc("query", "postgres", timeout=HANG_GUARD_S)
    assert (result.code, result.err.strip()) == (6, _fix(path)), result
    assert result.out == ""
    path.unlink()
    elsewhere = path.with_name("elsewhere")
    elsewhere.write_bytes(b"")
    elsewhere.chmod(0o600)
    path.symlink_to(elsewhere)
    linked = cli("query", "postgres")
    assert linked.code == 6 and "is a symbolic link" in linked.err  # the same refusal


def test_log_and_config_are_refused_not_hung(cli, cli_proc, ws):
    config = ws / ".ekko" / "config.toml"
    _pipe_at(config)
    for args in (["log", "still here?"], ["config"], ["config", "set", "context.budget", "900"]):
        result = cli_proc(*args, timeout=HANG_GUARD_S)
        assert (result.code, result.err.strip()) == (6, _fix(config)), (args, result)


def test_context_skips_a_piped_db_with_a_warning(cli, cli_proc, ws):
    _with_user_memory(cli)
    db = ws / ".ekko" / "memory.db"
    _pipe_at(db)
    result = cli_proc("context", "猕猴桃 allergy", timeout=HANG_GUARD_S)
    assert result.code == 0, result
    assert (f"warning: workspace db skipped: {db} is a named pipe (FIFO), not a regular file"
            in result.err), result
    assert "我对猕猴桃过敏" in result.out  # the user db is still read


def test_context_reads_on_without_a_piped_config(cli, cli_proc, ws):
    config = _home(ws) / "config.toml"
    _home(ws).mkdir(mode=0o700, exist_ok=True)
    os.mkfifo(config, 0o600)
    result = cli_proc("context", "postgres", timeout=HANG_GUARD_S)
    assert result.code == 0, result
    assert f"warning: config ignored: {config} is a named pipe (FIFO)" in result.err, result


@pytest.mark.parametrize("where", ["workspace config", "user config", "workspace db",
                                   "user -wal"])
def test_doctor_reports_a_pipe_as_a_fail(cli, cli_proc, ws, where):
    _with_user_memory(cli)
    path = TARGETS[where](ws)
    _pipe_at(path)
    result = cli_proc("doctor", timeout=HANG_GUARD_S)
    assert result.code == 1, result
    fails = [line for line in result.out.splitlines() if line.startswith("FAIL")]
    assert any(f"{path} is a named pipe (FIFO)" in line for line in fails), result


# -- read-only media: reads work, writes are refused before they start ---------------------------
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _filled(cli, ws: Path) -> dict:
    _with_user_memory(cli)
    assert cli("log", "we deploy on fridays").code == 0
    assert cli("context", "postgres").code == 0  # a context run, for explain
    found = cli("query", "postgres", "--json").json()
    return {"workspace": found["relevant"][0]["id"],
            "user": cli("query", "猕猴桃", "--json").json()["relevant"][0]["id"]}


def _reads_work(run, ids: dict) -> None:
    """The read commands a backup from read-only media needs, each answering in full."""
    result = run("query", "postgres")
    assert result.code == 0 and ids["workspace"] in result.out, result
    result = run("export")
    assert result.code == 0, result
    assert ids["workspace"] in result.out and ids["user"] in result.out
    assert "we deploy on fridays" in result.out
    for args, wanted in ((["show", ids["user"]], "我对猕猴桃过敏"),
                         (["audit"], ids["workspace"]), (["history"], "we deploy on fridays"),
                         (["explain", "--last"], "postgres")):
        result = run(*args)
        assert result.code == 0 and wanted in result.out, (args, result)


WRITE_REFUSED = ("cannot be written here (the db or its folder is read-only), so it was"
                 " opened only for reading; check the file and folder permissions, or write"
                 " where the db can be written; nothing was written")


class _ReadOnlyMedia:
    """What SQLite says on media it cannot write, for the dbs under one folder: a writable
    open fails as it does there ("attempt to write a readonly database"), and so does a
    mode=ro open when `shm` is False (no -shm can be made); immutable opens are real."""

    def __init__(self, monkeypatch, folder: Path, *, shm: bool = True) -> None:
        self.real, self.folder, self.shm = sqlite3.connect, str(folder), shm
        monkeypatch.setattr(sqlite3, "connect", self.connect)

    def connect(self, database, *args, **kwargs):
        target = str(database)
        if self.folder in target and "immutable=1" not in target:
            if "mode=ro" not in target:
                raise sqlite3.OperationalError("attempt to write a readonly database")
            if not self.shm:
                raise sqlite3.OperationalError("unable to open database file")
        return self.real(database, *args, **kwargs)


def test_reads_work_where_the_dbs_cannot_be_written(cli, ws, monkeypatch):
    ids = _filled(cli, ws)
    db = ws / ".ekko" / "memory.db"
    before = _digest(db)
    _ReadOnlyMedia(monkeypatch, ws.parent)
    _reads_work(cli, ids)
    result = cli("log", "not written")
    assert (result.code, result.err.strip()) == (6, f"ekko-mem: the memory db {db}"
                                                    f" {WRITE_REFUSED}"), result
    result = cli("remember", "--type", "fact", "--title", "not written either")
    assert result.code == 6 and WRITE_REFUSED in result.err, result
    monkeypatch.undo()
    assert _digest(db) == before


def test_reads_work_immutable_when_not_even_a_shm_file_can_be_made(cli, ws, monkeypatch):
    ids = _filled(cli, ws)
    _ReadOnlyMedia(monkeypatch, ws.parent, shm=False)
    _reads_work(cli, ids)


def test_writes_only_in_the_wal_are_not_silently_left_out(cli, ws, monkeypatch):
    """An immutable read skips the -wal: rather than a backup without the latest writes, a
    refusal that says where they are."""
    _filled(cli, ws)
    db = ws / ".ekko" / "memory.db"
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("insert or replace into ekko_meta values ('written', 'only in the wal')")
        writer.commit()
        assert (ws / ".ekko" / "memory.db-wal").stat().st_size > 0
        _ReadOnlyMedia(monkeypatch, ws.parent, shm=False)
        result = cli("query", "postgres")
    finally:
        writer.close()
    assert result.code == 6, result
    assert f"its latest writes are in {db}-wal" in result.err, result


def test_an_older_schema_that_cannot_be_migrated_is_named(cli, ws, monkeypatch):
    from ekko_mem.store import latest_version
    _filled(cli, ws)
    raw = sqlite3.connect(ws / ".ekko" / "memory.db")
    raw.execute(f"PRAGMA user_version = {latest_version() - 1}")
    raw.close()
    _ReadOnlyMedia(monkeypatch, ws.parent)
    result = cli("query", "postgres")
    assert result.code == 6, result
    assert (f"needs migrating to {latest_version()} before it can be read; run 'ekko-mem"
            " migrate' where it can be written" in result.err), result


@pytest.fixture
def read_only_mount(tmp_path):
    """A tmpfs of our own, remounted read-only on request (root with mount only)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a tmpfs")
    point = tmp_path / f"fs-{uuid.uuid4().hex[:6]}"
    point.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs",
                           str(point)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    yield point, lambda: subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
    subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_a_backup_can_be_taken_from_a_read_only_mount(cli, read_only_mount, monkeypatch):
    point, remount_ro = read_only_mount
    ws, home = point / "ws", point / "home"
    ws.mkdir()
    home.mkdir(mode=0o700)
    monkeypatch.setenv("EKKO_HOME", str(home))
    assert cli("init", cwd=ws).code == 0
    ids = _filled(lambda *a, **k: cli(*a, cwd=ws, **k), ws)
    remount_ro()
    _reads_work(lambda *a: cli(*a, cwd=ws), ids)
    result = cli("log", "refused", cwd=ws)
    assert result.code == 6 and WRITE_REFUSED in result.err, result


def _without_root_powers() -> list[str]:
    """A command prefix under which file modes bind: none for an ordinary user; for root,
    setpriv dropping the capabilities that override them."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        return ["unavailable"]
    return [shutil.which("setpriv"), "--bounding-set=-dac_override,-dac_read_search", "--"]


def test_chmod_read_only_folders_are_read_end_to_end(cli, ws):
    ids = _filled(cli, ws)
    folders = [ws / ".ekko", _home(ws)]
    files = [f / "memory.db" for f in folders]
    prefix = _without_root_powers()
    for path in files:
        path.chmod(0o400)
    for folder in folders:
        folder.chmod(0o500)
    try:
        probe = subprocess.run([*prefix, sys.executable, "-c",
                                f"open({str(files[0])!r}, 'ab')"], capture_output=True)
        if prefix == ["unavailable"] or probe.returncode == 0:
            pytest.skip("file modes do not bind this user here (root without setpriv)")

        def run(*args):
            proc = subprocess.run([*prefix, str(BIN), *args], capture_output=True, text=True,
                                  cwd=ws, timeout=60)
            return Result(proc.returncode, proc.stdout, proc.stderr)
        before = _digest(files[0])
        _reads_work(run, ids)
        result = run("log", "refused")
        assert result.code == 6 and WRITE_REFUSED in result.err, result
        assert _digest(files[0]) == before
    finally:
        for folder in folders:
            folder.chmod(0o700)
        for path in files:
            path.chmod(0o600)
