"""Human renderings of nodes and `show` records."""
from __future__ import annotations

import json

from . import human


def memory_text(node: dict) -> str:
    """A memory's title (and key and value) as one line, to stand in a row."""
    if node.get("key") is not None:
        value = json.dumps(node.get("valueJson"), ensure_ascii=False)
        return human.field(f"{node['title']}  [{node['key']}={value}]")
    return human.field(node["title"])


def node_rows(nodes: list[dict]) -> list[list[str]]:
    return [[n["id"], n["scope"], n["type"], human.short(memory_text(n), 70), n["status"],
             f"{n['confidence']:.2f}"] for n in nodes]


def node_cells(nodes: list[dict]) -> list[list[str]]:
    """The same at a terminal, in three columns that fit 80: what is short goes under the id
    and the status, and the memory wraps."""
    return [[f"{n['id']}\n{human.field(n['scope'])} {human.field(n['type'])}", memory_text(n),
             f"{human.field(n['status'])}\n{n['confidence']:.2f}"] for n in nodes]


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
        human.lines([f"{k:13} {_plain(v, k, 14)}" for k, v in fields])
        if len(record["chain"]) > 1:
            human.lines(["", "versions (oldest first):"] + [
                f"  {'*' if n['id'] == node['id'] else ' '} {n['id']} {human.field(n['status']):10}"
                f" {memory_text(n)}" for n in record["chain"]])
        cut = record.get("chainCut")
        if cut:
            why = ("its link leads back into its own chain" if cut.get("why") == "cycle"
                   else "the chain is longer than a walk follows")
            human.lines([f"versions stop at {human.field(cut.get('at', ''))}: {why};"
                         " 'ekko-mem doctor' says how to repair it"])
        if record["sources"]:
            human.lines(["", "source messages:"] + [
                f"  {m['id']} {human.when(m['createdAt'])} [{human.field(m['role'])}]"
                f" {human.field(human.short(m['content'], 70))}"
                for m in record["sources"]])
        if record.get("externalSources"):
            human.lines(["", "source messages logged elsewhere:"] + [
                f"  {human.field(ref['ref'])} ({_where(ref)})"
                for ref in record["externalSources"]])
        if record["events"]:
            human.lines(["", "audit:"] + [
                f"  {human.when(e['createdAt'])} {e['id']} {human.field(e['eventType']):9}"
                f" {human.field(e['actor']):9} {human.field(e['reason'])}"
                for e in record["events"]])
        return
    body = record[kind]
    human.lines([f"{k:16} {_plain(v, k, 17)}" for k, v in body.items()
                 if v not in (None, [], "")])
    if kind == "message" and record["nodes"]:
        human.lines(["", "memories from this message:"] + [
            f"  {n['id']} {human.field(n['status']):10} {memory_text(n)}"
            for n in record["nodes"]])
    if kind == "summary" and record["parents"]:
        human.lines(["", "earlier summaries: " + " <- ".join(map(human.field,
                                                                 record["parents"]))])


def _where(ref: dict) -> str:
    if ref.get("root"):
        return f"in the workspace at {human.field(ref['root'])}"
    if ref.get("workspaceId"):
        return "in a workspace whose folder is not known here"
    return "not in this workspace's log or the user db's"


# Fields whose text may take several lines: each line after the first is indented to the value
# column, so none can pass for a field of its own. Every other field is one line.
MULTILINE = {"content", "summary"}


def _plain(value, name: str, column: int) -> str:
    if isinstance(value, (dict, list)):  # JSON: a newline or tab inside is written as \n, \t
        return human.field(json.dumps(value, ensure_ascii=False))
    if name.endswith("At") and isinstance(value, str):  # createdAt, expiresAt, ...
        return human.when(value)
    if name in MULTILINE:
        return human.hang(value, " " * column)
    return human.field(value)
