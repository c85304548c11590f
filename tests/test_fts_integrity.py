"""The full-text indexes stay usable and exact: erasures merge them without growing them past
what FTS5 can open, doctor fills again one it cannot open, and every write keeps the
contentless index equal to one built afresh from the rows."""
from __future__ import annotations

import sqlite3

from test_doctor_hazards import _checks, _line
from test_erasure import node_id
from test_special_files import _ReadOnlyMedia

FILLER_ROWID = 1 << 40  # far past any real row


def _bulk(cli, count: int = 30) -> None:
    """Memories with enough distinct words that the index spans several pages: a merge then
    writes its one segment above the newer, smaller ones, which is what made it grow."""
    for i in range(count):
        words = " ".join(f"w{i}x{j}" for j in range(100))
        assert cli("remember", "--type", "fact", "--title", f"keeper {i}", "--content",
                   words).code == 0


def _levels(conn, index: str) -> int:
    """The number of levels in FTS5's structure record: a varint after a 4-byte cookie."""
    block = conn.execute(f"select block from {index}_data where id = 10").fetchone()[0]
    value = 0
    for byte in block[4:13]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


def _grow(db, until: int) -> int:
    """Write, delete and merge a filler row in the nodes index until its structure lists
    `until` levels or FTS5 refuses it; each merge adds two, as each erasure's did."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        while _levels(conn, "memory_nodes_fts") < until:
            conn.execute("insert into memory_nodes_fts (rowid, title) values (?, 'filler')",
                         (FILLER_ROWID,))
            conn.execute("insert into memory_nodes_fts (memory_nodes_fts, rowid, title)"
                         " values ('delete', ?, 'filler')", (FILLER_ROWID,))
            conn.execute("insert into memory_nodes_fts (memory_nodes_fts) values ('optimize')")
        return _levels(conn, "memory_nodes_fts")
    except sqlite3.DatabaseError:
        return _levels(conn, "memory_nodes_fts")
    finally:
        conn.close()


def _opens(db) -> bool:
    conn = sqlite3.connect(db)
    try:
        conn.execute("select count(*) from memory_nodes_fts where memory_nodes_fts match"
                     " 'keeper'").fetchone()
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def _titles(cli, text: str) -> list[str]:
    result = cli("query", text, "--json")
    assert result.code == 0, result
    return [n["title"] for n in result.json()["relevant"]]


def test_erasures_at_a_tall_index_leave_one_fts5_can_open(cli, ws):
    _bulk(cli)
    db = ws / ".ekko" / "memory.db"
    assert _grow(db, 1990) >= 1990  # as about a thousand erasures left it
    for i in range(10):
        gone = node_id(cli("remember", "--type", "fact", "--title", f"kumquat {i}", "--json"))
        erased = cli("forget", gone, "--hard", "--yes", "--json")
        assert erased.code == 0, erased
    assert _opens(db)
    conn = sqlite3.connect(db)
    assert _levels(conn, "memory_nodes_fts") < 100
    conn.execute("insert into memory_nodes_fts (memory_nodes_fts) values ('integrity-check')")
    conn.close()
    assert _titles(cli, "w7x42") == ["keeper 7"]
    assert _titles(cli, "kumquat") == []
    assert cli("doctor").code == 0


def test_many_erasures_keep_the_index_short_and_exact(cli, ws, monkeypatch):
    from ekko_mem.store import fts_upkeep
    monkeypatch.setattr(fts_upkeep, "REFILL_AT", 12)
    _bulk(cli, 12)
    assert cli("log", "the kiwi message stays").code == 0
    db = ws / ".ekko" / "memory.db"
    tallest = 0
    for i in range(25):
        gone = node_id(cli("remember", "--type", "fact", "--title", f"kumquat {i}", "--json"))
        assert cli("forget", gone, "--hard", "--yes").code == 0
        conn = sqlite3.connect(db)
        tallest = max(tallest, _levels(conn, "memory_nodes_fts"))
        conn.close()
    assert tallest <= 12 + 2
    assert _titles(cli, "w3x9") == ["keeper 3"]
    assert _titles(cli, "kumquat") == []
    assert [m["content"] for m in cli("history", "--json").jsonl()] == [
        "the kiwi message stays"]
    assert cli("doctor").code == 0


def test_a_node_erasure_leaves_the_message_index_alone(cli, ws):
    for i in range(3):  # three commits, three segments: a merge would rewrite them
        assert cli("log", f"message {i} about the tangerine").code == 0
    db = ws / ".ekko" / "memory.db"
    conn = sqlite3.connect(db)
    before = conn.execute("select id, block from memory_messages_fts_data").fetchall()
    conn.close()
    gone = node_id(cli("remember", "--type", "fact", "--title", "kumquat", "--json"))
    assert cli("forget", gone, "--hard", "--yes").code == 0
    conn = sqlite3.connect(db)
    assert conn.execute("select id, block from memory_messages_fts_data").fetchall() == before
    conn.close()


def test_doctor_fills_again_an_index_fts5_cannot_open(cli, ws):
    _bulk(cli)
    db = ws / ".ekko" / "memory.db"
    assert _grow(db, 2100) > 2000
    assert not _opens(db)
    refused = cli("remember", "--type", "fact", "--title", "blocked")
    assert refused.code == 6
    assert refused.err.strip().endswith(
        "the full-text index of the memory db " + str(db) + " cannot be opened (vtable"
        " constructor failed: memory_nodes_fts); run 'ekko-mem doctor --repair' (it fills"
        " the index again from the memories and messages)")
    found = cli("doctor", "--json")
    assert found.code == 1
    fts = _checks(found)[("workspace", "full-text index")]
    assert not fts["ok"] and fts["detail"].startswith("memory_nodes_fts cannot be opened;")
    fixed = cli("doctor", "--repair", "--json")
    assert fixed.code == 0, fixed
    assert _checks(fixed)[("workspace", "full-text index")]["fixed"]
    assert _opens(db)
    assert _titles(cli, "w7x42") == ["keeper 7"]
    assert cli("remember", "--type", "fact", "--title", "written again").code == 0
    assert cli("doctor").code == 0


def test_doctor_on_read_only_media_sees_an_index_fts5_cannot_open(cli, ws, monkeypatch):
    _bulk(cli)
    assert _grow(ws / ".ekko" / "memory.db", 2100) > 2000
    _ReadOnlyMedia(monkeypatch, ws.parent)
    found = cli("doctor")
    assert found.code == 1
    line = _line(found, "workspace", "full-text index")
    assert line.startswith("FAIL") and "memory_nodes_fts cannot be opened" in line


# -- every write keeps the contentless index exact --------------------------------------------
def _instances(conn) -> set:
    """(rowid, column, offset, token) of every token both indexes hold."""
    out = set()
    for index in ("memory_nodes_fts", "memory_messages_fts"):
        conn.execute(f"create virtual table temp.v_{index} using fts5vocab(main, {index},"
                     " 'instance')")
        out |= {(index, *row) for row in conn.execute(
            f"select doc, col, offset, term from temp.v_{index}")}
        conn.execute(f"drop table temp.v_{index}")
    return out


def test_every_write_leaves_the_index_a_rebuild_would_make(cli, ws, service):
    from ekko_mem.store import SqliteMemoryStore
    from ekko_mem.store.connection import Connection
    ids = [service.remember(fields={"type": "fact", "title": f"note {i} 香菜",
                                    "content": f"body {i} words", "tags": [f"t{i}"]}
                            )[0]["nodeId"] for i in range(6)]
    done = [service.propose_update(
        "update", {"title": "note zero renamed 少油", "content": "new body",
                   "tags": ["changed"], "entities": ["Ada"]}, target_id=ids[0], actor="user")]
    done += service.remember(fields={"type": "fact", "title": "note one replaced"},
                             supersedes=ids[1])
    done += service.remember(fields={"type": "fact", "title": "note 2 香菜",
                                     "content": "body 2 words", "tags": ["again"]})
    assert [d["operation"] for d in done] == ["updated", "superseded", "refreshed"]
    update = next(e for e in service.audit(node_id=ids[0]) if e["eventType"] == "update")
    assert service.undo(update["id"])["changedIds"] == [ids[0]]
    service.forget({"id": ids[3]})
    service.forget({"id": ids[4]}, mode="hard", confirm=True)
    service.remember("记住，我们项目的测试命令是 pytest -q")
    told = service.remember("记住，部署命令是 make deploy")[0]["nodeId"]
    purged = service.forget({"id": told}, mode="hard", confirm=True, purge_sources=True)
    assert purged["purgedMessageIds"]
    live = sqlite3.connect(ws / ".ekko" / "memory.db")
    fresh = sqlite3.connect(":memory:", isolation_level=None)
    live.backup(fresh)
    before = _instances(live)
    live.close()
    store = SqliteMemoryStore(Connection(fresh, ":memory:"))
    with store.db.atomic():
        store.nodes.rebuild_fts()
    assert before == _instances(fresh) and before
    store.close()
