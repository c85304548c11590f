"""Canonical JSON text: equal values are equal text, so exact valueJson lookups can compare."""
from __future__ import annotations

import json


def canonical_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
