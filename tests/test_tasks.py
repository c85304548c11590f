"""Tasks are individual: each TODO is its own memory, and "done" closes only the task it names."""
from __future__ import annotations

import pytest


def _tasks(cli) -> dict[str, str]:
    """Active tasks: title -> state."""
    found = cli("query", "--type", "task", "--json").json()
    return {n["title"]: n["valueJson"]["state"] for n in found["exact"]}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_todo_is_its_own_task_and_done_closes_the_one_it_names(cli, ws, lang):
    said = {
        "en": ["TODO: write the README", "TODO: set up CI", "TODO: add rate limiting to /login",
               "Done with the CI setup."],
        "zh": ["待办：写部署脚本", "待办：更新文档", "待办：修复登录页面", "部署脚本搞定了"],
    }[lang]
    for text in said:
        assert cli("remember", text).code == 0
    closed = {"en": "set up CI", "zh": "写部署脚本"}[lang]
    tasks = _tasks(cli)
    assert len(tasks) == 3, tasks
    assert tasks.pop(closed) == "done"  # the task keeps its words; only its state changed
    assert set(tasks.values()) == {"open"}


def test_a_done_that_names_no_open_task_closes_nothing_and_says_so(cli, ws):
    cli("remember", "TODO: add rate limiting to /login")
    out = cli("remember", "Done with the database migration script")
    assert out.code == 0 and out.out == ""
    assert "no open task matches 'the database migration script'; none was closed" in out.err
    assert _tasks(cli) == {"add rate limiting to /login": "open"}


def test_a_done_that_names_two_tasks_closes_neither(cli, ws):
    cli("remember", "TODO: fix the login page")
    cli("remember", "TODO: fix the login tests")
    out = cli("remember", "Done with the login fix")
    assert "2 open tasks match 'the login fix'" in out.err
    assert set(_tasks(cli).values()) == {"open"}


def test_the_same_todo_twice_is_one_task_and_a_done_task_can_open_again(cli, ws):
    cli("remember", "TODO: deploy the docs")
    again = cli("remember", "TODO: deploy the docs", "--json").jsonl()
    assert again[0]["operation"] == "refreshed"
    cli("remember", "Done: deploy the docs")
    assert _tasks(cli) == {"deploy the docs": "done"}
    reopened = cli("remember", "TODO: deploy the docs", "--json").jsonl()
    assert reopened[0]["operation"] == "created"  # a new open task, not the done one refreshed


def test_named_tasks_is_pure_and_needs_half_the_words():
    from ekko_mem.policy.tasks import named_tasks
    tasks = [{"title": "set up CI", "content": "To do: set up CI"},
             {"title": "write the README", "content": "To do: write the README"}]
    assert named_tasks("the CI setup", tasks) == [tasks[0]]
    assert named_tasks("the database migration script", tasks) == []
    assert named_tasks("", tasks) == []
    assert named_tasks("部署脚本", [{"title": "写部署脚本", "content": ""}])


def test_the_unclosed_note_never_echoes_a_credential():
    from ekko_mem.service.remembering import _unclosed
    reason = _unclosed("rotating the key sk-abcdefghijklmnopqrstuvwx12345", [])["reason"]
    assert "sk-abc" not in reason and "[secret removed]" in reason
