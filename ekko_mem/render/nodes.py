"""Human renderings of nodes and `show` records."""
from __future__ import annotations

import json

from . import human


def memory_text(node: dict) -> str:
    if node.get("key") is not None:
        value = json.dumps(node.get("valueJson"), ensure_ascii=False)
        return f"{node['title']}  [{node['key']}={value}]"
    return node["title"]


def node_rows(nodes: list[dict]) -> list[list[str]]:
    return [[n["id"], n["scope"], n["type"], human.short(memory_text(n), 70), n["status"],
             f"{n['confidence']:.2f}"] for n in nodes]


def node_cells(nodes: list[dict]) -> list[list[str]]:
    """The same at a terminal, in three columns that fit 80: what is short goes under the id
    and the status, and the memory wraps."""
    return [[f"{n['id']}\n{n['scope']} {n['type']}", memory_text(n),
             f"{n['status']}\n{n['confidence']:.2f}"] for n in nodes]


def print_show(record: dict) -> None:
    kind = record["kind"]
    if kind == "node":
        node = record["node"]
        fields = [(k, node[k]) for k in ("id", "scope", "status", "domain", "categoryPath",
                                          "type", "key", "valueJson", "title", "content",
                                          "confidence", "importance", "tags", "entities",
                                          "sessionId", "expiresAt", "supersedesId", "actor",
                                          "createdAt", "updatedAt") if node.get(k) not in
                  (None, [], "")]
        human.lines([f"{k:13} {_plain(v, k)}" for k, v in fields])
        if len(record["chain"]) > 1:
            human.lines(["", "versions (oldest first):"] + [
                f"  {'*' if n['id'] == node['id'] else ' '} {n['id']} {n['status']:10}"
                f" {memory_text(n)}" for n in record["chain"]])
        if record["sources"]:
            human.lines(["", "source messages:"] + [
                f"  {m['id']} {human.when(m['createdAt'])} [{m['role']}]"
                f" {human.short(m['content'], 70)}"
                for m in record["sources"]])
        if record.get("externalSources"):
            human.lines(["", "source messages logged elsewhere:"] + [
                f"  {ref['ref']} ({_where(ref)})" for ref in record["externalSources"]])
        if record["events"]:
            human.lines(["", "audit:"] + [
                f"  {human.when(e['createdAt'])} {e['id']} {e['eventType']:9} {e['actor']:9}"
                f" {e['reason']}"
                for e in record["events"]])
        return
    body = record.get(kind)
    human.lines([f"{k:16} {_plain(v, k)}" for k, v in body.items() if v not in (None, [], "")])
    if kind == "message" and record["nodes"]:
        human.lines(["", "memories from this message:"] + [
            f"  {n['id']} {n['status']:10} {memory_text(n)}" for n in record["nodes"]])
    if kind == "summary" and record["parents"]:
        human.lines(["", "earlier summaries: " + " <- ".join(record["parents"])])


def _where(ref: dict) -> str:
    if ref.get("root"):
        return f"in the workspace at {ref['root']}"
    if ref.get("workspaceId"):
        return "in a workspace whose folder is not known here"
    return "not in this workspace's log or the user db's"


def _plain(value, name: str = "") -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if name.endswith("At") and isinstance(value, str):  # createdAt, expiresAt, ...
        return human.when(value)
    return str(value)
