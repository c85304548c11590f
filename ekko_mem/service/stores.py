"""Stores: where memory lives. Opens the dbs on demand, refuses untrusted ones, routes a scope to
its db, and opens read-only or degraded for `context`. A db that cannot be written here (a
read-only file, folder or file system) is opened read-only for every command: reads work, a
write is refused before it starts. Every use case is given one.
"""
from __future__ import annotations

import os

from ..env import DB_NAME, DIR_NAME, Env
from ..errors import EkkoError, NotFound, Step, StoreUnavailable
from ..trust import db_files

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import Callable, Literal

    from ..config import Config
    from ..embedding import Embedder
    from ..store import SqliteMemoryStore
    Progress = Callable[[int, int], None]  # (done, total) after each batch of a long write

LOCK_TIMEOUT_S = 0.5  # a context waits at most this long for a locked db
HELD = {"user": {"user"}, "workspace": {"workspace", "session"}}  # scopes each db holds


def no_db(root: str, path: str) -> StoreUnavailable:
    """The one wording of "this workspace has no memory yet"."""
    return StoreUnavailable(f"{root} has no memory db ({path} is missing)",
                            step=Step(command="init", target=root))


class Stores:
    def __init__(self, workspace=None, *, env: Env | None = None,
                 session: str | None = None, timeout: float | None = None,
                 spell=None) -> None:
        self.env = env or Env()
        # How a report names a next step (errors.Step): the command line passes its flags'
        # spelling; a library caller or an agent reads the design's words.
        self.spell = spell or str
        self._workspace_arg = workspace
        self._session_arg = session
        self.timeout = timeout
        self._store: SqliteMemoryStore | None = None
        self._user_store: SqliteMemoryStore | None = None
        self._root: str | None = None
        self._config: Config | None = None
        self._global: SqliteMemoryStore | Literal[False] | None = None
        self._read_only: list[SqliteMemoryStore] = []  # opened for a context; closed with the rest
        # the semantic model: None until asked, False when off
        self._embedder: Embedder | Literal[False] | None = None
        self._semantic_off: str | None = None  # why semantic recall is on but cannot run
        self.notes: list[str] = []  # things a person should hear about, printed to stderr

    # -- locations ---------------------------------------------------------------------------
    @property
    def root(self) -> str:
        if self._root is None:
            self._root = self.env.workspace_root(self._workspace_arg)
        return self._root

    def set_root(self, root: str) -> None:
        """After `init` made the workspace: later calls use it."""
        self._root = root

    @property
    def db_path(self) -> str:
        return os.path.join(self.root, DIR_NAME, DB_NAME)

    def session(self, given: str | None = None) -> str:
        """The given session, else EKKO_SESSION, else [session] default in config.toml, else
        'default'."""
        return (given or self._session_arg or self.env.environ.get("EKKO_SESSION")
                or self.config.get("session.default"))

    @property
    def config(self) -> Config:
        """Workspace config.toml over ~/.ekko/config.toml; a problem in either stops the
        command (exit 4) with its file, line, key and fix."""
        return self.read_config().check()

    def read_config(self) -> Config:
        """Both files read and every value checked, once; the problems are kept, not raised."""
        if self._config is None:
            from ..config import load
            try:
                root = self.root
            except StoreUnavailable:  # no workspace: the user config alone
                root = None
            home = self.env.user_home()
            paths = [home, os.path.join(home, "config.toml")]
            if root is not None:
                paths += [os.path.join(root, DIR_NAME), os.path.join(root, DIR_NAME,
                                                                      "config.toml")]
            self.trusted(*paths)  # a stranger's config could name a command to run
            self._config = load(home, root, self.env.environ)
        return self._config

    def config_or_defaults(self, warnings: list[str], strict: bool) -> Config:
        """The config for reads that must not fail: each bad setting left out (the next file's
        value or the default applies) with a warning; `strict` refuses any problem instead."""
        try:
            config = self.read_config()
        except EkkoError as exc:  # an untrusted file: none of it is read
            if strict:
                raise
            warnings.append(f"config ignored: {exc.message}")
            from ..config import Config
            self._config = config = Config(environ=self.env.environ)
        if strict:
            return config.check(optional=True)
        warnings += config.accept(self.spell)
        return config

    def trusted(self, *paths: str) -> None:
        """Refuse links and folders or files that another user owns or may write (exit 6)."""
        from ..trust import check_all
        check_all(paths, self.env.environ)

    # -- opening -----------------------------------------------------------------------------
    def open_db(self, path: str, **kwargs) -> SqliteMemoryStore:
        from ..store import open_store
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        store = open_store(path, **kwargs)
        from ..embedding import Lazy
        store.db.embedder = Lazy(self.semantic_on, self._embedding_failed)
        return store

    # -- semantic recall ---------------------------------------------------------------------
    def semantic_on(self) -> bool:
        """retrieval.semantic is true (a bad value, or a config that cannot be read, counts
        as off: the command that reads config reports it)."""
        try:
            return self.read_config().get("retrieval.semantic") is True
        except EkkoError:
            return False

    def embedder(self, warnings: list[str] | None = None) -> Embedder | None:
        """The loaded model when semantic recall is on and can run, else None; when it is on
        but cannot run, why is added to `warnings` (recall then stays lexical)."""
        if self._embedder is None:
            self._embedder = False
            if self.semantic_on():
                from ..embedding import load
                try:
                    self._embedder = load()
                except RuntimeError as exc:
                    self._semantic_off = f"semantic recall is off: {exc}"
        if self._semantic_off and warnings is not None \
                and self._semantic_off not in warnings:
            warnings.append(self._semantic_off)
        return self._embedder or None

    def _embedding_failed(self, why: str) -> None:
        note = f"written without vectors ({why}); run 'ekko-mem index' once it is fixed"
        if note not in self.notes:
            self.notes.append(note)

    def _open_or_read(self, path: str, **kwargs) -> SqliteMemoryStore:
        """The db opened for writing, or, where it cannot be written (a read-only file, folder
        or file system), read-only: reads work, and a write is refused before it starts."""
        from ..store.connection import NotWritable
        try:
            return self.open_db(path, **kwargs)
        except NotWritable as exc:
            return _read_only(path, exc, self.timeout)

    @property
    def store(self) -> SqliteMemoryStore:
        """The workspace db; it must have been created by `init`."""
        if self._store is None:
            path = self.db_path
            if not os.path.exists(path):
                raise no_db(self.root, path)
            self.trusted(*db_files(path))
            self._store = self._open_or_read(path)
        return self._store

    def user_store(self, *, create: bool = False) -> SqliteMemoryStore | None:
        """The user db (~/.ekko/memory.db), made on first write; None when absent on reads."""
        if self._user_store is None:
            path = self.env.user_db()
            if not os.path.exists(path) and not create:
                return None
            self.trusted(*db_files(path))
            try:
                self._user_store = (self.open_db(path, create=True) if create
                                    else self._open_or_read(path))
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the user memory {path}:"
                                       f" {exc.strerror or exc}",
                                       "check EKKO_HOME and that folder's permissions") from None
        return self._user_store

    def stand_in_user_store(self) -> None:
        """Where there is no user db yet, an empty one in memory until close: a dry run then
        decides as a first write would, and no file is made."""
        if self.user_store() is None:
            from ..store import open_in_memory
            self._user_store = open_in_memory()

    def global_store(self) -> SqliteMemoryStore | None:
        """Read-only nodes shipped with the package, served from an in-memory db."""
        if self._global is None:
            from ..store import load_global
            self._global = load_global() or False
        return self._global or None

    # -- routing -----------------------------------------------------------------------------
    def for_scope(self, scope: str, *, create: bool = False) -> SqliteMemoryStore:
        """The db that holds `scope`: user memory in the user db (made first with `create`),
        the rest in the workspace's."""
        if scope == "user":
            store = self.user_store(create=create)
            if store is None:  # callers ask for a memory's db after finding the memory
                raise NotFound("there is no user memory yet",
                               "the first user-scope memory makes it")
            return store
        return self.store

    def existing(self) -> list[tuple[str, SqliteMemoryStore]]:
        """The dbs that exist: the workspace's (when there is one) and the user's."""
        found: list[tuple[str, SqliteMemoryStore]] = []
        workspace = self.workspace_or_none()
        if workspace is not None:
            found.append(("workspace", workspace))
        user = self.user_store()
        if user is not None:
            found.append(("user", user))
        return found

    def workspace_or_none(self) -> SqliteMemoryStore | None:
        """The workspace db, or None outside any workspace; a workspace that is there but
        cannot be used is still an error."""
        try:
            return self.store
        except EkkoError:
            if self._workspace_arg is not None or self.env.find_workspace() is not None:
                raise
        return None

    def workspace_id(self) -> str | None:
        """This workspace's id (the one its messages are cited by from user memory), or
        None outside any workspace."""
        store = self.workspace_or_none()
        return None if store is None else store.store_id()

    def known_workspaces(self) -> dict[str, str]:
        """{workspace id: folder} of the workspaces user memory was written from."""
        user = self.user_store()
        return dict(user.erasure.known_workspaces()) if user is not None else {}

    def open_workspace(self, root: str, *, read_only: bool = False) -> SqliteMemoryStore:
        """Another workspace's db, refused as this one's would be; the caller closes it.
        Read-only leaves it exactly as it is (no migration, no -wal written)."""
        path = os.path.join(root, DIR_NAME, DB_NAME)
        if not os.path.exists(path):
            raise StoreUnavailable("its memory db is gone", "")
        self.trusted(*db_files(path))
        if read_only:
            from ..store import open_for_reading
            return open_for_reading(path)
        return self.open_db(path)

    def readable(self, scopes: list[str] | None = None) -> list[tuple[str, SqliteMemoryStore]]:
        """The dbs holding any of `scopes` (all when None), the shipped global nodes last."""
        stores = [(name, s) for name, s in self.existing()
                  if not scopes or HELD[name] & set(scopes)]
        if not scopes or "global" in scopes:
            seed = self.global_store()
            if seed is not None:
                stores.append(("global", seed))
        return stores

    def for_context(self, warnings: list[str],
                    strict: bool) -> tuple[list[tuple[str, SqliteMemoryStore]], str]:
        """The dbs a context can read, and "ok", "degraded" or "disabled". A db that cannot be
        opened (missing, untrusted, locked, corrupt, newer) is a warning unless `strict`."""
        stores: list[tuple[str, SqliteMemoryStore]] = []
        failed, candidates = 0, []
        try:
            candidates.append(("workspace", self.db_path))
        except EkkoError as exc:
            if strict:
                raise
            warnings.append(exc.message)
            failed += 1
        user = self.env.user_db()
        if os.path.exists(user):
            candidates.append(("user", user))
        for name, path in candidates:
            try:
                stores.append((name, self._open_for_context(name, path, warnings, strict)))
            except EkkoError as exc:
                if strict:
                    raise
                warnings.append(f"{name} db skipped: {exc.message}")
                failed += 1
        for name, store in stores:
            if name == "workspace":
                self._store = store
            else:  # read-only or on a short lock timeout: not the user db writes go to
                self._read_only.append(store)
        return stores, "ok" if not failed else ("degraded" if stores else "disabled")

    def _open_for_context(self, name: str, path: str, warnings: list[str],
                          strict: bool) -> SqliteMemoryStore:
        if not os.path.exists(path):
            raise no_db(os.path.dirname(os.path.dirname(path)), path)
        # Refused as the writers refuse it: no reads, no run records.
        self.trusted(*db_files(path))
        store = _open_degraded(path)
        if store.read_only_reason:
            if strict:
                store.close()
                raise StoreUnavailable(f"{name} db: {store.read_only_reason}",
                                       "read without strict mode to get what can be read")
            warnings.append(f"{name} db: {store.read_only_reason}; read what it could")
        return store

    def workspace_if_open(self) -> SqliteMemoryStore | None:
        """The workspace db when it is open and writable, else None (never opens one)."""
        store = self._store
        return None if store is None or store.read_only_reason else store

    def close(self) -> None:
        for store in (self._store, self._user_store, *self._read_only):
            if store is not None:
                store.close()
        self._store = self._user_store = None
        self._read_only = []


def _open_degraded(path: str) -> SqliteMemoryStore:
    from ..store import open_for_reading, open_store
    try:
        return open_store(path, allow_newer=True, timeout=LOCK_TIMEOUT_S)
    except StoreUnavailable as exc:
        if "locked" in exc.message or not os.path.exists(path):
            raise
        try:  # a read-only file system or file: read without writing anything
            return open_for_reading(path, timeout=LOCK_TIMEOUT_S)
        except StoreUnavailable:
            raise exc from None


def _read_only(path: str, refused: StoreUnavailable,
               timeout: float | None) -> SqliteMemoryStore:
    """`path` opened only for reading after `refused` said it cannot be written; `refused`
    stands when it cannot be read either, or cannot be read faithfully."""
    from ..store import latest_version, open_for_reading
    try:
        store = open_for_reading(path, **({} if timeout is None else {"timeout": timeout}))
    except StoreUnavailable:
        raise refused from None
    try:
        version, latest = store.schema_version(), latest_version()
        if version > latest:
            raise StoreUnavailable(f"{refused.message}, and its schema (version {version}) is"
                                   f" newer than this ekko-mem supports ({latest})",
                                   "upgrade ekko-mem (pip install -U ekko-mem)")
        if version < latest:  # this ekko-mem's reads expect the tables a migration makes
            raise StoreUnavailable(f"{refused.message}, and its schema (version {version})"
                                   f" needs migrating to {latest} before it can be read",
                                   "where it can be written (make it writable, or copy the"
                                   " folder there)", step=Step(command="migrate"))
        if store.db.one("PRAGMA journal_mode")[0] != "wal" and _wal_holds_writes(path):
            # Read as immutable, which skips the -wal: what it holds would be missing.
            raise StoreUnavailable(
                f"{refused.message}, and its latest writes are in {path}-wal, which SQLite can"
                " read only where it may also write its -shm file",
                "open it once where it can be written (or copy the folder there) and retry")
    except BaseException:
        store.close()
        raise
    store.db.read_only = True
    return store


def _wal_holds_writes(path: str) -> bool:
    try:
        return os.path.getsize(path + "-wal") > 0
    except OSError:
        return False


class UseCase:
    """A use case works on the dbs its Stores opens. One that calls other use cases takes
    them as keyword arguments of its own `__init__`, and MemoryService passes them."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    @property
    def env(self) -> Env:
        return self.stores.env

    @property
    def store(self) -> SqliteMemoryStore:
        return self.stores.store

    @property
    def config(self) -> Config:
        return self.stores.config

    def session(self, given: str | None = None) -> str:
        return self.stores.session(given)

    def as_of(self, text: str | None) -> str | None:
        """The ISO time "as of TEXT" means (all of a day named on its own), or None."""
        if text is None:
            return None
        from ..env import format_time
        from ..policy.timeexpr import as_of
        return format_time(as_of(text, self.env.now()))
