"""Hostile folders: memory or config that another user owns or may write is refused (exit 6,
with the fix), a config command in such a folder never runs, and context degrades instead."""
from __future__ import annotations

import os

import pytest

from ekko_mem.errors import StoreUnavailable
from ekko_mem.trust import check_path

AS_ROOT = os.geteuid() == 0
NOBODY = 65534
needs_root = pytest.mark.skipif(not AS_ROOT, reason="giving a file away needs root")


# -- the rule, on temporary folders (any user) -------------------------------------------------
def test_own_private_folder_and_missing_paths_pass(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o700)
    readable = tmp_path / "shared-to-read"
    readable.mkdir()
    readable.chmod(0o755)  # others may read it, not write it
    private = folder / "memory.db"
    private.write_bytes(b"")
    private.chmod(0o600)
    for path in (folder, readable, private, tmp_path / "absent"):
        assert check_path(str(path)) is None, path  # no StoreUnavailable


def test_folder_of_another_owner_is_refused_with_the_chown_fix(tmp_path):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    other = os.geteuid() + 1  # as if made by another user
    with pytest.raises(StoreUnavailable) as caught:
        check_path(str(folder), uid=other)
    assert "not to you" in caught.value.message
    assert caught.value.hint.startswith("if it is yours, run 'chown -R ")
    assert str(folder) in caught.value.hint


@pytest.mark.parametrize("mode,who,fix", [(0o770, "its group", "chmod 700"),
                                          (0o707, "other users", "chmod 700"),
                                          (0o777, "its group and other users", "chmod 700")])
def test_folder_others_may_write_is_refused_with_the_chmod_fix(tmp_path, mode, who, fix):
    folder = tmp_path / "loose"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(StoreUnavailable) as caught:
        check_path(str(folder))
    assert caught.value.message == f"{folder} can be written by {who}"
    assert caught.value.hint == f"run '{fix} {folder}' if its contents are yours"


def test_file_others_may_write_gets_the_file_fix(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("")
    path.chmod(0o666)
    with pytest.raises(StoreUnavailable) as caught:
        check_path(str(path))
    assert "chmod 600" in caught.value.hint


def test_symlink_refused_unless_allowed_and_then_the_target_is_judged(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(StoreUnavailable, match="symbolic link"):
        check_path(str(link))
    check_path(str(link), allow_symlinks=True)
    real.chmod(0o777)
    with pytest.raises(StoreUnavailable, match="can be written by"):
        check_path(str(link), allow_symlinks=True)


# -- end to end: the command a person runs ------------------------------------------------------
def test_world_writable_workspace_is_refused_and_nothing_is_written(cli, ws):
    assert cli("log", "before").code == 0
    folder = ws / ".ekko"
    folder.chmod(0o777)
    try:
        result = cli("log", "a private note")
        assert result.code == 6, result
        assert result.err == (f"ekko-mem: {folder} can be written by its group and other"
                              f" users; run 'chmod 700 {folder}' if its contents are yours\n")
        assert cli("history", "--json").code == 6
    finally:
        folder.chmod(0o700)
    assert [m["content"] for m in cli("history", "--json").jsonl()] == ["before"]


def test_world_writable_config_is_refused(cli, ws):
    config = ws / ".ekko" / "config.toml"
    config.chmod(0o666)
    result = cli("remember", "--scope", "workspace", "用 pnpm 安装依赖")
    assert result.code == 6
    assert "config.toml can be written by" in result.err


def test_context_degrades_instead_of_reading_a_loose_folder(cli, ws):
    assert cli("remember", "--scope", "workspace", "deploys go through the staging branch"
               ).code == 0
    (ws / ".ekko").chmod(0o777)
    try:
        result = cli("context", "--json", "deploy")
    finally:
        (ws / ".ekko").chmod(0o700)
    assert result.code == 0, result
    data = result.json()
    assert "staging" not in data["text"]
    assert data["diagnostics"]["storeStatus"] == "disabled"  # the only db is refused
    assert any("can be written by" in w for w in data["diagnostics"]["warnings"])
    assert cli("context", "--strict", "deploy").code == 0
    (ws / ".ekko").chmod(0o777)
    try:
        assert cli("context", "--strict", "deploy").code == 6
    finally:
        (ws / ".ekko").chmod(0o700)


def test_loose_user_home_is_refused_for_user_memory(cli, ws, tmp_path):
    assert cli("remember", "--scope", "user", "--yes", "我不吃香菜").code == 0
    home = tmp_path / "home"
    home.chmod(0o777)
    try:
        result = cli("query", "--json", "香菜")
        assert result.code == 6, result
        assert f"{home} can be written by" in result.err
    finally:
        home.chmod(0o700)


# -- another user's folder above the project (needs root to give files away) --------------------
def _plant_foreign_workspace(tmp_path, cli):
    """`nobody` made .ekko in a shared folder with an extractor command; we work in proj/."""
    shared = tmp_path / "shared"
    shared.mkdir()
    assert cli("init", cwd=shared).code == 0
    proof = tmp_path / "pwned.txt"
    config = shared / ".ekko" / "config.toml"
    config.write_text(f'[extractor]\ncommand = "sh -c \'id > {proof}; cat\'"\n')
    for path in (shared / ".ekko", *(shared / ".ekko").iterdir()):
        os.chown(path, NOBODY, NOBODY)
    proj = shared / "proj"
    proj.mkdir()
    return shared, proj, proof


@needs_root
def test_foreign_parent_ekko_is_refused_and_its_command_never_runs(cli, tmp_path):
    shared, proj, proof = _plant_foreign_workspace(tmp_path, cli)
    before = (shared / ".ekko" / "memory.db").read_bytes()
    for args in (["summarize"], ["extract"], ["log", "my private note"],
                 ["remember", "--scope", "workspace", "note"], ["query", "note"],
                 ["config"]):
        result = cli(*args, cwd=proj)
        assert result.code == 6, (args, result)
        assert "belongs to nobody, not to you (root)" in result.err
        assert "run 'chown -R root " in result.err
    assert not proof.exists()
    assert (shared / ".ekko" / "memory.db").read_bytes() == before


@needs_root
def test_context_skips_a_foreign_workspace_with_a_warning(cli, tmp_path):
    shared, proj, proof = _plant_foreign_workspace(tmp_path, cli)
    result = cli("context", "--json", "anything", cwd=proj)
    assert result.code == 0, result
    warnings = result.json()["diagnostics"]["warnings"]
    assert any("belongs to nobody" in w for w in warnings)
    assert not proof.exists()
    assert cli("context", "--strict", "x", cwd=proj).code == 6


@needs_root
def test_init_does_not_adopt_a_foreign_folder(cli, tmp_path):
    shared, _, _ = _plant_foreign_workspace(tmp_path, cli)
    mode = (shared / ".ekko").stat().st_mode
    result = cli("init", cwd=shared)
    assert result.code == 6
    assert (shared / ".ekko").stat().st_uid == NOBODY
    assert (shared / ".ekko").stat().st_mode == mode


@needs_root
def test_foreign_user_home_is_refused(cli, ws, tmp_path):
    assert cli("remember", "--scope", "user", "--yes", "我不吃香菜").code == 0
    home = tmp_path / "home"
    os.chown(home, NOBODY, NOBODY)
    result = cli("query", "香菜")
    assert result.code == 6
    assert "belongs to nobody" in result.err


def test_a_planted_wal_file_is_refused_before_sqlite_replays_it(cli, ws):
    assert cli("log", "mine").code == 0
    wal = ws / ".ekko" / "memory.db-wal"
    wal.write_bytes(b"")
    wal.chmod(0o666)
    result = cli("history")
    assert result.code == 6 and f"{wal} can be written by" in result.err
    wal.chmod(0o600)
    if AS_ROOT:
        os.chown(wal, NOBODY, NOBODY)
        result = cli("log", "more")
        assert result.code == 6 and "belongs to nobody" in result.err
        assert "owner" in cli("doctor").out
        os.chown(wal, 0, 0)
    assert cli("history").code == 0
