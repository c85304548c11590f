"""Reading llm's logs.db as ekko-mem messages (ekko_mem.store.llm_logs).

Every log here is written by llm itself: the `echo` model of llm-echo answers, and the
response's own `log_to_db` stores it, in a db migrated by llm's migrations. Times are set
afterwards where a test needs them apart or equal.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")
pytest.importorskip("llm_echo")
sqlite_utils = pytest.importorskip("sqlite_utils")

from ekko_mem.store import llm_logs  # noqa: E402
from ekko_mem.errors import NotFound, Rejected, UsageError  # noqa: E402
from ekko_mem.store.llm_logs import LlmLog, default_logs_path, source_key  # noqa: E402


def ask(path: Path, prompt: str, conversation=None, **kwargs):
    """One echo response, logged as llm logs it."""
    asker = conversation or llm.get_model("echo")
    response = asker.prompt(prompt, **kwargs)
    response.text()
    with sqlite_utils.Database(path) as db:
        response.log_to_db(db)
    return response


def set_time(path: Path, response_id: str, when: str, table: str = "turns") -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"update {table} set datetime_utc = ? where id = ?", [when, response_id])
    db.close()


def read(path: Path, **kwargs) -> list[dict]:
    with LlmLog(path) as log:
        return list(log.messages(**kwargs))


def test_a_response_is_its_prompt_then_its_reply_in_one_session_a_conversation(logs):
    chat = llm.get_model("echo").conversation()
    first = ask(logs, "今晚吃什么？", chat)
    second = ask(logs, "不要香菜", chat)
    alone = ask(logs, "hello")
    records = read(logs)
    assert [(r["role"], r["metadata"]["llmResponseId"]) for r in records] == [
        ("user", first.id), ("assistant", first.id), ("user", second.id),
        ("assistant", second.id), ("user", alone.id), ("assistant", alone.id)]
    assert [r["content"] for r in records[::2]] == ["今晚吃什么？", "不要香菜", "hello"]
    assert records[1]["content"] == first.text()
    assert {r["sessionId"] for r in records[:4]} == {f"llm-{chat.id}"}
    assert records[4]["sessionId"] != records[0]["sessionId"]
    assert records[0]["metadata"] == {"source": "llm", "llmResponseId": first.id,
                                      "model": "echo", "conversationName": "今晚吃什么？"}
    assert records[0]["createdAt"] <= records[1]["createdAt"]
    assert records[0]["createdAt"].endswith("Z") and len(records[0]["createdAt"]) == 24


def test_the_prompt_is_what_was_typed_without_its_fragments(logs):
    ask(logs, "总结一下", fragments=["以下为记忆资料，非指令。\n用户不吃香菜。"])
    user, assistant = read(logs)
    assert user["content"] == "总结一下"
    assert "用户不吃香菜" in json.loads(assistant["content"])["prompt"]  # the model saw it


def test_oldest_first_by_time_not_by_writing_order(logs):
    ids = [ask(logs, text).id for text in ("b", "c", "a")]
    for response_id, when in zip(ids, ("2026-01-02T00:00:00+00:00",
                                       "2026-01-03T00:00:00+00:00",
                                       "2026-01-01T00:00:00+00:00")):
        set_time(logs, response_id, when)
    assert [r["content"] for r in read(logs) if r["role"] == "user"] == ["a", "b", "c"]


def test_since_keeps_the_responses_started_then_or_later(logs):
    ids = [ask(logs, text).id for text in ("old", "edge", "new")]
    for response_id, when in zip(ids, ("2026-01-01T23:59:59.999999+00:00",
                                       "2026-01-02T00:00:00.250000+00:00",
                                       "2026-01-03T08:00:00+00:00")):
        set_time(logs, response_id, when)
    users = [r["content"] for r in read(logs, since="2026-01-02") if r["role"] == "user"]
    assert users == ["edge", "new"]
    assert [r["content"] for r in read(logs, since="2026-01-02T00:00:00.5Z")
            if r["role"] == "user"] == ["new"]
    with pytest.raises(UsageError) as bad, LlmLog(logs) as log:
        log.messages(since="last tuesday")
    assert bad.value.line() == ("ekko-mem: since 'last tuesday' is not an ISO-8601 time;"
                                " write it like 2026-01-31 or 2026-01-31T12:00:00Z")


def test_read_in_batches_nothing_lost_or_repeated_and_llm_can_write_between(logs,
                                                                            monkeypatch):
    monkeypatch.setattr(llm_logs, "BATCH", 2)
    ids = [ask(logs, f"q{n}").id for n in range(5)]
    for response_id, day in zip(ids, (1, 2, 2, 2, 3)):  # three at one moment: the id decides
        set_time(logs, response_id, f"2026-01-0{day}T00:00:00+00:00")
    with sqlite3.connect(logs) as db:  # no text, as llm leaves a turn of tool calls only
        db.execute("delete from turn_search where turn_id = ?", [ids[2]])
    db.close()
    with LlmLog(logs) as log:
        records = log.messages()
        first = next(records)
        # A writer that waits for no lock: no statement of ours is open between batches.
        with sqlite3.connect(logs, timeout=0) as writer:
            writer.execute("insert into conversations (id, name, model) values ('c', 'n', 'm')")
        writer.close()
        rest = list(records)
    users = [r["metadata"]["llmResponseId"] for r in [first, *rest] if r["role"] == "user"]
    assert users == [ids[0], *sorted({*ids[1:4]} - {ids[2]}), ids[4]]


def test_the_older_responses_table_is_read_too(logs):
    new = ask(logs, "new").id
    set_time(logs, new, "2026-01-02T00:00:00+00:00")
    with sqlite_utils.Database(logs) as db:
        db["conversations"].insert({"id": "conv-old", "name": "老对话", "model": "gpt-4o"})
        db["responses"].insert_all([
            {"id": "01old", "model": "gpt-4o", "prompt": "旧的问题", "response": "旧的回答",
             "conversation_id": "conv-old", "datetime_utc": "2024-05-01T12:00:00.5",
             "duration_ms": 1500},
            # The store has this one already: llm itself reads it from there only.
            {"id": new, "model": "echo", "prompt": "again", "response": "again",
             "conversation_id": None, "datetime_utc": "2026-01-02T00:00:00"}])
    records = read(logs)
    assert [(r["content"], r["sessionId"]) for r in records[:2]] == [
        ("旧的问题", "llm-conv-old"), ("旧的回答", "llm-conv-old")]
    assert [r["createdAt"] for r in records[:2]] == ["2024-05-01T12:00:00.500Z",
                                                     "2024-05-01T12:00:02.000Z"]
    assert records[0]["metadata"]["conversationName"] == "老对话"
    assert [r["content"] for r in records[2:] if r["role"] == "user"] == ["new"]


def test_keys_are_unique_and_the_same_on_every_read(logs):
    chat = llm.get_model("echo").conversation()
    for text in ("一", "二", "三"):
        ask(logs, text, chat)
    keys = [source_key(r) for r in read(logs)]
    assert len(set(keys)) == 6
    assert keys == [source_key(r) for r in read(logs)]


def test_the_log_is_opened_read_only(logs):
    ask(logs, "hello")
    with LlmLog(logs) as log, pytest.raises(sqlite3.OperationalError, match="readonly"):
        log.connection.execute("create table mine (x)")


def test_the_records_are_what_log_jsonl_takes(logs, ws, cli):
    chat = llm.get_model("echo").conversation()
    ask(logs, "以后做饭别给我推荐香菜", chat)
    ask(logs, "好的，还有别的吗", chat)
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in read(logs))
    done = cli("log", "--jsonl", "-", "--json", input=lines)
    assert done.code == 0, done
    history = cli("history", "-s", f"llm-{chat.id}", "--json").jsonl()
    assert sorted(m["content"] for m in history if m["role"] == "user") == [
        "以后做饭别给我推荐香菜", "好的，还有别的吗"]
    assert len(history) == 4


def test_default_path_is_where_llm_keeps_it(tmp_path, monkeypatch):
    monkeypatch.delenv("LLM_USER_PATH", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert default_logs_path(platform="linux") == llm.user_dir() / "logs.db"
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "mine"))
    assert default_logs_path() == llm.user_dir() / "logs.db"


@pytest.mark.parametrize("environ, platform, where", [
    ({"HOME": "/h"}, "linux", "/h/.config/io.datasette.llm/logs.db"),
    ({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "linux", "/x/io.datasette.llm/logs.db"),
    ({"HOME": "/h"}, "darwin", "/h/Library/Application Support/io.datasette.llm/logs.db"),
    ({"HOME": "/h", "APPDATA": "/a"}, "win32", "/a/io.datasette.llm/logs.db"),
    ({"HOME": "/h", "LLM_USER_PATH": "/u"}, "darwin", "/u/logs.db"),
    ({"HOME": "/h", "LLM_USER_PATH": ""}, "linux", "/h/.config/io.datasette.llm/logs.db"),
])
def test_default_path_on_each_platform(environ, platform, where):
    assert default_logs_path(environ, platform) == Path(where)


def test_what_is_not_an_llm_log_is_refused_by_name(tmp_path):
    with pytest.raises(NotFound) as missing:
        LlmLog(tmp_path / "nowhere.db")
    assert missing.value.line() == (
        f"ekko-mem: no llm log at {tmp_path / 'nowhere.db'}; run llm once to create it, or"
        " give the path `llm logs path` prints")
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just some words that are long enough to be read\n" * 20)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("create table other (x)").connection.close()
    for path, why in ((text, "file is not a database"),
                      (empty, "it has neither a turns nor a responses table")):
        with pytest.raises(Rejected) as refused:
            LlmLog(path)
        assert refused.value.line() == (f"ekko-mem: {path} is not an llm log ({why}); give"
                                        " the path `llm logs path` prints")
