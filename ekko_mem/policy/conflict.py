"""The design's conflict order, as one sort key, and slot grouping for same-kind memories.

session > workspace > user > global; unexpired > expired; explicit user statement > model
inference; temporary constraint > long-term preference; newer > older; higher confidence;
higher importance.
"""
from __future__ import annotations

from ..canonical import canonical_json
from .schema import STATE_KEYS
from .vocab import SCOPE_RANK


def rank_key(node: dict, now: str) -> tuple:
    expired = node.get("status") == "expired" or bool(
        node.get("expiresAt") and node["expiresAt"] <= now)
    temporary = node.get("expiresAt") is not None and not expired
    explicit = node.get("explicit") or node.get("actor") == "user"
    return (SCOPE_RANK.get(node["scope"], 9), expired, not explicit, not temporary,
            _desc(node.get("updatedAt", "")), -float(node.get("confidence", 0)),
            -float(node.get("importance", 0)))


def _desc(text: str) -> tuple:
    # Newer first inside an ascending sort: compare code points negated.
    return tuple(-ord(c) for c in text)


def slot(node: dict, is_single) -> tuple | None:
    """Nodes in the same slot compete; None means the node competes with no one."""
    key = node.get("key")
    if key is None or key in STATE_KEYS:  # a task competes with no other task
        return None
    if is_single(key):
        return (node["domain"], node["type"] == "task", key)
    return (node["domain"], key, canonical_json(node.get("valueJson")))


def resolve(nodes: list[dict], now: str, is_single) -> tuple[list[dict], list[dict]]:
    """(winners in conflict order, losers): one winner per slot. `is_single(key)` tells
    whether a key holds one value (then any two values compete) or many."""
    ordered = sorted(nodes, key=lambda n: rank_key(n, now))
    seen: set = set()
    winners, losers = [], []
    for node in ordered:
        place = slot(node, is_single)
        if place is not None and place in seen:
            losers.append(node)
            continue
        if place is not None:
            seen.add(place)
        winners.append(node)
    return winners, losers
