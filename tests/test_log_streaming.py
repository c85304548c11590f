"""`log --jsonl` at any length: read a line at a time and written a chunk at a time in one
transaction, so a bad line anywhere, an id given twice across chunks, or a parent that is
nowhere still rejects the whole input with nothing written."""
from __future__ import annotations

import json
import sqlite3

import pytest

CHUNK = 7  # several chunks out of a few dozen lines


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    import ekko_mem.service.messages as messages
    monkeypatch.setattr(messages, "CHUNK", CHUNK)


def _lines(count: int, **extra) -> list[dict]:
    return [{"content": f"第{i}条 message {i}", **extra} for i in range(count)]


def _text(items: list) -> str:
    return "".join((item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
                   + "\n" for item in items)


def _count(ws) -> int:
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    try:
        return db.execute("select count(*) from memory_messages").fetchone()[0]
    finally:
        db.close()


def test_every_line_is_written_in_order_and_printed_once(cli, ws):
    items = _lines(3 * CHUNK + 2)
    done = cli("log", "--jsonl", "-", "--json", input=_text(items))
    assert done.code == 0, done.err
    printed = done.jsonl()
    assert [m["content"] for m in printed] == [i["content"] for i in items]
    assert cli("log", "--jsonl", "-", input=_text(items)).out.count("\n") == len(items)
    assert _count(ws) == 2 * len(items)


def test_a_bad_line_in_a_later_chunk_writes_nothing(cli, ws):
    items = _lines(3 * CHUNK)
    items[2 * CHUNK + 1] = "{not json"
    done = cli("log", "--jsonl", "-", input=_text(items))
    assert done.code == 4
    assert done.err.startswith(f"ekko-mem: line {2 * CHUNK + 2} is not valid JSON")
    assert _count(ws) == 0


def test_an_id_given_twice_across_chunks_writes_nothing(cli, ws):
    items = _lines(3 * CHUNK)
    items[1]["id"] = items[2 * CHUNK]["id"] = "msg_given_twice"
    done = cli("log", "--jsonl", "-", input=_text(items))
    assert done.code == 4
    assert done.err == (f"ekko-mem: line {2 * CHUNK + 1}: id msg_given_twice appears twice;"
                        " ids must be unique\n")
    assert _count(ws) == 0


@pytest.mark.parametrize("field, value, code, said", [
    ("id", "msg_old", 4, "message id msg_old already exists"),
    ("parentId", "msg_nowhere", 5, "parent message msg_nowhere does not exist"),
])
def test_what_the_log_holds_is_checked_in_every_chunk(cli, ws, field, value, code, said):
    assert cli("log", "--jsonl", "-", input=_text([{"content": "old", "id": "msg_old"}])).code == 0
    items = _lines(3 * CHUNK)
    items[CHUNK + 3][field] = value
    done = cli("log", "--jsonl", "-", input=_text(items))
    assert done.code == code and said in done.err, done
    assert _count(ws) == 1


def test_a_parent_further_down_the_input_is_found(cli, ws):
    items = _lines(3 * CHUNK)
    items[0]["parentId"] = "msg_late_parent"
    items[-1]["id"] = "msg_late_parent"
    done = cli("log", "--jsonl", "-", "--json", input=_text(items))
    assert done.code == 0, done.err
    assert done.jsonl()[0]["parentId"] == "msg_late_parent"


def test_a_line_over_the_limit_is_named_without_being_held(cli, ws, tmp_path):
    assert cli("config", "set", "limits.line", "200").code == 0
    items = _lines(2 * CHUNK)
    items[CHUNK + 2]["content"] = "长" * 300
    source = tmp_path / "chat.jsonl"
    source.write_text(_text(items), encoding="utf-8")
    done = cli("log", "--jsonl", str(source))
    assert done.code == 4
    size = len(json.dumps(items[CHUNK + 2], ensure_ascii=False).encode())
    assert done.err.startswith(f"ekko-mem: line {CHUNK + 3} is {size:,} bytes, over the limit"
                               " of 200;")
    assert _count(ws) == 0
