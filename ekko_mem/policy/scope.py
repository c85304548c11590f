"""Who may write which scope, and how a proposed node's scope is settled."""
from __future__ import annotations

# Words that mark a passing state: such memory never enters long-term user scope.
TEMPORARY_WORDS = ("今天", "今晚", "今日", "这周", "本周", "暂时", "最近", "这几天", "现在有点",
                   "today", "tonight", "this week", "for now", "temporarily", "right now",
                   "at the moment")
WORKSPACE_TYPES_FOR_AGENTS = ("fact", "constraint", "decision", "task", "recipe", "skill")


def default_scope(node: dict, rule: dict | None, actor: str) -> str:
    from .schema import HEALTH_KEYS
    if node.get("key") in HEALTH_KEYS and (actor == "user" or node.get("explicit")):
        return "user"  # an allergy holds in every session and every workspace
    if rule is not None:
        scope = rule["defaultScope"]
        if scope == "user" and actor != "user" and not node.get("explicit"):
            return "session"
        return scope
    if node["type"] in ("constraint", "decision", "fact", "task", "skill", "recipe"):
        return "workspace"  # project technical constraints default to workspace, never user
    return "user" if actor == "user" or node.get("explicit") else "session"


def looks_temporary(node: dict) -> bool:
    text = f"{node.get('title', '')} {node.get('content', '')}".lower()
    return any(word in text for word in TEMPORARY_WORDS)


def check_write(scope: str, actor: str, node: dict) -> tuple[str, str]:
    """('ok' | 'demote' | 'reject' | 'confirm', reason) for writing `node` at `scope`."""
    if scope == "global":
        return "reject", "global scope is read-only data shipped with ekko-mem"
    if scope == "session":
        return "ok", ""
    if scope == "workspace":
        if actor in ("user", "import", "system") or node["type"] in WORKSPACE_TYPES_FOR_AGENTS:
            return "ok", ""
        return "demote", ("workspace scope takes project facts, constraints, decisions and"
                          " tasks from an agent; kept in session scope")
    # user scope: long-term, so only what the user said explicitly
    if node.get("expiresAt") is None and looks_temporary(node):
        return "demote", "a temporary state with no expiresAt never enters user scope"
    if actor == "user" or node.get("explicit"):
        return "ok", ""
    if actor == "extractor":
        return "demote", "an inferred preference never reaches user scope unconfirmed"
    return "confirm", ("user scope needs the user's explicit intent (记住, 以后都,"
                       " remember, from now on); confirm to write it")
