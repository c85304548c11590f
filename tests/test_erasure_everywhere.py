"""A hard delete of a user memory reaches every workspace that used it, leaves tombstones
(ids and keyed digests, never text) that an import can check, proves short texts gone too,
and takes the files outside the dbs that held the text: a kept `edit` and an export's temp
file."""
from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile

from test_erasure import files_holding, node_id

ALLERGY = "记住，我对 KIWIZQ 过敏"


def _runs(folder) -> list[tuple[str, str]]:
    """(question, ids used) of every context run a workspace db holds."""
    db = sqlite3.connect(folder / ".ekko" / "memory.db")
    try:
        return db.execute("select query_text, used_memory_ids_json from"
                          " memory_context_runs").fetchall()
    finally:
        db.close()


def _two_workspaces(cli, ws, tmp_path):
    """A user memory remembered in `ws` and used by a context there and in a second
    workspace under the same EKKO_HOME; returns (memory id, the second workspace)."""
    mem = node_id(cli("remember", "--json", ALLERGY))
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", cwd=other).code == 0
    for folder in (ws, other):
        assert "KIWIZQ" in cli("context", "我对什么过敏 KIWIZQ", cwd=folder).out
        assert any(mem in used for _, used in _runs(folder))
    return mem, other


def test_erasing_a_user_memory_from_another_workspace_clears_both(cli, ws, tmp_path):
    mem, other = _two_workspaces(cli, ws, tmp_path)
    result = cli("forget", mem, "--hard", "--purge-sources", "--yes", "--verify", "--json",
                 cwd=other)
    assert result.code == 0, result
    check = result.json()["verify"]
    assert check["clean"] is True and check["contextRunsLeft"] == 0
    assert {str(ws / ".ekko" / "memory.db"), str(other / ".ekko" / "memory.db")} <= set(
        check["filesChecked"])
    for folder in (ws, other):
        assert _runs(folder) == []
        gone = cli("explain", "--last", cwd=folder)
        assert gone.code == 5 and "KIWIZQ" not in gone.out + gone.err
        assert cli("doctor", cwd=folder).code == 0
        assert files_holding(folder / ".ekko", "KIWIZQ") == []
    assert files_holding(tmp_path / "home", "KIWIZQ") == []


def test_a_workspace_that_cannot_be_opened_is_named_and_finished_by_a_rerun(cli, ws, tmp_path):
    mem, other = _two_workspaces(cli, ws, tmp_path)
    (ws / ".ekko").chmod(0o777)  # not safe to open: say so, claim nothing
    try:
        stuck = cli("forget", mem, "--hard", "--yes", cwd=other)
    finally:
        (ws / ".ekko").chmod(0o700)
    assert stuck.code == 6, stuck
    assert f"{ws} could not be opened to drop its context runs" in stuck.err
    assert _runs(other) == [] and _runs(ws) != []
    done = cli("forget", mem, "--hard", "--yes", "--verify", cwd=other)
    assert done.code == 0, done
    assert _runs(ws) == []


def test_a_workspace_the_user_db_never_heard_of_settles_from_the_tombstones(cli, ws, tmp_path):
    from ekko_mem import MemoryService
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    assert cli("init", cwd=stranger).code == 0
    assert cli("context", "deploys", cwd=stranger).code == 0  # a run from before it
    mem = node_id(cli("remember", "--json", ALLERGY))  # no workspace is named by it
    assert "KIWIZQ" in cli("context", "我对什么过敏", cwd=stranger).out
    assert len(_runs(stranger)) == 2
    assert cli("forget", mem, "--hard", "--yes").code == 0
    assert len(_runs(stranger)) == 2  # out of reach until it is next used
    with MemoryService(stranger) as svc:
        assert svc.erasure.settle_here() == 1
        assert svc.erasure.settle_here() == 0  # read up to the last tombstone already
    assert [question for question, _ in _runs(stranger)] == ["deploys"]
    assert "我对什么过敏" not in cli("explain", "--last", cwd=stranger).out


def test_doctor_can_find_leftovers_of_any_earlier_erasure(cli, ws, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mem = node_id(cli("remember", "--scope", "workspace", "--json", "badge hint zq-77-badge"))
    keep = node_id(cli("remember", "--scope", "workspace", "--json", "deploys go via staging"))
    export = cli("export").out
    assert cli("forget", mem, "--hard", "--yes").code == 0
    # Written after the erasure (by an older ekko-mem, or restored from a backup).
    (tmp_path / f"{mem}-abc123.json").write_text(json.dumps({"id": mem}))
    (tmp_path / f"{keep}-def456.json").write_text(json.dumps({"id": keep}))
    (ws / ".backup.jsonl.00112233445566ff.tmp").write_text(export)
    from ekko_mem import MemoryService
    with MemoryService(ws) as svc:
        found = svc.erasure.erased_leftovers()
    assert sorted(found) == sorted([str(tmp_path / f"{mem}-abc123.json"),
                                    str(ws / ".backup.jsonl.00112233445566ff.tmp")])


def test_tombstones_name_the_erased_ids_and_hold_no_text(cli, ws, tmp_path):
    from ekko_mem.service.erasure import erased_records
    from ekko_mem.store import open_store
    msg = cli("log", "my locker code is zq-tomb-5521-locker").out.strip()
    mem = node_id(cli("remember", "--scope", "workspace", "--source", msg, "--json",
                      "locker code is zq-tomb-5521-locker"))
    keep = node_id(cli("remember", "--scope", "workspace", "--json", "deploys go via staging"))
    exported = cli("export").jsonl()
    assert cli("forget", mem, "--hard", "--purge-sources", "--yes").code == 0
    assert files_holding(ws / ".ekko", "zq-tomb-5521-locker") == []
    store = open_store(ws / ".ekko" / "memory.db")
    try:
        assert store.erasure.erased([mem, msg, keep]) == {mem, msg}
        rows = store.db.all("select id, digest from memory_tombstones")
        assert {r[0] for r in rows} >= {mem, msg} and all(len(r[1]) == 16 for r in rows)
        records = [(r["kind"], r["data"]) for r in exported if r["kind"] != "header"]
        named = erased_records(records, [store])
        # The node, its message and the node's events; the memory kept is not named.
        assert {mem, msg} <= named and keep not in named
        assert {d["id"] for k, d in records if k == "event" and d.get("nodeId") == mem} <= named
        # The same words under a new id are named too, by their digest.
        copy = next(d for k, d in records if k == "node" and d["id"] == mem)
        assert erased_records([("node", {**copy, "id": "mem_new"})], [store]) == {"mem_new"}
    finally:
        store.close()


def test_importing_an_old_export_skips_what_was_erased(cli, ws, tmp_path):
    secret = "zq-import-8812-vault"
    msg = cli("log", f"vault hint {secret}").out.strip()
    mem = node_id(cli("remember", "--scope", "workspace", "--source", msg, "--json",
                      f"vault hint is {secret}"))
    backup = tmp_path / "before.jsonl"
    assert cli("export", "-o", str(backup)).code == 0
    assert cli("forget", mem, "--hard", "--purge-sources", "--yes").code == 0
    result = cli("import", str(backup), "--yes")
    assert result.code == 0, result
    assert re.search(r"skipped [1-9]\d* erased records", result.out + result.err), result
    assert cli("show", mem).code == 5
    assert files_holding(ws / ".ekko", secret) == []
    assert cli("import", str(backup), "--yes", "--json").json()["erased"] >= 2
    again = cli("import", str(backup), "--yes", "--allow-erased")
    assert again.code == 0, again
    assert cli("show", mem).code == 0


def test_verify_checks_short_texts(cli, ws):
    mem = node_id(cli("remember", "--scope", "workspace", "--type", "fact", "--json",
                      "--title", "PIN 4417", "--content", "PIN 4417"))
    result = cli("forget", mem, "--hard", "--yes", "--verify", "--json")
    assert result.code == 0, result
    check = result.json()["verify"]
    assert check["clean"] is True and check["textsChecked"] == 1


def test_verify_finds_a_short_text_still_there(cli, ws):
    cli("log", "the gate PIN 4417")  # its source, not purged
    mem = node_id(cli("remember", "--scope", "workspace", "--type", "fact", "--json",
                      "--title", "PIN 4417", "--content", "PIN 4417"))
    result = cli("forget", mem, "--hard", "--yes", "--verify")
    assert result.code == 1, result
    assert "the text is still in" in result.err and "1 live records say the same" in result.err


def _editor(tmp_path, body: str) -> str:
    script = tmp_path / "fake_editor.py"
    script.write_text("import sys\npath = sys.argv[1]\n" + body)
    return f"{sys.executable} {script}"


def test_forget_hard_removes_a_kept_edit_and_an_export_temp_file(cli, ws, tmp_path,
                                                                 monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    secret = "zq-leftover-3390-badge"
    mem = node_id(cli("remember", "--scope", "workspace", "--json", f"badge hint {secret}"))
    keep = node_id(cli("remember", "--scope", "workspace", "--json", "deploys go via staging"))
    broken = _editor(tmp_path, "open(path, 'a').write('not json')\n")
    for target in (mem, keep):
        refused = cli("edit", target, env={"EDITOR": broken})
        assert refused.code == 4 and "your text is kept in" in refused.err
    kept = sorted(p.name for p in temp.iterdir())
    assert len(kept) == 2 and files_holding(temp, secret) == [
        next(n for n in kept if n.startswith(mem))]
    # An export killed before its rename, and another file of that shape without the memory.
    killed = ws / ".backup.jsonl.0123456789abcdef.tmp"
    killed.write_text(cli("export").out)
    unrelated = ws / ".notes.jsonl.fedcba9876543210.tmp"
    unrelated.write_text(json.dumps({"kind": "node", "data": {"id": keep}}) + "\n")
    result = cli("forget", mem, "--hard", "--yes", "--json")
    assert result.code == 0, result
    assert not killed.exists() and unrelated.exists()
    assert [p.name for p in temp.iterdir()] == [next(n for n in kept if n.startswith(keep))]
    assert files_holding(ws, secret) == [] and files_holding(temp, secret) == []
    assert sorted(result.json()["filesRemoved"]) == sorted(
        [str(killed), str(temp / next(n for n in kept if n.startswith(mem)))])


def test_a_leftover_that_could_not_be_removed_is_never_reported_removed(cli, ws, monkeypatch):
    from ekko_mem.service import erasure
    secret = "zq-stuck-5521-locker"
    mem = node_id(cli("remember", "--scope", "workspace", "--json", f"locker hint {secret}"))
    stuck = ws / ".backup.jsonl.0123456789abcdef.tmp"
    stuck.write_text(cli("export").out)
    monkeypatch.setattr(erasure.os, "open", _refusing_open(stuck, erasure.os.open))
    result = cli("forget", mem, "--hard", "--yes", "--json")
    data = result.json()
    assert str(stuck) not in data["filesRemoved"] and data["filesLeft"] == [str(stuck)]
    human = cli("forget", mem, "--hard", "--yes")  # a rerun says what is left, in one line
    assert f"could not remove {stuck}: remove it by hand" in human.out, human


def _refusing_open(path, real_open):
    def refusing(name, *args, **kwargs):
        if str(name) == str(path):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, *args, **kwargs)
    return refusing
