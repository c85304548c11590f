"""What each MCP client needs to start `ekko-mem mcp`, in the client's own format.

Pure: the command to run, the workspace and the session are given. Claude Desktop and Cursor
read an `mcpServers` object, VS Code a `servers` object whose entries name their transport,
and Claude Code is told with a command line. The server's name comes before `--env` there:
that option takes several values and would take the name as one of them.
"""
from __future__ import annotations

import json

NAME = "ekko-mem"
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
# The clients whose entries say how the server is reached: VS Code requires it, and it is
# the shape `claude mcp add-json` takes.
TYPED = ("claude-code", "vscode")


def server_entry(command: str, workspace: str, session: str | None = None,
                 client: str | None = None) -> dict:
    """One server's entry: the command, `mcp`, and the workspace (and session) it serves."""
    env = {"EKKO_WORKSPACE": workspace}
    if session:
        env["EKKO_SESSION"] = session
    entry: dict = {"type": "stdio"} if client in TYPED else {}
    entry.update({"command": command, "args": ["mcp"], "env": env})
    return entry


def client_config(client: str, command: str, workspace: str,
                  session: str | None = None) -> dict | str:
    """The client's whole configuration for the server: an object to write to its JSON
    file, or for Claude Code the command line that adds it."""
    if client not in CLIENTS:
        raise ValueError(client)
    if client == "claude-code":
        return claude_code_line(command, workspace, session)
    servers = "servers" if client == "vscode" else "mcpServers"
    return {servers: {NAME: server_entry(command, workspace, session, client)}}


def claude_code_line(command: str, workspace: str, session: str | None = None) -> str:
    from shlex import quote
    env = server_entry(command, workspace, session)["env"]
    words = ["claude", "mcp", "add", NAME]
    for key, value in env.items():
        words += ["--env", quote(f"{key}={value}")]
    return " ".join([*words, "--", quote(command), "mcp"]) + "\n"


def as_text(config: dict | str) -> str:
    """What to print: the command line as it is, an object as indented JSON."""
    if isinstance(config, str):
        return config
    from .policy.printable import json_safe
    return json_safe(json.dumps(config, ensure_ascii=False, indent=2)) + "\n"
