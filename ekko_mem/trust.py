"""Which memory folders and files ekko-mem may read, write or take commands from.

Like git's safe.directory and ssh's StrictModes: a `.ekko/`, `memory.db` or `config.toml`
that belongs to another local user, or that others may write to, could feed this user's
memory to a stranger or run a stranger's extractor command as this user. Such a path is
refused before it is opened; so is a symbolic link, which could send writes anywhere
(EKKO_ALLOW_SYMLINKS=1 opts in to links, never to foreign owners), and anything that is not a
regular file or folder: opening a named pipe waits for a writer that never comes, and a
device or socket is no place for memory.
"""
from __future__ import annotations

import os
import stat

from .errors import StoreUnavailable

_LOOSE = stat.S_IWGRP | stat.S_IWOTH


def _name(uid: int) -> str:
    try:
        import pwd
        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def special_kind(mode: int) -> str | None:
    """What a file of this mode is, when it is neither a regular file nor a folder."""
    for test, kind in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "an unusual kind of file"


def not_regular(path: str, kind: str) -> StoreUnavailable:
    return StoreUnavailable(f"{path} is {kind}, not a regular file or folder",
                            "move it aside or remove it; ekko-mem keeps memory and settings"
                            " only in regular files")


def check_path(path: str, *, uid: int | None = None, allow_symlinks: bool = False,
               modes: bool = True) -> None:
    """Raise StoreUnavailable (exit 6, with the fix) unless `path` is absent or is this user's
    own regular file or folder, not a link, and (unless `modes` is False) writable by nobody
    else. Only lstat and stat look at it: a named pipe is never opened."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreUnavailable(f"cannot inspect {path}: {exc.strerror or exc}",
                               "check the folder's permissions") from None
    if stat.S_ISLNK(info.st_mode):
        if not allow_symlinks:
            raise StoreUnavailable(
                f"{path} is a symbolic link to {os.path.realpath(path)}",
                "replace it with the real folder or file, or set EKKO_ALLOW_SYMLINKS=1")
        try:
            info = os.stat(path)
        except OSError:
            return  # a dangling link: opening it fails later with its own message
    kind = special_kind(info.st_mode)
    if kind is not None:
        raise not_regular(path, kind)
    me = os.geteuid() if uid is None else uid
    if info.st_uid != me:
        raise StoreUnavailable(
            f"{path} belongs to {_name(info.st_uid)}, not to you ({_name(me)}); memory owned"
            " by another user is not read, written or configured from",
            f"if it is yours, run 'chown -R {_name(me)} {path}'; otherwise remove it, or"
            " work elsewhere (another workspace, or EKKO_HOME)")
    if modes and info.st_mode & _LOOSE:
        who = " and ".join(name for bit, name in ((stat.S_IWGRP, "its group"),
                                                   (stat.S_IWOTH, "other users"))
                           if info.st_mode & bit)
        fix = "chmod 700" if stat.S_ISDIR(info.st_mode) else "chmod 600"
        raise StoreUnavailable(f"{path} can be written by {who}",
                               f"run '{fix} {path}' if its contents are yours")


def db_files(path: str) -> list[str]:
    """A db's folder, the db and the side files SQLite reads back into it: a -wal planted by
    someone else is replayed into the db when it is opened."""
    return [os.path.dirname(path), path, path + "-wal", path + "-shm", path + "-journal"]


def check_all(paths, environ, *, modes: bool = True) -> None:
    allow = environ.get("EKKO_ALLOW_SYMLINKS") == "1"
    for path in paths:
        check_path(path, allow_symlinks=allow, modes=modes)
