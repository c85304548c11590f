"""Renderers of logged messages: `log`, `history` (of a session, or the sessions), and message
search."""
from __future__ import annotations

from . import Renderer, human, machine


class LoggedView(Renderer):
    def diagnose(self, result) -> None:
        for note in result.notes:
            human.note(f"ekko-mem: note: {note}", quiet=self.quiet)

    def json(self, result) -> None:
        machine.emit_jsonl(result.messages)

    def human(self, result) -> None:
        if not self.quiet:
            human.lines([m["id"] for m in result.messages])


class HistoryView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.data["messages"])

    def human(self, result) -> None:
        rows = [[m["createdAt"], m["id"], m["role"], human.short(m["content"], 80)]
                for m in result.data["messages"]]
        human.table(f"session {result.data['sessionId']}", ["time", "id", "role", "content"],
                    rows, no_color=self.no_color)


class SessionsView(Renderer):
    def json(self, result) -> None:
        machine.emit_jsonl(result.sessions)

    def human(self, result) -> None:
        human.table("sessions", ["session", "messages", "first", "last"],
                    [[s["sessionId"], s["messages"], s["firstAt"], s["lastAt"]]
                     for s in result.sessions], no_color=self.no_color)


class MessageHitsView(Renderer):
    def human(self, result) -> None:
        rows = [[hit["message"]["id"], hit["message"]["sessionId"],
                 hit["message"]["createdAt"][:16].replace("T", " "), hit["message"]["role"],
                 " ".join(hit["message"]["content"].split()), f"{hit['score']:.2f}"]
                for hit in result.data["messages"]]
        if rows:
            human.table("messages", ["id", "session", "at", "role", "message", "score"], rows,
                        no_color=self.no_color)
        else:
            human.note("no message matches")
