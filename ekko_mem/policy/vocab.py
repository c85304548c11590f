"""The design's closed vocabularies, checked with an error that lists what is allowed."""
from __future__ import annotations

from ..errors import Rejected

ROLES = ("user", "assistant", "system", "tool")
SCOPES = ("session", "workspace", "user", "global")
TYPES = ("preference", "fact", "decision", "task", "recipe", "skill", "constraint", "correction",
         "habit")
STATUSES = ("active", "superseded", "expired", "deleted")
OPERATIONS = ("create", "update", "supersede", "expire", "delete")
EXTRACT_OPERATIONS = ("create", "update", "supersede", "expire", "ignore")
ACTORS = ("user", "agent", "extractor", "import", "system")
OMIT_REASONS = ("expired", "superseded", "low_confidence", "conflict_lost", "over_limit")
FORMATS = ("text", "markdown", "json")

# Scope order for conflicts and lookups: nearer wins.
SCOPE_RANK = {"session": 0, "workspace": 1, "user": 2, "global": 3}


def choose(kind: str, value: str, allowed: tuple[str, ...]) -> str:
    text = (value or "").strip().lower()
    if text not in allowed:
        raise Rejected(f"unknown {kind} {value!r}", f"use one of: {', '.join(allowed)}")
    return text
