"""Upper bounds on what a caller may ask retrieval for: past these a request is a mistake,
and would only cost memory and time."""
from __future__ import annotations

from ..errors import UsageError

MAX = {"limit": 10_000, "budget": 1_000_000}
QUESTION_CHARS = 4_000   # a longer question is read up to here
MAX_TERMS = 64           # informative terms looked up per question


def check_limit(name: str, value: int) -> None:
    if value > MAX[name]:
        raise UsageError(f"{name} {value} is too large (at most {MAX[name]:,})",
                         f"ask for {MAX[name]:,} or less")
