"""Opening SQLite the same way every time: file modes, pragmas, transactions, error mapping."""
from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import contextmanager, suppress

from ..errors import EkkoError, Step, StoreUnavailable

BUSY_TIMEOUT_S = 5.0

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import Protocol

    class Embeds(Protocol):
        """What a write embeds its rows with (embedding.Lazy or Embedder; the store never
        imports the model)."""
        model: str

        def on(self) -> bool: ...

        def passages(self, texts: list[str]) -> list[tuple[float, bytes, bytes]] | None: ...


def ensure_private_dir(folder: str) -> None:
    """Create `.ekko/` as 0700; memory is private even on a shared machine."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.stat(folder).st_mode & 0o077:
        os.chmod(folder, 0o700)


def ensure_private_file(path: str) -> None:
    # Created before SQLite opens it so it never exists with a looser mode; SQLite gives the
    # -wal and -shm files the same mode as the database.
    # Without waiting: a named pipe in its place is refused, not opened until a writer comes.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if not regular:
        raise StoreUnavailable(f"{path} is not a regular file",
                               "move it aside or remove it; nothing was written")
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)


def connect(path: str, *, timeout: float = BUSY_TIMEOUT_S, readonly: bool = False,
            immutable: bool = False):
    """Open with the house pragmas. `readonly` opens mode=ro; `immutable` also skips the
    -shm file and locking, the only way to read a db on a read-only file system."""
    conn = None
    try:
        if readonly or immutable:
            from urllib.parse import quote
            mode = "immutable=1" if immutable else "mode=ro"
            conn = sqlite3.connect(f"file:{quote(str(path))}?{mode}", uri=True,
                                   timeout=timeout, isolation_level=None,
                                   check_same_thread=False)
        else:
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                                   check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if not (readonly or immutable):
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise translate(exc, path) from None
    return conn


class NotWritable(StoreUnavailable):
    """The db is there but cannot be written here (a read-only file, folder or file system):
    a command that only reads can still open it read-only."""


def translate(exc: sqlite3.Error, path: str) -> EkkoError:
    """One place that turns SQLite's failures into errors a person can act on."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreUnavailable(
            f"the memory db {path} is locked by another process",
            "retry in a moment, or find what holds it with 'fuser' or 'lsof'",
        )
    if "readonly" in text or "read-only" in text:
        return NotWritable(
            f"the memory db {path} is read-only",
            "check the file and folder permissions (ekko-mem needs to write there)",
        )
    code = getattr(exc, "sqlite_errorcode", 11)  # Python 3.11+
    if "vtable constructor failed" in text and "_fts" in text and code & 0xFF == 11:
        # FTS5 refuses to open a full-text index whose own records it finds corrupt; the
        # memories and messages are rows of their own tables, which it can be filled from.
        return StoreUnavailable(
            f"the full-text index of the memory db {path} cannot be opened ({text})",
            "(it fills the index again from the memories and messages)",
            step=Step("repair", command="doctor"),
        )
    if "not a database" in text or "disk image is malformed" in text or "corrupt" in text:
        return StoreUnavailable(
            f"the memory db {path} is not a valid SQLite database ({text})",
            "(after moving it aside), or restore it from an export",
            step=Step(command="init"),
        )
    if "disk" in text and ("full" in text or "I/O" in text):
        return StoreUnavailable(
            f"could not write the memory db {path}: {text}",
            "free some disk space and retry; nothing was written",
        )
    if "unable to open" in text:
        return (NotWritable if os.path.isfile(path) else StoreUnavailable)(
            f"cannot open the memory db {path}",
            "if it was never made; else check that the folder exists and is writable",
            step=Step(command="init"),
        )
    return StoreUnavailable(f"the memory db {path} failed: {text}", "rerun with EKKO_DEBUG=1")


class Connection:
    """A sqlite3 connection whose errors surface as EkkoError and whose writes are atomic."""

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.raw = conn
        self.path = path
        self._depth = 0
        # Opened read-only because the db cannot be written here: a write is refused before
        # it starts, rather than failing part-way through.
        self.read_only = False
        # Set by the service when semantic recall is on: writes then embed their rows
        # (store/vectors.py) in the same transaction.
        self.embedder: Embeds | None = None
        # A list while a bulk write runs: its rows are noted here, (kind, id), instead of
        # embedded, and get their vectors after its commit (service/semantic.py), so the
        # write lock is held as long as the rows take, not the model.
        self.embed_later: list | None = None
        # The FTS indexes rows were hard-deleted from since their last merge: an erasure
        # merges those (NodeStore.optimize_fts), and only those.
        self.fts_deleted: set[str] = set()

    def execute(self, sql: str, params=()):
        try:
            return self.raw.execute(sql, params)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def executemany(self, sql: str, rows):
        try:
            return self.raw.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def one(self, sql: str, params=()):
        # A damaged page is often met while rows are read, after execute() returned.
        try:
            return self.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def all(self, sql: str, params=()):
        try:
            return self.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    @contextmanager
    def atomic(self):
        """BEGIN IMMEDIATE takes the write lock up front, so a busy db waits here, not mid-way."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        if self.read_only:
            raise NotWritable(f"the memory db {self.path} cannot be written here (the db or its"
                              " folder is read-only), so it was opened only for reading",
                              "check the file and folder permissions, or write where the db"
                              " can be written; nothing was written")
        self.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            with suppress(sqlite3.Error):
                self.raw.execute("ROLLBACK")
            raise
        self._depth = 0
        try:
            self.raw.execute("COMMIT")
        except sqlite3.Error as exc:
            with suppress(sqlite3.Error):
                self.raw.execute("ROLLBACK")
            raise translate(exc, self.path) from exc

    @contextmanager
    def reading(self):
        """One read transaction: the selects inside see the db as one state, whatever other
        processes commit meanwhile (WAL readers never block writers). Inside a transaction
        already open, that one."""
        if self.raw.in_transaction:
            yield self
            return
        self.execute("BEGIN")
        try:
            yield self
        finally:
            with suppress(sqlite3.Error):
                self.raw.execute("ROLLBACK")  # nothing was written; this only ends the read

    def close(self) -> None:
        self.raw.close()


class Part:
    """One area of a memory db's reads and writes, over the connection its store shares."""

    def __init__(self, db: Connection) -> None:
        self.db = db
