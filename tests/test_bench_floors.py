"""The two benchmarks behind the import-rate and bytes-per-node figures measure what they say:
every step of an import's floor runs on every record and leaves the db as it was, and each
storage what-if changes only its copy of the db."""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import footprint_whatif, import_floor  # noqa: E402
from bench.transfer import fresh_workspace, write_node_file  # noqa: E402


def _count(db: Path, table: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"select count(*) from {table}").fetchone()[0]
    finally:
        conn.close()


def test_the_floor_times_every_step_and_writes_nothing(tmp_path):
    source = tmp_path / "nodes.jsonl"
    write_node_file(source, 250)
    lines = import_floor._records(source)
    assert len(lines) == 500  # each node and its create event
    root, env = fresh_workspace(tmp_path / "floor", import_floor._binary())
    svc = import_floor._service(root, env)
    steps = import_floor.floor_steps(svc, "node", lines)
    svc.close()
    assert set(steps) == {"parse JSON", "validate", "secret scan", "tokenise", "to rows",
                          "insert rows", "insert FTS", "insert events"}
    assert all(seconds > 0 for seconds in steps.values())
    db = root / ".ekko" / "memory.db"
    assert _count(db, "memory_nodes") == 0
    assert _count(db, "memory_audit_events") == 0


def test_the_floor_report_sums_its_steps(tmp_path):
    result = import_floor.measure("message", 300, tmp_path)
    assert result["size"] == 300
    total = sum(result["stepsMicroseconds"].values())
    assert abs(total - result["floorMicroseconds"]) < 0.1 * len(result["stepsMicroseconds"])
    assert abs(result["floorPerSecond"] * result["floorMicroseconds"] / 1e6 - 1) < 0.01
    assert result["importPerSecond"] > 0


def test_each_what_if_changes_its_copy_only(tmp_path):
    result = footprint_whatif.run(1000, tmp_path / "cache")
    rows = result["rows"]
    assert [r["change"] for r in rows[1:]] == [f"+ {name}" for name, _ in
                                               footprint_whatif.CHANGES]
    assert rows[-1]["bytesPerNode"] < rows[0]["bytesPerNode"]
    folded = next(r for r in rows if "no create event row" in r["change"])
    assert folded["auditBytes"] < rows[0]["auditBytes"] / 4
    built = tmp_path / "cache" / "ws-1k" / ".ekko" / "memory.db"
    assert _count(built, "memory_audit_events") >= 1000  # the cached workspace kept its events
