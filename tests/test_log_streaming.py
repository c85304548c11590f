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


@pytest.mark.parametrize("edit, said", [
    # A line that is not JSON is found before anything else, wherever it is.
    (lambda items: (items[2].update(id="msg_dup"), items[4].update(id="msg_dup"),
                    items.__setitem__(3 * CHUNK, "{not json")),
     f"line {3 * CHUNK + 1} is not valid JSON"),
    # Then the first line, in order, that is wrong or repeats an id.
    (lambda items: (items[2].update(id="msg_dup"), items[5].update(id="msg_dup"),
                    items[6].update(role="robot")), "line 6: id msg_dup appears twice"),
    (lambda items: (items[2].update(id="msg_dup"), items[6].update(id="msg_dup"),
                    items[5].update(role="robot")), "line 6: "),
    # A repeated id before an id the log holds.
    (lambda items: (items[10].update(id="msg_old"), items[3 * CHUNK].update(id="msg_old")),
     f"line {3 * CHUNK + 1}: id msg_old appears twice"),
])
def test_a_refusal_names_what_log_always_named_first(cli, ws, edit, said):
    assert cli("log", "--jsonl", "-", input=_text([{"content": "old", "id": "msg_old"}])).code == 0
    items = _lines(4 * CHUNK)
    edit(items)
    done = cli("log", "--jsonl", "-", input=_text(items))
    assert done.code == 4 and done.err.startswith(f"ekko-mem: {said}"), done
    assert _count(ws) == 1


def test_metadata_is_printed_as_given(cli, ws):
    items = [{"content": "with metadata", "metadata": {"z": 1, "a": {"y": 2, "b": 3}}}]
    done = cli("log", "--jsonl", "-", "--json", input=_text(items * (CHUNK + 1)))
    assert done.code == 0, done.err
    assert all(list(m["metadata"]) == ["z", "a"] and list(m["metadata"]["a"]) == ["y", "b"]
               for m in done.jsonl())


@pytest.mark.parametrize("space", [" ", "\u3000", "\u00a0"])
def test_a_long_blank_line_is_skipped_like_any_blank_line(cli, ws, tmp_path, space):
    assert cli("config", "set", "limits.line", "200").code == 0
    source = tmp_path / "chat.jsonl"
    source.write_text(_text(_lines(3)[:1] + [space * 300] + _lines(3)[1:]), encoding="utf-8")
    done = cli("log", "--jsonl", str(source))
    assert done.code == 0, done.err
    assert _count(ws) == 3


def test_the_log_stays_writable_while_the_input_is_read(ws):
    """Lines are read and checked before the write lock is taken: another process can write
    meanwhile, and what it wrote is kept beside the batch."""
    from ekko_mem import MemoryService
    db_path = ws / ".ekko" / "memory.db"
    taken = []

    def lines():
        for number, item in enumerate(_lines(3 * CHUNK)):
            other = sqlite3.connect(db_path, timeout=0)
            try:
                other.execute("begin immediate")
                other.execute("insert into ekko_meta values (?, 'x')", (f"probe{number}",))
                other.execute("commit")
                taken.append(True)
            except sqlite3.OperationalError:
                taken.append(False)
            finally:
                other.close()
            yield json.dumps(item, ensure_ascii=False)

    svc = MemoryService(ws)
    try:
        written = svc.log_jsonl(lines())
    finally:
        svc.close()
    assert len(written) == 3 * CHUNK and all(taken) and len(taken) == 3 * CHUNK
    assert _count(ws) == 3 * CHUNK


def test_the_python_api_takes_lines_as_bytes_too(ws):
    from ekko_mem import MemoryService
    svc = MemoryService(ws)
    try:
        written = svc.log_jsonl([b'{"content": "as bytes"}\n', '{"content": "as text"}'])
    finally:
        svc.close()
    assert [m["content"] for m in written] == ["as bytes", "as text"]


def _log_then(ws, items, between):
    """log_jsonl through the API, with `between` run by another connection after the last
    line was read and checked, before the write."""
    from ekko_mem import MemoryService

    def lines():
        yield from (json.dumps(item, ensure_ascii=False) for item in items)
        other = sqlite3.connect(ws / ".ekko" / "memory.db")
        try:
            between(other)
            other.commit()
        finally:
            other.close()

    svc = MemoryService(ws)
    try:
        return svc.log_jsonl(lines())
    finally:
        svc.close()


def test_an_id_written_by_another_process_meanwhile_is_refused(ws):
    from ekko_mem.errors import Rejected
    items = _lines(2 * CHUNK)
    items[CHUNK + 1]["id"] = "msg_race"

    def another_writer(db):
        db.execute("insert into memory_messages (id, session_id, role, content, created_at)"
                   " values ('msg_race', 'default', 'user', 'theirs', '2026-01-01T00:00:00Z')")
    with pytest.raises(Rejected, match="message id msg_race already exists"):
        _log_then(ws, items, another_writer)
    assert _count(ws) == 1


def test_a_parent_erased_meanwhile_is_refused(cli, ws):
    from ekko_mem.errors import NotFound
    assert cli("log", "--jsonl", "-", input=_text([{"content": "p", "id": "msg_parent"}])).code == 0
    items = _lines(2 * CHUNK)
    items[CHUNK + 1]["parentId"] = "msg_parent"
    with pytest.raises(NotFound, match="parent message msg_parent does not exist"):
        _log_then(ws, items, lambda db: db.execute(
            "delete from memory_messages where id = 'msg_parent'"))
    assert _count(ws) == 0
