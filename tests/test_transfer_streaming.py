"""import and export at any size: the file is checked whole and staged, then written, never
held; stdin is copied to a private, unnamed temporary file; a late refusal still writes
nothing; refusals keep file order; memory does not grow with the file."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_transfer_safety import _count

T = "2026-01-01T00:00:00.000Z"
HEADER = json.dumps({"kind": "header", "format": "ekko-mem-export", "version": 1})


def _line(kind: str, data: dict) -> str:
    return json.dumps({"kind": kind, "data": data}, ensure_ascii=False)


def _message(i: int) -> dict:
    return {"id": f"msg_s{i:06d}", "sessionId": "bulk", "role": "user",
            "content": f"第{i}条 streamed message {i}", "createdAt": T}


def _node(i: int, **fields) -> dict:
    node = {"id": f"mem_s{i:06d}", "scope": "workspace", "domain": "engineering",
            "categoryPath": ["engineering"], "type": "fact", "title": f"fact {i}",
            "content": f"事实 {i}", "status": "active", "confidence": 0.9, "importance": 0.5,
            "explicit": True, "createdAt": T, "updatedAt": T}
    node.update(fields)
    return node


def _event(node: dict) -> dict:
    return {"id": "evt" + node["id"][3:], "eventType": "create", "nodeId": node["id"],
            "actor": "user", "reason": "remembered",
            "payload": {"before": None, "after": node}, "createdAt": T}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def _bulk(messages: int, nodes: int) -> list[str]:
    return ([_line("message", _message(i)) for i in range(messages)]
            + [_line("node", _node(i)) for i in range(nodes)])




def _ws_db(ws: Path) -> Path:
    return ws / ".ekko" / "memory.db"


def _user_db(ws: Path) -> Path:
    return ws.parent / "home" / "memory.db"


def _untouched(ws: Path) -> None:
    for table in ("memory_messages", "memory_nodes", "memory_audit_events"):
        assert _count(_ws_db(ws), table) == 0, table
    assert not _user_db(ws).exists()


def _one_line(result, *needles) -> None:
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ekko-mem: "), result
    for needle in needles:
        assert needle in lines[0], result


# -- checked whole before anything is written ---------------------------------------------------
def test_a_refusal_near_the_end_of_a_long_file_writes_nothing(cli, ws, tmp_path):
    lines = _bulk(2500, 600)
    bad = _line("node", _node(9999, scope="global"))
    source = _write(tmp_path / "bulk.jsonl", [*lines, bad, _line("message", _message(9999))])
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, f"line {len(lines) + 2}: global scope cannot be imported",
              "nothing was imported")
    _untouched(ws)
    done = cli("import", _write(tmp_path / "good.jsonl", lines), "--json")
    assert done.code == 0, done
    assert done.json() == {"imported": {"message": 2500, "summary": 0, "node": 600,
                                        "event": 0}, "skipped": 0}
    assert _count(_ws_db(ws), "memory_audit_events") == 600  # one import event per node
    again = cli("import", tmp_path / "good.jsonl", "--json").json()
    assert again == {"imported": {"message": 0, "summary": 0, "node": 0, "event": 0},
                     "skipped": 3100}


def test_a_reference_may_point_at_a_later_line(cli, ws, tmp_path):
    old = _node(1, key="language", valueJson="python", status="superseded")
    new = _node(2, key="language", valueJson="rust", supersedesId=old["id"],
                parentId=old["id"])
    source = _write(tmp_path / "chain.jsonl",
                    [_line("node", new), *_bulk(1500, 0), _line("node", old)])
    assert cli("import", source).code == 0
    shown = cli("show", new["id"], "--json").json()
    assert [n["id"] for n in shown["chain"]] == [old["id"], new["id"]]


def test_refusals_keep_file_order_across_the_whole_file(cli, ws, tmp_path):
    dangling = _node(1, supersedesId="mem_nowhere")
    first, second = (_node(i, key="language", valueJson=v) for i, v in ((2, "go"), (3, "c")))
    # A reference that only the end of the file can settle is still the first refusal.
    source = _write(tmp_path / "a.jsonl", [_line("node", dangling), *_bulk(1500, 0),
                                           _line("node", first), _line("node", second)])
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, "line 2: node supersedesId points at a node that is neither in the file")
    # Put after the conflict, it is not.
    source = _write(tmp_path / "b.jsonl", [_line("node", first), *_bulk(1500, 0),
                                           _line("node", second), _line("node", dangling)])
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, "line 1503: a second active value for the single-valued key 'language'",
              "(the first is at line 2)")
    _untouched(ws)


def test_an_id_repeated_far_apart_is_refused_with_both_lines(cli, ws, tmp_path):
    lines = _bulk(2600, 0)
    source = _write(tmp_path / "twice.jsonl", [*lines, _line("message", _message(0))])
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, "line 2602: the same message id as line 2", "nothing was imported")
    _untouched(ws)


def test_a_line_that_is_not_json_is_named_before_an_earlier_invalid_record(cli, ws, tmp_path):
    broken = {k: v for k, v in _node(1).items() if k != "title"}
    source = _write(tmp_path / "two.jsonl", [_line("node", broken), *_bulk(1200, 0), "{oops"])
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, "line 1203 is not valid JSON")
    (tmp_path / "one.jsonl").write_text("\n".join([HEADER, _line("node", broken)]))
    _one_line(cli("import", tmp_path / "one.jsonl"), "line 2: node title: Field required")
    _untouched(ws)


def test_invalid_utf8_anywhere_is_refused_before_any_line(cli, cli_proc, ws, tmp_path):
    text = "\n".join([HEADER, "not json", *_bulk(50, 0)]) + "\n"
    data = text.encode("utf-8") + b'{"kind": "\xff"}\n'
    source = tmp_path / "bad.jsonl"
    source.write_bytes(data)
    result = cli("import", source)
    assert result.code == 2
    _one_line(result, f"{source} is not valid UTF-8 (byte {len(text.encode()) + 10})")
    piped = cli_proc("import", "-", input=data)
    assert piped.code == 2
    _one_line(piped, f"stdin is not valid UTF-8 (byte {len(text.encode()) + 10})")
    cut = cli_proc("import", "-", input=text.encode() + "香".encode()[:2])
    _one_line(cut, f"stdin is not valid UTF-8 (byte {len(text.encode())})")
    _untouched(ws)


@pytest.mark.parametrize("ending", [b"", b"\n", b"\r\n"])
def test_a_line_over_the_limit_is_measured_not_held(cli, ws, tmp_path, ending):
    size = 3 * 1024 * 1024
    source = tmp_path / "long.jsonl"
    after = b"{}\n" if ending else b""  # without a break, the long line is the last
    source.write_bytes(HEADER.encode() + b"\n" + b"x" * size + ending + after)
    result = cli("import", source)
    assert result.code == 4
    _one_line(result, f"line 2 is {size:,} bytes, over the limit of 1,048,576",
              "raise 'line' under [limits]")
    _untouched(ws)


def test_the_user_db_is_made_only_to_write_user_memory(cli, ws, tmp_path):
    workspace_only = _write(tmp_path / "ws.jsonl", _bulk(10, 10))
    assert cli("import", workspace_only).code == 0
    assert not _user_db(ws).exists()
    mine = _write(tmp_path / "user.jsonl", [_line("node", _node(50, scope="user"))])
    asked = cli("import", mine)
    assert asked.code == 3 and "a file cannot show that you stated them" in asked.err
    assert not _user_db(ws).exists()  # a question leaves no empty db behind
    assert cli("import", mine, "--yes").code == 0
    assert _count(_user_db(ws), "memory_nodes") == 1
    assert stat.S_IMODE(_user_db(ws).stat().st_mode) == 0o600


# -- stdin ------------------------------------------------------------------------------------
def _spool_fd(pid: int, folder: Path) -> str | None:
    """The descriptor of `pid` open on a file in `folder`, if any."""
    fds = f"/proc/{pid}/fd"
    for fd in os.listdir(fds):
        try:
            if os.readlink(os.path.join(fds, fd)).startswith(str(folder)):
                return os.path.join(fds, fd)
        except OSError:
            continue
    return None


def _piped_import(ws: Path, spool: Path) -> subprocess.Popen:
    from conftest import BIN, default_sigint
    return subprocess.Popen([str(BIN), "import", "-", "--json"], cwd=ws,
                            env={**os.environ, "TMPDIR": str(spool)}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=default_sigint)


def _wait_for_spool(proc: subprocess.Popen, spool: Path) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = _spool_fd(proc.pid, spool)
        if found is not None:
            return found
        time.sleep(0.005)
    raise AssertionError("the import never opened a file in TMPDIR")


def test_stdin_is_copied_to_a_private_unnamed_file(ws, tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    text = "\n".join([HEADER, *_bulk(1500, 300)]) + "\n"
    proc = _piped_import(ws, spool)
    half = len(text) // 2
    proc.stdin.write(text[:half].encode())
    proc.stdin.flush()
    fd = _wait_for_spool(proc, spool)
    # In TMPDIR, 0600, and with no name in it: nothing to clean up, whatever happens.
    assert os.readlink(fd).endswith("(deleted)")
    assert stat.S_IMODE(os.stat(fd).st_mode) == 0o600
    assert os.listdir(spool) == []
    out, err = proc.communicate(text[half:].encode(), timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["imported"] == {"message": 1500, "summary": 0, "node": 300,
                                           "event": 0}
    assert os.listdir(spool) == []


@pytest.mark.parametrize("space", [" ", "\u3000"])
def test_a_long_blank_line_is_skipped_like_any_blank_line(cli, ws, space):
    assert cli("config", "set", "limits.line", "200").code == 0
    text = "\n".join([HEADER, space * 300, *_bulk(2, 0)]) + "\n"
    done = cli("import", "-", "--json", input=text)
    assert done.code == 0, done.err
    assert json.loads(done.out)["imported"]["message"] == 2


def test_a_refused_import_from_a_pipe_leaves_no_file(cli_proc, ws, tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    text = "\n".join([HEADER, *_bulk(1200, 0), "{oops"]) + "\n"
    result = cli_proc("import", "-", input=text, env={"TMPDIR": str(spool)})
    assert result.code == 4
    _one_line(result, "line 1202 is not valid JSON")
    assert os.listdir(spool) == []
    _untouched(ws)


def test_ctrl_c_while_stdin_is_read_leaves_nothing(ws, tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    proc = _piped_import(ws, spool)
    proc.stdin.write(("\n".join([HEADER, *_bulk(200, 0)]) + "\n").encode())
    proc.stdin.flush()
    _wait_for_spool(proc, spool)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert os.listdir(spool) == []
    _untouched(ws)


def test_no_room_to_copy_stdin_is_one_clear_line(ws, tmp_path):
    """RLIMIT_FSIZE stands in for a full temporary folder: writing past it fails with EFBIG."""
    import resource

    from conftest import BIN
    spool = tmp_path / "spool"
    spool.mkdir()
    limit = 64 * 1024

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write, not the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    text = "\n".join([HEADER, *_bulk(3000, 0)]) + "\n"
    proc = subprocess.run([str(BIN), "import", "-"], input=text, capture_output=True,
                          text=True, cwd=ws, env={**os.environ, "TMPDIR": str(spool)},
                          preexec_fn=limited, timeout=60)
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("ekko-mem: cannot copy stdin to a temporary file: ")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert os.listdir(spool) == []
    _untouched(ws)


# -- memory -------------------------------------------------------------------------------------
# The peak RSS of a command and the processes it waits for, in MiB, from a small process of
# its own (a child forked from the test process would count the test's memory as its own).
PEAK = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
"""


@pytest.mark.parametrize("via", ["path", "pipe"])
def test_memory_does_not_grow_with_the_file(ws, tmp_path, via):
    """96 MiB of blank lines around one record: held whole, as lines and as text, they would
    take several times that; read a line at a time, the import stays near its start-up size."""
    from conftest import BIN
    source = tmp_path / "padded.jsonl"
    blank = b" " * (1024 * 1024 - 1) + b"\n"
    with open(source, "wb") as out:
        out.write(HEADER.encode() + b"\n")
        out.writelines(blank for _ in range(48))
        out.write(_line("message", _message(1)).encode() + b"\n")
        out.writelines(blank for _ in range(48))
    if via == "path":
        command = [str(BIN), "import", str(source), "-q"]
    else:  # the pipe's reader is the import, its writer a child that cat stands in for
        command = ["sh", "-c", f'cat "{source}" | "{BIN}" import - -q']
    proc = subprocess.run([sys.executable, "-c", PEAK, *command], cwd=ws,
                          capture_output=True, text=True, timeout=120)
    code, peak_mib = map(int, proc.stdout.split())
    assert code == 0, proc.stderr
    assert _count(_ws_db(ws), "memory_messages") == 1
    assert peak_mib < 96, peak_mib


def test_a_bulk_write_holds_a_larger_page_cache_and_gives_it_back(service, tmp_path):
    """SQLite's 2 MB page cache would send a large import's index pages to the log and back;
    the import's write takes more, and the db has its own size again once it ends, failed or
    not."""
    from ekko_mem.store.transfer import roomy_cache
    db = service.store.db
    default = db.one("PRAGMA cache_size")[0]
    with pytest.raises(RuntimeError), roomy_cache([db], kib=8192):
        assert db.one("PRAGMA cache_size")[0] == -8192
        raise RuntimeError("mid-write")
    assert db.one("PRAGMA cache_size")[0] == default
    lines = [HEADER, _line("message", _message(1))]
    assert service.import_lines(lines)["imported"]["message"] == 1
    assert db.one("PRAGMA cache_size")[0] == default


# -- export ---------------------------------------------------------------------------------
def test_a_filtered_export_keeps_the_events_of_its_nodes(cli, ws, tmp_path):
    nodes = [_node(i, scope="user" if i % 2 else "workspace", domain="general",
                   categoryPath=["general"]) for i in range(1200)]
    lines = [_line("node", n) for n in nodes] + [_line("event", _event(n)) for n in nodes]
    assert cli("import", _write(tmp_path / "mixed.jsonl", lines), "--yes").code == 0
    records = [json.loads(line) for line in cli("export", "--scope", "user").out.splitlines()]
    users = {r["data"]["id"] for r in records if r["kind"] == "node"}
    events = [r["data"] for r in records if r["kind"] == "event"]
    assert users == {n["id"] for n in nodes if n["scope"] == "user"}
    assert {e["nodeId"] for e in events} == users
    assert len(events) == 1200  # each user node's create event and import event
    everything = cli("export").out.splitlines()
    assert sum('"kind":"event"' in line for line in everything) == 2400


# -- the Python API ------------------------------------------------------------------------------
def test_the_python_api_imports_a_list_or_a_one_shot_iterator(service, tmp_path):
    lines = [HEADER, *_bulk(20, 5)]
    assert service.import_lines(iter(lines))["imported"]["message"] == 20
    assert service.import_lines(lines) == {"imported": {"message": 0, "summary": 0, "node": 0,
                                                        "event": 0}, "skipped": 25}
    from ekko_mem.errors import Rejected
    source = _write(tmp_path / "api.jsonl", [*_bulk(21, 0), _line("node", _node(1)), "{oops"])
    with open(source, encoding="utf-8") as handle, pytest.raises(Rejected) as refused:
        service.import_lines(handle)  # a text file: one line each, numbered as in the file
    assert str(refused.value).startswith("line 24 is not valid JSON")


def test_an_input_that_changes_between_readings_is_refused(tmp_path):
    from ekko_mem.errors import EkkoError
    from ekko_mem.service.transfer_files import open_import
    source = _write(tmp_path / "moving.jsonl", _bulk(3, 0))
    with open_import(str(source), None) as lines:
        first = list(lines.lines())
        assert list(lines.lines()) == first
        with open(source, "a", encoding="utf-8") as more:
            more.write(_line("message", _message(3)) + "\n")
        with pytest.raises(EkkoError, match="the input changed while it was imported"):
            list(lines.lines())


# -- audit copies -------------------------------------------------------------------------------
def _payloads(ws: Path) -> dict:
    import sqlite3
    with sqlite3.connect(_ws_db(ws)) as db:
        return dict(db.execute("select id, payload_json from memory_audit_events"
                               " where event_type = 'create'"))


def test_an_event_that_copies_its_node_keeps_a_reference_and_exports_whole(cli, ws, tmp_path):
    """A create event whose node copy is exactly the imported row is stored as a reference to
    the row (the node first, as export writes it, or the event first); a copy that differs is
    kept; an event whose node the db already holds is compared with the row itself. Exported
    again, every event carries the copy it came with."""
    def full(i: int, **fields) -> dict:
        return _node(i, tags=[], entities=[], sourceMessageIds=[], actor="user", **fields)
    earlier = full(3)
    assert cli("import", _write(tmp_path / "earlier.jsonl",
                                [_line("node", earlier)])).code == 0
    nodes = [full(0), full(1), full(2)]
    differing = _event(nodes[2])
    differing["payload"]["after"] = {**nodes[2], "title": "as it was first written"}
    events = [_event(nodes[0]), _event(nodes[1]), differing, _event(earlier)]
    lines = [_line("node", nodes[0]), _line("event", events[0]), _line("event", events[1]),
             _line("node", nodes[1]), _line("node", nodes[2]), _line("event", events[2]),
             _line("event", events[3])]
    assert cli("import", _write(tmp_path / "copies.jsonl", lines)).code == 0
    stored = _payloads(ws)
    for event in (events[0], events[1], events[3]):
        assert json.loads(stored[event["id"]])["after"] == "=node", event["id"]
    assert json.loads(stored[differing["id"]])["after"]["title"] == "as it was first written"
    records = map(json.loads, cli("export").out.splitlines())
    exported = {r["data"]["id"]: r["data"] for r in records if r["kind"] == "event"}
    for event in events:
        assert exported[event["id"]]["payload"] == event["payload"], event["id"]
