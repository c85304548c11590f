"""Renderers of logged messages: `log`, `history` (of a session, or the sessions), and message
search."""
from __future__ import annotations

from . import Renderer, human, machine, written


class LoggedView(Renderer):
    def diagnose(self, result) -> None:
        for note in result.notes:
            human.note(f"ekko-mem: note: {note}", quiet=self.quiet)

    def done(self, result) -> str:
        return written(m["id"] for m in result.messages)

    def json(self, result) -> None:
        machine.emit_jsonl(result.messages)

    def human(self, result) -> None:
        if not self.quiet:
            human.lines(m["id"] for m in result.messages)


class HistoryView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.data["messages"])

    def found(self, result) -> bool:
        return bool(result.data["messages"])

    def human(self, result) -> None:
        if self.quiet:
            return
        found = result.data["messages"]
        title = f"session {human.field(result.data['sessionId'])}"
        if human.piped():
            return human.tsv([[human.when(m["createdAt"]), m["id"], m["role"],
                               human.short(m["content"], 80)] for m in found])
        human.grid(title, ["time", "id\nrole", "content"],
                   [[human.when(m["createdAt"]), f"{m['id']}\n{human.field(m['role'])}",
                     human.field(human.short(m["content"], 80))] for m in found],
                   no_color=self.no_color)


class SessionsView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.sessions)

    def found(self, result) -> bool:
        return bool(result.sessions)

    def human(self, result) -> None:
        if not self.quiet:
            human.table("sessions", ["session", "messages", "first", "last"],
                        [[s["sessionId"], s["messages"], human.when(s["firstAt"]),
                          human.when(s["lastAt"])] for s in result.sessions],
                        no_color=self.no_color)


class MessageHitsView(Renderer):
    def found(self, result) -> bool:
        # weak matches alone are no match, as for memories: `query --messages -q` answers 5
        return any(not hit.get("weak") for hit in result.data["messages"])

    def human(self, result) -> None:
        if self.quiet:
            return
        hits = result.data["messages"]
        if not hits:
            human.note("no message matches")
            return
        strong = [hit for hit in hits if not hit.get("weak")]
        weak = [hit for hit in hits if hit.get("weak")]
        if human.piped():
            human.tsv(_message_rows(strong))
            if weak:
                human.lines(["weak"])
                human.tsv(_message_rows(weak))
            return
        for title, part in (("messages", strong), ("weak matches", weak)):
            if part:
                human.grid(title, ["id\nsession", "time\nrole", "message", "score"],
                           [[f"{m['id']}\n{human.field(m['sessionId'])}",
                             f"{human.when(m['createdAt'])}\n{human.field(m['role'])}",
                             human.field(" ".join(m["content"].split())), score]
                            for m, score in _scored(part)], no_color=self.no_color)


def _scored(hits: list[dict]) -> list[tuple[dict, str]]:
    return [(hit["message"], f"{hit['score']:.2f}") for hit in hits]


def _message_rows(hits: list[dict]) -> list[list[str]]:
    return [[m["id"], m["sessionId"], human.when(m["createdAt"]), m["role"],
             " ".join(m["content"].split()), score] for m, score in _scored(hits)]
