"""How an audit event's copies of its node are stored: by reference to the node's row where
they can be, so that a node restated a thousand times does not cost a thousand copies of its
ever longer source list.

Two references, each read back against the row by `decode`:
- SAME_AS_NODE: the event's `after` is the row as it stands;
- {HEAD: n}: a copy's sourceMessageIds are the first n of the row's. A refresh appends the
  restating message to that list, so the copy before it, and the copy after the one before,
  are heads of it.

Whoever changes a row first calls `materialise` on the events that refer to it (store/nodes.py
_keep_copies), so a reader always gets exactly what was recorded.
"""
from __future__ import annotations

from .codec import SAME_AS_NODE, dumps

HEAD = "=head"
HEAD_JSON = '"=head"'
SOURCES = "sourceMessageIds"


def _is_copy(value, node_id: str) -> bool:
    return isinstance(value, dict) and value.get("id") == node_id


def holds_copy(payload, node_id: str) -> bool:
    """Whether a payload copies its node on either side: only then can it refer to the row."""
    return isinstance(payload, dict) and any(_is_copy(payload.get(side), node_id)
                                             for side in ("before", "after"))


def _headed(copy: dict, sources: list) -> dict:
    """`copy` with its source list as a head of `sources`, where it is one."""
    mine = copy.get(SOURCES)
    if isinstance(mine, list) and mine and mine == sources[:len(mine)]:
        return {**copy, SOURCES: {HEAD: len(mine)}}
    return copy


def _is_head(value) -> bool:
    return type(value) is dict and len(value) == 1 and type(value.get(HEAD)) is int \
        and value[HEAD] >= 0


def _unheaded(copy: dict, sources: list) -> dict:
    head = copy.get(SOURCES)
    return {**copy, SOURCES: sources[:head[HEAD]]} if _is_head(head) else copy


def encode(payload: dict, node_id: str, row: dict | None) -> dict:
    """A payload as stored, given its node's row as it stands after the change."""
    if row is None or not payload:
        return payload
    out = dict(payload)
    # Compared as stored: 1 and true are equal in Python but not in what was recorded.
    if _is_copy(payload.get("after"), node_id) and dumps(payload["after"]) == dumps(row):
        out["after"] = SAME_AS_NODE
    sources = row.get(SOURCES) or []
    for side in ("before", "after"):
        if _is_copy(out.get(side), node_id):
            out[side] = _headed(out[side], sources)
    return out


def decode(payload: dict, node_id: str, row: dict | None) -> dict:
    """A stored payload as recorded. An event whose node is gone (hard-deleted, its events
    scrubbed) has no row: its `after` reads as null and a head as no sources."""
    if not payload:
        return payload
    out = dict(payload)
    if out.get("after") == SAME_AS_NODE:
        out["after"] = row
    sources = (row or {}).get(SOURCES) or []
    for side in ("before", "after"):
        if _is_copy(out.get(side), node_id):
            out[side] = _unheaded(out[side], sources)
    return out


def refers(payload) -> bool:
    """Whether a stored payload reads anything from its node's row."""
    if not isinstance(payload, dict):
        return False
    return payload.get("after") == SAME_AS_NODE or any(
        isinstance(payload.get(side), dict) and _is_head(payload[side].get(SOURCES))
        for side in ("before", "after"))


def looks_stored(payload) -> bool:
    """Whether a payload from outside (an import) holds what only the store writes: a
    reference to the row, or anything in the place of a copy's source list but a list. No
    export holds either, and read back they would be taken for references."""
    if not isinstance(payload, dict):
        return False
    return payload.get("after") == SAME_AS_NODE or any(
        isinstance(payload.get(side), dict) and SOURCES in payload[side]
        and not isinstance(payload[side][SOURCES], list) for side in ("before", "after"))


def materialise(payload: dict, node_id: str, current: dict, new_sources: list | None) -> dict:
    """A stored payload that no longer depends on the row as `current` is, but may on the row
    about to be written, whose source list is `new_sources` (None: unchanged)."""
    sources = current.get(SOURCES) or []
    after = new_sources if new_sources is not None else sources
    out = decode(payload, node_id, current)
    for side in ("before", "after"):
        if _is_copy(out.get(side), node_id):
            out[side] = _headed(out[side], after)
    return out


def sources_kept(current: dict, new_sources: list | None) -> bool:
    """Whether every head of the current row's sources is still one of the new row's."""
    if new_sources is None:
        return True
    sources = current.get(SOURCES) or []
    return new_sources[:len(sources)] == sources
