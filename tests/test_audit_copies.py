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
    assert "=head" not in text and '"=node"' not in text
    events = [json.loads(line)["data"] for line in text.splitlines()
              if json.loads(line).get("kind") == "event"]
    mine = sorted((e for e in events if e.get("nodeId") == restated["id"]),
                  key=lambda e: len(_sources(e["payload"]["after"])))
    assert [len(_sources(e["payload"]["after"])) for e in mine] == list(range(1, TIMES + 1))


def test_a_hard_forget_leaves_no_reference_behind(cli, ws, restated):
    assert cli("forget", restated["id"], "--hard", "--yes").code == 0
    stored = _stored(ws, restated["id"])
    assert stored and not any(p and ("=head" in p or '"=node"' in p) for _, p in stored)
    assert cli("audit", "--node", restated["id"], "--json").code == 0
