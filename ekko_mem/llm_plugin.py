"""ekko-mem inside `llm` (Simon Willison's command-line tool): the memory context as a
fragment, the memory tools as a toolbox.

    llm -f ekko:"今晚吃什么？" "今晚吃什么？"
    llm -f ekko:budget=300:"今晚吃什么？" "今晚吃什么？"
    llm -T Ekko "记住：我不吃香菜"

llm finds this module through the `llm` entry point in pyproject.toml and imports it on every
run, so it imports nothing of ekko-mem until a fragment or a tool is used. Both go through
the MCP tools' own methods (mcp_tools.MemoryTools) with actor "agent": the same scope rules,
confirmations, credential masking and refusals as `ekko-mem mcp`. Nothing in ekko_mem imports
this module, and ekko-mem runs without llm.
"""
from __future__ import annotations

import inspect
import json
import sys
from typing import Optional

import llm

PREFIX = "ekko"
BUDGET = "budget="
EXAMPLE = f"{PREFIX}:{BUDGET}300:QUESTION"


@llm.hookimpl
def register_fragment_loaders(register):
    register(PREFIX, memory_context)


@llm.hookimpl
def register_tools(register):
    register(Ekko)


def parse_argument(argument: str) -> tuple[Optional[int], str]:
    """(budget, question) from what follows `ekko:`: QUESTION, or budget=N:QUESTION."""
    if not argument.startswith(BUDGET):
        return None, argument
    raw, _, question = argument[len(BUDGET):].partition(":")
    if not (raw.strip().isascii() and raw.strip().isdigit()):
        raise ValueError(f"ekko-mem: budget {raw!r} is not a whole number of tokens;"
                         f" write it like {EXAMPLE}")
    return int(raw), question


def memory_context(argument: str) -> llm.Fragment:
    """The text `ekko-mem context QUESTION` prints, for the workspace and session ekko-mem
    finds here (EKKO_WORKSPACE or the current folder, EKKO_SESSION), within the budget
    given or configured. Like the command it never fails for want of memory: it is empty,
    with the reason on stderr."""
    budget, question = parse_argument(argument)
    request: dict = {"text": question}
    if budget is not None:
        request["budget"] = budget
    reply = _run(None, None, lambda tools: tools.context(request),
                 fix=f"; write it like {EXAMPLE}")
    for warning in reply.data.get("warnings", ()):
        print(f"ekko-mem: warning: {warning}", file=sys.stderr)
    return llm.Fragment(reply.text, f"{PREFIX}:{argument}")


class Ekko(llm.Toolbox):
    """Long-term memory of this user and project (ekko-mem)."""

    def __init__(self, workspace: Optional[str] = None, session: Optional[str] = None):
        # Left out, they are found as ekko-mem finds them: EKKO_WORKSPACE or the current
        # folder, EKKO_SESSION or "default".
        self.workspace = workspace
        self.session = session

    def search(self, query: str, limit: int = 10) -> str:
        """Search long-term memory when the answer may depend on what was said before.
        Returns JSON {exact, relevant}: rows {id, type, title, valueJson?, score?}; a row
        marked weak is a guess; ids under omitted must not be used as current."""
        return self._answer(lambda tools: tools.search({"queryText": query, "limit": limit}))

    def remember(self, title: str, reason: str, type: str = "fact",
                 scope: Optional[str] = None, key: Optional[str] = None,
                 value: Optional[str] = None, content: Optional[str] = None,
                 domain: Optional[str] = None, explicit: bool = False,
                 confirm: bool = False) -> str:
        """Remember something at once when the user explicitly asks (记住, 以后都, remember,
        from now on). type: preference, fact, decision, task, constraint, recipe, skill or
        correction. scope: user (a lasting personal fact or preference; needs explicit
        true), workspace (this project), session (this conversation); never global.
        key: a controlled key such as avoid_ingredient, flavor_profile, allergy, language,
        framework, test_command, with value its value (JSON or plain text); leave both out
        when none fits. Returns JSON: accepted false means nothing was written, never say
        remembered; requiresConfirmation: ask the user, then call again with confirm true."""
        def propose(tools):
            node = {"title": title, "type": type, "scope": scope, "key": key,
                    "valueJson": tools.service.value_from_text(value), "content": content,
                    "domain": domain, "explicit": explicit or None}
            request = {"operation": "create", "reason": reason,
                       "node": {k: v for k, v in node.items() if v is not None}}
            return tools.propose(request, confirm=confirm)
        return self._answer(propose)

    def forget(self, id: str, reason: str) -> str:
        """Forget one memory by its id (from search) when the user asks to forget it (忘掉,
        不要再记, forget this): it is no longer retrieved, its history stays in the audit.
        Returns JSON {deletedIds, mode}; empty deletedIds: nothing was forgotten."""
        return self._answer(lambda tools: tools.forget({"id": id, "reason": reason}))

    def _answer(self, work) -> str:
        answer = _run(self.workspace, self.session, work)
        from ekko_mem.policy.sensitive import mask_json
        # What a tool returns goes to a model: never a credential, as the MCP server says.
        return json.dumps(mask_json(answer), ensure_ascii=False, separators=(",", ":"))


# A model reads each description with every prompt: the source's indentation is only noise.
for _method in (Ekko.search, Ekko.remember, Ekko.forget):
    _method.__doc__ = inspect.cleandoc(_method.__doc__ or "")


class ToolFailed(Exception):
    """A failure (no memory db, an argument of the wrong kind), worded as ekko-mem's error
    line; llm gives the model "Error: <line>" and records the call as failed. A refusal is
    no failure: it is the answer, as the MCP tools give it."""


def _run(workspace, session, work, fix: str = ""):
    """work(MemoryTools) over a MemoryService opened for this call only; ekko-mem's errors
    and bad arguments become one line."""
    from pydantic import ValidationError

    from ekko_mem import MemoryService
    from ekko_mem.errors import EkkoError
    from ekko_mem.mcp_tools import MemoryTools
    from ekko_mem.models import validation_message
    from ekko_mem.policy.sensitive import mask_secrets
    try:
        with MemoryService(workspace, session=session) as memory:
            return work(MemoryTools(memory, session=session))
    except EkkoError as exc:  # masked here, where the line leaves for the model
        raise ToolFailed(mask_secrets(exc.line())) from None
    except ValidationError as exc:
        raise ToolFailed(mask_secrets(f"ekko-mem: {validation_message(exc)}{fix}")) from None
