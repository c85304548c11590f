"""How an audit event's copies of its node are stored: by reference to the node's row where
they can be, so that a node restated a thousand times does not cost a thousand copies of its
ever longer source list.

Two references, each read back against the row by `decode`:
- SAME_AS_NODE: the event's `after` is the row as it stands;
- {HEAD: n}: a copy's sourceMessageIds are the first n of the row's. A refresh appends the
  restating message to that list, so the copy before it, and the copy after the one before,
  are heads of it.

And one difference: an event's `before`, where it is a copy of the same node as its `after`,
is kept as {"id", DIFF: the fields that differ, DROP: the fields it lacks} when that is
shorter, and read back from the `after`. A refresh or an edit changes a few fields of a node,
so its event holds one copy of the node, not two. The id stays at the top, so an erasure
treats a difference as it treats a copy (store/erasure.py _scrub).

Whoever changes a row first calls `materialise` on the events that refer to it (store/nodes.py
_keep_copies), so a reader always gets exactly what was recorded.
"""
from __future__ import annotations

from .codec import SAME_AS_NODE, dumps

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import TypeGuard

HEAD = "=head"
HEAD_JSON = '"=head"'
DIFF = "=diff"
DROP = "=drop"
SOURCES = "sourceMessageIds"


def _is_copy(value, node_id: str) -> TypeGuard[dict]:
    return isinstance(value, dict) and value.get("id") == node_id


def holds_copy(payload, node_id: str) -> TypeGuard[dict]:
    """Whether a payload copies its node on either side: only then can it refer to the row."""
    return isinstance(payload, dict) and any(_is_copy(payload.get(side), node_id)
                                             for side in ("before", "after"))


def _headed(copy: dict, sources: list) -> dict:
    """`copy` with its source list as a head of `sources`, where it is one."""
    mine = copy.get(SOURCES)
    if isinstance(mine, list) and mine and mine == sources[:len(mine)]:
        return {**copy, SOURCES: {HEAD: len(mine)}}
    return copy


def _is_head(value) -> TypeGuard[dict]:
    return type(value) is dict and len(value) == 1 and type(value.get(HEAD)) is int \
        and value[HEAD] >= 1


def _unheaded(copy: dict, sources: list) -> dict:
    """A head reads as the row's first n sources; one the row cannot hold (longer than its
    list: not a head the store wrote) reads as it is."""
    head = copy.get(SOURCES)
    if _is_head(head) and head[HEAD] <= len(sources):
        return {**copy, SOURCES: sources[:head[HEAD]]}
    return copy


def _is_diff(value, node_id: str) -> TypeGuard[dict]:
    """Only the exact shape the store writes reads as a difference; anything else as it is:
    the id, the changed fields (never the id), and where present a non-empty list of the
    distinct fields dropped, none of them changed or the id."""
    if type(value) is not dict or value.get("id") != node_id or type(value.get(DIFF)) \
            is not dict or "id" in value[DIFF] or not set(value) <= {"id", DIFF, DROP}:
        return False
    if DROP not in value:
        return True
    drop = value[DROP]
    return type(drop) is list and bool(drop) and all(type(key) is str for key in drop) \
        and len(set(drop)) == len(drop) and "id" not in drop \
        and not set(drop) & set(value[DIFF])


def _diffed(before, after, node_id: str):
    """`before` as what it changes of `after` (both whole copies of the node), where that is
    shorter. Compared as stored: 1 and true are equal in Python but not in what was recorded."""
    if not (_is_copy(before, node_id) and _is_copy(after, node_id)):
        return before
    changed = {key: value for key, value in before.items()
               if key not in after or dumps(value) != dumps(after[key])}
    diff = {"id": node_id, DIFF: changed}
    dropped = [key for key in after if key not in before]
    if dropped:
        diff[DROP] = dropped
    return diff if len(dumps(diff)) < len(dumps(before)) else before


def _undiffed(value, after, node_id: str):
    if not (_is_diff(value, node_id) and _is_copy(after, node_id)) \
            or not set(value.get(DROP, ())) <= set(after):
        return value
    drop, diff = set(value.get(DROP, ())), value[DIFF]
    # In the after's key order, which is the order a copy of a node was written in.
    out = {k: diff.get(k, v) for k, v in after.items() if k not in drop}
    out.update((k, v) for k, v in diff.items() if k not in out)
    return out


def _sources_of(value):
    if not isinstance(value, dict):
        return None
    inner = value.get(DIFF)
    return inner.get(SOURCES) if isinstance(inner, dict) else value.get(SOURCES)


def encode(payload: dict, node_id: str, row: dict | None) -> dict:
    """A payload as stored, given its node's row as it stands after the change."""
    if row is None or not isinstance(payload, dict) or not payload:
        return payload
    return _stored(payload, node_id, row.get(SOURCES) or [], row)


def _stored(payload: dict, node_id: str, sources: list, row: dict | None) -> dict:
    """A whole payload as stored: heads of `sources`, `after` as SAME_AS_NODE where it is
    `row` as stored, `before` as a difference from `after`."""
    out = dict(payload)
    after = payload.get("after")
    if row is not None and _is_copy(after, node_id) and dumps(after) == dumps(row):
        out["after"] = SAME_AS_NODE
    elif _is_copy(after, node_id):
        out["after"] = _headed(after, sources)
    before = payload.get("before")
    if _is_copy(before, node_id):
        out["before"] = _diffed(_headed(before, sources), _headed(after, sources)
                                if _is_copy(after, node_id) else after, node_id)
    return out


def decode(payload: dict, node_id: str, row: dict | None) -> dict:
    """A stored payload as recorded. An event whose node is gone (hard-deleted, its events
    scrubbed) has no row: its `after` reads as null and a head as it is stored."""
    if not isinstance(payload, dict) or not payload:
        return payload
    out = dict(payload)
    if out.get("after") == SAME_AS_NODE:
        out["after"] = row
    sources = (row or {}).get(SOURCES) or []
    after = out.get("after")
    headed_after = _headed(after, sources) if _is_copy(after, node_id) else after
    if _is_diff(out.get("before"), node_id):
        out["before"] = _undiffed(out["before"], headed_after, node_id)
    for side in ("before", "after"):
        if _is_copy(out.get(side), node_id):
            out[side] = _unheaded(out[side], sources)
    return out


def refers(payload) -> bool:
    """Whether a stored payload reads anything from its node's row."""
    if not isinstance(payload, dict):
        return False
    return payload.get("after") == SAME_AS_NODE or any(
        _is_head(_sources_of(payload.get(side))) for side in ("before", "after"))


def encoded(payload, node_id: str) -> bool:
    """Whether a stored payload must be decoded to read as recorded."""
    return refers(payload) or (isinstance(payload, dict)
                               and _is_diff(payload.get("before"), node_id))


def looks_stored(payload) -> bool:
    """Whether a payload from outside (an import) holds what only the store writes: a
    reference to the row, a difference, or anything in the place of a copy's source list but
    a list. No export holds any, and read back they would be taken for references."""
    if not isinstance(payload, dict):
        return False
    return payload.get("after") == SAME_AS_NODE or any(
        isinstance(payload.get(side), dict) and (
            DIFF in payload[side] or SOURCES in payload[side]
            and not isinstance(payload[side][SOURCES], list)) for side in ("before", "after"))


def materialise(payload: dict, node_id: str, current: dict, new_sources: list | None) -> dict:
    """A stored payload that no longer depends on the row as `current` is, but may on the row
    about to be written, whose source list is `new_sources` (None: unchanged)."""
    sources = current.get(SOURCES) or []
    return _stored(decode(payload, node_id, current), node_id,
                   new_sources if new_sources is not None else sources, None)


def sources_kept(current: dict, new_sources: list | None) -> bool:
    """Whether every head of the current row's sources is still one of the new row's."""
    if new_sources is None:
        return True
    sources = current.get(SOURCES) or []
    return new_sources[:len(sources)] == sources
