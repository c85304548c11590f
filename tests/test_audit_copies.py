"""A memory said again and again: its audit trail grows by the same few bytes each time, and
every event still reads exactly as it was recorded, through undo and export."""
from __future__ import annotations

import json
import sqlite3

import pytest

TEXT = "我们项目用 pnpm 管理依赖"
TIMES = 12


def _stored(ws, node_id):
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    try:
        return db.execute("select event_type, payload_json from memory_audit_events where"
                          " node_id = ? order by rowid", (node_id,)).fetchall()
    finally:
        db.close()


def _sources(copy):
    return None if copy is None else copy["sourceMessageIds"]


@pytest.fixture
def restated(cli, ws):
    ids = {cli("remember", TEXT, "--json").json()["nodeId"] for _ in range(TIMES)}
    [node_id] = ids
    node = cli("show", node_id, "--json").json()["node"]
    assert len(node["sourceMessageIds"]) == TIMES
    return node


def test_each_restatement_adds_the_same_bytes(ws, restated):
    stored = _stored(ws, restated["id"])
    assert [kind for kind, _ in stored] == ["create"] + ["refresh"] * (TIMES - 1)
    sizes = [len(payload) for _, payload in stored[1:-1]]  # the last one's after is the row
    # The same apart from the digits of a count; a full copy of the sources would add an id
    # (about 25 bytes) to each side of each later event.
    assert max(sizes) - min(sizes) <= 4, sizes
    assert not any(sid in payload for _, payload in stored
                   for sid in restated["sourceMessageIds"][2:])


def test_every_event_reads_as_recorded(cli, restated):
    events = cli("audit", "--node", restated["id"], "--json").jsonl()[::-1]
    sources = restated["sourceMessageIds"]
    assert _sources(events[0]["payload"]["after"]) == sources[:1]
    for index, event in enumerate(events[1:], start=1):
        assert _sources(event["payload"]["before"]) == sources[:index]
        assert _sources(event["payload"]["after"]) == sources[:index + 1]
        assert event["payload"]["before"] == events[index - 1]["payload"]["after"]
    assert events[-1]["payload"]["after"] == cli("show", restated["id"], "--json").json()["node"]


def test_undo_gives_back_the_sources_and_leaves_the_history_whole(cli, ws, restated):
    before = cli("audit", "--node", restated["id"], "--json").jsonl()
    assert cli("audit", "undo", before[0]["id"]).code == 0
    node = cli("show", restated["id"], "--json").json()["node"]
    assert node["sourceMessageIds"] == restated["sourceMessageIds"][:-1]
    after = cli("audit", "--node", restated["id"], "--json").jsonl()
    assert after[0]["eventType"] == "undo"
    assert after[1:] == before  # the row changed; what the events recorded did not
    # Restated again after the undo: the list grows from the shorter row, and still reads.
    assert cli("remember", TEXT, "-q").code == 0
    latest = cli("audit", "--node", restated["id"], "--json").jsonl()
    assert latest[1:] == after
    assert _sources(latest[0]["payload"]["before"]) == node["sourceMessageIds"]


def test_an_export_carries_every_list_in_full(cli, restated, tmp_path):
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    text = dump.read_text()
    assert "=head" not in text and '"=node"' not in text and "=diff" not in text
    events = [json.loads(line)["data"] for line in text.splitlines()
              if json.loads(line).get("kind") == "event"]
    mine = sorted((e for e in events if e.get("nodeId") == restated["id"]),
                  key=lambda e: len(_sources(e["payload"]["after"])))
    assert [len(_sources(e["payload"]["after"])) for e in mine] == list(range(1, TIMES + 1))


def test_a_hard_forget_leaves_no_reference_behind(cli, ws, restated):
    assert cli("forget", restated["id"], "--hard", "--yes").code == 0
    stored = _stored(ws, restated["id"])
    assert stored and not any(p and ("=head" in p or '"=node"' in p or "=diff" in p)
                              for _, p in stored)
    assert cli("audit", "--node", restated["id"], "--json").code == 0


def test_an_event_is_read_with_the_row_as_it_stood_then(cli, ws, restated):
    """Another process changes the memory between the read of an event and the read of the
    row it refers to: the reader still gets the event as recorded."""
    import subprocess

    from conftest import BIN

    from ekko_mem.store import open_store
    events = cli("audit", "--node", restated["id"], "--json").jsonl()
    latest, earlier = events[0], events[1]
    store = open_store(ws / ".ekko" / "memory.db")
    changed = []

    def between(sql):
        if not changed and "from memory_nodes where id in" in sql:
            changed.append(subprocess.run([str(BIN), "audit", "undo", earlier["id"], "-q"],
                                          cwd=ws, capture_output=True, text=True))
    store.db.raw.set_trace_callback(between)
    try:
        got = store.nodes.get_event(latest["id"])
    finally:
        store.db.raw.set_trace_callback(None)
        store.close()
    assert changed and changed[0].returncode == 0, changed
    assert got == latest
    assert cli("show", restated["id"], "--json").json()["node"]["sourceMessageIds"] == \
        restated["sourceMessageIds"][:TIMES - 2]  # the undo did land


@pytest.mark.parametrize("payload", [
    {"before": None, "after": "=node"},
    {"before": {"id": "NODE", "sourceMessageIds": {"=head": 1}}, "after": None},
    {"before": None, "after": {"id": "NODE", "sourceMessageIds": "msg_1"}},
    {"before": {"id": "NODE", "=diff": {"title": "x"}}, "after": {"id": "NODE"}},
])
def test_an_import_refuses_a_reference_where_a_copy_belongs(cli, ws, restated, tmp_path,
                                                             payload):
    """Only the store writes references; one in a file would be read back as the row."""
    payload = json.loads(json.dumps(payload).replace("NODE", restated["id"]))
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    line = {"kind": "event", "data": {"id": "evt_00000000000000000001", "eventType": "update",
                                      "nodeId": restated["id"], "actor": "user",
                                      "reason": "crafted", "payload": payload,
                                      "createdAt": "2026-01-01T00:00:00.000Z"}}
    with open(dump, "a", encoding="utf-8") as out:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    before = _stored(ws, restated["id"])
    done = cli("import", str(dump))
    assert done.code == 4 and "reference where a copy of its node belongs" in done.err
    assert done.err.count("\n") == 1
    assert _stored(ws, restated["id"]) == before


def _rewrite_first_refresh(ws, node_id, change) -> None:
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    rowid, payload = db.execute("select rowid, payload_json from memory_audit_events where"
                                " node_id = ? and event_type = 'refresh' order by rowid"
                                " limit 1", (node_id,)).fetchone()
    odd = json.loads(payload)
    change(odd)
    db.execute("update memory_audit_events set payload_json = ? where rowid = ?",
               (json.dumps(odd, ensure_ascii=False), rowid))
    db.commit()
    db.close()


def test_a_stored_payload_that_only_looks_like_a_reference_reads_as_it_is(cli, ws, restated):
    _rewrite_first_refresh(ws, restated["id"], lambda odd: odd["before"]["=diff"].update(
        sourceMessageIds={"=head": "x"}))
    listed = cli("audit", "--node", restated["id"], "--json")
    assert listed.code == 0, listed.err
    assert listed.jsonl()[-2]["payload"]["before"]["sourceMessageIds"] == {"=head": "x"}
    assert cli("export").code == 0


def _drop_all_but_a_head(odd):
    odd["before"].update({"=diff": {}, "=drop": ["id"]})


@pytest.mark.parametrize("change", [
    lambda odd: odd["before"].update(extra=1),           # a key a difference never has
    lambda odd: odd["before"].update({"=diff": "x"}),    # a difference that is not an object
    lambda odd: odd["before"].update({"=drop": "title"}),  # dropped fields not in a list
    lambda odd: odd["before"].update(id="mem_other"),    # the copy of another node
    _drop_all_but_a_head,                                 # the id dropped
    lambda odd: odd["before"].update({"=drop": []}),     # an empty list of dropped fields
    lambda odd: odd["before"].update({"=drop": ["title", "title"]}),  # one dropped twice
    lambda odd: odd["before"].update({"=drop": ["nosuchfield"]}),     # not in the after
    lambda odd: odd["before"].update({"=drop": ["updatedAt"]}),       # dropped and changed
    lambda odd: odd["before"]["=diff"].update(id="mem_other"),        # the id changed
])
def test_a_stored_payload_that_only_looks_like_a_difference_reads_as_it_is(cli, ws, restated,
                                                                           change):
    _rewrite_first_refresh(ws, restated["id"], change)
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    stored = json.loads(db.execute("select payload_json from memory_audit_events where"
                                   " node_id = ? and event_type = 'refresh' order by rowid"
                                   " limit 1", (restated["id"],)).fetchone()[0])
    db.close()
    listed = cli("audit", "--node", restated["id"], "--json")
    assert listed.code == 0, listed.err
    assert listed.jsonl()[-2]["payload"]["before"] == stored["before"]
    assert cli("export").code == 0


@pytest.mark.parametrize("head", [0, TIMES + 1, 10_000])
def test_a_head_the_row_cannot_hold_reads_as_it_is(cli, ws, restated, head):
    """A head of no sources, or of more than the row has, is not one the store wrote."""
    _rewrite_first_refresh(ws, restated["id"], lambda odd: odd["before"]["=diff"].update(
        sourceMessageIds={"=head": head}))
    listed = cli("audit", "--node", restated["id"], "--json")
    assert listed.code == 0, listed.err
    assert listed.jsonl()[-2]["payload"]["before"]["sourceMessageIds"] == {"=head": head}


def test_a_refresh_keeps_one_copy_of_its_node(ws, restated):
    """Its `before` is stored as what it changes of its `after`: the time and the head of
    the sources, never the text again."""
    stored = _stored(ws, restated["id"])
    create = json.loads(stored[0][1])["after"]
    for _, payload in stored[1:]:
        before = json.loads(payload)["before"]
        assert set(before) == {"id", "=diff"}
        assert set(before["=diff"]) == {"sourceMessageIds", "updatedAt"}
        assert restated["content"] not in payload.replace(json.dumps(create["content"],
                                                                     ensure_ascii=False), "", 1)
    # The newest event holds no copy at all: its after is the row, its before a difference.
    assert len(stored[-1][1]) < len(stored[0][1]) / 2


def _editor(tmp_path, body: str) -> str:
    import sys
    script = tmp_path / "editor.py"
    script.write_text("import json, sys\npath = sys.argv[1]\n" + body)
    return f"{sys.executable} {script}"


def test_an_edit_reads_back_its_old_text_and_undoes_to_it(cli, ws, restated, tmp_path):
    editor = _editor(tmp_path, "n = json.load(open(path))\n"
                               "n['content'] = n['content'] + '（团队约定）'\n"
                               "n['tags'] = n['tags'] + ['约定']\n"
                               "json.dump(n, open(path, 'w'), ensure_ascii=False)\n")
    assert cli("edit", restated["id"], "-q", env={"EDITOR": editor}).code == 0
    edited = cli("show", restated["id"], "--json").json()["node"]
    assert edited["content"] != restated["content"]
    # One more change after it, so the edit's own `after` is written out too.
    assert cli("remember", TEXT, "-q").code == 0
    events = cli("audit", "--node", restated["id"], "--json").jsonl()
    edit = next(e for e in events if e["payload"]["before"] == restated)
    assert edit["payload"]["after"]["content"] == edited["content"]
    assert edit["payload"]["after"]["tags"] == edited["tags"]
    befores = [json.loads(p)["before"] for _, p in _stored(ws, restated["id"])[1:]]
    assert any(set(b) <= {"id", "=diff", "=drop"} and b["=diff"].get("content") == restated["content"]
               for b in befores)
    assert cli("audit", "undo", edit["id"]).code == 0
    assert cli("show", restated["id"], "--json").json()["node"]["content"] == \
        restated["content"]


def test_an_after_equal_only_in_python_is_kept_whole(tmp_path):
    """1 == True in Python; the recorded `after` said 1, the row says true."""
    from ekko_mem.store import open_store
    store = open_store(tmp_path / ".ekko" / "memory.db", create=True)
    node = {"id": "mem_00000000000000000001", "scope": "workspace", "domain": "工程",
            "categoryPath": ["工程"], "type": "fact", "title": "t", "content": "c",
            "status": "active", "confidence": 0.9, "importance": 0.5, "explicit": True,
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}
    store.nodes.insert_node(node)
    stored = store.nodes.get_node(node["id"])
    event = {"id": "evt_00000000000000000001", "eventType": "create", "nodeId": node["id"],
             "actor": "user", "reason": "r", "createdAt": "2026-01-01T00:00:00.000Z",
             "payload": {"before": None, "after": {**stored, "explicit": 1}}}
    store.nodes.add_event(event)
    assert store.nodes.get_event(event["id"])["payload"]["after"]["explicit"] == 1
    store.nodes.add_event({**event, "id": "evt_00000000000000000002",
                           "payload": {"before": None, "after": stored}})
    raw = store.db.one("select payload_json from memory_audit_events where id = ?",
                       ("evt_00000000000000000002",))[0]
    assert '"after":"=node"' in raw
    store.close()


def test_an_imported_event_lands_beside_the_node_the_file_carries(cli, ws, tmp_path):
    """The file's workspace memory reuses the id of a user memory: its create event, settled as
    a copy of the file's node, goes to the workspace db with it and reads as that node."""
    user_id = cli("remember", "我喜欢吃辣的菜", "--json").json()["nodeId"]
    node = cli("show", user_id, "--json").json()["node"]
    node = {k: v for k, v in node.items() if k not in ("userId", "key", "valueJson")}
    node.update(scope="workspace", title="a workspace note with the same id",
                content="a workspace note with the same id", domain="general",
                categoryPath=["general"], type="fact", sourceMessageIds=[])
    lines = [{"kind": "header", "format": "ekko-mem-export", "version": 1},
             {"kind": "node", "data": node},
             {"kind": "event", "data": {"id": "evt_00000000000000000009", "eventType": "create",
                                        "nodeId": user_id, "actor": "user", "reason": "created",
                                        "createdAt": node["createdAt"],
                                        "payload": {"before": None, "after": node}}}]
    source = tmp_path / "same-id.jsonl"
    source.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                      encoding="utf-8")
    assert cli("import", str(source), "--yes").code == 0
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    placed = db.execute("select count(*) from memory_audit_events where id = ?",
                        ("evt_00000000000000000009",)).fetchone()[0]
    db.close()
    assert placed == 1
    [event] = [e for e in cli("audit", "-n", "1000", "--json").jsonl()
               if e["id"] == "evt_00000000000000000009"]
    assert event["payload"]["after"]["title"] == "a workspace note with the same id"


def test_an_imported_history_is_stored_as_remember_stores_it(cli, ws, restated, tmp_path):
    """An export carries every copy in full; the import stores a restated memory's events by
    reference and difference again, and they read exactly as in the workspace they left."""
    dump, other = tmp_path / "dump.jsonl", tmp_path / "other"
    assert cli("export", "--output", str(dump)).code == 0
    other.mkdir()
    assert cli("init", str(other), "-q", "--no-gitignore").code == 0
    assert cli("import", str(dump), "--yes", cwd=other).code == 0
    listed = [e for e in cli("audit", "--node", restated["id"], "--json", cwd=other).jsonl()
              if e["eventType"] != "import"]
    assert listed == cli("audit", "--node", restated["id"], "--json").jsonl()
    stored = [event for event in _stored(other, restated["id"]) if event[0] != "import"]
    assert stored == _stored(ws, restated["id"])
