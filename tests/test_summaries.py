"""Chained summaries and extraction through the CLI, with rules, a fake LLM and real llm."""
from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

FAKE = f"{sys.executable} {Path(__file__).parent / 'fixtures' / 'fake_llm.py'}"
CONVERSATION = [
    ("user", "我们今晚在家做饭吧"), ("assistant", "好的，想吃什么？"),
    ("user", "以后做饭别给我推荐香菜，我喜欢少油少辣。"), ("assistant", "记住了。"),
    ("user", "我们决定用 SQLite FTS5 做全文检索"), ("assistant", "明白。"),
    ("user", "TODO: 写迁移测试"), ("assistant", "已加入待办。"),
    ("user", "今天胃不舒服，少辣"), ("assistant", "那就清淡一点。"),
    ("user", "完成了: 写迁移测试"), ("assistant", "太好了。"),
]


def _log(cli, pairs, session="chat"):
    ids = []
    for role, text in pairs:
        out = cli("log", text, "-s", session, "--role", role)
        assert out.code == 0, out
        ids.append(out.out.strip())
    return ids


def test_two_summaries_chain_and_the_second_reads_only_new_messages(cli, ws):
    ids = _log(cli, CONVERSATION[:6])
    first = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert first["fromMessageId"] == ids[0] and first["toMessageId"] == ids[5]
    assert first.get("parentSummaryId") is None
    assert any("香菜" in p for p in first["preferences"])
    # Rewrite an early message behind ekko-mem's back: the next summary must not read it.
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    db.execute("update memory_messages set content = 'SHOULD NOT BE READ' where id = ?",
               (ids[0],))
    db.commit()
    db.close()
    later = _log(cli, CONVERSATION[6:])
    second = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert second["parentSummaryId"] == first["id"]
    assert second["fromMessageId"] == later[0] and second["toMessageId"] == later[-1]
    assert "SHOULD NOT BE READ" not in str(second)
    assert any("迁移测试" in w for w in second["completedWork"])
    assert first["preferences"][0] in second["preferences"]  # carried from the parent
    chain = cli("summarize", "-s", "chat", "--chain", "--json").jsonl()
    assert [s["id"] for s in chain] == [first["id"], second["id"]]
    shown = cli("show", second["id"], "--json").json()
    assert shown["kind"] == "summary" and shown["parents"] == [first["id"]]
    nothing = cli("summarize", "-s", "chat")
    assert nothing.code == 0 and "no new messages" in nothing.err


def test_summary_in_english_for_an_english_conversation(cli, ws):
    _log(cli, [("user", "From now on, don't recommend cilantro."),
               ("assistant", "Noted."), ("user", "We decided to use Postgres in production")])
    summary = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert summary["summary"] == ("Decided: We decided to use Postgres in production."
                                  " Preferences: Avoid cilantro.")


def test_extraction_runs_once_per_message(cli, ws):
    _log(cli, CONVERSATION[:4])
    first = cli("extract", "-s", "chat", "--json").json()
    assert any(r.get("accepted") for r in first["results"])
    again = cli("extract", "-s", "chat", "--json").json()
    assert again["results"] == [] and "no new messages" in again["reason"]
    nodes = cli("query", "--key", "avoid_ingredient", "--json").json()["exact"]
    assert [n["valueJson"] for n in nodes] == ["香菜"]
    assert nodes[0]["actor"] == "extractor" and nodes[0]["sourceMessageIds"]


def test_if_needed_does_nothing_without_a_trigger(cli, ws):
    _log(cli, [("user", "你好"), ("assistant", "你好！")])
    out = cli("summarize", "-s", "chat", "--if-needed", "--json")
    assert out.code == 0 and out.json()["skipped"] is True
    assert cli("summarize", "-s", "chat", "--chain", "--json").out == ""
    _log(cli, [("user", "记住，我以后做饭不要香菜。")])
    done = cli("summarize", "-s", "chat", "--if-needed", "--json").json()
    assert done["summary"] is not None


def test_llm_command_summary_and_extraction(cli, ws):
    _log(cli, CONVERSATION[:4])
    out = cli("summarize", "-s", "chat", "--llm-cmd", FAKE, "--json")
    assert out.code == 0, out
    data = out.json()
    assert data["summary"]["summary"] == "LLM summary of 4 messages"
    assert data["summary"]["pendingWork"] == ["buy tomatoes"]
    (result,) = data["extraction"]["results"]
    assert result["accepted"] and result["scope"] == "session"  # inferred: not user scope


def test_print_prompt_pipe_apply(cli, ws, tmp_path):
    _log(cli, CONVERSATION[:2])
    prompt = cli("summarize", "-s", "chat", "--print-prompt")
    assert prompt.code == 0 and "JSON Schema" in prompt.out and "我们今晚在家做饭吧" in prompt.out
    answer = cli("summarize", "-s", "chat", "--print-prompt").out
    import subprocess
    reply = subprocess.run(FAKE.split(), input=answer, capture_output=True, text=True).stdout
    applied = cli("summarize", "-s", "chat", "--apply", "-", "--json", input=reply)
    assert applied.code == 0, applied
    assert applied.json()["summary"]["summary"] == "LLM summary of 2 messages"
    bad = cli("summarize", "-s", "chat", "--apply", "-", input='{"summry": "typo"}')
    assert bad.code == 4 and "does not match" in bad.err
    extraction_prompt = cli("extract", "-s", "chat", "--print-prompt").out
    reply = subprocess.run(FAKE.split(), input=extraction_prompt, capture_output=True,
                           text=True).stdout
    extracted = cli("extract", "-s", "chat", "--apply", "-", "--json", input=reply).json()
    assert extracted["results"][0]["accepted"]


@pytest.mark.parametrize("mode", ["fail", "garbage"])
def test_failed_llm_run_is_queued_never_blocks_and_writes_nothing(cli, ws, mode):
    _log(cli, CONVERSATION[:4])
    out = cli("extract", "-s", "chat", "--llm-cmd", FAKE, "--json",
              env={"FAKE_LLM_MODE": mode})
    assert out.code == 0
    data = out.json()
    assert data["queued"].startswith("job_") and data["results"] == []
    assert "extract --retry" in out.err
    assert cli("query", "--key", "avoid_ingredient", "--json").json()["exact"] == []
    jobs = cli("extract", "--jobs", "--json").jsonl()
    assert len(jobs) == 1 and jobs[0]["status"] == "pending"
    retried = cli("extract", "--retry", "--json").jsonl()
    assert retried[0]["status"] == "done"
    assert cli("extract", "--jobs", "--json").out == ""
    assert [n["valueJson"] for n in cli("query", "--key", "avoid_ingredient", "-s", "chat",
                                         "--json").json()["exact"]] == ["cilantro"]


def test_missing_command_is_queued(cli, ws):
    _log(cli, CONVERSATION[:2])
    out = cli("summarize", "-s", "chat", "--llm-cmd", "no-such-llm-binary -m x", "--json")
    assert out.code == 0
    assert "command not found: no-such-llm-binary" in out.json()["error"]
    assert cli("summarize", "-s", "chat", "--chain", "--json").out == ""


def test_real_llm_with_echo_plugin_lands_in_the_retry_queue(cli, ws, tmp_path):
    llm = Path(sys.executable).with_name("llm")
    if not llm.exists():
        pytest.skip("the llm package is not installed")
    _log(cli, CONVERSATION[:4])
    env = {"LLM_USER_PATH": str(tmp_path / "llm"), "PATH": f"{llm.parent}:{os.environ['PATH']}"}
    out = cli("summarize", "-s", "chat", "--llm-cmd", "llm -m echo --no-log", "--json",
              env=env)
    assert out.code == 0, out
    data = out.json()
    assert data["summary"] is None and data["queued"]
    assert "does not match the schema" in data["error"]
    assert cli("summarize", "-s", "chat", "--chain", "--json").out == ""
    assert len(cli("extract", "--jobs", "--json").jsonl()) == 2  # extraction and summary
    assert cli("query", "--key", "avoid_ingredient", "--json").json()["exact"] == []


def test_schema_command(cli, ws):
    for name in ("summary", "extraction", "node", "context"):
        out = cli("schema", name)
        assert out.code == 0 and out.json()["type"] == "object"
    assert cli("schema", "nope").code == 2


def test_applied_extraction_reports_refusals_in_the_exit_code(cli, ws):
    _log(cli, CONVERSATION[:2])
    secret = {"nodes": [{"operation": "create", "reason": "r", "node": {
        "scope": "workspace", "type": "fact", "title": "token sk-abcdefghijklmnopqrstuvwx99"}}]}
    import json as _json
    out = cli("extract", "-s", "chat", "--apply", "-", input=_json.dumps(secret))
    assert out.code == 3 and "sk-abcdefgh" not in out.err


def _content(summary: dict) -> dict:
    return {k: summary[k] for k in ("summary", "pendingWork", "completedWork")}


def test_a_summary_says_what_happened_each_item_once(cli, ws):
    _log(cli, CONVERSATION[:8])
    first = cli("summarize", "-s", "chat", "--json").json()["summary"]
    # The TODO line and the task made from it are one item, not two.
    assert _content(first) == {
        "summary": "决定：我们决定用 SQLite FTS5 做全文检索。偏好：用户不吃香菜；用户偏好少油少辣。"
                   "待办：写迁移测试。",
        "pendingWork": ["写迁移测试"], "completedWork": []}
    # The context prints the summary as it is: its pending work is not added a second time.
    assert cli("context", "", "-s", "chat").out.count("写迁移测试") == 2  # and the task
    _log(cli, CONVERSATION[8:])
    second = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert _content(second) == {"summary": "约束：临时：少辣。已完成：写迁移测试。",
                                "pendingWork": [], "completedWork": ["写迁移测试"]}
    assert "条消息" not in first["summary"] + second["summary"]


def test_an_english_summary_names_the_goal_and_closes_what_was_done(cli, ws):
    _log(cli, [("user", "I want to ship the search feature this week."),
               ("assistant", "Sounds good."), ("user", "TODO: write the README"),
               ("user", "todo: set up CI"), ("user", "We decided to use Postgres in production")])
    first = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert first["summary"] == ("Goal: I want to ship the search feature this week."
                                " Decided: We decided to use Postgres in production."
                                " Pending: write the README; set up CI.")
    _log(cli, [("user", "Done with the README."), ("assistant", "Nice.")])
    second = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert second["summary"] == "Done: write the README. Pending: set up CI."
    assert second["pendingWork"] == ["set up CI"]
    assert second["completedWork"] == ["write the README"]
    assert second["currentGoal"] == "I want to ship the search feature this week"


def test_without_anything_salient_a_summary_names_what_was_talked_about(cli, ws):
    _log(cli, [("user", "你好"), ("assistant", "你好！"), ("user", "今天天气不错")])
    summary = cli("summarize", "-s", "chat", "--json").json()["summary"]
    assert summary["summary"] == "聊到：你好；今天天气不错。"
