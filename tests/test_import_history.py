"""History is data: an imported audit event is stored as a record of what happened, never
taken as a template for a later write; every reference an import brings points at a record of
the right kind that exists, in chains that end; and an import checks its file without the write
locks, so other writers go on meanwhile.

`audit undo` puts what it would write back through the rules `remember` and `edit` keep, so an
event forged in a file, or stored by an older version that checked less, is refused (exit 4)
with one line, and nothing changes. An undo never leaves two active versions in one chain.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from test_transfer_safety import HEADER, T, _file, _node, _one_line
from test_transfer_safety import _rows as _db_rows

TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


def _message(message_id: str, **fields) -> dict:
    return {"id": message_id, "sessionId": "chat", "role": "user", "content": "hello",
            "createdAt": T, **fields}


def _summary(summary_id: str, **fields) -> dict:
    return {"id": summary_id, "sessionId": "chat", "fromMessageId": "msg_1",
            "toMessageId": "msg_2", "summary": "said hello", "createdAt": T, **fields}


def _event(event_id: str = "evt_forged1", kind: str = "update", node_id: str = "mem_imp1",
           **payload) -> dict:
    return {"id": event_id, "eventType": kind, "nodeId": node_id, "actor": "user",
            "reason": "edited", "payload": payload, "createdAt": T}


def _db(ws: Path) -> Path:
    return ws / ".ekko" / "memory.db"


def _rows(ws: Path, sql: str, args=()) -> list:
    return _db_rows(_db(ws), sql, args)


def _counts(ws: Path) -> tuple:
    return tuple(_rows(ws, f"select count(*) from {table}")[0][0] for table in
                 ("memory_messages", "memory_summaries", "memory_nodes", "memory_audit_events"))


def _refused(cli, ws, text: str, *needles, code: int = 4) -> None:
    before = _counts(ws)
    for extra in ((), ("--yes",)) if code == 4 else ((),):
        result = cli("import", "-", *extra, input=text)
        assert result.code == code, result
        _one_line(result, *needles)
    assert _counts(ws) == before


# -- the forged event of the report, end to end --------------------------------------------------

FORGED = {"scope": "global", "key": "bogus_key", "confidence": 5, "userId": "mallory",
          "content": f"evil\u0000 {TOKEN}"}


def test_a_forged_update_event_is_refused_at_import_naming_the_event_and_field(cli, ws):
    node = _node()
    text = _file(("node", node), ("event", _event(before={**node, **FORGED}, after=node)))
    _refused(cli, ws, text, "line 3: event evt_forged1 payload before confidence",
             "nothing was imported")


@pytest.mark.parametrize("change, needle", [
    ({"scope": "global"}, "payload before is in global scope"),
    ({"userId": "mallory"}, "payload before userId is not the current user (tester)"),
    ({"confidence": 5}, "payload before confidence: Input should be less than or equal to 1"),
    ({"content": "evil\u0000"}, "payload before content contains a NUL byte"),
    ({"id": "mem_victim"}, "payload before names another node than the event's"),
])
def test_import_checks_every_copy_an_event_records(cli, ws, change, needle):
    node = _node()
    text = _file(("node", node), ("event", _event(before={**node, **change}, after=node)))
    _refused(cli, ws, text, f"line 3: event evt_forged1 {needle}")


def test_import_refuses_an_event_of_another_user(cli, ws):
    node = _node()
    event = {**_event(before=node, after=node), "userId": "mallory"}
    _refused(cli, ws, _file(("node", node), ("event", event)),
             "line 3: event evt_forged1 userId is not the current user (tester)")


def test_a_supersede_records_the_version_it_replaced_and_an_undo_both_sides(cli, ws):
    old, new = _node("mem_old", status="superseded"), _node("mem_new", supersedesId="mem_old")
    victim = _node("mem_victim")
    ok = _event("evt_ok", "supersede", "mem_new", before=old, after=new)
    forged = _event("evt_bad", "supersede", "mem_new", before=victim, after=new)
    _refused(cli, ws, _file(("node", old), ("node", new), ("event", forged)),
             "line 4: event evt_bad payload before names another node than the event's")
    undo = _event("evt_undo", "undo", "mem_new", before=new,
                  after={"undoneEventId": "evt_ok", "before": new, "after": victim})
    _refused(cli, ws, _file(("node", old), ("node", new), ("event", undo)),
             "line 4: event evt_undo payload after.after names another node")
    assert cli("import", "-", input=_file(("node", old), ("node", new),
                                          ("event", ok))).code == 0


def test_a_secret_in_history_is_asked_about_like_one_in_a_node(cli, ws):
    node = _node()
    text = _file(("node", node), ("event", _event(before={**node, "content": TOKEN},
                                                  after=node)))
    _refused(cli, ws, text, "line 3: event evt_forged1 payload before: this memory contains",
             code=3)
    assert cli("import", "-", "--yes", input=text).code == 0


def test_an_erased_copy_is_history_too(cli, ws):
    node = _node()
    text = _file(("node", node), ("event", _event(before={"id": "mem_imp1", "erased": True},
                                                  after=node)))
    assert cli("import", "-", input=text).code == 0


# -- audit undo checks what it would write back, whoever stored the event -------------------------

def _store_event(ws: Path, event: dict) -> None:
    """An event as an older version may have stored it: straight into the table."""
    conn = sqlite3.connect(_db(ws))
    try:
        with conn:
            conn.execute("insert into memory_audit_events (id, event_type, node_id, actor,"
                         " reason, payload_json, created_at) values (?, ?, ?, ?, ?, ?, ?)",
                         (event["id"], event["eventType"], event["nodeId"], event["actor"],
                          event["reason"], json.dumps(event["payload"]), event["createdAt"]))
    finally:
        conn.close()


@pytest.fixture
def stored(cli, ws):
    result = cli("remember", "--type", "fact", "--title", "we use FTS5",
                 "--content", "we use FTS5 for search", "--json")
    return cli("show", result.jsonl()[0]["nodeId"], "--json").json()["node"]


@pytest.mark.parametrize("change, needle", [
    (FORGED, "a memory that is not valid (confidence"),
    ({"scope": "global"}, "another scope than the memory's"),
    ({"scope": "user", "userId": "tester"}, "another scope than the memory's"),
    ({"userId": "mallory"}, "another userId than the memory's"),
    ({"key": "bogus_key", "valueJson": "x"}, "key 'bogus_key' is not allowed"),
    ({"confidence": 5}, "confidence: Input should be less than or equal to 1"),
    ({"importance": -1}, "importance: Input should be greater than or equal to 0"),
    ({"content": "evil\u0000"}, "a NUL byte into content"),
    ({"content": f"the token is {TOKEN}"}, "an undo cannot confirm it"),
    ({"title": "x" * 1001}, "the title is 1,001 characters, over the limit of 1,000"),
    ({"supersedesId": "mem_victim"}, "another supersedesId than the memory's"),
    ({"sourceMessageIds": ["msg_nowhere"]}, "a source message that is not in the log"),
    ({"id": "mem_victim"}, "records another memory than"),
])
def test_undo_refuses_to_write_back_what_the_write_policy_refuses(cli, ws, stored, change,
                                                                  needle):
    _store_event(ws, _event(node_id=stored["id"], before={**stored, **change}, after=stored))
    events = _counts(ws)[3]
    result = cli("audit", "undo", "evt_forged1")
    assert result.code == 4, result
    _one_line(result, needle, "nothing was changed")
    assert cli("show", stored["id"], "--json").json()["node"] == stored
    assert _counts(ws)[3] == events


def test_undo_still_puts_back_an_edit_the_policy_allows(cli, ws, stored):
    _store_event(ws, _event(node_id=stored["id"], before={**stored, "confidence": 0.5},
                            after=stored))
    assert cli("audit", "undo", "evt_forged1").code == 0
    assert cli("show", stored["id"], "--json").json()["node"]["confidence"] == 0.5


def test_a_loop_of_undos_in_a_stored_history_is_one_line_not_a_hang(cli, ws, stored):
    for this, other in (("evt_loop1", "evt_loop2"), ("evt_loop2", "evt_loop1")):
        _store_event(ws, _event(this, "undo", stored["id"], before=stored, after={
            "undoneEventId": other, "before": stored, "after": stored}))
    result = cli("audit", "undo", "evt_loop1")
    assert result.code == 4, result
    _one_line(result, "evt_loop1 is one of undos that undo each other in a loop")


# -- an undo never leaves two versions in force -------------------------------------------------

def _status(cli, node_id):
    return cli("show", node_id, "--json").json()["node"]["status"]


def _refresh_of(cli, node_id):
    return next(e["id"] for e in cli("audit", "--node", node_id, "--json").jsonl()
                if e["eventType"] == "refresh")


def test_undoing_an_old_refresh_never_brings_back_a_replaced_version(cli, ws):
    said = ("--type", "decision", "--title", "we store data in Postgres")
    old = cli("remember", *said, "--json").jsonl()[0]["nodeId"]
    assert cli("remember", *said, "--json").jsonl()[0]["nodeId"] == old
    refresh = _refresh_of(cli, old)
    new = cli("remember", "--type", "decision", "--title", "we store data in SQLite",
              "--supersedes", old, "--json").jsonl()[0]["nodeId"]
    result = cli("audit", "undo", refresh)
    assert result.code == 4, result
    assert result.err == (f"ekko-mem: undoing {refresh} would make {old} active again, but"
                          f" {new} replaced it; run 'ekko-mem audit --node {new}' to find"
                          " that change, and undo it instead\n")
    assert (_status(cli, old), _status(cli, new)) == ("superseded", "active")
    assert "Postgres" not in cli("context", "where do we store data").out


def test_undoing_an_old_refresh_does_not_fork_a_chain_whose_successor_was_forgotten(cli, ws):
    first = cli("remember", "我们项目用 pnpm 管理依赖", "--json").json()["nodeId"]
    assert cli("remember", "我们项目用 pnpm 管理依赖", "-q").code == 0
    refresh = _refresh_of(cli, first)
    second = cli("remember", "我们项目用 yarn 管理依赖", "--json").json()["nodeId"]
    assert cli("forget", second, "--yes", "-q").code == 0
    result = cli("audit", "undo", refresh)
    assert result.code == 4, result
    _one_line(result, f"would make {first} active again, but {second} replaced it")
    assert (_status(cli, first), _status(cli, second)) == ("superseded", "deleted")
    # The way back is the chain's own: the forget undone, then the supersede.
    forget = cli("audit", "--node", second, "--json").jsonl()[0]["id"]
    assert cli("audit", "undo", forget, "-q").code == 0
    supersede = next(e["id"] for e in cli("audit", "--node", second, "--json").jsonl()
                     if e["eventType"] == "supersede")
    assert cli("audit", "undo", supersede, "-q").code == 0
    assert (_status(cli, first), _status(cli, second)) == ("active", "deleted")


def test_a_supersede_event_naming_another_predecessor_is_not_undone(cli, ws, stored):
    victim = cli("remember", "--type", "fact", "--title", "an older fact",
                 "--json").jsonl()[0]["nodeId"]
    newer = cli("remember", "--type", "fact", "--title", "a newer fact", "--supersedes",
                victim, "--json").jsonl()[0]["nodeId"]
    victim_node = cli("show", victim, "--json").json()["node"]
    _store_event(ws, _event(kind="supersede", node_id=stored["id"], before=victim_node,
                            after=stored))
    result = cli("audit", "undo", "evt_forged1")
    assert result.code == 4, result
    _one_line(result, f"names a predecessor that {stored['id']} does not supersede")
    assert (_status(cli, victim), _status(cli, newer), _status(cli, stored["id"])) == (
        "superseded", "active", "active")


# -- references point at records of their kind that exist, in chains that end --------------------

@pytest.mark.parametrize("records, needle", [
    ([("node", _node(supersedesId="mem_imp1", status="superseded"))],
     "line 2: node supersedesId makes a cycle"),
    ([("node", _node("mem_a", supersedesId="mem_b")),
      ("node", _node("mem_b", supersedesId="mem_a", status="superseded"))],
     "line 2: node supersedesId makes a cycle"),
    ([("node", _node(parentId="mem_imp1"))], "line 2: node parentId makes a cycle"),
    ([("message", _message("msg_1")), ("message", _message("msg_2")),
      ("summary", _summary("sum_1", parentSummaryId="sum_1"))],
     "line 4: summary parentSummaryId makes a cycle"),
    ([("message", _message("msg_1", parentId="msg_2")),
      ("message", _message("msg_2", parentId="msg_1"))],
     "line 2: message parentId makes a cycle"),
])
def test_import_refuses_a_chain_that_never_ends(cli, ws, records, needle):
    _refused(cli, ws, _file(*records), needle, "must end", "nothing was imported")


def test_a_chain_that_ends_in_the_file_or_the_db_imports(cli, ws):
    chain = [("message", _message("msg_3", parentId="msg_2")),
             ("message", _message("msg_2", parentId="msg_1")), ("message", _message("msg_1"))]
    assert cli("import", "-", input=_file(*chain)).code == 0
    more = _file(("message", _message("msg_4", parentId="msg_3")),
                 ("summary", _summary("sum_1")),
                 ("summary", _summary("sum_2", parentSummaryId="sum_1")))
    assert cli("import", "-", input=more).code == 0


@pytest.mark.parametrize("records, needle", [
    ([("node", _node(sourceMessageIds=["msg_nowhere"]))],
     "line 2: node sourceMessageIds names a message that is neither in the file nor in the"
     " log"),
    ([("node", _node(sourceMessageIds=["mem_'; drop table memory_nodes;--"]))],
     "line 2: node sourceMessageIds is not a well-formed message id"),
    ([("node", _node(sourceMessageIds=["ws_x'y:msg_1"]))],
     "line 2: node sourceMessageIds is not a well-formed message id"),
    ([("node", _node("mem_'; drop"))], "line 2: node id is not a well-formed node id"),
    ([("node", _node(supersedesId="msg_1"))],
     "line 2: node supersedesId is not a well-formed node id"),
    ([("message", _message("msg_1")), ("summary", _summary("sum_1"))],
     "line 3: summary toMessageId names a message that is neither in the file"),
    ([("message", _message("mem_1"))], "line 2: message id is not a well-formed message id"),
    ([("node", _node(sourceMessageIds=["msg_nowhere"])),
      ("node", _node("mem_2", title="x" * 1001))],
     "line 2: node sourceMessageIds names a message"),
    ([("node", _node(supersedesId="mem_imp1", status="superseded")),
      ("node", _node("mem_2", title="x" * 1001))], "line 2: node supersedesId makes a cycle"),
    ([("node", _node()), ("event", _event("evt_x", "create", "msg_1", after=_node()))],
     "line 3: event nodeId is not a well-formed node id"),
])
def test_import_refuses_ids_that_point_nowhere_or_are_not_ids(cli, ws, records, needle):
    _refused(cli, ws, _file(*records), needle, "nothing was imported")


def test_sources_in_the_file_the_log_or_another_workspace_import(cli, ws):
    logged = cli("log", "we use FTS5").out.strip()
    text = _file(("node", _node("mem_a", sourceMessageIds=["msg_later", logged])),
                 ("node", _node("mem_u", scope="user", sourceMessageIds=["ws_other:msg_9"])),
                 ("message", _message("msg_later")))
    result = cli("import", "-", "--yes", input=text)
    assert result.code == 0, result
    doctor = cli("doctor", "--json")
    assert not [c for c in doctor.json()["checks"]
                if c["check"] == "source messages" and not c["ok"]], doctor.out


# -- checked without the write locks, written under them -----------------------------------------

def _writable(db: Path) -> bool:
    """Whether another connection can take the write lock right now (no waiting)."""
    conn = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        conn.execute("begin immediate")
        conn.execute("rollback")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def test_an_import_checks_its_file_without_holding_the_write_lock(service, ws, monkeypatch):
    from ekko_mem.service.transfer import Transfer
    checked = Transfer._import_policy
    free: list[bool] = []

    def probing(self, *args):
        free.append(_writable(_db(ws)))
        return checked(self, *args)

    monkeypatch.setattr(Transfer, "_import_policy", probing)
    lines = [json.dumps(HEADER), json.dumps({"kind": "node", "data": _node()})]
    assert service.import_lines(lines)["imported"]["node"] == 1
    assert service.import_lines(lines)["skipped"] == 1  # again: nothing new
    assert free == [True, True]


def _before_the_locks(monkeypatch, act) -> None:
    """Run `act` once, after the checks and before the import takes its write locks."""
    import ekko_mem.store.transfer as store_transfer
    take = store_transfer.atomic_together
    done: list[bool] = []

    def late(dbs):
        if not done:
            done.append(True)
            act()
        return take(dbs)

    monkeypatch.setattr(store_transfer, "atomic_together", late)


def test_a_value_written_between_the_check_and_the_locks_is_checked_again(service, ws,
                                                                         monkeypatch):
    from ekko_mem import MemoryService
    from ekko_mem.errors import Rejected
    fields = {"type": "fact", "domain": "engineering", "categoryPath": ["engineering"],
              "key": "language", "valueJson": "rust", "title": "we write Rust"}

    def rival():
        with MemoryService(ws) as other:
            assert other.propose_update("create", fields, actor="user")["accepted"]

    _before_the_locks(monkeypatch, rival)
    lines = [json.dumps(HEADER), json.dumps({"kind": "node", "data": _node(
        key="language", valueJson="python")})]
    with pytest.raises(Rejected, match="line 2: the single-valued key 'language' already"):
        service.import_lines(lines)
    assert _rows(ws, "select count(*) from memory_nodes where status = 'active'"
                 " and key = 'language'") == [(1,)]


def test_the_same_file_imported_meanwhile_is_skipped_not_written_twice(service, ws,
                                                                      monkeypatch):
    from ekko_mem import MemoryService
    lines = [json.dumps(HEADER), json.dumps({"kind": "message", "data": _message("msg_1")}),
             json.dumps({"kind": "node", "data": _node(sourceMessageIds=["msg_1"])})]

    def same():
        with MemoryService(ws) as other:
            assert other.import_lines(lines)["imported"]["node"] == 1

    _before_the_locks(monkeypatch, same)
    assert service.import_lines(lines)["imported"] == {"message": 0, "summary": 0, "node": 0,
                                                       "event": 0}
    assert _counts(ws)[:3] == (1, 0, 1)


def test_a_source_erased_between_the_check_and_the_locks_is_checked_again(service, ws,
                                                                         monkeypatch):
    from ekko_mem import MemoryService
    from ekko_mem.errors import Rejected
    with MemoryService(ws) as first:
        logged = first.log_message("we use FTS5")["id"]

    def erase():
        with MemoryService(ws) as other:
            assert other.forget_messages([logged], confirm=True)["purgedMessageIds"]

    _before_the_locks(monkeypatch, erase)
    lines = [json.dumps(HEADER), json.dumps({"kind": "node", "data": _node(
        sourceMessageIds=[logged])})]
    # Erased meanwhile: the check under the locks sees its tombstone, and the memory comes in
    # without the reference to it, rather than pointing at nothing.
    service.import_lines(lines)
    assert logged not in service.show("mem_imp1")["node"].get("sourceMessageIds", [])
    # With --allow-erased nothing is stripped, and a source that is nowhere is refused.
    again = [json.dumps(HEADER), json.dumps({"kind": "node", "data": _node(
        "mem_imp2", sourceMessageIds=[logged])})]
    with pytest.raises(Rejected, match="line 2: node sourceMessageIds names a message"):
        service.import_lines(again, allow_erased=True)
