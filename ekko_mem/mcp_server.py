"""`ekko-mem mcp`: the memory tools, served to an agent over MCP (JSON-RPC 2.0 on stdio, one
message per line).

The tools themselves, an adapter like the CLI, are mcp_tools.py; this module is the protocol
around them.

The JSON-RPC loop is our own rather than the SDK's stdio server, which drops a frame it cannot
read without answering it, so a client waiting on that frame waits for ever. Here every frame
gets the answer JSON-RPC 2.0 prescribes and the server keeps serving: -32700 for a line that is
not JSON, -32600 for one that is not a request, -32601 for an unknown method, -32602 for params
or tool arguments of the wrong shape; notifications are never answered. What goes wrong inside
a tool (a refusal, a missing db) is a tool result with isError, worded for the model.

A line is at most limits.line bytes, the cap on a JSON Lines input line: a longer one is read
to its end a chunk at a time, never held, and answered -32600, so memory stays bounded
whatever a client sends. An id is echoed as it was written: a string, or an integer (which
Python keeps exactly); a number with a fraction or an exponent (1e999 would come back as
Infinity, which is not JSON) is refused.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable

from pydantic import ValidationError

from . import __version__
from .config_values import DEFAULTS
from .errors import EkkoError
from .mcp_tools import CONFIRM, TOOLS, MemoryTools, Reply, tool_list
from .models import validation_message

# The handshake revisions spoken here, newest first; a client asking for another gets the
# newest and decides for itself whether it can go on.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
DRAIN = 1 << 16  # bytes read at a time from a line over the limit, each dropped at once

INSTRUCTIONS = """Long-term memory for this user and project (ekko-mem). A memory context is
usually injected before each turn; when none was, call memory_context with the user's message.
Use memory_search or memory_get when you need more. When the user explicitly asks you to
remember something, call memory_propose_update at once; when they ask you to forget something,
call memory_forget. Only say "remembered" or "forgotten" after the tool answered
accepted=true or returned deletedIds. If your client does not keep the conversation log
itself, append each message with memory_log."""


class RpcError(Exception):
    """A request answered with a JSON-RPC error rather than a result."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _error(ident, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": _said(message)}}


def _said(message: str) -> str:
    """An error as the model reads it: it may quote what was sent, and a credential in that
    is not sent back (errors carry what was said; this edge masks it)."""
    from .policy.sensitive import mask_secrets
    return mask_secrets(message)


def _valid_id(ident) -> bool:
    # MCP forbids a null id and takes a string or an integer; a float could not be echoed as
    # it was written.
    return isinstance(ident, (str, int)) and not isinstance(ident, bool)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _integer(token: str):
    # -0 would be echoed as 0: read as a float, so that as an id it is refused.
    return -0.0 if token == "-0" else int(token)


def _encode(reply) -> bytes:
    """One line of JSON; a number JSON cannot carry (inf, nan) makes it an internal error
    rather than a line the client cannot parse."""
    try:
        text = json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        ident = reply.get("id") if isinstance(reply, dict) else None
        text = json.dumps(_error(ident, INTERNAL_ERROR, f"Internal error: {exc}"),
                          ensure_ascii=True, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


def read_lines(reader, cap: int):
    """Each line of `reader` as bytes, or, for a line over `cap` bytes (its break left out),
    its size: that line is read to its end a chunk at a time and never held."""
    limit = cap + 2  # the line, its break (\n or \r\n) and one byte more tell a long line
    while raw := reader.readline(limit):
        if len(raw) < limit or raw.endswith(b"\n"):
            size = len(raw) - (raw.endswith(b"\n") + raw.endswith(b"\r\n"))
            yield raw if size <= cap else size
            continue
        size = len(raw)
        while chunk := reader.readline(DRAIN):
            size += len(chunk)
            if chunk.endswith(b"\n"):
                size -= 1
                break
        yield size


def _unparsable(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"the line is not valid UTF-8 (byte {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "JSON nested too deep"
    return f"not valid JSON ({exc})"


def _lone_surrogate(value) -> bool:
    """A \\ud800 escape with no partner is valid JSON but no text: SQLite could not store it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class Server:
    """One client's stdio session: each line in, its answer (if any) out, in order."""

    def __init__(self, tools: MemoryTools, *, line_limit: int = DEFAULTS["limits.line"]) -> None:
        self.tools = tools
        self.line_limit = line_limit
        self._listed: list[dict] | None = None
        self.methods: dict[str, Callable[[dict], dict]] = {
            "initialize": self.initialize, "ping": lambda params: {},
            "tools/list": self.list_tools, "tools/call": self.call_tool}

    def run(self, reader, writer) -> None:
        for line in read_lines(reader, self.line_limit):
            if isinstance(line, int):
                reply = _error(None, INVALID_REQUEST, (
                    f"Invalid Request: the line is {line:,} bytes, over the limit of"
                    f" {self.line_limit:,}; send a smaller message, or raise 'line' under"
                    " [limits] in config.toml"))
            elif not line.strip():
                continue
            else:
                reply = self.handle_line(line)
            if reply is not None:
                writer.write(_encode(reply))
                writer.flush()

    def handle_line(self, line: bytes):
        """The answer to one line: a response, a batch's responses, or None."""
        try:
            frame = json.loads(line.decode("utf-8"), parse_constant=_no_constant,
                               parse_int=_integer)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            return _error(None, PARSE_ERROR, f"Parse error: {_unparsable(exc)}")
        if isinstance(frame, list):
            if not frame:
                return _error(None, INVALID_REQUEST, "Invalid Request: an empty batch")
            replies = [reply for reply in map(self.handle, frame) if reply is not None]
            return replies or None  # a batch of notifications gets nothing back
        return self.handle(frame)

    def handle(self, message):
        """The response to one message, or None for a notification or a response."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object")
        ident, has_id = message.get("id"), "id" in message
        if has_id and not _valid_id(ident):
            return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an"
                          " integer (a fraction or an exponent cannot be echoed exactly)")
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            return None  # a response: this server sends no requests, and answers none
        if message.get("jsonrpc") != "2.0":
            return _error(ident, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
        if not isinstance(method, str) or not method:
            return _error(ident, INVALID_REQUEST,
                          "Invalid Request: method must be a non-empty string")
        if not has_id:
            return None  # a notification (initialized, cancelled): nothing to answer or do
        params = message.get("params", {})
        if not isinstance(params, dict):
            return _error(ident, INVALID_PARAMS, "Invalid params: params must be an object")
        handler = self.methods.get(method)
        if handler is None:
            return _error(ident, METHOD_NOT_FOUND, f"Method not found: {method[:100]}")
        try:
            return {"jsonrpc": "2.0", "id": ident, "result": handler(params)}
        except RpcError as exc:
            return _error(ident, exc.code, str(exc))
        except Exception as exc:  # noqa: BLE001  a bug: say what it was, keep serving
            return _error(ident, INTERNAL_ERROR,
                          f"Internal error: {type(exc).__name__}: {exc}")

    def initialize(self, params: dict) -> dict:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS,
                           "Invalid params: initialize needs protocolVersion, a string")
        return {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "ekko-mem", "version": __version__},
                "instructions": INSTRUCTIONS}

    def list_tools(self, params: dict) -> dict:
        if self._listed is None:
            self._listed = tool_list(self.tools.service)
        return {"tools": self._listed}

    def call_tool(self, params: dict) -> dict:
        name, arguments = params.get("name"), params.get("arguments")
        tool = TOOLS.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown tool {name!r};"
                           f" the tools are {', '.join(TOOLS)}")
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS,
                           f"Invalid params: {name} arguments must be a JSON object")
        arguments = dict(arguments)
        confirm = arguments.pop(CONFIRM, False) if tool.confirm else False
        problem = None
        if not isinstance(confirm, bool):
            problem = "confirm: must be true or false"
        elif _lone_surrogate(arguments):
            problem = "text with a lone surrogate (\\ud800-\\udfff) is not valid Unicode"
        else:
            try:
                tool.model.model_validate(arguments)
            except ValidationError as exc:
                problem = validation_message(exc)
        if problem:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {name} arguments: {problem}")
        tools = self.tools
        return _tool_result(lambda: tool.run(tools, arguments, confirm=confirm) if tool.confirm
                            else tool.run(tools, arguments))


def _tool_result(work: Callable[[], dict | Reply]) -> dict:
    """A tools/call result; a refusal or failure inside the tool is a result with isError and
    a plain message, which the model reads (a JSON-RPC error is for the client)."""
    try:
        from .policy.sensitive import mask_json
        answer = work()
        if isinstance(answer, Reply):  # the tool masked its own text
            text, data = answer.text, mask_json(answer.data)
        else:
            data = mask_json(answer)  # results go to a model: never a credential
            text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except EkkoError as exc:
        return _failed(exc.line().removeprefix("ekko-mem: "))
    except Exception as exc:  # noqa: BLE001  a bug: say what it was, keep serving
        return _failed(f"internal error: {type(exc).__name__}: {exc}")
    return {"content": [{"type": "text", "text": text}], "structuredContent": data,
            "isError": False}


def _failed(message: str) -> dict:
    return {"content": [{"type": "text", "text": _said(message)}], "isError": True}


def serve(*, workspace: str | None = None, session: str | None = None) -> None:
    """Serve the tools on stdin and stdout until the client closes stdin; one MemoryService
    for the process.

    Workspace and session come from the arguments, else EKKO_WORKSPACE / EKKO_SESSION (read by
    the service's Env), else the workspace found from the current folder and "default".
    """
    from .service import MemoryService
    service = MemoryService(workspace, session=session)
    try:
        cap = service.config.get("limits.line")
    except EkkoError:  # a bad config is the tools' to report; the default cap still holds
        cap = DEFAULTS["limits.line"]
    out, kept = sys.stdout.buffer, sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol stream
    try:
        Server(MemoryTools(service, session=session), line_limit=cap).run(sys.stdin.buffer, out)
    finally:
        sys.stdout = kept
        service.close()
