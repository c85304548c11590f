"""A deterministic summariser: the next summary from the previous one, the new messages and
the nodes extracted from them, in the conversation's language. No LLM needed.

The summary's text says what the new messages add (goal, decisions, constraints, preferences,
what got done, what is still open), in the words of the memories and sentences that say it;
each item once, however many ways it was said."""
from __future__ import annotations

MAX_ITEMS = 8
# Items of each kind the text names (the newest); the lists keep up to MAX_ITEMS.
SHOWN = 3
GOAL_MARKERS = ("我想", "我要", "目标是", "目标：", "帮我", "我们要", "打算", "i want to",
                "i'd like to", "goal:", "our goal", "we need to", "help me", "let's", "let us")
DONE_MARKERS = ("完成了", "做完了", "搞定了", "已完成", "已修复", "修好了", "done:", "done with",
                "finished", "fixed", "completed", "shipped")
TODO_MARKERS = ("todo", "待办", "下一步", "接下来", "还需要", "next:", "next step",
                "still need to", "remaining:")
ISSUE_MARKERS = ("bug", "报错", "错误", "问题是", "失败", "崩溃", "error", "fails", "failing",
                 "broken", "crash", "exception")
# Words that only label an item as done or to do ("TODO: 写迁移测试", "完成了：写迁移测试",
# "部署脚本搞定了"): the item is what is left once they are gone.
LABELS = ("to-do", "todo", "待办事项", "待办", "下一步", "接下来", "next step", "next",
          "remaining", "done with", "done", "完成了", "做完了", "搞定了", "已完成")
SENTENCE_ENDS = "。！？!?；;\n"
PUNCTUATION = " \t:：,，.。;；!！?？-—、"
WORDS = {  # (Chinese, English) for the parts of the summary's text
    "goal": ("目标", "Goal"), "decisions": ("决定", "Decided"),
    "constraints": ("约束", "Constraints"), "preferences": ("偏好", "Preferences"),
    "completedWork": ("已完成", "Done"), "pendingWork": ("待办", "Pending"),
    "knownIssues": ("问题", "Issues"), "topic": ("聊到", "Talked about"),
}


def summarise(previous: dict | None, messages: list[dict], nodes: list[dict],
              chinese: bool) -> dict:
    prev = previous or {}
    new = _new_items(messages, nodes)
    open_, new["completedWork"] = _close(_merge(prev.get("pendingWork", []),
                                                new["pendingWork"]), new["completedWork"])
    done = _merge(prev.get("completedWork", []), new["completedWork"])
    draft = {
        "currentGoal": new["goal"] or prev.get("currentGoal"),
        **{kind: _merge(prev.get(kind, []), new[kind])
           for kind in ("constraints", "preferences", "decisions", "knownIssues")},
        "completedWork": done, "pendingWork": open_,
    }
    draft["summary"] = _text({**new, "pendingWork": open_}, messages, chinese)
    return {k: v for k, v in draft.items() if v is not None}


def _new_items(messages: list[dict], nodes: list[dict]) -> dict:
    """What these messages add, each kind in order said. A message a task was made from is
    said by that task's title, not a second time by its own words."""
    tasks = [n for n in nodes if n.get("type") == "task"]
    told = {mid for n in tasks for mid in n.get("sourceMessageIds") or []}
    untold = [m for m in messages if m["id"] not in told]
    titles = {kind: _unique(n["title"] for n in nodes if n.get("type") in kinds)
              for kind, kinds in (("constraints", ("constraint",)),
                                  ("preferences", ("preference", "correction")),
                                  ("decisions", ("decision",)))}
    is_done = [(n.get("valueJson") or {}).get("state") == "done" for n in tasks]
    goals = _sentences_with([m for m in messages if m["role"] == "user"], GOAL_MARKERS, 80)
    return {
        **titles,
        "goal": goals[-1] if goals else None,
        "completedWork": _unique([*_sentences_with(untold, DONE_MARKERS),
                                  *(t["title"] for t, d in zip(tasks, is_done) if d)]),
        "pendingWork": _unique([*_sentences_with([m for m in untold if m["role"] == "user"],
                                                 TODO_MARKERS),
                                *(t["title"] for t, d in zip(tasks, is_done) if not d)]),
        "knownIssues": _unique(_sentences_with(messages, ISSUE_MARKERS)),
    }


def _sentences_with(messages, markers, width: int = 60) -> list[str]:
    """The sentences holding one of `markers`, each without its done/to-do label."""
    found = []
    for msg in messages:
        for sentence in _sentences(msg["content"]):
            lowered = sentence.lower()
            if any(marker in lowered for marker in markers):
                item = _unlabelled(sentence)
                if item:
                    found.append(_snippet(item, width))
    return found


def _sentences(text: str) -> list[str]:
    for end in SENTENCE_ENDS:
        text = text.replace(end, "\n")
    return [s.strip() for s in text.replace(". ", ".\n").split("\n") if s.strip()]


def _unlabelled(sentence: str) -> str:
    text = sentence.strip(PUNCTUATION)
    for label in LABELS:
        lowered = text.lower()
        if lowered.startswith(label) and (not label.isascii() or lowered[len(label):][:1]
                                          in ("", " ", ":", "：")):
            text = text[len(label):].strip(PUNCTUATION)
        elif lowered.endswith(label) and not label.isascii():
            text = text[: -len(label)].strip(PUNCTUATION)
    return text


def _snippet(text: str, width: int = 60) -> str:
    flat = " ".join(text.split()).strip(PUNCTUATION)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _key(text: str) -> str:
    """What two wordings of one item share: letters and digits, lower-cased."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _unique(items) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(_key(item), item)
    return [item for key, item in seen.items() if key]


def _merge(old: list[str], new: list[str]) -> list[str]:
    """The parent's items and the new ones, each once (the newer wording wins), newest last."""
    latest = {_key(item): item for item in [*old, *new] if _key(item)}
    return list(latest.values())[-MAX_ITEMS:]


def _close(pending: list[str], done: list[str]) -> tuple[list[str], list[str]]:
    """(what stays pending, what was done): a done item closes the pending item with the same
    words, or the one that holds the words of the statement (as a 'done' closes a task, see
    policy.tasks; a statement that fits several items equally closes none). A closed item is
    done in its pending wording ("write the README", not "the README")."""
    from ..policy.tasks import named_tasks
    keys = {_key(item): item for item in pending}
    candidates = [{"title": item, "content": ""} for item in pending]
    finished = []
    for said in done:
        named = named_tasks(said, candidates) if _key(said) not in keys else []
        finished.append(named[0]["title"] if len(named) == 1 else said)
    closed = {_key(item) for item in finished}
    return [item for item in pending if _key(item) not in closed], _unique(finished)


def _text(items: dict, messages: list[dict], chinese: bool) -> str:
    """The summary in a few short sentences: the goal, then each kind's newest items."""
    parts = [("goal", [items["goal"]] if items["goal"] else [])] + [
        (kind, items[kind][-SHOWN:]) for kind in ("decisions", "constraints", "preferences",
                                                  "completedWork", "pendingWork",
                                                  "knownIssues")]
    said = [(WORDS[kind], values) for kind, values in parts if values]
    if not said:
        users = [m for m in messages if m["role"] == "user"] or messages
        said = [(WORDS["topic"], _unique(_snippet(m["content"], 30) for m in users)[:SHOWN])]
    if chinese:
        return "".join(f"{zh}：{'；'.join(values)}。" for (zh, _), values in said)
    return " ".join(f"{en}: {'; '.join(values)}." for (_, en), values in said)
