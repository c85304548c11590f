"""A deterministic summariser: the next summary from the previous one, the new messages and
the nodes extracted from them, in the conversation's language. No LLM needed."""
from __future__ import annotations

MAX_ITEMS = 8
GOAL_MARKERS = ("我想", "我要", "目标是", "目标：", "帮我", "我们要", "打算", "i want to",
                "i'd like to", "goal:", "our goal", "we need to", "help me", "let's", "let us")
DONE_MARKERS = ("完成了", "做完了", "搞定了", "已修复", "修好了", "done:", "done with",
                "finished", "fixed", "completed", "shipped")
TODO_MARKERS = ("todo", "待办", "下一步", "接下来", "还需要", "next:", "next step",
                "still need to", "remaining:")
ISSUE_MARKERS = ("bug", "报错", "错误", "问题是", "失败", "崩溃", "error", "fails", "failing",
                 "broken", "crash", "exception")


def _merge(old: list[str], new: list[str], drop: set[str] = frozenset()) -> list[str]:
    merged = [x for x in dict.fromkeys([*old, *new]) if x and x not in drop]
    return merged[-MAX_ITEMS:]


def _snippet(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _lines_with(messages: list[dict], markers) -> list[str]:
    found = []
    for msg in messages:
        lowered = msg["content"].lower()
        if any(marker in lowered for marker in markers):
            found.append(_snippet(msg["content"]))
    return found


def summarise(previous: dict | None, messages: list[dict], nodes: list[dict],
              chinese: bool) -> dict:
    prev = previous or {}
    titles = {kind: [n["title"] for n in nodes if n.get("type") in kinds]
              for kind, kinds in (("constraints", ("constraint",)),
                                  ("preferences", ("preference", "correction")),
                                  ("decisions", ("decision",)))}
    done = _lines_with(messages, DONE_MARKERS) + [
        n["title"] for n in nodes if n.get("type") == "task"
        and (n.get("valueJson") or {}).get("state") == "done"]
    todo = _lines_with([m for m in messages if m["role"] == "user"], TODO_MARKERS) + [
        n["title"] for n in nodes if n.get("type") == "task"
        and (n.get("valueJson") or {}).get("state") != "done"]
    goals = [m for m in messages if m["role"] == "user" and any(
        g in m["content"].lower() for g in GOAL_MARKERS)]
    draft = {
        "currentGoal": _snippet(goals[-1]["content"], 80) if goals else prev.get("currentGoal"),
        "constraints": _merge(prev.get("constraints", []), titles["constraints"]),
        "preferences": _merge(prev.get("preferences", []), titles["preferences"]),
        "decisions": _merge(prev.get("decisions", []), titles["decisions"]),
        "completedWork": _merge(prev.get("completedWork", []), done),
        "pendingWork": _merge(prev.get("pendingWork", []), todo, drop=set(done)),
        "knownIssues": _merge(prev.get("knownIssues", []), _lines_with(messages,
                                                                        ISSUE_MARKERS)),
    }
    draft["summary"] = _text(messages, nodes, chinese)
    return {k: v for k, v in draft.items() if v is not None}


def _text(messages: list[dict], nodes: list[dict], chinese: bool) -> str:
    users = [m for m in messages if m["role"] == "user"]
    others = len(messages) - len(users)
    first = _snippet(users[0]["content"], 40) if users else _snippet(messages[0]["content"], 40)
    recorded = "、".join(n["title"] for n in nodes[:4]) if chinese else \
        "; ".join(n["title"] for n in nodes[:4])
    if chinese:
        text = (f"新增 {len(messages)} 条消息（用户 {len(users)} 条，其他 {others} 条），"
                f"从“{first}”开始。")
        return text + (f"记录了：{recorded}。" if recorded else "")
    text = (f"{len(messages)} new messages ({len(users)} from the user, {others} other),"
            f" starting with \"{first}\".")
    return text + (f" Recorded: {recorded}." if recorded else "")
