"""JSON and JSON Lines on stdout, written plainly."""
from __future__ import annotations

import json
import sys

from ..policy.printable import json_safe


def dump(obj) -> str:
    return json_safe(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def jsonl_lines(rows):
    """Each row as one JSON line, lazily: an export streams from the db."""
    return (dump(row) + "\n" for row in rows)


def emit_json(obj, out=None) -> None:
    out = out or sys.stdout
    out.write(json_safe(json.dumps(obj, ensure_ascii=False, indent=2)) + "\n")


def emit_jsonl(rows, out=None) -> None:
    out = out or sys.stdout
    for line in jsonl_lines(rows):
        out.write(line)
