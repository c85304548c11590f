"""Bytes per node under storage changes the schema does not make: what each would save.

Usage (from the repository root):
    python -m bench.footprint_whatif                  # 10k
    python -m bench.footprint_whatif --size 100k --json

A copy of a built bench workspace (bench/build.py, cached as `python -m bench` caches them)
is rewritten one change at a time, each on top of the ones before, and vacuumed after each;
dbstat then gives the bytes of the nodes table with its indexes, and of the audit events
table with its indexes (FTS apart, as bench/inproc.py's footprint counts them). The rewrites
only measure: the copy is not a db ekko-mem could read afterwards.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from .build import ensure_workspace, label, parse_size
from .transfer import _binary

ENUMS = {"scope": ("workspace", "session", "user", "global"),
         "status": ("active", "superseded", "expired", "deleted"),
         "type": ("preference", "fact", "decision", "task", "recipe", "skill", "constraint",
                  "correction")}


def _times_as_integers(db) -> None:
    for table, columns in (("memory_nodes", ("created_at", "updated_at", "expires_at")),
                           ("memory_audit_events", ("created_at",))):
        for column in columns:
            db.execute(f"update {table} set {column} = cast(round((julianday({column})"
                       f" - 2440587.5) * 86400000) as integer) where {column} is not null")


def _owner_implied(db) -> None:
    db.execute("update memory_nodes set workspace_id = null")
    db.execute("update memory_audit_events set workspace_id = null")


def _category_once(db) -> None:
    db.execute("update memory_nodes set category_path_json = ''")


def _enums_as_integers(db) -> None:
    for column, values in ENUMS.items():
        for code, value in enumerate(values, start=1):
            db.execute(f"update memory_nodes set {column} = ? where {column} = ?", (code, value))
    for column in ("tags_json", "entities_json", "source_message_ids_json"):
        db.execute(f"update memory_nodes set {column} = '' where {column} = '[]'")


def _create_payload_marker(db) -> None:
    db.execute("update memory_audit_events set payload_json = '=' where event_type = 'create'"
               " and payload_json like '%\"after\":\"=node\"%'")


def _create_event_in_row(db) -> None:
    db.execute("delete from memory_audit_events where event_type = 'create'")


def _no_category_index(db) -> None:
    db.execute("drop index if exists idx_memory_nodes_category")


CHANGES = [
    ("times as integer milliseconds (24 bytes -> 6)", _times_as_integers),
    ("workspace id left implied by the db", _owner_implied),
    ("category path stored once (no JSON copy)", _category_once),
    ("scope, status and type as small integers; empty lists as ''", _enums_as_integers),
    ("create event's payload as a one-byte marker", _create_payload_marker),
    ("no create event row (folded into the node row)", _create_event_in_row),
    ("no category index (prefix listings scan)", _no_category_index),
]


def measure(db) -> dict:
    db.execute("vacuum")
    sizes = dict(db.execute("select name, sum(pgsize) from dbstat group by name"))
    nodes = db.execute("select count(*) from memory_nodes").fetchone()[0]

    def table(name: str) -> int:
        return sum(v for k, v in sizes.items()
                   if k == name or k.startswith((f"idx_{name}_", f"sqlite_autoindex_{name}_")))
    node_b, audit_b = table("memory_nodes"), table("memory_audit_events")
    text = db.execute("select avg(length(cast(title as blob)) + length(cast(content as blob)))"
                      " from memory_nodes").fetchone()[0]
    return {"nodeBytes": round(node_b / nodes), "auditBytes": round(audit_b / nodes),
            "bytesPerNode": round((node_b + audit_b) / nodes), "titleAndContentBytes": round(text)}


def run(size: int, cache: Path) -> dict:
    stats = ensure_workspace(cache, size, _binary())
    with tempfile.TemporaryDirectory(prefix="ekko-bench-whatif-") as tmp:
        copy = Path(tmp) / "memory.db"
        shutil.copyfile(Path(stats["root"]) / ".ekko" / "memory.db", copy)
        db = sqlite3.connect(copy, isolation_level=None)
        try:
            rows = [{"change": "as stored today", **measure(db)}]
            for name, change in CHANGES:
                db.execute("begin")
                change(db)
                db.execute("commit")
                rows.append({"change": f"+ {name}", **measure(db)})
        finally:
            db.close()
    return {"size": label(size), "rows": rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="10k")
    parser.add_argument("--cache", default="/tmp/ekko-bench-cache",
                        help="folder for built workspaces (shared with python -m bench)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    result = run(parse_size(args.size), Path(args.cache))
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return
    print(f"| {result['size']}: bytes per node | nodes + indexes | audit + indexes | total |")
    print("|---|---|---|---|")
    for row in result["rows"]:
        print(f"| {row['change']} | {row['nodeBytes']} | {row['auditBytes']} |"
              f" {row['bytesPerNode']} |")
    print(f"(title and content: {result['rows'][0]['titleAndContentBytes']} bytes a node)")


if __name__ == "__main__":
    main()
