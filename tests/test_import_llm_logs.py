"""`ekko-mem import --from llm-logs`: llm's logs.db logged here, once, as `log` logs.

Every log is written by llm itself (the `echo` model of llm-echo, the response's own
`log_to_db`, llm's migrations), as in test_llm_logs.py; times are set afterwards where a
test needs them apart.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")
pytest.importorskip("llm_echo")
sqlite_utils = pytest.importorskip("sqlite_utils")

KEY = "sk-abcdefghijklmnopqrstuvwxyz123456"


from test_llm_logs import ask as _logged, set_time  # noqa: E402


def ask(path: Path, prompt: str, conversation=None, when: str | None = None):
    """One echo response logged by llm, at `when` if given."""
    response = _logged(path, prompt, conversation)
    if when is not None:
        set_time(path, response.id, when)
    return response


def session_of(path: Path, response) -> str:
    """The session a response is logged in: its conversation's, which llm names when it
    logs a response asked without one."""
    with sqlite3.connect(path) as db:
        (thread,) = db.execute("select thread_id from turns where id = ?",
                               [response.id]).fetchone()
    db.close()
    return f"llm-{thread}"


def imported(cli, *args, **kwargs) -> dict:
    done = cli("import", "--from", "llm-logs", *map(str, args), "--json", **kwargs)
    assert done.code == 0, done
    return done.json()


def messages(cli, session: str) -> list[dict]:
    return cli("history", "-s", session, "-n", "100", "--json", "--reveal").jsonl()


def test_each_conversation_is_a_session_with_its_times_and_model(cli, ws, logs):
    chat = llm.get_model("echo").conversation()
    first = ask(logs, "今晚吃什么？", chat, "2026-01-02T08:00:00+00:00")
    ask(logs, "不要香菜", chat, "2026-01-02T08:01:00+00:00")
    alone = ask(logs, "What should I cook tonight?", when="2026-01-03T09:00:00+00:00")
    report = imported(cli, logs)
    assert report == {"imported": {"message": 6, "summary": 0, "node": 0, "event": 0},
                      "skipped": 0}
    sessions = {s["sessionId"]: s["messages"]
                for s in cli("history", "--sessions", "--json").jsonl()}
    assert sessions == {f"llm-{chat.id}": 4, session_of(logs, alone): 2}
    talk = messages(cli, f"llm-{chat.id}")
    assert [(m["role"], m["content"]) for m in talk[::2]] == [("user", "今晚吃什么？"),
                                                             ("user", "不要香菜")]
    assert [m["role"] for m in talk[1::2]] == ["assistant", "assistant"]
    assert talk[0]["createdAt"] == "2026-01-02T08:00:00.000Z"
    assert talk[0]["metadata"] == {"source": "llm", "llmResponseId": first.id,
                                   "model": "echo", "conversationName": "今晚吃什么？"}
    assert [m["content"] for m in messages(cli, session_of(logs, alone))][0] == \
        "What should I cook tonight?"


def test_a_second_import_adds_nothing_and_a_later_one_only_what_is_new(cli, ws, logs):
    chat = llm.get_model("echo").conversation()
    ask(logs, "一", chat)
    ask(logs, "二", chat)
    imported(cli, logs)
    ids = [m["id"] for m in messages(cli, f"llm-{chat.id}")]
    again = imported(cli, logs)
    assert again["imported"]["message"] == 0 and again["skipped"] == 4
    ask(logs, "三", chat)
    later = imported(cli, logs)
    assert later["imported"]["message"] == 2 and later["skipped"] == 4
    talk = messages(cli, f"llm-{chat.id}")
    assert [m["id"] for m in talk[:4]] == ids
    assert [m["content"] for m in talk if m["role"] == "user"] == ["一", "二", "三"]


def test_read_and_checked_a_batch_at_a_time(cli, ws, logs, monkeypatch):
    from ekko_mem.service import messages as service_messages
    from ekko_mem.store import llm_logs
    monkeypatch.setattr(llm_logs, "BATCH", 2)
    monkeypatch.setattr(service_messages, "CHUNK", 3)
    chat = llm.get_model("echo").conversation()
    for n in range(5):
        ask(logs, f"q{n}", chat, f"2026-01-0{n + 1}T00:00:00+00:00")
    assert imported(cli, logs, "--since", "2026-01-04")["imported"]["message"] == 4
    report = imported(cli, logs)
    assert report["imported"]["message"] == 6 and report["skipped"] == 4
    talk = messages(cli, f"llm-{chat.id}")
    assert [m["content"] for m in talk if m["role"] == "user"] == [f"q{n}" for n in range(5)]
    assert len({m["id"] for m in talk}) == 10


def test_since_reads_only_the_responses_from_then_on(cli, ws, logs):
    old, yesterday, today = (ask(logs, text, when=f"{day}T10:00:00+00:00") for text, day in (
        ("old", "2026-02-26"), ("yesterday's", "2026-02-28"), ("today's", "2026-03-01")))
    now = {"EKKO_NOW": "2026-03-01T12:00:00Z"}
    assert imported(cli, logs, "--since", "-1d", env=now)["imported"]["message"] == 2
    assert imported(cli, logs, "--since", "2026-02-27", env=now) == {
        "imported": {"message": 2, "summary": 0, "node": 0, "event": 0}, "skipped": 2}
    sessions = {s["sessionId"] for s in cli("history", "--sessions", "--json").jsonl()}
    assert sessions == {session_of(logs, yesterday), session_of(logs, today)}
    bad = cli("import", "--from", "llm-logs", str(logs), "--since", "someday")
    assert bad.code == 2 and bad.err.startswith("ekko-mem: cannot read 'someday' as a time")
    assert bad.err.count("\n") == 1


def test_a_credential_is_masked_as_log_masks_it(cli, ws, logs):
    response = ask(logs, f"部署用的 key 是 {KEY}")
    done = cli("import", "--from", "llm-logs", str(logs))
    assert done.code == 0, done
    assert f"ekko-mem: note: llm response {response.id} (user): an API key in the message" \
           " was replaced by [secret removed]" in done.err
    contents = [m["content"] for m in messages(cli, session_of(logs, response))]
    assert contents[0] == "部署用的 key 是 [secret removed]"
    assert all(KEY not in text for text in contents)


def test_yes_keeps_a_credential_and_the_refuse_policy_writes_nothing(cli, ws, logs):
    response = ask(logs, f"key {KEY}")
    (ws / ".ekko" / "config.toml").write_text('[sensitive]\npolicy = "refuse"\n')
    refused = cli("import", "--from", "llm-logs", str(logs), "--yes")
    assert refused.code == 4
    assert refused.err == (f"ekko-mem: llm response {response.id} (user): the message contains"
                           " an API key; sensitive.policy is 'refuse'; remove it and log"
                           " again; nothing was written\n")
    assert cli("history", "--sessions", "--json").out == ""
    (ws / ".ekko" / "config.toml").write_text("")
    assert imported(cli, logs, "--yes")["imported"]["message"] == 2
    assert messages(cli, session_of(logs, response))[0]["content"] == f"key {KEY}"


def test_an_erased_message_stays_erased_unless_allowed(cli, ws, logs):
    response = ask(logs, "a secret I regret")
    imported(cli, logs)
    (first,) = [m for m in messages(cli, session_of(logs, response)) if m["role"] == "user"]
    assert cli("forget", "--message", first["id"], "--hard", "--yes").code == 0
    report = imported(cli, logs)
    assert report["imported"]["message"] == 0 and report["erased"] == 1
    assert [m["role"] for m in messages(cli, session_of(logs, response))] == ["assistant"]
    back = imported(cli, logs, "--allow-erased")
    assert back["imported"]["message"] == 1
    assert [m["id"] for m in messages(cli, session_of(logs, response))
            if m["role"] == "user"] == [first["id"]]


def test_the_default_log_is_where_llm_keeps_it(cli, ws, tmp_path):
    home = tmp_path / "llm-home"
    home.mkdir()
    from llm.migrations import migrate
    with sqlite_utils.Database(home / "logs.db") as db:
        migrate(db)
    ask(home / "logs.db", "hello")
    done = cli("import", "--from", "llm-logs", env={"LLM_USER_PATH": str(home)})
    assert done.code == 0, done
    assert done.out == ("imported 2 messages, 0 summaries, 0 memories, 0 audit events;"
                        " 0 already present\n")


def test_what_is_not_an_llm_log_is_refused_in_one_line(cli, ws, tmp_path):
    missing = cli("import", "--from", "llm-logs", "nowhere.db")
    assert missing.code == 5
    assert missing.err == (f"ekko-mem: no llm log at {ws / 'nowhere.db'}; run llm once to"
                           " create it, or give the path `llm logs path` prints\n")
    text = tmp_path / "notes.txt"
    text.write_text("not a database, only words long enough to be read as a file\n" * 20)
    other = cli("import", "--from", "llm-logs", str(text))
    assert other.code == 4
    assert other.err == (f"ekko-mem: {text} is not an llm log (file is not a database);"
                         " give the path `llm logs path` prints\n")
    assert cli("history", "--sessions", "--json").out == ""


@pytest.mark.parametrize("args, line", [
    (["--since", "-1d", "backup.jsonl"],
     "ekko-mem: --since goes with --from llm-logs; drop --since: an export is imported"
     " whole\n"),
    ([], "ekko-mem: no export file given; give the file export wrote, or - for stdin\n"),
    (["--from", "chatgpt", "x"],
     "ekko-mem: unknown import source 'chatgpt'; use one of: export, llm-logs\n"),
])
def test_usage_errors_name_the_fix(cli, ws, args, line):
    done = cli("import", *args)
    assert (done.code, done.err) == (2, line)


def test_the_installed_command_imports_and_says_what_it_did(cli_proc, cli, ws, logs):
    ask(logs, "hello")
    done = cli_proc("import", "--from", "llm-logs", str(logs))
    assert done.code == 0, done
    assert done.out == ("imported 2 messages, 0 summaries, 0 memories, 0 audit events;"
                        " 0 already present\n")
    again = cli_proc("import", "--from", "llm-logs", str(logs), "--json")
    assert json.loads(again.out)["skipped"] == 2


def test_ids_are_made_from_the_key_and_sort_by_time():
    from ekko_mem.ids import kind_of
    from ekko_mem.service.messages import derived_id
    early = derived_id("llm:01a:user", "2026-01-02T08:00:00.000Z")
    assert early == derived_id("llm:01a:user", "2026-01-02T08:00:00.000Z")
    assert early != derived_id("llm:01a:assistant", "2026-01-02T08:00:00.000Z")
    assert early < derived_id("llm:01a:assistant", "2026-01-02T08:00:01.000Z")
    assert kind_of(early) == "message" and len(early) == len("msg_") + 18
