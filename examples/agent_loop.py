"""An agent loop over ekko-mem's Python API: context before each reply, log and extract after.

Run it against a throwaway workspace (it is created if needed):

    python examples/agent_loop.py /tmp/demo-workspace
    EKKO_WORKSPACE=/tmp/demo-workspace python examples/agent_loop.py

`model()` stands in for an LLM so the example runs offline; in a real agent it is your model
call, given `context.text` as the memory part of its prompt.
"""
from __future__ import annotations

import os
import sys
import tempfile

from ekko_mem import MemoryService
from ekko_mem.models import ForgetRequest, MemoryContext, MemoryQuery

TURNS = ["记住，我以后做饭不要香菜。", "今晚做什么菜？", "忘掉我不吃香菜这件事。", "那今晚呢？"]


def model(memory: str, message: str) -> tuple[str, ForgetRequest | None]:
    """A stand-in LLM: a reply, and a memory_forget call when the user asks to forget."""
    if "忘掉" in message:
        return "好的，已经忘掉了。", ForgetRequest(
            domain="生活技能", type="preference", key="avoid_ingredient", valueJson="香菜",
            reason="用户明确要求忘记该饮食偏好")
    if "记住" in message:
        return "好的，记住了。", None
    if "避免香菜" in memory:
        return "推荐番茄炒蛋，不放香菜。", None
    return "推荐凉拌黄瓜，多放香菜。", None


def turn(memory: MemoryService, message: str) -> None:
    print(f"user: {message}")
    # Before the reply: the least memory the model needs, validated as the design's type.
    context = MemoryContext.model_validate(memory.build_context(message))
    print(f"  memory in context: {len(context.preferences)} preference(s)")
    reply, forget = model(context.text or "", message)
    if forget is not None:
        # A tool call from the model goes through the service's policy, as actor "agent".
        done = memory.forget(forget.model_dump(exclude_none=True, exclude={"mode", "reason"}),
                             mode=forget.mode, reason=forget.reason, actor="agent")
        print(f"  forgot: {len(done['deletedIds'])} memory")
    print(f"assistant: {reply}")
    # After the reply: log both sides, then turn what is new into memory.
    memory.log_message(message, role="user")
    memory.log_message(reply, role="assistant")
    for result in memory.extract()["results"]:
        if result["accepted"]:
            print(f"  remembered in {result['scope']} scope: {result['reason']}")


def main(argv: list[str]) -> int:
    workspace = argv[1] if len(argv) > 1 else os.environ.get("EKKO_WORKSPACE")
    workspace = workspace or tempfile.mkdtemp(prefix="ekko-demo-")
    os.makedirs(workspace, exist_ok=True)
    with MemoryService(workspace, session="demo") as memory:
        memory.init_workspace(workspace, gitignore=False)  # a no-op when it already exists
        for message in TURNS[:2]:
            turn(memory, message)
        # The same exact lookup the memory_search tool makes, built as a typed MemoryQuery.
        query = MemoryQuery(types=["preference"], key="avoid_ingredient")
        found = memory.retrieve(query.model_dump(exclude_none=True))
        print("avoid_ingredient:", ", ".join(n["valueJson"] for n in found["exact"]))
        for message in TURNS[2:]:
            turn(memory, message)
        summary = memory.summarize()["summary"]
        print("summary:", summary["summary"] if summary else "-")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
