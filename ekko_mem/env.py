"""The outside world in one place: paths, workspace discovery, the clock, the terminal.

Paths are plain strings: pathlib (with the urllib and ipaddress it imports) costs start-up
time, and `ekko-mem log` runs in git hooks.
"""
from __future__ import annotations

import os
import sys
from datetime import datetime, timezone

from .errors import Step, StoreUnavailable, UsageError

DB_NAME = "memory.db"
DIR_NAME = ".ekko"


def format_time(moment: datetime) -> str:
    # The year zero-padded by hand: strftime leaves year 999 as "999", which sorts after
    # 2026 where times are compared as text.
    utc = moment.astimezone(timezone.utc)
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


def parse_time(text: str) -> datetime:
    """ISO-8601; a bare date or a time without zone is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


class Env:
    """Environment variables, working folder and clock, passed in so tests stay deterministic."""

    def __init__(self, environ: dict | None = None, cwd=None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.cwd = os.fspath(cwd) if cwd is not None else os.getcwd()

    # -- clock -------------------------------------------------------------------------------
    def now(self) -> datetime:
        fixed = self.environ.get("EKKO_NOW")
        if fixed:
            try:
                return parse_time(fixed)
            except ValueError:
                raise UsageError(
                    f"EKKO_NOW is not an ISO-8601 time: {fixed!r}",
                    "set it like EKKO_NOW=2026-01-31T12:00:00Z or unset it",
                ) from None
        return datetime.now(timezone.utc)

    def now_iso(self) -> str:
        return format_time(self.now())

    # -- identity ----------------------------------------------------------------------------
    def user_id(self) -> str:
        return self.environ.get("EKKO_USER") or self.environ.get("USER") or "local"

    @property
    def debug(self) -> bool:
        return self.environ.get("EKKO_DEBUG", "") not in ("", "0")

    # -- paths -------------------------------------------------------------------------------
    def user_home(self) -> str:
        given = self.environ.get("EKKO_HOME")
        if given:
            return os.path.expanduser(given)
        return os.path.join(os.path.expanduser("~"), DIR_NAME)

    def user_db(self) -> str:
        return os.path.join(self.user_home(), DB_NAME)

    def workspace_root(self, given=None) -> str:
        """The folder holding `.ekko/`: the one given, EKKO_WORKSPACE, or found upward as git
        does."""
        explicit = given or self.environ.get("EKKO_WORKSPACE")
        if explicit:
            return os.path.realpath(os.path.join(self.cwd,
                                                 os.path.expanduser(os.fspath(explicit))))
        found = self.find_workspace()
        if found is None:
            raise StoreUnavailable(
                f"no workspace memory found in {self.cwd} or any folder above it",
                "in your project, or point EKKO_WORKSPACE at it", step=Step(command="init"),
            )
        return found

    def find_workspace(self) -> str | None:
        home = os.path.realpath(self.user_home())
        folder = os.path.realpath(self.cwd)
        while True:
            marker = os.path.join(folder, DIR_NAME)
            # The user store lives in ~/.ekko too; it is not a workspace.
            if os.path.isdir(marker) and os.path.realpath(marker) != home:
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent

    def is_tty(self, stream=None) -> bool:
        stream = stream or sys.stdout
        return bool(getattr(stream, "isatty", lambda: False)())

    def color(self) -> bool:
        if "NO_COLOR" in self.environ or self.environ.get("TERM") == "dumb":
            return False
        return self.is_tty()
