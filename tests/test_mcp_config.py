"""`ekko-mem mcp --config CLIENT`: the configuration each MCP client needs to start this
ekko-mem for this workspace, in the client's own format."""
from __future__ import annotations

import json
import shlex

import pytest

from conftest import BIN


def test_the_choices_are_the_clients_the_module_knows():
    from ekko_mem.mcp_clients import CLIENTS
    from ekko_mem.options import COMMANDS
    (config,) = [o for o in COMMANDS["mcp"].options if o.flag == "--config"]
    assert config.choices == CLIENTS


@pytest.mark.parametrize("client, servers, typed", [
    ("claude-desktop", "mcpServers", False),
    ("cursor", "mcpServers", False),
    ("vscode", "servers", True),
])
def test_a_json_client_gets_its_file_with_this_binary_and_workspace(cli, ws, client,
                                                                   servers, typed):
    done = cli("mcp", "--config", client)
    assert done.code == 0, done
    config = json.loads(done.out)
    assert list(config) == [servers] and list(config[servers]) == ["ekko-mem"]
    entry = config[servers]["ekko-mem"]
    assert entry["command"] == str(BIN)
    assert entry["args"] == ["mcp"]
    assert entry["env"] == {"EKKO_WORKSPACE": str(ws)}
    assert ("type" in entry) is typed and entry.get("type", "stdio") == "stdio"


def test_claude_code_gets_the_command_that_adds_the_server(cli, ws):
    done = cli("mcp", "--config", "claude-code", "--session", "agent 1")
    assert done.code == 0, done
    words = shlex.split(done.out)
    assert words == ["claude", "mcp", "add", "ekko-mem", "--env", f"EKKO_WORKSPACE={ws}",
                     "--env", "EKKO_SESSION=agent 1", "--", str(BIN), "mcp"]
    assert done.out.count("\n") == 1


def test_json_is_the_server_entry_alone(cli, ws, tmp_path):
    plain = cli("mcp", "--json").json()
    assert plain == {"command": str(BIN), "args": ["mcp"], "env": {"EKKO_WORKSPACE": str(ws)}}
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    entry = cli("mcp", "--config", "claude-code", "--json", "-w", str(elsewhere)).json()
    assert entry == {"type": "stdio", "command": str(BIN), "args": ["mcp"],
                     "env": {"EKKO_WORKSPACE": str(elsewhere)}}


def test_the_printed_configuration_starts_a_server_on_the_workspace(cli, ws, tmp_path):
    """Started as a client starts it: from another folder, with the entry's environment."""
    import os
    import subprocess
    entry = cli("mcp", "--config", "cursor").json()["mcpServers"]["ekko-mem"]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_log", "arguments": {"content": "来自客户端"}}}
    env = {k: v for k, v in os.environ.items() if k != "EKKO_WORKSPACE"}
    proc = subprocess.run([entry["command"], *entry["args"]], cwd=tmp_path,
                          input=json.dumps(call) + "\n", capture_output=True, text=True,
                          env={**env, **entry["env"]}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"].get("isError") is not True, proc.stdout
    assert [m["content"] for m in cli("history", "--json").jsonl()] == ["来自客户端"]


def test_an_unknown_client_is_a_usage_error_naming_the_choices(cli, ws):
    done = cli("mcp", "--config", "windsurf")
    assert (done.code, done.out) == (2, "")
    assert done.err == ("ekko-mem: unknown MCP client 'windsurf'; use one of: claude-desktop,"
                        " claude-code, cursor, vscode\n")


def test_outside_a_workspace_it_says_how_to_make_one(cli, tmp_path):
    done = cli("mcp", "--config", "cursor", cwd=tmp_path)
    assert done.code == 6 and done.out == ""
    assert done.err.startswith(f"ekko-mem: no workspace memory found in {tmp_path}")
