"""Shared state of a MemoryService: the environment and the stores it opens on demand."""
from __future__ import annotations

import os

from ..env import DB_NAME, DIR_NAME, Env
from ..errors import StoreUnavailable
from ..trust import db_files


class ServiceBase:
    def __init__(self, workspace=None, *, env: Env | None = None,
                 session: str | None = None, timeout: float | None = None) -> None:
        self.env = env or Env()
        self._workspace_arg = workspace
        self._session_arg = session
        self.timeout = timeout
        self._store = None
        self._user_store = None
        self._root: str | None = None
        self._config = None
        self.notes: list[str] = []  # things a person should hear about, printed to stderr

    # -- locations ---------------------------------------------------------------------------
    @property
    def root(self) -> str:
        if self._root is None:
            self._root = self.env.workspace_root(self._workspace_arg)
        return self._root

    @property
    def db_path(self) -> str:
        return os.path.join(self.root, DIR_NAME, DB_NAME)

    def session(self, given: str | None = None) -> str:
        """--session, else EKKO_SESSION, else [session] default in config.toml, else 'default'."""
        return (given or self._session_arg or self.env.environ.get("EKKO_SESSION")
                or self.config.get("session.default"))

    @property
    def config(self):
        """Workspace config.toml over ~/.ekko/config.toml; invalid files stop the command."""
        if self._config is None:
            from ..config import load
            root = None
            try:
                root = self.root
            except StoreUnavailable:  # no workspace: the user config alone
                root = None
            home = self.env.user_home()
            paths = [home, os.path.join(home, "config.toml")]
            if root is not None:
                paths += [os.path.join(root, DIR_NAME), os.path.join(root, DIR_NAME,
                                                                      "config.toml")]
            self._trusted(*paths)  # a stranger's config could name a command to run
            self._config = load(home, root)
        return self._config

    # -- stores ------------------------------------------------------------------------------
    def _open_db(self, path: str, **kwargs):
        from ..store import open_store
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return open_store(path, **kwargs)

    @property
    def store(self):
        """The workspace db; it must have been created by `init`."""
        if self._store is None:
            path = self.db_path
            if not os.path.exists(path):
                raise StoreUnavailable(f"{self.root} has no memory db ({path} is missing)",
                                       f"run 'ekko-mem init {self.root}'")
            self._trusted(*db_files(path))
            self._store = self._open_db(path)
        return self._store

    def _trusted(self, *paths: str) -> None:
        """Refuse links and folders or files that another user owns or may write (exit 6)."""
        from ..trust import check_all
        check_all(paths, self.env.environ)

    def user_store(self, *, create: bool = False):
        """The user db (~/.ekko/memory.db), made on first write; None when absent on reads."""
        if self._user_store is None:
            path = self.env.user_db()
            if not os.path.exists(path) and not create:
                return None
            self._trusted(*db_files(path))
            try:
                self._user_store = self._open_db(path, create=True)
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the user memory {path}:"
                                       f" {exc.strerror or exc}",
                                       "check EKKO_HOME and that folder's permissions") from None
        return self._user_store

    def close(self) -> None:
        for store in (self._store, self._user_store):
            if store is not None:
                store.close()
        self._store = self._user_store = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
