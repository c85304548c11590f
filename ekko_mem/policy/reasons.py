"""Why a memory was written, worded from what was finally decided, in one place.

A rule knows what it found (an allergy, a passing state); only the write decides the scope,
after policy has had its say. Worded here from the stored node, the reason cannot say "kept to
this session" about a memory that went to user scope.
"""
from __future__ import annotations

WHERE = {"user": "kept in user scope, for every workspace", "workspace": "kept in this workspace",
         "session": "kept to this session", "global": "shipped with ekko-mem"}


def explain(said: str, node: dict, actor: str) -> str:
    """`said` (the rule's finding or the caller's reason), then who said it, then where it is
    kept and until when, all read from the node as written."""
    if actor == "user":
        intent = "stated by the user"
    elif node.get("explicit"):
        intent = "said explicitly"
    else:
        intent = "inferred, not said explicitly"
    scope = node.get("scope")
    where = WHERE.get(scope or "", f"kept in {scope} scope")
    if node.get("expiresAt"):
        where += f" until {node['expiresAt'][:16].replace('T', ' ')} UTC"
    return f"{(said or 'remembered').strip()}; {intent}; {where}"
