"""`graph`: an entity, then one row per edge with the time it held and the time it was known."""
from __future__ import annotations

from . import Renderer, human


def _span(start, end) -> str:
    if not start and not end:
        return ""
    return f"{start or '?'}..{end or ''}"


def _known(edge: dict) -> str:
    since = human.when(edge["recordedAt"])
    return f"{since} .. {human.when(edge['retiredAt'])}" if edge["retiredAt"] else since


class EntityGraphView(Renderer):
    def human(self, result) -> None:
        if self.quiet:
            return
        data = result.data
        entity = data["entity"]
        head = f"{entity['name']} ({entity['kind']})"
        if entity["aliases"]:
            head += f", also {', '.join(entity['aliases'])}"
        if data["asOf"]:
            head += f", as of {human.when(data['asOf'])}"
        rows = [[e["subject"], e["relation"], e["object"] or e["value"] or "",
                 e["value"] if e["object"] else "", _span(e["validFrom"], e["validTo"]),
                 _known(e)] for e in data["edges"]]
        human.table(head, ["subject", "relation", "object", "said", "held", "known"], rows,
                    no_color=self.no_color, heading=True)
        if not rows:
            human.lines(["no edges" + (" then" if data["asOf"] else "")])
        if data["truncated"]:
            human.lines([f"first {len(rows)} edges only"])
        said = data.get("messages") or []
        if said:
            human.lines([f"said in {len(said)} message{'s' if len(said) > 1 else ''}"
                         f"{' (the newest)' if len(said) >= 10 else ''}: "
                         + ", ".join(m["id"] for m in said)])
