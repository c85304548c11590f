"""Renderer of `explain`: which memories a context run used, their sources and reasons."""
from __future__ import annotations

from . import Renderer, human


class ExplanationView(Renderer):
    def human(self, result) -> None:
        if self.quiet:
            return
        data = result.data
        out = [f"context {human.field(data['contextId'])} ({human.when(data['createdAt'])})"
               + (f" for: {human.field(data['queryText'])}" if data.get("queryText") else "")]
        found = data.get("retrieval") or {}
        if found:
            out.append(f"ranked list: {found['candidatesConsidered']} candidates considered,"
                       f" {found['ranked']} ranked, {found['packed']} packed,"
                       f" {found['cutForBudget']} cut for the budget,"
                       f" {found['belowRelevanceFloor']} below the relevance floor")
        for item in data["items"]:
            out += _item_lines(item)
        for entry in found.get("entities") or []:
            said = ", ".join(entry.get("from") or [])
            out.append(f"- a line on {human.field(entry['name'])} ({entry['kind']},"
                       f" {entry['id']}) read from {said}" if entry.get("name") else
                       f"- a line on an entity not found now: erased, or its db cannot be"
                       f" read ({entry['id']})")
        for entry in found.get("leftOut") or []:
            out.append(f"- left out {entry['kind']} {entry['id']}"
                       f" ({WHY_LEFT_OUT.get(entry['reason'], entry['reason'])})"
                       + (f": {_short(entry['title'], 60)}" if entry.get("title") else ""))
        human.lines(out)


WHY_LEFT_OUT = {"source_retired": "the memory taken from it was since replaced or forgotten",
                "off_topic": "private, and the question is not about its topic"}


def _item_lines(item: dict) -> list[str]:
    """Stored text (titles, reasons, sessions) as fields: each line of the view stays one
    line, whatever newline or bidi control the text holds."""
    rank = f"  [found by {', '.join(item['via'])}]" if item.get("via") else ""
    if item["kind"] != "node":
        return [f"- {item['kind']} {item['id']}: {_short(item['title'], 70)}{rank}"]
    out = [f"- {human.field(item['title'])}  ({item['id']}, {item.get('scope', '?')}){rank}"]
    if item.get("reason"):
        out.append(f"    why: {human.field(item['reason'])}")
    out += [f"    from {human.field(source['sessionId'])} at {human.when(source['createdAt'])}:"
            f" {_short(source['content'], 60)}" for source in item.get("sources", [])]
    return out


def _short(text: str, width: int) -> str:
    return human.short(human.field(text), width)
