"""`ekko-mem mcp`: the design's four memory tools, served to an agent over MCP on stdio.

The server is an adapter like the CLI: each tool validates its input with the design's
pydantic models, makes one MemoryService call with actor "agent", and returns the service's
own result (the same dicts the query and forget commands print as JSON). The agent never writes SQL
and never bypasses the scope policy: user scope needs node.explicit, global is refused, broad
or hard forgets come back with requiresConfirmation.

Built on the SDK's high-level server (MCPServer in mcp 2, called FastMCP in mcp 1): each
tool's input schema is one of the design's models (MemoryQuery, MemorySelector, ProposeUpdate,
ForgetRequest), its fields turned into the keyword signature the SDK reads, and its tool-error
path turns a raised ToolError into an is-error result carrying our message.
Imported only by `actions.do_mcp`, so no other command pays for the SDK.
"""
from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError

from .errors import EkkoError
from .models import (ForgetRequest, MemoryQuery, MemorySelector, ProposeUpdate,
                     validation_message)

ACTOR = "agent"
CONFIRM = "confirm"

INSTRUCTIONS = """Long-term memory for this user and project (ekko-mem). A memory context is
usually injected before each turn; use memory_search or memory_get when you need more. When
the user explicitly asks you to remember something, call memory_propose_update at once; when
they ask you to forget something, call memory_forget. Only say "remembered" or "forgotten"
after the tool answered accepted=true or returned deletedIds."""


def sdk() -> tuple[type, type[Exception]]:
    """(server class, ToolError) of the installed SDK: MCPServer in mcp 2, FastMCP in mcp 1."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        from mcp.server.fastmcp import FastMCP as MCPServer
        from mcp.server.fastmcp.exceptions import ToolError
    return MCPServer, ToolError


def _answer(result: dict) -> dict:
    """A service answer for an agent: exit codes mean nothing here, a needless False is noise."""
    out = {k: v for k, v in result.items() if k != "code"}
    if not out.get("requiresConfirmation"):
        out.pop("requiresConfirmation", None)
    return out


class MemoryTools:
    """The four tools over one MemoryService; plain methods, so they work without the SDK.

    Calls are serialised: the SDK may run sync tools on worker threads, and one SQLite
    connection must not interleave two transactions.
    """

    def __init__(self, service, *, session: str | None = None) -> None:
        self.service = service
        self.session = session  # the explicit --session, passed on as the CLI passes its own
        self._lock = threading.Lock()

    def call(self, method: Callable, *args, **kwargs):
        with self._lock:
            return method(*args, **kwargs)

    def search(self, query: dict) -> dict:
        q = MemoryQuery.model_validate(query).model_dump(exclude_none=True)
        return self.call(self.service.retrieve, q)

    def get(self, selector: dict) -> dict:
        selector = MemorySelector.model_validate(selector).model_dump(exclude_none=True)
        node = self.call(self.service.memory_get, selector)
        if node is None:
            return {"found": False, "reason": "no memory matches that selector"}
        return node

    def propose(self, request: dict, *, confirm: bool = False) -> dict:
        proposal = ProposeUpdate.model_validate(request)
        node = proposal.node.model_dump(exclude_none=True)
        result = self.call(self.service.propose_update, proposal.operation, node,
                           target_id=proposal.targetId, reason=proposal.reason, actor=ACTOR,
                           confirm=confirm, session=self.session)
        return _answer(result)

    def forget(self, request: dict, *, confirm: bool = False) -> dict:
        forget = ForgetRequest.model_validate(request)
        selector = forget.model_dump(exclude_none=True, exclude={"mode", "reason"})
        result = self.call(self.service.forget, selector, mode=forget.mode,
                           reason=forget.reason, confirm=confirm, actor=ACTOR)
        return _answer(result)


def describe_keys(rules: list[dict]) -> str:
    """The controlled keys, grouped, for a tool description: a model must not invent keys."""
    groups: dict[tuple, dict] = {}
    for rule in rules:
        where = tuple(rule.get("categoryPathPrefix") or ())
        group = groups.setdefault((where, tuple(rule["allowedKeys"])),
                                  {"domains": [], "types": []})
        for field, value in (("domains", rule["domain"]), ("types", rule["type"])):
            if value not in group[field]:
                group[field].append(value)
    lines = []
    for (where, keys), group in groups.items():
        domains = "any domain" if group["domains"] == ["*"] else (
            "domain " + " | ".join(group["domains"]))
        path = f", categoryPath starting {list(where)}" if where else ""
        lines.append(f"  - {domains}{path}, type {' | '.join(group['types'])}: "
                     f"{', '.join(keys)}")
    return "\n".join(lines)


SEARCH_DOC = """Search long-term memory. Call it when the answer may depend on what the user
or project said before (preferences, constraints, decisions, tasks) and the injected memory
context does not cover it. Structured fields (scopes, domain, categoryPathPrefix, types, key,
valueJson, tags, entities) give `exact` matches; queryText is full-text search and gives
`relevant` matches; combine them freely. Read-only.
Returns {exact: MemoryNode[], relevant: MemoryNode[], omitted: [{nodeId, reason}]}: omitted
lists what was left out and why (expired, superseded, low_confidence, conflict_lost,
over_limit); never use an omitted memory as current."""

GET_DOC = """Get one memory: by id, or the current (winning, active) memory for a type, key,
valueJson, scope or domain, e.g. {type: "preference", key: "avoid_ingredient"}. Read-only.
Returns the MemoryNode, or {found: false, reason} when nothing matches."""

PROPOSE_DOC = """Propose a change to long-term memory; the memory service checks scope, schema
and conflicts, then writes it or refuses. Call it at once when the user explicitly asks to
keep something (记住, 以后都, 帮我记录, remember, from now on); otherwise leave memory to the
background extractor.
- operation: create a new memory; update a small edit of targetId (same meaning); supersede
  targetId with a new version (the old one is kept as history); expire or delete targetId.
- node.scope: "user" for a lasting personal preference or fact, and only when the user
  explicitly asked for it to be remembered; then also set node.explicit = true. "workspace"
  for project facts, constraints, decisions and tasks. "session" for temporary state of this
  conversation (今天, for now). "global" is never allowed. Never set explicit = true for
  something you inferred yourself.
- node.key / node.valueJson: for exact recall. Never invent keys; use one of these, or leave
  key out and give title and content only:
{keys}
  avoid_ingredient, preferred_ingredient, dietary_restriction, preferred_cuisine and
  cooking_time_preference take a string (valueJson "香菜"); flavor_profile takes an object
  such as {"oil": "low", "spicy": "low"}.
- reason: why, in a few words (e.g. 用户明确要求记录长期饮食偏好).
- confirm: true only when the user has just confirmed this exact change after an answer with
  requiresConfirmation.
Returns {accepted, nodeId, reason, operation?, scope?, notes?}. accepted false means nothing was
written: do not tell the user it was remembered. requiresConfirmation true means ask the user
first (reason says why), then call again with confirm true if they agree."""

FORGET_DOC = """Forget memories when the user asks (忘掉, 不要再记, 删除, forget this). Select by
id, or by scope, domain, categoryPathPrefix, type, key and valueJson together.
- mode "soft" (default): the memory is no longer retrieved or injected; the audit trail stays.
  mode "hard": erased for good with its older versions; only when the user asks to erase it
  completely (privacy).
- When several memories match, or for any hard delete, nothing is deleted: the answer has
  requiresConfirmation true and the candidates. Show them to the user, and call again with
  confirm true only after the user agreed.
Returns {deletedIds, mode, requiresConfirmation?, reason?, candidates?}. An empty deletedIds
means nothing was forgotten."""


def _keys_text(service) -> str:
    try:
        rules = service.schema.rules
    except EkkoError:  # a broken config.toml: describe the built-in rules, calls will say why
        from .policy.schema import BUILTIN_RULES
        rules = BUILTIN_RULES
    return describe_keys(rules)


def build_server(tools: MemoryTools):
    """An SDK server with the four tools registered; `run("stdio")` serves it."""
    server_cls, tool_error = sdk()
    server = server_cls("ekko-mem", instructions=INSTRUCTIONS, log_level="WARNING")

    def guarded(work: Callable[[], dict]) -> dict:
        # Every failure is a tool-error result with a plain message; the server keeps running.
        try:
            from .policy.sensitive import mask_json
            return mask_json(work())  # results go to a model: never a credential
        except EkkoError as exc:
            raise tool_error(exc.line().removeprefix("ekko-mem: ")) from None
        except ValidationError as exc:
            raise tool_error(f"invalid input: {validation_message(exc)}") from None
        except Exception as exc:  # noqa: BLE001  a bug: say what it was, keep serving
            raise tool_error(f"internal error: {type(exc).__name__}: {exc}") from None

    _register(server, tools, guarded, _keys_text(tools.service))
    return server


def parameters(model: type[BaseModel], *, confirm: str = "") -> list[inspect.Parameter]:
    """A model's fields as keyword parameters (type, constraints, default, description), so
    the SDK derives the tool's input schema from the model; `confirm` adds that flag."""
    params = []
    for name, info in model.model_fields.items():
        field = Field(description=info.description)
        default = inspect.Parameter.empty
        if info.default_factory is not None:  # made per call, and no default shown in the schema
            field = Field(description=info.description, default_factory=info.default_factory)
        elif not info.is_required():
            default = info.default
        kind = Annotated[(info.annotation, *info.metadata, field)]
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=kind))
    if confirm:
        params.append(inspect.Parameter(CONFIRM, inspect.Parameter.KEYWORD_ONLY, default=False,
                                        annotation=Annotated[bool, Field(description=confirm)]))
    return params


def _tool(server, name: str, description: str, params: list, run: Callable[[dict], dict]):
    def tool(**arguments) -> dict[str, Any]:
        return run(arguments)
    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])
    server.tool(description=description)(tool)


def _register(server, tools: MemoryTools, guarded, keys: str) -> None:
    def propose(arguments: dict) -> dict:
        confirm = arguments.pop(CONFIRM)
        request = {**arguments, "node": arguments["node"].model_dump(exclude_none=True)}
        return guarded(lambda: tools.propose(request, confirm=confirm))

    def forget(arguments: dict) -> dict:
        confirm = arguments.pop(CONFIRM)
        return guarded(lambda: tools.forget(arguments, confirm=confirm))

    _tool(server, "memory_search", SEARCH_DOC, parameters(MemoryQuery),
          lambda arguments: guarded(lambda: tools.search(arguments)))
    _tool(server, "memory_get", GET_DOC, parameters(MemorySelector),
          lambda arguments: guarded(lambda: tools.get(arguments)))
    _tool(server, "memory_propose_update", PROPOSE_DOC.replace("{keys}", keys),
          parameters(ProposeUpdate, confirm="True only after the user confirmed this change."),
          propose)
    _tool(server, "memory_forget", FORGET_DOC,
          parameters(ForgetRequest, confirm="True only after the user confirmed the candidates."),
          forget)


def serve(*, workspace: str | None = None, session: str | None = None) -> None:
    """Serve the tools on stdio until the client closes; one MemoryService for the process.

    Workspace and session come from the arguments, else EKKO_WORKSPACE / EKKO_SESSION (read by
    the service's Env), else the workspace found from the current folder and "default".
    """
    from .service import MemoryService
    service = MemoryService(workspace, session=session)
    try:
        build_server(MemoryTools(service, session=session)).run("stdio")
    finally:
        service.close()
