"""What `doctor` looks at around a memory db rather than inside it: the files SQLite opens beside
it, the user's config where there is no user db, and records an erasure took that a context run
or a file outside the dbs still names. Also what every check shares: one db as doctor goes
through it, and a check's report line.

Files are looked at with lstat only: a named pipe is never opened (opening one waits for a
writer that never comes).
"""
from __future__ import annotations

import os
import stat
from contextlib import suppress

from ..errors import EkkoError, Step

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from pathlib import Path

    from ..store import SqliteMemoryStore

RESTORE = ("restore it from a backup, or move it aside, run 'ekko-mem init' and 'ekko-mem"
           " import' a recent 'ekko-mem export' file")
READ_ONLY = "the db is damaged and doctor only reads a damaged db"
# The side files SQLite opens beside a db: (suffix, check name, what SQLite keeps there).
SIDES = (("-wal", "wal file", "write-ahead log"), ("-shm", "shm file", "shared-memory index"),
         ("-journal", "journal file", "rollback journal"))


def check(db, name, ok, detail="", fixed=False) -> dict:
    text = " ".join(str(detail).split())  # one line, whatever SQLite or the OS said
    return {"db": db, "check": name, "ok": ok, "detail": text[:600], "fixed": fixed}


def said(exc: EkkoError, spell) -> str:
    """An error as a report line: its message and hint, its next step in `spell`'s words."""
    return exc.line(spell).removeprefix("ekko-mem: ")


def repair_step(spell) -> str:
    return spell(Step("repair", command="doctor"))


class Db:
    """One memory db as doctor goes through it, and what it has learnt so far.

    A plain class: dataclasses and pathlib would cost a few ms of import; pathlib is imported
    when doctor runs.
    """

    def __init__(self, name: str, path: Path, repair: bool) -> None:
        self.name, self.path, self.repair = name, path, repair
        self.store: SqliteMemoryStore | None = None
        self.damaged = ""          # what SQLite said is broken; repairs must not write to it
        self.unusable = False      # memory.db (or a file SQLite opens with it) is not usable
        self.read_only = False     # a -wal or -shm is wrong: look without touching anything
        self.not_writable = ""     # why the db could only be opened for reading here
        self.newer = False         # a newer ekko-mem's schema: not ours to judge
        # the workspace store, for the user db's source check
        self.workspace: SqliteMemoryStore | None = None

    @property
    def opened(self) -> SqliteMemoryStore:
        """The store, for the checks that run once it is open."""
        assert self.store is not None, f"{self.name} db checked before it was opened"
        return self.store

    def blocked(self) -> str:
        """Why repairs must not write to this db ('' when they may)."""
        if self.damaged:
            return READ_ONLY
        if self.read_only:
            return "it was only read, because of the -wal/-shm problem above"
        if self.not_writable:
            return self.not_writable
        return getattr(self.store, "read_only_reason", None) or ""

    def todo(self, problem: str, what: str, why: str = "doctor does not change this") -> str:
        """A problem doctor cannot fix, and what the person can do instead."""
        return f"{problem}; cannot repair: {why}; {what}" if self.repair else f"{problem}; {what}"

    def restore(self, problem: str) -> str:
        return self.todo(problem, f"{RESTORE}; 'sqlite3 {self.path} .recover' salvages what is"
                         " still readable", READ_ONLY)

    def sound(self) -> bool:
        """Open, undamaged and at this ekko-mem's schema: its tables are the ones we know."""
        from ..store import latest_version
        if self.store is None or self.damaged or self.newer:
            return False
        try:
            return self.store.schema_version() == latest_version()
        except EkkoError:
            return False

    def close(self) -> None:
        with suppress(Exception):
            if self.store is not None:
                self.store.close()


def repairable(db: Db, name: str, problem: str, fix, spell) -> dict:
    """A problem that a repair fixes by calling `fix()`, unless the db must not be written;
    `fix` returns the few words saying what it did."""
    why = db.blocked()
    where = " where the db can be written" if db.not_writable else ""
    if db.damaged or (db.repair and why):
        what = (f"{repair_step(spell)}{where}" if db.not_writable
                else "deal with the first FAIL line for this db, then rerun doctor")
        return check(db.name, name, False, db.todo(problem, what, why))
    if not db.repair:
        return check(db.name, name, False, f"{problem}; {repair_step(spell)}{where}")
    return check(db.name, name, False, f"{problem} ({fix()})", True)


# -- the files a db is made of -------------------------------------------------------------------
class FileChecks:
    def __init__(self, env, spell) -> None:
        self.env, self.spell = env, spell

    def owner(self, db: Db) -> list[dict]:
        """A db or config another user owns (or a link) is neither opened nor repaired; loose
        modes on the person's own files are the permissions check's to report and fix. A pipe,
        socket or device where SQLite keeps a side file is moved aside by a repair."""
        from ..trust import check_all, db_files
        path = os.fspath(db.path)
        odd = special_sides(path)
        try:
            check_all([p for p in [*db_files(path), os.path.join(os.path.dirname(path),
                                                                 "config.toml")]
                       if p not in odd], self.env.environ, modes=False)
        except EkkoError as exc:
            db.unusable = True
            return [check(db.name, "owner", False, said(exc, self.spell))]
        out = [check(db.name, "owner", True,
                     "yours, not links" if odd else "yours, regular files, not links")]
        out += [self._move_special(db, side, *odd[side]) for side in odd]
        db.unusable = any(not c["fixed"] for c in out[1:])
        return out

    def _move_special(self, db: Db, side: str, name: str, what: str, kind: str) -> dict:
        """SQLite would open it (and wait on a pipe), so the db is not opened until it is out of
        the way. Renamed, never opened: nothing of the db's is in it."""
        problem = f"{side} is {kind}, not SQLite's {what}"
        if not db.repair:
            return check(db.name, name, False, f"{problem}; the db was not opened, since SQLite"
                         f" would open it too; {repair_step(self.spell)} to move it aside")
        stamp = "".join(c for c in self.env.now_iso()[:19] if c.isalnum())  # 20260301T120000
        target = _aside(side, f"-{stamp}Z")
        try:
            os.rename(side, target)
        except OSError as exc:
            return check(db.name, name, False, db.todo(
                problem, "move it aside by hand", f"it could not be moved:"
                f" {exc.strerror or exc}"))
        return check(db.name, name, False, f"{problem} (moved aside to"
                     f" {os.path.basename(target)}; SQLite makes a new one)", True)

    def files(self, db: Db) -> list[dict]:
        out: list[dict] = []
        if not os.path.lexists(db.path):
            return out  # opening it says so, with the command that makes it
        if not db.path.is_file():
            db.unusable = True
            out.append(check(db.name, "db file", False, db.todo(
                f"{db.path} is {_kind(db.path)}, not a db file", RESTORE)))
        for suffix, name, what in SIDES[:2]:
            side = db.path.with_name(db.path.name + suffix)
            problem = _side_problem(side, what)
            if problem:
                out.append(self._fix_side_file(db, side, name, problem))
        return out or [check(db.name, "files", True, "db, -wal and -shm are sound files")]

    def _fix_side_file(self, db: Db, side: Path, name: str, problem: str) -> dict:
        """SQLite makes a new -wal or -shm when there is none, so the wrong one is moved
        aside, never deleted: a -wal may hold the only copy of recent writes."""
        if db.unusable:
            return check(db.name, name, False, db.todo(
                problem, "move it aside by hand", "the db itself is not usable"))
        db.read_only = True  # until it is out of the way, look without touching anything
        if not db.repair:
            return check(db.name, name, False, f"{problem}; the db was checked read-only;"
                         f" {repair_step(self.spell)} to move it aside")
        target = _aside(side)
        os.rename(side, target)
        db.read_only = False
        after = ("writes it held, if any, are not in the db" if name == "wal file"
                 else "SQLite makes a new one")
        return check(db.name, name, False,
                     f"{problem} (moved aside to {target.name}; {after})", True)

    def modes(self, db: Db) -> list[dict]:
        out = []
        folder = db.path.parent
        for target, wanted in [(folder, 0o700)] + [
                (db.path.with_name(db.path.name + s), 0o600) for s in ("", "-wal", "-shm")]:
            if not target.exists() or (target != folder and not target.is_file()):
                continue  # a missing file is fine; a wrong kind is the files check's
            mode = stat.S_IMODE(target.stat().st_mode)
            if mode & ~wanted:
                if db.repair:
                    os.chmod(target, wanted)
                out.append(check(db.name, "permissions", False,
                                 f"{target} is {oct(mode)}, should be {oct(wanted)}",
                                 db.repair))
        return out or [check(db.name, "permissions", True, f"{folder} 0700, files 0600")]

    def user_config(self) -> list[dict]:
        """Where there is no user db, no other check looks at the user's folder, yet every
        command reads its config.toml and refuses one that is not this user's own regular
        file, writable by no one else."""
        from ..trust import check_all
        home = self.env.user_home()
        config = os.path.join(home, "config.toml")
        if not os.path.lexists(home):
            return []
        try:
            check_all([home, config], self.env.environ)
        except EkkoError as exc:
            return [check("user", "config", False, said(exc, self.spell))]
        if not os.path.lexists(config):
            return []
        return [check("user", "config", True, "yours, a regular file only you can write")]


def special_sides(path: str) -> dict[str, tuple[str, str, str]]:
    """{side file: (check name, what SQLite keeps there, what it is)} for each side file of
    the db at `path` that is a pipe, socket or device (a link is the owner check's)."""
    from ..trust import special_kind
    out = {}
    for suffix, name, what in SIDES:
        try:
            mode = os.lstat(path + suffix).st_mode
        except OSError:
            continue
        kind = special_kind(mode)
        if kind is not None and not stat.S_ISLNK(mode):
            out[path + suffix] = (name, what, kind)
    return out


def _kind(path: Path) -> str:
    return "a directory" if path.is_dir() else "not a regular file"


def _side_problem(side: Path, what: str) -> str:
    """Why `side` (memory.db-wal or -shm) is not what SQLite expects there, or ''."""
    from ..store.maintenance import wal_header_ok
    if not os.path.lexists(side):
        return ""
    if not side.is_file():
        return f"{side} is {_kind(side)}, not SQLite's {what}"
    if side.name.endswith("-wal") and not wal_header_ok(side):
        return f"{side} is not a {what} (bad header); SQLite would discard it"
    return ""


def _aside(path, stamp: str = ""):
    """A free name beside `path` to move it to: path.bad (path.bad-STAMP when stamped)."""
    from pathlib import Path
    path = Path(path)
    target, n = path.with_name(f"{path.name}.bad{stamp}"), 1
    while os.path.lexists(target):
        target, n = path.with_name(f"{path.name}.bad{stamp}.{n}" if stamp
                                   else f"{path.name}.bad{n}"), n + 1
    return target


# -- what an erasure took, still named somewhere ----------------------------------------------
class ErasedChecks:
    """Each db's tombstones name what was erased from it. A context run naming such a record
    keeps the question asked about it for `explain`; an `edit` recovery file or a killed
    export's temp file quoting one keeps its text outside the dbs. Both are left by an erasure
    that could not reach them (a workspace the user db never heard of, one that could not be
    opened, an older ekko-mem) or made after it."""

    def __init__(self, spell, erasure) -> None:
        self.spell, self.erasure = spell, erasure

    def runs(self, db: Db, sound: list[Db]) -> dict:
        # Every erased id at once: one pass over the runs, however many were erased.
        erased = sorted({i for d in sound for _, i in d.opened.erasure.tombstones_after(0)})
        count = db.opened.erasure.runs_citing(erased) if erased else 0
        if not count:
            return check(db.name, "context runs", True, "no context run names an erased record")
        named = db.opened.health.named_by_runs(erased)
        problem = (f"{count} context runs still name erased records ({_listed(named)}), and"
                   " 'ekko-mem explain' shows what each was asked")
        return repairable(db, "context runs", problem, lambda: self._settle(db, sound, erased),
                          self.spell)

    @staticmethod
    def _settle(db: Db, sound: list[Db], erased: list[str]) -> str:
        """The user db's tombstones read as an erasure's sweep reads them (so the next sweep
        starts after them), then every run still naming an erased record dropped."""
        from .erasure import settle_runs
        user = next((d.store for d in sound if d.name == "user"), None)
        dropped = settle_runs(db.store, user) if user is not None and db.name != "user" else 0
        with db.opened.db.atomic():
            dropped += db.opened.erasure.drop_context_runs(erased, [])
        return f"dropped {dropped} context runs"

    def leftovers(self, db: Db) -> dict:
        """Files in the temp folder and where exports are written that quote a record erased
        from this db. Removing them writes nothing to the db: a read-only db does not stop it."""
        from .erasure import leftover_files
        named: set[str] = set()

        def erased(ids) -> set[str]:
            hit = db.opened.erasure.erased(sorted(ids))
            named.update(hit)
            return hit
        files = leftover_files(self.erasure.leftover_folders(), erased)
        if not files:
            return check(db.name, "erased leftovers", True,
                         "no file outside the db holds a record erased from it")
        problem = (f"{len(files)} files outside the db hold records erased from it:"
                   f" {', '.join(files[:5])}{_more(files)}")
        if not db.repair:
            return check(db.name, "erased leftovers", False,
                         f"{problem}; {repair_step(self.spell)} to remove them")
        return self._remove(db, problem, files, named)

    def _remove(self, db: Db, problem: str, files: list[str], named: set[str]) -> dict:
        from .erasure import new_report
        report = new_report()
        report["alreadyErased"] = sorted(named)
        self.erasure.remove_leftovers(report)
        left = [p for p in files if os.path.lexists(p)]
        if left:
            return check(db.name, "erased leftovers", False, db.todo(
                problem, "remove them by hand", f"{', '.join(left[:5])}{_more(left)} could"
                " not be removed"))
        return check(db.name, "erased leftovers", False,
                     f"{problem} (overwritten and removed)", True)


    def pending(self, db: Db) -> dict:
        """Purges a hard delete could not finish (another workspace, a lock, a kill)."""
        from .erasure import SWEEP
        pending = db.opened.erasure.pending_purges()
        if not pending:
            return check(db.name, "pending purges", True, "no erasure is waiting to finish")
        nodes = [n for n in pending if n != SWEEP]
        spell = self.spell
        what = (spell(Step("hard", "purgeSources", "confirm", command="forget",
                           target=nodes[0])) + " in the workspace that logged its sources"
                if nodes else spell(Step("message=ID", "hard", "confirm", command="forget"))
                + " again for a purged message")
        count = sum(len(ids) for ids in pending.values())
        return check(db.name, "pending purges", False,
                     f"{count} purged or source messages still wait for an erasure to finish;"
                     f" {what}")

    def scan(self, db: Db, text: str) -> dict:
        """Proof that `text` is gone from the db's files and its full-text index."""
        from ..store.scan import scan_files
        found = scan_files(os.fspath(db.path), [text])
        indexed = db.opened.erasure.index_leftovers([text])
        live = db.opened.erasure.live_copies([text])
        if not found and not indexed:
            return check(db.name, "scan", True, f"the text is not in {db.path.name}, its -wal"
                         " and -shm files, or the full-text index")
        where = ", ".join(os.path.basename(p) for p in found) or "the full-text index"
        held = (f"; {live} live records hold it: find them with 'ekko-mem query', then"
                f" {self.spell(Step('hard', command='forget', target='ID'))} for each" if live
                else f"; no live record holds it: {repair_step(self.spell)} (rebuilds the"
                " index), then scan again")
        return check(db.name, "scan", False, f"the text is still in {where}{held}")


def _listed(ids) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:5]) + _more(ids)


def _more(items) -> str:
    return f" and {len(items) - 5} more" if len(items) > 5 else ""
