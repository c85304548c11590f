"""When is a new summary worth making? The design's triggers, as a pure check."""
from __future__ import annotations

MIN_MESSAGES = 6
TOKEN_THRESHOLD = 800
EXPLICIT = ("记住", "以后", "决定", "纠正", "不对", "改成", "目标", "remember", "from now on",
            "decided", "we will", "actually", "correction", "goal", "must", "always", "never")
TASK_WORDS = ("todo", "待办", "完成了", "做完了", "done", "finished", "fixed", "blocked")


def summary_triggers(messages: list[dict], count_tokens) -> list[str]:
    """Why a summary is due now (empty: not yet)."""
    reasons = []
    if len(messages) >= MIN_MESSAGES:
        reasons.append(f"{len(messages)} new messages (>= {MIN_MESSAGES})")
    tokens = sum(count_tokens(m["content"]) for m in messages)
    if tokens >= TOKEN_THRESHOLD:
        reasons.append(f"{tokens} new tokens (>= {TOKEN_THRESHOLD})")
    said = " ".join(m["content"].lower() for m in messages if m["role"] == "user")
    if any(word in said for word in EXPLICIT):
        reasons.append("an explicit preference, decision, correction or goal")
    if any(word in said for word in TASK_WORDS):
        reasons.append("a task state change")
    return reasons
