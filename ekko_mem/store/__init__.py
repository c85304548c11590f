"""SQLite persistence: the only package that contains SQL."""
from __future__ import annotations

import os

from ..errors import Step, StoreUnavailable
from .connection import BUSY_TIMEOUT_S, Connection, connect, ensure_private_dir, ensure_private_file
from . import migrations
from .migrations import latest_version
from .sqlite import SqliteMemoryStore

__all__ = ["SqliteMemoryStore", "open_store", "migration_status", "latest_version"]


def open_store(path, *, create: bool = False, allow_newer: bool = False,
               migrate: bool = True, timeout: float = BUSY_TIMEOUT_S) -> SqliteMemoryStore:
    """Open (and with `create`, make) a memory db, applying pending migrations first.

    A db from a newer ekko-mem is refused unless `allow_newer`, in which case the store is
    marked read-only and writes raise.
    """
    path = os.fspath(path)
    if create:
        ensure_private_dir(os.path.dirname(path))
        ensure_private_file(path)
    elif not os.path.exists(path):
        raise StoreUnavailable(f"no memory db at {path}", "in the workspace first",
                               step=Step(command="init"))
    conn = Connection(connect(path, timeout=timeout), path)
    try:
        return _checked(SqliteMemoryStore(conn), path, allow_newer, migrate)
    except BaseException:
        conn.close()  # a db that cannot be used is not left open behind the error
        raise


def _checked(store: SqliteMemoryStore, path: str, allow_newer: bool,
             migrate: bool) -> SqliteMemoryStore:
    version = store.schema_version()
    if version > latest_version():
        if not allow_newer:
            raise StoreUnavailable(
                f"the memory db {path} has schema version {version}, newer than this"
                f" ekko-mem supports ({latest_version()})",
                "upgrade ekko-mem (pip install -U ekko-mem); nothing was written",
            )
        store.read_only_reason = "schema is newer than this ekko-mem"
    elif version < latest_version() and migrate:
        apply_migrations(store)
    return store


def open_for_reading(path, *, timeout: float = BUSY_TIMEOUT_S) -> SqliteMemoryStore:
    """A read-only view for when the db cannot be opened for writing (read-only file system,
    no write permission): mode=ro first, then immutable. Never migrates; marked read-only."""
    last: StoreUnavailable  # each way was tried and refused
    for flags in ({"readonly": True}, {"immutable": True}):
        store = None
        try:
            store = SqliteMemoryStore(Connection(connect(path, timeout=timeout, **flags), path))
            store.schema_version()
            store.read_only_reason = "opened read-only (the db or its folder is not writable)"
            return store
        except StoreUnavailable as exc:
            if store is not None:
                store.close()
            last = exc
    raise last


def open_in_memory() -> SqliteMemoryStore:
    """An empty, migrated memory db that lives only as long as this process holds it."""
    import sqlite3
    store = SqliteMemoryStore(Connection(sqlite3.connect(":memory:", isolation_level=None,
                                                         check_same_thread=False),
                                         ":memory:"))
    apply_migrations(store)
    return store


def load_global() -> SqliteMemoryStore | None:
    """The read-only global nodes shipped in the package, in an in-memory db (None if none)."""
    import json
    seed = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                        "global.json")
    with open(seed, encoding="utf-8") as handle:
        nodes = json.load(handle)
    if not nodes:
        return None
    store = open_in_memory()
    with store.db.atomic():
        for node in nodes:
            store.nodes.insert_node({**node, "scope": "global", "status": "active"})
    store.read_only_reason = "global scope is read-only"
    return store


def pending(version: int) -> list[tuple[int, str]]:
    return [(number, name) for number, name, _ in migrations.MIGRATIONS if number > version]


def apply_migrations(store: SqliteMemoryStore, *, upto: int | None = None) -> list[str]:
    applied = []
    for number, name, fn in migrations.MIGRATIONS:
        if upto is not None and number > upto:
            break
        with store.db.atomic() as db:
            # Read again under the write lock: another process may have migrated meanwhile.
            if store.schema_version() >= number:
                continue
            try:
                fn(db)
            except StoreUnavailable:
                raise
            except Exception as exc:
                raise StoreUnavailable(
                    f"migration {name} failed: {exc}; the memory db stays at version"
                    f" {store.schema_version()} and is not used",
                    "rerun with EKKO_DEBUG=1 and report the error",
                ) from exc
            store.record_migration(number, name)
        applied.append(name)
    return applied


def migration_status(store: SqliteMemoryStore) -> dict:
    version = store.schema_version()
    return {"version": version, "latest": latest_version(),
            "applied": store.applied_migrations(), "pending": pending(version)}
