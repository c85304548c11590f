"""`ekko-mem mcp`: the design's four memory tools, served to an agent over MCP on stdio.

The server is an adapter like the CLI: each tool validates its input with the design's
pydantic models, makes one MemoryService call with actor "agent", and returns the service's
own result (the same dicts `ekko-mem query/forget --json` print). The agent never writes SQL
and never bypasses the scope policy: user scope needs node.explicit, global is refused, broad
or hard forgets come back with requiresConfirmation.

Built on the SDK's high-level server (MCPServer in mcp 2, called FastMCP in mcp 1): tool
input schemas come from the typed signatures below, which spell out the design's fields, and
its tool-error path turns a raised ToolError into an is-error result carrying our message.
Imported only by `actions.do_mcp`, so no other command pays for the SDK.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from .errors import EkkoError
from .models import ForgetRequest, MemoryQuery, NodeDraft, ProposeUpdate, validation_message
from .policy.vocab import OPERATIONS, SCOPES, TYPES

ACTOR = "agent"
Scope = Literal[SCOPES]  # type: ignore[valid-type]
NodeType = Literal[TYPES]  # type: ignore[valid-type]
Operation = Literal[OPERATIONS]  # type: ignore[valid-type]
Text = str | None

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
        selector = {k: v for k, v in selector.items() if v is not None}
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


def _register(server, tools: MemoryTools, guarded, keys: str) -> None:
    @server.tool(description=SEARCH_DOC)
    def memory_search(
        queryText: Annotated[Text, Field(description="Words to search for (full text).")] = None,
        scopes: Annotated[list[Scope] | None, Field(
            description="Only these scopes (session, workspace, user, global).")] = None,
        domain: Annotated[Text, Field(description="e.g. 生活技能 or engineering.")] = None,
        categoryPathPrefix: Annotated[list[str] | None, Field(
            description="e.g. [\"生活技能\", \"做饭\"].")] = None,
        types: Annotated[list[NodeType] | None, Field(description="Only these types.")] = None,
        key: Annotated[Text, Field(description="A controlled key, e.g. avoid_ingredient.")] = None,
        valueJson: Annotated[Any, Field(description="The key's value, e.g. \"香菜\".")] = None,
        tags: Annotated[list[str] | None, Field(description="Has all these tags.")] = None,
        entities: Annotated[list[str] | None, Field(
            description="Mentions all these entities.")] = None,
        userId: Annotated[Text, Field(description="Usually left out.")] = None,
        workspaceId: Annotated[Text, Field(description="Usually left out.")] = None,
        sessionId: Annotated[Text, Field(
            description="Whose session memory to see; defaults to this server's session.")] = None,
        includeExpired: Annotated[bool, Field(description="Also expired memories.")] = False,
        includeSuperseded: Annotated[bool, Field(
            description="Also older, superseded versions.")] = False,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 20,
    ) -> dict[str, Any]:
        query = {"queryText": queryText, "scopes": scopes, "domain": domain,
                 "categoryPathPrefix": categoryPathPrefix, "types": types, "key": key,
                 "valueJson": valueJson, "tags": tags, "entities": entities, "userId": userId,
                 "workspaceId": workspaceId, "sessionId": sessionId,
                 "includeExpired": includeExpired, "includeSuperseded": includeSuperseded,
                 "limit": limit}
        return guarded(lambda: tools.search(query))

    @server.tool(description=GET_DOC)
    def memory_get(
        id: Annotated[Text, Field(description="A memory id (or a unique prefix).")] = None,
        type: Annotated[NodeType | None, Field(description="Memory type.")] = None,
        key: Annotated[Text, Field(description="A controlled key.")] = None,
        valueJson: Annotated[Any, Field(description="The key's value.")] = None,
        scope: Annotated[Scope | None, Field(description="Only this scope.")] = None,
        domain: Annotated[Text, Field(description="Only this domain.")] = None,
    ) -> dict[str, Any]:
        selector = {"id": id, "type": type, "key": key, "valueJson": valueJson,
                    "scope": scope, "domain": domain}
        return guarded(lambda: tools.get(selector))

    @server.tool(description=PROPOSE_DOC.replace("{keys}", keys))
    def memory_propose_update(
        operation: Annotated[Operation, Field(description="What to do.")],
        node: Annotated[NodeDraft, Field(
            description="Partial<MemoryNode>: the fields to write; the service fills the rest.")],
        reason: Annotated[str, Field(description="Why, in a few words.")],
        targetId: Annotated[Text, Field(
            description="The memory to update, supersede, expire or delete.")] = None,
        confirm: Annotated[bool, Field(
            description="True only after the user confirmed this change.")] = False,
    ) -> dict[str, Any]:
        request = {"operation": operation, "targetId": targetId,
                   "node": node.model_dump(exclude_none=True), "reason": reason}
        return guarded(lambda: tools.propose(request, confirm=confirm))

    @server.tool(description=FORGET_DOC)
    def memory_forget(
        reason: Annotated[str, Field(description="Why, in a few words.")],
        id: Annotated[Text, Field(description="One memory's id.")] = None,
        scope: Annotated[Scope | None, Field(description="Only this scope.")] = None,
        domain: Annotated[Text, Field(description="Only this domain.")] = None,
        categoryPathPrefix: Annotated[list[str] | None, Field(
            description="e.g. [\"生活技能\", \"做饭\", \"饮食偏好\"].")] = None,
        type: Annotated[NodeType | None, Field(description="Only this type.")] = None,
        key: Annotated[Text, Field(description="Only this controlled key.")] = None,
        valueJson: Annotated[Any, Field(description="Only this value of the key.")] = None,
        mode: Annotated[Literal["soft", "hard"], Field(
            description="soft (default) or hard (erase for good).")] = "soft",
        confirm: Annotated[bool, Field(
            description="True only after the user confirmed the candidates.")] = False,
    ) -> dict[str, Any]:
        request = {"id": id, "scope": scope, "domain": domain,
                   "categoryPathPrefix": categoryPathPrefix, "type": type, "key": key,
                   "valueJson": valueJson, "mode": mode, "reason": reason}
        return guarded(lambda: tools.forget(request, confirm=confirm))


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
