"""The Python API: the runnable agent-loop example, and MemoryService used with the models."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ekko_mem import MemoryService
from ekko_mem.models import MemoryContext, MemoryQuery, MemoryQueryResult, NodeDraft

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"
COOK = ["生活技能", "做饭", "饮食偏好"]


def test_the_agent_loop_example_runs(tmp_path):
    workspace = tmp_path / "demo"
    env = {**os.environ, "EKKO_WORKSPACE": str(workspace)}
    proc = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[:4] == ["user: 记住，我以后做饭不要香菜。", "  memory in context: 0 preference(s)",
                         "assistant: 好的，记住了。",
                         "  remembered in user scope: a dietary preference stated as lasting;"
                         " said explicitly; kept in user scope, for every workspace"]
    # Remembered after the first reply, so it shapes the second, until it is forgotten.
    assert "assistant: 推荐番茄炒蛋，不放香菜。" in lines
    assert "avoid_ingredient: 香菜" in lines
    assert "  forgot: 1 memory" in lines
    assert lines[-2] == "assistant: 推荐凉拌黄瓜，多放香菜。"
    assert lines[-1] == "summary: 聊到：记住，我以后做饭不要香菜；今晚做什么菜；忘掉我不吃香菜这件事。"
    assert (workspace / ".ekko" / "memory.db").exists()


def test_the_example_takes_the_workspace_from_argv(tmp_path):
    workspace = tmp_path / "argv-demo"
    proc = subprocess.run([sys.executable, str(EXAMPLE), str(workspace)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / ".ekko" / "memory.db").exists()


def test_open_by_path_or_from_the_current_folder(ws, monkeypatch):
    with MemoryService(ws) as by_path:
        logged = by_path.log_message("今晚吃面", session="s1")
    (ws / "sub").mkdir()  # below the workspace: found upward from the current folder
    monkeypatch.chdir(ws / "sub")
    with MemoryService() as found:
        assert found.root == str(ws.resolve())
        assert [m["id"] for m in found.history(session="s1")["messages"]] == [logged["id"]]


def test_models_in_and_out(service):
    draft = NodeDraft(scope="user", domain="生活技能", categoryPath=COOK, type="preference",
                      key="avoid_ingredient", valueJson="香菜", title="用户不吃香菜",
                      content="推荐菜谱时避免香菜。", explicit=True)
    written = service.propose_update("create", draft.model_dump(exclude_none=True),
                                     reason="用户明确要求记录", actor="agent")
    assert written["accepted"] is True and written["scope"] == "user"
    query = MemoryQuery(key="avoid_ingredient", valueJson="香菜", types=["preference"])
    result = MemoryQueryResult.model_validate(
        service.retrieve(query.model_dump(exclude_none=True)))
    assert [n.id for n in result.exact] == [written["nodeId"]]
    assert result.exact[0].actor == "agent"


def test_build_context_validates_as_memory_context(service):
    service.log_message("记住，我以后做饭不要香菜。")
    service.extract()
    context = MemoryContext.model_validate(service.build_context("今晚做什么菜？"))
    assert context.diagnostics.storeStatus == "ok"
    assert [n.valueJson for n in context.preferences] == ["香菜"]
    assert "香菜" in context.text
