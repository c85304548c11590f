"""Row <-> record conversion. Records are plain dicts in the design's camelCase JSON shape."""
from __future__ import annotations

import json

from ..canonical import canonical_json as dumps


def loads(text):
    return None if text is None else json.loads(text)


MESSAGE_COLUMNS = "id, session_id, parent_id, role, content, metadata_json, created_at"


def message_from_row(row) -> dict:
    out = {"id": row[0], "sessionId": row[1], "role": row[3], "content": row[4],
           "createdAt": row[6]}
    if row[2] is not None:
        out["parentId"] = row[2]
    if row[5] is not None:
        out["metadata"] = json.loads(row[5])
    return out


def message_to_row(msg: dict) -> tuple:
    meta = msg.get("metadata")
    return (msg["id"], msg["sessionId"], msg.get("parentId"), msg["role"], msg["content"],
            dumps(meta) if meta else None, msg["createdAt"])


NODE_COLUMNS = (
    "id, parent_id, supersedes_id, session_id, workspace_id, user_id, scope, domain,"
    " category_path_json, category_path_text, type, key, value_json, title, content, status,"
    " confidence, importance, tags_json, entities_json, source_message_ids_json, explicit,"
    " actor, created_at, updated_at, expires_at"
)
_OPTIONAL = ("parentId", "supersedesId", "sessionId", "workspaceId", "userId")


def node_from_row(row) -> dict:
    out: dict = {"id": row[0]}
    for name, value in zip(_OPTIONAL, row[1:6]):
        if value is not None:
            out[name] = value
    out.update(scope=row[6], domain=row[7], categoryPath=json.loads(row[8]), type=row[10])
    if row[11] is not None:
        out["key"] = row[11]
    if row[12] is not None:
        out["valueJson"] = json.loads(row[12])
    out.update(
        title=row[13], content=row[14], status=row[15], confidence=row[16],
        importance=row[17], tags=json.loads(row[18]), entities=json.loads(row[19]),
        sourceMessageIds=json.loads(row[20]), explicit=bool(row[21]), actor=row[22],
        createdAt=row[23], updatedAt=row[24],
    )
    if row[25] is not None:
        out["expiresAt"] = row[25]
    return out


def node_to_row(node: dict) -> tuple:
    path = node.get("categoryPath") or []
    value = node.get("valueJson")
    return (
        node["id"], node.get("parentId"), node.get("supersedesId"), node.get("sessionId"),
        node.get("workspaceId"), node.get("userId"), node["scope"], node["domain"],
        dumps(path), "/".join(path), node["type"], node.get("key"),
        None if value is None else dumps(value), node["title"], node["content"],
        node["status"], float(node["confidence"]), float(node["importance"]),
        dumps(node.get("tags") or []), dumps(node.get("entities") or []),
        dumps(node.get("sourceMessageIds") or []), int(bool(node.get("explicit"))),
        node.get("actor") or "user", node["createdAt"], node["updatedAt"], node.get("expiresAt"),
    )


SUMMARY_LISTS = ("constraints", "preferences", "decisions", "completedWork", "pendingWork",
                 "knownIssues")
SUMMARY_COLUMNS = (
    "id, session_id, parent_summary_id, from_message_id, to_message_id, summary, current_goal,"
    " constraints_json, preferences_json, decisions_json, completed_work_json,"
    " pending_work_json, known_issues_json, needs_regeneration, created_at"
)


def summary_from_row(row) -> dict:
    out = {"id": row[0], "sessionId": row[1]}
    if row[2] is not None:
        out["parentSummaryId"] = row[2]
    out.update(fromMessageId=row[3], toMessageId=row[4], summary=row[5])
    if row[6] is not None:
        out["currentGoal"] = row[6]
    for name, text in zip(SUMMARY_LISTS, row[7:13]):
        out[name] = json.loads(text)
    out["needsRegeneration"] = bool(row[13])
    out["createdAt"] = row[14]
    return out


def summary_to_row(summary: dict) -> tuple:
    return (
        summary["id"], summary["sessionId"], summary.get("parentSummaryId"),
        summary["fromMessageId"], summary["toMessageId"], summary["summary"],
        summary.get("currentGoal"), *(dumps(summary.get(k) or []) for k in SUMMARY_LISTS),
        int(bool(summary.get("needsRegeneration"))), summary["createdAt"],
    )


# An event's `after` that is the node's own row (store/nodes.py keeps it so): never a node
# or a dict, so it cannot be mistaken for one.
SAME_AS_NODE = "=node"
SAME_AS_NODE_JSON = '"after":"=node"'

def copies_its_node(event: dict) -> bool:
    """Whether an event records its node as it stands: nothing before, a copy of the node
    after. Such a copy is SAME_AS_NODE while it equals the node's row."""
    payload = event.get("payload")
    if not payload:
        return False
    return payload.get("before") is None and bool(event.get("nodeId")) \
        and isinstance(payload.get("after"), dict) \
        and payload["after"].get("id") == event["nodeId"]


EVENT_COLUMNS = ("id, event_type, node_id, session_id, workspace_id, user_id, actor, reason,"
                 " payload_json, created_at")


def event_from_row(row) -> dict:
    out = {"id": row[0], "eventType": row[1]}
    for name, value in zip(("nodeId", "sessionId", "workspaceId", "userId"), row[2:6]):
        if value is not None:
            out[name] = value
    out.update(actor=row[6], reason=row[7], payload=loads(row[8]), createdAt=row[9])
    return out


def event_to_row(event: dict) -> tuple:
    payload = event.get("payload")
    return (event["id"], event["eventType"], event.get("nodeId"), event.get("sessionId"),
            event.get("workspaceId"), event.get("userId"), event["actor"], event["reason"],
            None if payload is None else dumps(payload), event["createdAt"])
