"""The config files as a use case: what `config` shows, and one setting read, set or unset in
the user's or the workspace's config.toml, written whole or not at all.

These are how a bad config gets fixed, so they read files with problems in them: `get`
refuses only over the key it is asked for, and `set`/`unset` only over the file they edit.
"""
from __future__ import annotations

import os

from ..env import DIR_NAME
from ..errors import NotFound, Rejected, Step, StoreUnavailable
from .stores import UseCase


class ConfigFiles(UseCase):
    def show(self):
        """Both files as read, problems included (config.Config)."""
        return self.stores.read_config()

    def get_setting(self, key: str) -> dict:
        value, source = self.stores.read_config().lookup(key)
        if source is None:
            raise NotFound(f"{key} is not set, and has no default",
                           step=Step(command="config set", target=f"{key} VALUE"))
        return {"key": key, "value": value, "source": source}

    def set_setting(self, key: str, text: str, *, user: bool = False) -> dict:
        """`key` set to the value `text` stands for (checked as a file's value is), in the
        workspace's file, or the user's with `user` or outside any workspace."""
        from ..config_values import misplaced, parse, unavailable
        from ..config_edit import set_value
        value = parse(key, text)
        level, path = self._target(user)
        why = misplaced(key, level)
        if why is not None:
            raise Rejected(why, step=Step("user", command="config set", target=f"{key} VALUE"))
        before = self._text(path)
        changed = not self._holds(before, key, value)
        if changed:
            self._write(path, self._edit(path, lambda: set_value(before, key, value)))
        return {"key": key, "value": value, "file": path, "level": level,
                "changed": changed, "note": unavailable(key, value),
                **self._winner(key, path)}

    def unset_setting(self, key: str, *, user: bool = False) -> dict:
        """`key` removed from the chosen file; nothing changes when it is not there."""
        from ..config_values import known
        from ..config_edit import unset_value
        level, path = self._target(user)
        before = self._text(path)
        after = self._edit(path, lambda: unset_value(before, key)) if before else None
        if after is None and not self._in_file(before, key):
            known(key)  # a typo that no file holds is a usage error, not a no-op
        if after is not None:
            self._write(path, after)
        return {"key": key, "file": path, "level": level, "changed": after is not None,
                **self._winner(key, path)}

    # -- which file --------------------------------------------------------------------------
    def _target(self, user: bool) -> tuple[str, str]:
        """("user" | "workspace", path): the workspace's file when there is a workspace and
        the user's is not asked for; the folder must be trusted (no links, no strangers')."""
        folder, level = self.env.user_home(), "user"
        if not user:
            try:
                root = self.stores.root
            except StoreUnavailable:  # outside any workspace: the user's settings
                root = None
            if root is not None:
                folder, level = os.path.join(root, DIR_NAME), "workspace"
                if not os.path.isdir(folder):
                    raise StoreUnavailable(f"{root} has no {DIR_NAME} folder to keep settings in",
                                           step=Step(command="init", target=root))
        path = os.path.join(folder, "config.toml")
        self.stores.trusted(folder, path)
        return level, path

    @staticmethod
    def _text(path: str) -> str:
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                return handle.read()
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError) as exc:
            raise Rejected(f"cannot edit {path}: {exc}", "fix the file or move it aside") from None

    @staticmethod
    def _edit(path: str, edit):
        from ..config_edit import CannotEdit
        try:
            return edit()
        except CannotEdit as exc:
            raise Rejected(f"cannot edit {path} safely: {exc}",
                           "edit that file by hand; nothing was written") from None

    @staticmethod
    def _holds(text: str, key: str, value) -> bool:
        """Whether the file already sets `key` to exactly `value` (then it is left alone)."""
        from ..config_edit import tomllib
        section, _, name = key.partition(".")
        try:
            current = tomllib().loads(text).get(section, {}).get(name)
        except Exception:  # set_value refused such a file already
            return False
        return current == value and type(current) is type(value)

    @staticmethod
    def _in_file(text: str, key: str) -> bool:
        from ..config_edit import tomllib
        section, _, name = key.partition(".")
        try:
            data = tomllib().loads(text)
        except Exception:  # unset_value refused such a file already
            return False
        return section in data and (not name or name in (data[section] or {}))

    def _write(self, path: str, text: str) -> None:
        """Written whole or not at all (a temporary file renamed over it), readable by this
        user alone; a link allowed by EKKO_ALLOW_SYMLINKS keeps pointing where it did."""
        import tempfile
        target = os.path.realpath(path)
        folder = os.path.dirname(target)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=folder)
        except OSError as exc:
            raise StoreUnavailable(f"cannot write {path}: {exc.strerror or exc}",
                                   "check that folder's permissions") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, target)
            _sync(folder)
        except BaseException as exc:
            os.unlink(temporary)
            if isinstance(exc, OSError):
                raise StoreUnavailable(f"cannot write {path}: {exc.strerror or exc}",
                                       "nothing was written") from None
            raise

    def _winner(self, key: str, path: str) -> dict:
        """Where `key` now comes from, read afresh; a file other than the one just edited
        means that file wins (the workspace's over the user's)."""
        from ..config import files, load
        try:
            root = self.stores.root
        except StoreUnavailable:
            root = None
        for _, config in files(self.env.user_home(), root):
            self.stores.trusted(os.path.dirname(config), config)
        from ..config_values import DEFAULTS
        entry = load(self.env.user_home(), root).winner(key)
        if entry is None:
            return {"source": "default" if key in DEFAULTS else None, "shadowedBy": None}
        return {"source": entry.path, "shadowedBy": entry.path if entry.path != path else None}


def _sync(folder: str) -> None:
    """The rename itself made durable, where the platform can sync a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
