"""`ekko-mem mcp` end to end: the SDK's own stdio client against a real server subprocess.

One server serves the whole module (spawning one costs ~0.5 s); each test writes memories
with its own domain or values so the tests do not depend on each other's order.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from ekko_mem.models import ForgetRequest, MemoryNode, MemoryQuery, ProposeUpdate

BIN = Path(sys.executable).with_name("ekko-mem")
TOOLS = {"memory_search", "memory_get", "memory_propose_update", "memory_forget"}
COOK = ["生活技能", "做饭", "饮食偏好"]
needs_mcp = pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                               reason="the optional mcp package is not installed")


def _field(obj, snake: str, camel: str):
    """mcp 2 names result fields in snake_case, mcp 1 in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


class Agent:
    """A synchronous face on an MCP ClientSession running in a portal's event loop."""

    def __init__(self, portal, session) -> None:
        self.portal = portal
        self.session = session

    def tools(self) -> dict:
        listed = self.portal.call(self.session.list_tools)
        return {tool.name: tool for tool in listed.tools}

    def call(self, name: str, **arguments) -> SimpleNamespace:
        result = self.portal.call(self.session.call_tool, name, arguments)
        text = "".join(block.text for block in result.content if hasattr(block, "text"))
        error = bool(_field(result, "is_error", "isError"))
        data = _field(result, "structured_content", "structuredContent")
        if data is None and not error:
            data = json.loads(text)
        return SimpleNamespace(error=error, data=data, text=text)

    def remember(self, node: dict, reason: str = "用户明确要求记录", **extra) -> dict:
        reply = self.call("memory_propose_update", operation="create", node=node,
                          reason=reason, **extra)
        assert not reply.error, reply.text
        return reply.data


@asynccontextmanager
async def _client_session(params, errlog):
    from mcp import ClientSession, stdio_client
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def connect(env: dict, *args: str):
    from anyio.from_thread import start_blocking_portal
    from mcp import StdioServerParameters
    params = StdioServerParameters(command=str(BIN), args=["mcp", *args], env=env)
    with open(os.devnull, "w") as quiet, start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(_client_session(params, quiet)) as session:
        yield Agent(portal, session)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    env = {"EKKO_HOME": str(root / "home"), "EKKO_WORKSPACE": str(root / "ws"),
           "EKKO_USER": "tester", "PATH": os.environ.get("PATH", "")}
    (root / "ws").mkdir()
    init = subprocess.run([str(BIN), "init", str(root / "ws")], env={**os.environ, **env},
                          capture_output=True, text=True, check=False)
    assert init.returncode == 0, init.stderr
    return SimpleNamespace(root=root, env=env)


@pytest.fixture(scope="module")
def agent(place):
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the optional mcp package is not installed")
    # Workspace from the environment, session from the argument: both ways are exercised.
    with connect(place.env, "--session", "agent-1") as client:
        yield client


def cilantro(value: str = "香菜", **extra) -> dict:
    return {"scope": "user", "domain": "生活技能", "categoryPath": COOK, "type": "preference",
            "key": "avoid_ingredient", "valueJson": value, "title": f"用户不吃{value}",
            "content": f"用户明确要求以后做饭推荐不要{value}。", "confidence": 0.99,
            "importance": 0.95, "tags": ["忌口", "菜谱推荐"], "entities": [value], **extra}


def note(domain: str, title: str, **extra) -> dict:
    return {"scope": "workspace", "domain": domain, "type": "decision", "title": title,
            "content": f"{title}.", **extra}


def ids(result: dict, part: str = "exact") -> list[str]:
    return [n["id"] for n in result[part]]


# -- the tools and their shapes ------------------------------------------------------------
@needs_mcp
def test_lists_exactly_the_four_tools_with_the_design_shapes(agent):
    tools = agent.tools()
    assert set(tools) == TOOLS
    props = {name: set(_field(t, "input_schema", "inputSchema")["properties"])
             for name, t in tools.items()}
    assert props["memory_search"] == set(MemoryQuery.model_fields)
    assert props["memory_get"] == {"id", "type", "key", "valueJson", "scope", "domain"}
    assert props["memory_propose_update"] == set(ProposeUpdate.model_fields) | {"confirm"}
    assert props["memory_forget"] == set(ForgetRequest.model_fields) | {"confirm"}
    propose = tools["memory_propose_update"].description
    assert "记住" in propose and "avoid_ingredient" in propose and "flavor_profile" in propose
    assert "requiresConfirmation" in tools["memory_forget"].description


# -- remembering ----------------------------------------------------------------------------
@needs_mcp
def test_explicit_intent_writes_user_scope_and_search_finds_it(agent):
    result = agent.remember(cilantro(explicit=True))
    assert result["accepted"] is True and result["scope"] == "user"
    assert "code" not in result and "requiresConfirmation" not in result
    exact = agent.call("memory_search", key="avoid_ingredient", valueJson="香菜").data
    assert ids(exact) == [result["nodeId"]]
    relevant = agent.call("memory_search", queryText="香菜").data
    assert result["nodeId"] in ids(relevant, "relevant")
    node = agent.call("memory_get", id=result["nodeId"]).data
    MemoryNode.model_validate(node)
    assert node["actor"] == "agent" and node["explicit"] is True and node["userId"] == "tester"
    winner = agent.call("memory_get", type="preference", key="avoid_ingredient",
                        valueJson="香菜").data
    assert winner["id"] == result["nodeId"]


@needs_mcp
def test_user_scope_without_intent_asks_and_writes_nothing(agent):
    result = agent.remember(cilantro("豆腐", key="preferred_ingredient"))
    assert result["accepted"] is False and result["requiresConfirmation"] is True
    assert result["nodeId"] is None
    found = agent.call("memory_search", key="preferred_ingredient", valueJson="豆腐").data
    assert found["exact"] == [] and found["relevant"] == []


@needs_mcp
def test_global_scope_is_refused(agent):
    result = agent.remember(note("mcp-global", "全局规则", scope="global"))
    assert result["accepted"] is False and "global" in result["reason"]
    assert "requiresConfirmation" not in result


@needs_mcp
def test_session_scope_takes_the_servers_session(agent):
    result = agent.remember(note("mcp-session", "今天先跑单元测试", scope="session"))
    assert result["accepted"] is True
    node = agent.call("memory_get", id=result["nodeId"]).data
    assert node["scope"] == "session" and node["sessionId"] == "agent-1"


# -- forgetting -----------------------------------------------------------------------------
@needs_mcp
def test_one_exact_soft_forget_needs_no_confirmation(agent):
    written = agent.remember(cilantro("芹菜", explicit=True))
    # The design's own memory_forget example, with this test's value.
    result = agent.call("memory_forget", scope="user", domain="生活技能",
                        categoryPathPrefix=COOK, type="preference", key="avoid_ingredient",
                        valueJson="芹菜", mode="soft", reason="用户明确要求忘记该饮食偏好").data
    assert result["deletedIds"] == [written["nodeId"]] and result["mode"] == "soft"
    assert agent.call("memory_get", id=written["nodeId"]).data["status"] == "deleted"


@needs_mcp
def test_several_candidates_need_confirmation_then_confirm_deletes(agent):
    first = agent.remember(note("mcp-forget", "用 SQLite 存记忆"))["nodeId"]
    second = agent.remember(note("mcp-forget", "测试用 pytest"))["nodeId"]
    asked = agent.call("memory_forget", scope="workspace", domain="mcp-forget",
                       reason="用户要求删除").data
    assert asked["requiresConfirmation"] is True and asked["deletedIds"] == []
    assert {c["id"] for c in asked["candidates"]} == {first, second}
    still = agent.call("memory_search", domain="mcp-forget").data
    assert set(ids(still)) == {first, second}
    done = agent.call("memory_forget", scope="workspace", domain="mcp-forget",
                      reason="用户确认删除", confirm=True).data
    assert set(done["deletedIds"]) == {first, second} and "requiresConfirmation" not in done
    assert agent.call("memory_search", domain="mcp-forget").data["exact"] == []


@needs_mcp
def test_hard_delete_asks_first(agent):
    node_id = agent.remember(note("mcp-hard", "部署到内网"))["nodeId"]
    asked = agent.call("memory_forget", id=node_id, mode="hard", reason="隐私").data
    assert asked["requiresConfirmation"] is True and asked["deletedIds"] == []
    assert agent.call("memory_get", id=node_id).data["status"] == "active"
    done = agent.call("memory_forget", id=node_id, mode="hard", reason="隐私", confirm=True)
    assert done.data["deletedIds"] == [node_id] and done.data["mode"] == "hard"
    assert agent.call("memory_get", id=node_id).data == {
        "found": False, "reason": "no memory matches that selector"}


# -- errors ---------------------------------------------------------------------------------
@needs_mcp
def test_errors_are_tool_errors_and_the_server_keeps_serving(agent):
    empty = agent.call("memory_get")
    assert empty.error and "memory_get needs an id or a type" in empty.text
    unknown = agent.call("memory_propose_update", operation="create",
                         node={"title": "x", "colour": "red"}, reason="r")
    assert unknown.error and "colour" in unknown.text
    bad_key = agent.call("memory_search", key="  ")
    assert bad_key.error and "key must be a non-empty string" in bad_key.text
    missing = agent.call("memory_propose_update", operation="supersede", targetId="mem_nope",
                         node={"title": "x"}, reason="r").data
    assert missing["accepted"] is False and "mem_nope" in missing["reason"]
    assert not agent.call("memory_search", queryText="香菜").error


# -- parity with the CLI --------------------------------------------------------------------
@needs_mcp
def test_an_mcp_write_audits_like_a_cli_write_but_for_its_actor(agent, place, cli):
    common = {"scope": "workspace", "domain": "mcp-audit", "type": "decision",
              "content": "同一条决定。", "confidence": 0.9, "importance": 0.6,
              "tags": ["parity"]}
    via_mcp = agent.remember({**common, "title": "经由 MCP", "explicit": True},
                             reason="parity")["nodeId"]
    env = {k: place.env[k] for k in ("EKKO_HOME", "EKKO_WORKSPACE")}
    # The server runs with --session agent-1; the CLI writes in that session too.
    out = cli("remember", "--session", "agent-1", "--scope", "workspace", "--domain",
              "mcp-audit", "--type", "decision", "--title", "经由 CLI", "--content", "同一条决定。", "--confidence",
              "0.9", "--importance", "0.6", "--tag", "parity", "--reason", "parity", "--json",
              env=env)
    assert out.code == 0, out
    via_cli = out.jsonl()[0]["nodeId"]
    rows = cli("audit", "--json", "--limit", "500", env=env).jsonl()
    mine = {r["nodeId"]: r for r in rows if r["nodeId"] in (via_mcp, via_cli)}
    a, b = mine[via_mcp], mine[via_cli]
    assert (a["actor"], b["actor"]) == ("agent", "user")
    assert set(a) == set(b) and set(a["payload"]) == set(b["payload"])
    differ = {"id", "nodeId", "createdAt", "actor", "payload", "reason"}
    assert {k: a[k] for k in a if k not in differ} == {k: b[k] for k in b if k not in differ}
    # The reason says who stated it; what was said and where it is kept are the same.
    assert a["reason"] == "parity; said explicitly; kept in this workspace"
    assert b["reason"] == "parity; stated by the user; kept in this workspace"
    after_a, after_b = a["payload"]["after"], b["payload"]["after"]
    assert set(after_a) == set(after_b)
    own = {"id", "title", "actor", "createdAt", "updatedAt"}
    assert {k: v for k, v in after_a.items() if k not in own} == {
        k: v for k, v in after_b.items() if k not in own}
    assert (after_a["actor"], after_b["actor"]) == ("agent", "user")


# -- without the SDK ------------------------------------------------------------------------
def test_without_the_sdk_mcp_exits_6_with_the_install_hint(tmp_path, cli, ws):
    # A package named mcp that fails to import, first on sys.path: as if it were missing.
    fake = tmp_path / "no-mcp" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    result = cli("mcp", env={"PYTHONPATH": str(fake.parent)})
    assert result.code == 6, result
    assert result.err == ("ekko-mem: the MCP server needs the optional 'mcp' package;"
                          " pip install 'ekko-mem[mcp]'\n")
    assert result.out == ""


@needs_mcp
def test_credentials_are_confirmed_on_the_way_in_and_masked_on_the_way_out(agent):
    key = "glpat-Ab12Cd34Ef56Gh78Ij90"
    asked = agent.call("memory_propose_update", operation="create",
                       node=note("mcp-secret", f"deploy token {key}"), reason="user said").data
    assert asked["accepted"] is False and asked["requiresConfirmation"] is True
    assert key not in json.dumps(asked)
    made = agent.remember(note("mcp-secret", f"deploy token {key}"), confirm=True)
    got = agent.call("memory_get", id=made["nodeId"]).data
    found = agent.call("memory_search", queryText="deploy token").data
    for answer in (got, found):
        assert key not in json.dumps(answer, ensure_ascii=False)
        assert "[secret removed]" in json.dumps(answer, ensure_ascii=False)
