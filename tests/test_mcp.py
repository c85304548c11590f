"""`ekko-mem mcp` end to end, against a real server subprocess: the SDK's own stdio client,
and raw JSON-RPC lines for what a client library would never send.

One server serves the SDK tests (a client session costs ~0.5 s to start); each of them writes
memories with its own domain or values, so they do not depend on each other's order. The raw
tests run a server of their own over a fresh workspace and read every reply it wrote.
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
TOOLS = {"memory_search", "memory_get", "memory_context", "memory_propose_update",
         "memory_forget", "memory_log", "memory_graph"}
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

    def call(self, tool: str, /, **arguments) -> SimpleNamespace:
        result = self.portal.call(self.session.call_tool, tool, arguments)
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
def test_lists_exactly_the_seven_tools_with_the_design_shapes(agent):
    tools = agent.tools()
    assert set(tools) == TOOLS
    props = {name: set(_field(t, "input_schema", "inputSchema")["properties"])
             for name, t in tools.items()}
    # userId and workspaceId are the design's, accepted and ignored: one server, one user.
    assert props["memory_search"] == set(MemoryQuery.model_fields) - {"userId", "workspaceId"}
    assert props["memory_get"] == {"id", "type", "key", "valueJson", "scope", "domain"}
    assert props["memory_propose_update"] == set(ProposeUpdate.model_fields) | {"confirm"}
    assert props["memory_forget"] == set(ForgetRequest.model_fields) | {"confirm"}
    assert props["memory_context"] == {"text", "budget", "session", "asOf"}
    assert props["memory_log"] == {"content", "role", "session", "parent", "metadata", "confirm"}
    assert props["memory_graph"] == {"name", "depth", "asOf"}
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
    assert exact["exact"] == [{"id": result["nodeId"], "type": "preference",
                               "title": "用户不吃香菜", "valueJson": "香菜"}]
    relevant = agent.call("memory_search", queryText="香菜").data
    row = next(r for r in relevant["relevant"] if r["id"] == result["nodeId"])
    assert set(row) == {"id", "type", "title", "valueJson", "score"} and row["score"] > 0
    node = agent.call("memory_get", id=result["nodeId"]).data
    MemoryNode.model_validate(node)
    assert node["actor"] == "agent" and node["explicit"] is True and node["userId"] == "tester"
    winner = agent.call("memory_get", type="preference", key="avoid_ingredient",
                        valueJson="香菜").data
    assert winner["id"] == result["nodeId"]


@needs_mcp
def test_the_graph_tool_answers_as_graph_does(agent):
    node = {"scope": "workspace", "type": "fact", "title": "我同事小王是做前端的",
            "content": "我同事小王是做前端的"}
    assert agent.remember(node)["accepted"] is True
    found = agent.call("memory_graph", name="小王").data
    assert found["entity"]["name"] == "小王"
    assert ("小王", "works_as", "前端") in [(e["subject"], e["relation"], e["value"])
                                         for e in found["edges"]]
    missing = agent.call("memory_graph", name="没有这个人")
    assert missing.error and "no entity named" in missing.text


@needs_mcp
def test_the_context_tool_reads_memory_as_of_a_date(agent):
    node = {"scope": "workspace", "type": "fact", "title": "My sister Anna is a nurse",
            "content": "My sister Anna is a nurse"}
    assert agent.remember(node)["accepted"] is True
    then = agent.call("memory_context", text="What does Anna do?", asOf="2020-01-01")
    assert "nurse" not in then.text and then.data["asOf"] == "2020-01-01T23:59:59.999Z"
    assert "nurse" in agent.call("memory_context", text="What does Anna do?").text


@needs_mcp
def test_a_model_names_an_entity_and_its_kind(agent):
    node = {"scope": "workspace", "type": "fact", "title": "Zed ships every two weeks",
            "content": "Zed ships every two weeks", "entities": ["Zed:project"]}
    assert agent.remember(node)["accepted"] is True
    found = agent.call("memory_graph", name="Zed").data
    assert found["entity"]["kind"] == "project"
    assert [e["relation"] for e in found["edges"]] == ["mentioned"]


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
    # Arguments that fit the schema but not the service: the model reads why, and retries.
    empty = agent.call("memory_get")
    assert empty.error and "memory_get needs an id or a type" in empty.text
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
def test_the_server_needs_no_sdk(tmp_path, ws):
    # A package named mcp that fails to import, first on sys.path: as if it were missing.
    fake = tmp_path / "no-mcp" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    hello, listed = exchange([HELLO, request(2, "tools/list")], cwd=ws,
                             env={"PYTHONPATH": str(fake.parent)})
    assert hello["result"]["protocolVersion"] == "2025-06-18"
    assert "memory_context" in {t["name"] for t in listed["result"]["tools"]}


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


@needs_mcp
def test_context_and_log_through_the_sdk_client(agent):
    logged = agent.call("memory_log", content="今晚想吃点清淡的", session="mcp-context").data
    assert logged["sessionId"] == "mcp-context" and logged["role"] == "user"
    context = agent.call("memory_context", text="今晚吃什么？", session="mcp-context")
    assert not context.error and "今晚想吃点清淡的" in context.text
    assert logged["id"] in context.data["usedMemoryIds"]
    assert context.data["contextId"].startswith("ctx_")


# -- raw JSON-RPC lines ----------------------------------------------------------------------
def request(ident, method: str, params=None) -> dict:
    frame = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def tool(ident, name: str, **arguments) -> dict:
    return request(ident, "tools/call", {"name": name, "arguments": arguments})


HELLO = request("hello", "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "raw", "version": "0"}})
NOW = {"EKKO_NOW": "2026-03-01T12:00:00Z"}


def exchange(frames: list, *, cwd, args=(), env=None) -> list:
    """Every reply `ekko-mem mcp` writes for `frames` (JSON values, or bytes sent as the line
    they are) until stdin closes."""
    data = b"".join((f if isinstance(f, bytes) else json.dumps(f, ensure_ascii=False).encode())
                    + b"\n" for f in frames)
    proc = subprocess.run([str(BIN), "mcp", *args], input=data, capture_output=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def results(replies: list) -> dict:
    """Tool results by request id (the handshake's left out)."""
    return {r["id"]: r["result"] for r in replies if r["id"] != "hello"}


# (what, the line, its answer: (code or "ok", id), None for none, a list for a batch)
MALFORMED = [
    ("not JSON", b"not json", (-32700, None)),
    ("a cut-off object", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', (-32700, None)),
    ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}', (-32700, None)),
    ("NaN", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
     (-32700, None)),
    ("a string", b'"ping"', (-32600, None)),
    ("a number", b"42", (-32600, None)),
    ("null", b"null", (-32600, None)),
    ("no jsonrpc", {"id": 2, "method": "ping"}, (-32600, 2)),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 3, "method": "ping"}, (-32600, 3)),
    ("no method", {"jsonrpc": "2.0", "id": 4}, (-32600, 4)),
    ("a method that is a number", {"jsonrpc": "2.0", "id": 5, "method": 7}, (-32600, 5)),
    ("an object for id", {"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}, (-32600, None)),
    ("a null id", {"jsonrpc": "2.0", "id": None, "method": "ping"}, (-32600, None)),
    ("an unknown method", request(6, "resources/list"), (-32601, 6)),
    ("params a string", request(7, "tools/list", "all"), (-32602, 7)),
    ("params an array", request(8, "tools/call", ["memory_search"]), (-32602, 8)),
    ("initialize with no version", request(9, "initialize", {}), (-32602, 9)),
    ("an unknown tool", request(10, "tools/call", {"name": "memory_drop"}), (-32602, 10)),
    ("arguments a string",
     request(11, "tools/call", {"name": "memory_search", "arguments": "香菜"}), (-32602, 11)),
    ("a wrong type", tool(12, "memory_search", limit="many"), (-32602, 12)),
    ("an unknown field", tool(13, "memory_propose_update", operation="create", reason="r",
                              node={"title": "x", "colour": "red"}), (-32602, 13)),
    ("a required field missing", tool(14, "memory_log", role="user"), (-32602, 14)),
    ("confirm not a boolean", tool(15, "memory_forget", id="mem_x", reason="r", confirm="yes"),
     (-32602, 15)),
    ("a negative budget", tool(16, "memory_context", budget=-1), (-32602, 16)),
    ("confirm where none is taken", tool(17, "memory_get", id="mem_x", confirm=True),
     (-32602, 17)),
    ("a lone surrogate", b'{"jsonrpc": "2.0", "id": 18, "method": "tools/call", "params":'
     b' {"name": "memory_log", "arguments": {"content": "\\ud800"}}}', (-32602, 18)),
    ("a notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
    ("a notification with bad params", {"jsonrpc": "2.0", "method": "x/y", "params": 3}, None),
    ("a response", {"jsonrpc": "2.0", "id": 19, "result": {}}, None),
    ("an empty batch", b"[]", (-32600, None)),
    ("a batch", [request("b1", "ping"), {"jsonrpc": "2.0", "method": "notifications/cancelled"},
                 "x", request("b2", "no/such")], [("ok", "b1"), (-32600, None), (-32601, "b2")]),
    ("a batch of notifications", [{"jsonrpc": "2.0", "method": "notifications/initialized"}],
     None),
]


def _shape(reply):
    if isinstance(reply, list):
        return [_shape(r) for r in reply]
    assert reply["jsonrpc"] == "2.0"
    if "error" in reply:
        assert reply["error"]["message"]
        return (reply["error"]["code"], reply["id"])
    return ("ok", reply["id"])


@needs_mcp
def test_every_malformed_frame_gets_its_error_and_the_server_keeps_serving(ws):
    frames = [HELLO]
    for number, (_, line, _) in enumerate(MALFORMED):
        frames += [line, request(f"after-{number}", "ping")]
    replies = exchange(frames, cwd=ws)
    assert _shape(replies[0]) == ("ok", "hello")
    rest, wrong = replies[1:], []
    for number, (what, _, expected) in enumerate(MALFORMED):
        # Replies come in order: what stands before this frame's ping is its answer, and the
        # ping's own answer shows the server still serving.
        pings = [i for i, r in enumerate(rest) if isinstance(r, dict)
                 and r.get("id") == f"after-{number}"]
        assert pings, f"no answer to the ping after {what}"
        answer, after, rest = rest[:pings[0]], rest[pings[0]], rest[pings[0] + 1:]
        if [_shape(a) for a in answer] != ([] if expected is None else [expected]):
            wrong.append((what, answer))
        assert after["result"] == {}
    assert wrong == [] and rest == []
    said = {r["id"]: r["error"]["message"] for r in replies
            if isinstance(r, dict) and "error" in r and r["id"] is not None}
    assert said[13] == ("Invalid params: memory_propose_update arguments: node.colour:"
                        " Extra inputs are not permitted")
    assert said[10].startswith("Invalid params: unknown tool 'memory_drop'; the tools are ")
    assert said[6] == "Method not found: resources/list"


@needs_mcp
def test_the_handshake_answers_the_clients_version_or_the_newest(ws):
    old, odd = exchange([HELLO, request(2, "initialize", {"protocolVersion": "1999-01-01"})],
                        cwd=ws)
    assert old["result"]["protocolVersion"] == "2025-06-18"
    assert odd["result"]["protocolVersion"] == "2025-11-25"
    assert old["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "memory_context" in old["result"]["instructions"]


# -- what a session pays for ----------------------------------------------------------------
def test_the_tool_list_costs_at_most_2000_tokens(ws):
    from ekko_mem.policy.budget import get_counter
    hello, listed = exchange([HELLO, request(2, "tools/list")], cwd=ws)
    # The answer as the server writes it, its escapes read as text, as a client reads them.
    answer = json.dumps(listed["result"], ensure_ascii=False, separators=(",", ":"))
    assert get_counter("estimate")(answer) <= 2000
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    propose = tools["memory_propose_update"]["inputSchema"]
    # Tight, not vague: the enums, bounds and required fields are all still there.
    assert propose["required"] == ["operation", "reason"]
    assert propose["properties"]["node"]["properties"]["confidence"] == {
        "maximum": 1, "minimum": 0, "type": "number"}
    assert "null" not in json.dumps(propose) and '"title": "' not in json.dumps(propose)
    assert tools["memory_log"]["inputSchema"]["properties"]["role"]["enum"] == [
        "user", "assistant", "system", "tool"]


# -- search rows ------------------------------------------------------------------------------
def test_search_answers_short_rows_and_says_what_it_left_out(ws, cli):
    def remember(title: str, *extra: str) -> str:
        out = cli("remember", "--scope", "workspace", "--domain", "mcp-rows", "--type",
                  "decision", "--title", title, "--content", f"{title}，细节很长。" * 20,
                  *extra, "--json", env=NOW)
        assert out.code == 0, out
        return out.jsonl()[0]["nodeId"]

    old = remember("测试用 unittest")
    new = remember("测试用 pytest", "--supersedes", old)
    others = [remember("用 SQLite 存记忆"), remember("部署到内网")]
    answers = results(exchange([HELLO, tool(1, "memory_search", domain="mcp-rows", limit=2),
                                tool(2, "memory_search", domain="mcp-rows",
                                     includeSuperseded=True),
                                tool(3, "memory_search", queryText="pytest")], cwd=ws))
    short = answers[1]["structuredContent"]
    assert json.loads(answers[1]["content"][0]["text"]) == short
    assert set(short) == {"exact", "relevant", "omitted", "more"}
    assert all(set(row) == {"id", "type", "title"} for row in short["exact"])
    assert {row["id"] for row in short["exact"]} < {new, *others}
    assert short["omitted"] == {"superseded": [old]} and short["more"] == 1
    every = answers[2]["structuredContent"]
    assert set(every) == {"exact", "relevant"}  # nothing left out, nothing to say about it
    assert [row.get("status") for row in every["exact"] if row["id"] == old] == ["superseded"]
    assert all("status" not in row for row in every["exact"] if row["id"] != old)
    found = answers[3]["structuredContent"]["relevant"]
    assert [(row["id"], set(row)) for row in found] == [
        (new, {"id", "type", "title", "score"})]
    assert "细节很长" not in answers[3]["content"][0]["text"]


# -- the context and log tools, against the commands ---------------------------------------
SUMMARY = {"contextId", "usedMemoryIds", "usedTokens", "budget", "tokenCounter", "storeStatus"}


@needs_mcp
def test_the_context_tool_answers_the_text_the_context_command_prints(ws, cli):
    with open(ws / ".ekko" / "config.toml", "a", encoding="utf-8") as config:
        config.write("\n[context]\nbudget = 250\n")
    for argv in (("remember", "以后做饭别给我推荐香菜，我喜欢少油少辣。"),
                 ("remember", "--type", "decision", "--title", "部署到内网"),
                 ("log", "今晚想吃点清淡的", "-s", "chat-1"),
                 ("log", "好的，推荐清蒸鱼。", "--role", "assistant", "-s", "chat-1"),
                 ("log", "另一段对话", "-s", "chat-2")):
        assert cli(*argv, env=NOW).code == 0
    answers = results(exchange([HELLO, tool(1, "memory_context", text="今晚吃什么？", budget=300),
                                tool(2, "memory_context"),
                                tool(3, "memory_context", text="部署", session="chat-2")],
                               cwd=ws, args=("--session", "chat-1"), env=NOW))
    commands = {1: ("今晚吃什么？", "--budget", "300", "-s", "chat-1"), 2: ("-s", "chat-1"),
                3: ("部署", "-s", "chat-2")}
    for ident, argv in commands.items():
        printed = cli("context", *argv, env=NOW)
        as_json = cli("context", *argv, "--format", "json", env=NOW).json()
        answer = answers[ident]
        assert answer["isError"] is False and printed.code == 0, printed
        # The model reads the text the command prints; the ids come beside it, not in it.
        assert answer["content"] == [{"type": "text", "text": printed.out.removesuffix("\n")}]
        summary = answer["structuredContent"]
        assert set(summary) == SUMMARY
        assert summary["usedMemoryIds"] == as_json["usedMemoryIds"] != []
        assert summary["usedTokens"] == as_json["diagnostics"]["usedTokens"]
    first = answers[1]
    assert "香菜" in first["content"][0]["text"] and first["structuredContent"]["budget"] == 300
    assert answers[2]["structuredContent"]["budget"] == 250  # from config.toml
    assert "另一段对话" in answers[3]["content"][0]["text"]
    assert "今晚想吃点清淡的" not in answers[3]["content"][0]["text"]


def test_the_context_tool_keeps_its_text_within_the_budget(ws, cli):
    from ekko_mem.policy.budget import get_counter
    count = get_counter("estimate")  # the [context] counter's default
    rules = ["部署前在预发环境跑完整回归测试", "部署窗口只在周二和周四下午",
             "部署要先通知值班的运维同事", "部署失败立即回滚到上一个版本",
             "部署脚本放在 ops/deploy 目录", "部署后观察错误率十五分钟",
             "Deploy only from the main branch after review",
             "Deploy database migrations before the application code",
             "Deploy logs go to the shared Grafana board for a week"]
    why = "原因和细节都写在运维手册第三章里，每次发布前都要重新读一遍，确认没有遗漏。"
    for rule in rules:
        assert cli("remember", "--type", "decision", "--title", rule, "--content",
                   f"{rule}。{why}", env=NOW).code == 0
    for n in range(4):
        assert cli("log", f"部署之前还要检查什么？第{n}次问", "-s", "chat-1", env=NOW).code == 0
    asked = [tool(name, "memory_context", text="部署 deploy", budget=budget)
             for name, budget in (("tight", 300), ("roomy", 4000))]
    answers = results(exchange([HELLO, *asked], cwd=ws, args=("--session", "chat-1"), env=NOW))
    tight, roomy = answers["tight"], answers["roomy"]
    text = tight["content"][0]["text"]
    assert len(tight["content"]) == 1 and 0 < count(text) <= 300
    assert tight["structuredContent"]["usedTokens"] <= 300
    # The budget is what cut it: with room, the same question reads more memories.
    assert count(roomy["content"][0]["text"]) > 300
    used = tight["structuredContent"]["usedMemoryIds"]
    assert used and set(used) < set(roomy["structuredContent"]["usedMemoryIds"])
    # Only the text: no ids, ranking or diagnostics for the model to read.
    assert not any(word in text for word in ("usedMemoryIds", "diagnostics", "ranking", "{"))
    assert not any(memory in text for memory in used)


@needs_mcp
def test_the_log_tool_writes_as_log_does_and_history_shows_it(ws, cli):
    first = cli("log", "今晚想吃点清淡的", "-s", "chat-7", "--json", env=NOW).jsonl()[0]
    key = "glpat-Ab12Cd34Ef56Gh78Ij90"
    answers = results(exchange([HELLO,
                                tool(1, "memory_log", content="好的，推荐清蒸鱼。", role="assistant",
                                     parent=first["id"], metadata={"model": "demo"}),
                                tool(2, "memory_log", content=f"token {key}", session="chat-7"),
                                tool(3, "memory_log", content="x" * 100_001)],
                               cwd=ws, args=("--session", "chat-7"), env=NOW))
    reply, masked = answers[1]["structuredContent"], answers[2]["structuredContent"]
    assert reply["parentId"] == first["id"] and reply["role"] == "assistant"
    assert masked["content"] == "token [secret removed]"
    assert masked.pop("notes") == ["an API key in the message was replaced by [secret removed]"
                                   " (ask again with confirm to keep it as written)"]
    history = cli("history", "-s", "chat-7", "--json", "--reveal").jsonl()
    assert history == [first, reply, masked]
    # The same size limit, in the same words as the command's error line.
    too_long = cli("log", "-s", "chat-7", input="x" * 100_001)
    assert too_long.code == 4
    assert answers[3]["isError"] is True
    assert answers[3]["content"][0]["text"] == too_long.err.removeprefix("ekko-mem: ").rstrip()
    assert len(cli("history", "-s", "chat-7", "--json").jsonl()) == 3


# -- NUL bytes: refused on every write path, nothing written --------------------------------
def _records(cli) -> list:
    return cli("export").jsonl()


@needs_mcp
def test_nul_is_refused_by_the_tools_with_nothing_written(ws, cli):
    before = _records(cli)
    nul = "香\x00菜"
    drafts = {"title": {"title": nul}, "content": {"content": nul},
              "valueJson": {"key": "avoid_ingredient", "valueJson": nul},
              "tags": {"title": "忌口", "tags": ["忌口", nul]}}
    frames = [HELLO] + [tool(field, "memory_propose_update", operation="create", reason="r",
                             node={"scope": "workspace", **node})
                        for field, node in drafts.items()]
    frames += [tool("log", "memory_log", content=nul),
               tool("meta", "memory_log", content="ok", metadata={"note": nul})]
    answers = results(exchange(frames, cwd=ws))
    for field in drafts:
        answer = answers[field]["structuredContent"]
        assert answer["accepted"] is False, field
        assert (answer["reason"], answer["hint"]) == (f"memory {field} contains a NUL byte",
                                                      "strip binary data first")
    for ident, field in (("log", "content"), ("meta", "metadata")):
        assert answers[ident]["isError"] is True
        assert answers[ident]["content"][0]["text"] == (
            f"message {field} contains a NUL byte; strip binary data first")
    assert _records(cli) == before


def test_nul_is_refused_by_every_command_that_writes(ws, cli, tmp_path):
    node = cli("remember", "--type", "decision", "--title", "部署到内网", "--json").jsonl()[0]
    before = _records(cli)
    hint = "strip binary data first"
    cases = [
        (("remember", "-"), "记住我不吃香\x00菜", f"message content contains a NUL byte; {hint}"),
        (("remember", "--key", "avoid_ingredient", "--value", '"香\\u0000菜"'), None,
         f"memory valueJson contains a NUL byte; {hint}"),
        (("log", "-"), "a\x00b", f"message content contains a NUL byte; {hint}"),
        (("log", "--jsonl", "-"), '{"content": "ok", "metadata": {"k": "\\u0000"}}\n',
         f"line 1: message metadata contains a NUL byte; {hint}; nothing was written"),
    ]
    for argv, stdin, line in cases:
        out = cli(*argv, input=stdin)
        assert (out.code, out.err) == (4, f"ekko-mem: {line}\n"), argv
    # edit: the editor writes the JSON escape \u0000 into the content
    script = tmp_path / "edit.py"
    script.write_text("import json, sys\npath = sys.argv[1]\nnode = json.load(open(path))\n"
                      "node['content'] = '部署到\\x00内网'\njson.dump(node, open(path, 'w'))\n")
    edited = cli("edit", node["nodeId"], env={"EDITOR": f"{sys.executable} {script}"})
    lead = f"ekko-mem: memory content contains a NUL byte; {hint}; your text is kept in "
    assert edited.code == 4 and edited.err.startswith(lead), edited
    Path(edited.err[len(lead):].strip()).unlink()
    # import: a new message, and a new node, each with a NUL in its text
    exported = {r["kind"]: r for r in before}
    message = {"kind": "message", "data": {"id": "msg_nul", "sessionId": "s", "role": "user",
                                           "content": "a\x00b", "createdAt": NOW["EKKO_NOW"]}}
    copy = {**exported["node"]["data"], "id": "mem_nul", "content": "部署到\x00内网"}
    for record, kind in ((message, "message"), ({"kind": "node", "data": copy}, "node")):
        file = tmp_path / f"{kind}.jsonl"
        file.write_text(json.dumps(exported["header"]) + "\n" + json.dumps(record) + "\n")
        out = cli("import", str(file), "--yes")
        assert (out.code, out.err) == (4, f"ekko-mem: line 2: {kind} content contains a NUL"
                                          f" byte; {hint}; nothing was imported\n")
    assert _records(cli) == before


def test_a_credential_in_the_context_text_is_masked_within_the_budget():
    from ekko_mem.mcp_tools import _within
    from ekko_mem.policy.budget import estimate_tokens
    text = "deploy with password=hunter22 " + "then check the dashboards " * 3
    budget = estimate_tokens(text)  # full: the mask is longer than what it hides
    masked = _within(text, budget, "estimate")
    assert "hunter22" not in masked and "[secret removed]" in masked
    assert estimate_tokens(masked) <= budget
    # Nothing masked: the packed text as it was (the packer already kept it within budget).
    assert _within("nothing to hide", 1, "estimate") == "nothing to hide"


def test_the_context_tool_says_why_it_read_less(ws):
    with open(ws / ".ekko" / "config.toml", "a", encoding="utf-8") as config:
        config.write("\n[context]\nbudget = lots\n")
    answer = results(exchange([HELLO, tool(1, "memory_context", text="部署")], cwd=ws))[1]
    assert answer["isError"] is False
    summary = answer["structuredContent"]
    assert set(summary) == SUMMARY | {"warnings"} and summary["budget"] == 1200
    assert "config.toml" in summary["warnings"][0]
