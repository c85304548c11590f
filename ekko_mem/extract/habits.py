"""Habits: routines of one's own life (我每天早上七点起床跑步, "I usually cook on Sundays").

A routine belongs to the person, not the project, so it is kept in user scope; what is only
true today is a passing state, and a routine of the codebase is a project rule, not a habit.
"""
from __future__ import annotations

from .text import Item, Turn, clip, first, without_request
from .vocab import HABIT_EN, HABIT_PATH_EN, HABIT_PATH_ZH, HABIT_ZH, TECH_EN, TECH_ZH


def habit_item(sentence: str, turn: Turn) -> Item | None:
    if turn.temporary or first(TECH_ZH if turn.zh else TECH_EN, sentence):
        return None
    match = first(HABIT_ZH if turn.zh else HABIT_EN, sentence)
    if not match or not match.group("x").strip(" ，,。.!！"):
        return None
    said = without_request(sentence)
    path = list(HABIT_PATH_ZH if turn.zh else HABIT_PATH_EN)
    node = {"scope": "user", "domain": path[0], "categoryPath": path, "type": "habit",
            "title": clip(said, 60), "content": said + ("。" if turn.zh else "."),
            "confidence": 0.9, "importance": 0.6, "tags": [path[1]], "entities": [],
            "sourceMessageIds": [turn.message_id], "explicit": True}
    return {"operation": "create", "node": node, "reason": "a routine of the user's own"}
