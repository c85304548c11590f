"""JSON and JSON Lines on stdout, written plainly."""
from __future__ import annotations

import json
import sys

from ..policy.printable import json_safe


def dump(obj) -> str:
    return json_safe(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def emit_json(obj, out=None) -> None:
    out = out or sys.stdout
    out.write(json_safe(json.dumps(obj, ensure_ascii=False, indent=2)) + "\n")


def emit_jsonl(rows, out=None) -> None:
    out = out or sys.stdout
    for row in rows:
        out.write(dump(row) + "\n")
