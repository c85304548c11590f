"""`doctor`: is every memory db healthy? Files, modes, integrity, schema, FTS in step,
expired-but-active nodes, loops, broken chains and orphaned references, and what an erasure
took that a context run or a file still names (doctor_checks.py has the checks around the db);
a repair fixes what it can. A db that cannot be written here is opened for reading, and every
check that only reads still runs.

Each check runs on its own: whatever goes wrong inside one (a damaged page, a missing table,
an unreadable file) becomes a FAIL line for that check and the others still run. A damaged db
is only read, never written, even when repairing: writing to a broken b-tree can spread the
damage.
"""
from __future__ import annotations

import os
import sqlite3
from contextlib import suppress

from ..errors import EkkoError, Step, UsageError
from .doctor_checks import RESTORE, Db, ErasedChecks, FileChecks, check, repairable, said
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .audit_log import AuditLog
    from .erasure import Erasure
    from .nodes import Nodes

# The checks whose faults --repair can fix.
REPAIRABLE = {"permissions", "full-text index", "expiry", "schema", "wal file", "shm file",
              "journal file", "source workspaces", "cycles", "context runs", "erased leftovers"}
DAMAGE_WORDS = ("database disk image is malformed", "file is not a database", "corrupt")


def _on_disk(path) -> int:
    """The db and its side files, in bytes."""
    from ..trust import db_files
    total = 0
    for name in db_files(os.fspath(path))[1:]:  # not the folder
        with suppress(OSError):
            total += os.stat(name).st_size
    return total


def _describe(exc: BaseException, path, spell=str) -> str:
    cause = exc if isinstance(exc, sqlite3.Error) else exc.__cause__
    if isinstance(cause, sqlite3.Error) and "malformed" in str(cause) and not _damage(cause):
        # 'malformed JSON' and the like: bad data in a row, not a damaged file
        return (f"SQLite could not read a row of {path}: {cause}; the file itself may be"
                " fine, rerun with EKKO_DEBUG=1 to see which query failed")
    if isinstance(exc, sqlite3.Error):
        from ..store.connection import translate
        exc = translate(exc, os.fspath(path))
    if isinstance(exc, EkkoError):
        return said(exc, spell)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}; check the file and its folder"
    return f"{type(exc).__name__}: {exc}; rerun with EKKO_DEBUG=1 and report it"


def _damage(exc: BaseException) -> str:
    """The SQLite words for a damaged file, when that is what `exc` is about."""
    text = f"{getattr(exc, 'message', '')} {exc}"
    return next((words for words in DAMAGE_WORDS if words in text), "")


class Checkup(UseCase):
    def __init__(self, stores: Stores, *, nodes: Nodes, audit_log: AuditLog,
                 erasure: Erasure) -> None:
        super().__init__(stores)
        self.nodes = nodes
        self.audit_log = audit_log
        self.erasure = erasure

    def doctor(self, *, repair: bool = False, scan: str | None = None,
               compact: bool = False) -> dict:
        """Check (and with repair, fix) each db; with `scan`, also prove that text is gone;
        with `compact`, store old audit copies compactly and shrink the file."""
        checks: list[dict] = []
        dbs: list[Db] = []
        if scan is not None and not scan.strip():
            raise UsageError("a scan needs the text to look for", "give the text to scan for")
        files = FileChecks(self.env, self.stores.spell)
        erased = ErasedChecks(self.stores.spell, self.erasure)
        try:
            dbs = self._targets(checks, repair)
            for db in dbs:
                db.workspace = _usable_workspace(dbs[0])
                checks += self._check_target(db, files, erased)
                if compact and db.store is not None:
                    checks += self._guard(db, "audit copies", self._compact)
                if scan is not None and db.store is not None:
                    checks += self._guard(db, "scan", lambda d: erased.scan(d, scan))
            checks += self._check_erased(dbs, erased)
            if not any(db.name == "user" for db in dbs):
                checks += files.user_config()
        except UsageError:
            raise
        except Exception as exc:  # the last guard: doctor reports, it does not crash
            checks.append(check("doctor", "run", False,
                                _describe(exc, "memory.db", self.stores.spell)))
        finally:
            for db in dbs:
                db.close()
        problems = [c for c in checks if not c["ok"] and not c["fixed"]]
        return {"ok": not problems, "checks": checks, "repaired": repair,
                "repairable": not repair and any(c["check"] in REPAIRABLE for c in problems)}

    def _targets(self, checks, repair) -> list[Db]:
        from pathlib import Path
        out = []
        try:
            out.append(Db("workspace", Path(self.stores.db_path), repair))
        except EkkoError as exc:
            checks.append(check("workspace", "found", False,
                                _describe(exc, "", self.stores.spell)))
        user = Path(self.env.user_db())
        if os.path.lexists(user):
            out.append(Db("user", user, repair))
        return out

    def _check_target(self, db: Db, files: FileChecks, erased: ErasedChecks) -> list[dict]:
        out = self._guard(db, "owner", files.owner)
        if db.unusable:
            return out
        out += self._guard(db, "files", files.files)
        out += self._guard(db, "permissions", files.modes)
        if db.unusable:
            return out
        out += self._guard(db, "open", self._open)
        if db.store is None:
            return out
        for name, step in [("integrity", self._check_integrity), ("schema", self._check_schema),
                           ("tables", self._check_tables), ("full-text index", self._check_fts),
                           ("expiry", self._check_expired),
                           ("cycles", self._check_cycles),
                           ("supersede chains", self._check_chains),
                           ("pending purges", erased.pending),
                           ("summary ranges", self._check_summaries),
                           ("source messages", self._check_sources)]:
            out += self._guard(db, name, step)
            if db.newer:  # its tables are not ours to judge
                break
        return out

    def _check_erased(self, dbs: list[Db], erased: ErasedChecks) -> list[dict]:
        """After every db is open: a workspace's context runs may name what the user db erased."""
        sound = [db for db in dbs if db.sound()]
        out = []
        for db in sound:
            out += self._guard(db, "context runs", lambda d: erased.runs(d, sound))
            out += self._guard(db, "erased leftovers", erased.leftovers)
        return out

    def _guard(self, db: Db, name: str, step) -> list[dict]:
        try:
            got = step(db)
        except UsageError:
            raise
        except Exception as exc:  # one failed check must not stop the others
            return [check(db.name, name, False, self._failure(db, exc))]
        return got if isinstance(got, list) else [got]

    def _failure(self, db: Db, exc: BaseException) -> str:
        words = _damage(exc)
        if not words:
            text = _describe(exc, db.path, self.stores.spell)
            return f"cannot repair: {text}" if db.repair else text
        if db.damaged:
            return "could not run: the db is damaged (see the first FAIL line for it)"
        db.damaged = words
        return db.restore(f"{db.path} is damaged ({words})")

    # -- the db ------------------------------------------------------------------------------
    def _open(self, db: Db) -> list[dict]:
        """For writing when it can be (a repair may need to); where it cannot (read-only
        media, folder or file), for reading, and every check that only reads still runs."""
        from ..store import open_for_reading, open_store
        from ..store.connection import NotWritable
        if db.read_only:  # immutable: neither the db nor its side files are touched
            db.store = open_for_reading(os.fspath(db.path))
            return []
        try:
            db.store = open_store(db.path, migrate=False, allow_newer=True)
            return []
        except NotWritable as exc:
            refused = exc
        try:
            db.store = open_for_reading(os.fspath(db.path))
        except EkkoError:
            raise refused from None
        db.not_writable = refused.message
        skipped = ("; its -wal holds writes a read here cannot see, so the checks saw the db"
                   " without them" if _wal_unread(db.store, db.path) else "")
        return [check(db.name, "open", True, f"warning: {refused.message}, so it was opened"
                      f" only for reading and only read{skipped}; repairs need a writable db"
                      " (check the file and folder permissions, or copy the folder where it"
                      " can be written)")]

    def _compact(self, db: Db) -> dict:
        """Old audit copies stored again by reference and difference (store/compaction.py),
        then the file rebuilt without the pages that freed. Only on a sound db at this
        ekko-mem's schema: an older ekko-mem would read the references as data."""
        from ..store import latest_version
        why = db.blocked() or ("its schema is newer than this ekko-mem" if db.newer else "")
        if why:
            then = ("rerun it where the db can be written" if db.not_writable else
                    "deal with the first FAIL line for this db, then rerun doctor")
            return check(db.name, "audit copies", False, f"not compacted: {why}; {then}")
        if db.opened.schema_version() != latest_version():
            return check(db.name, "audit copies", False, "not compacted: the db is not"
                         " migrated to this ekko-mem's schema yet;"
                         f" {self.stores.spell(Step('repair', command='doctor'))} first")
        size = _on_disk(db.path)
        done = db.opened.compaction.compact()
        db.opened.compaction.vacuum()
        db.opened.erasure.checkpoint_truncate()
        return check(db.name, "audit copies", True,
                     f"{done['rewritten']:,} of {done['events']:,} events stored anew"
                     f" ({done['bytesBefore']:,} -> {done['bytesAfter']:,} bytes of copies);"
                     f" {size:,} -> {_on_disk(db.path):,} bytes on disk")

    def _check_integrity(self, db: Db) -> dict:
        problems = db.opened.health.integrity_problems()
        if not problems:
            return check(db.name, "integrity", True, "ok")
        db.damaged = "; ".join(problems[:3])
        return check(db.name, "integrity", False,
                     db.restore(f"{db.path} is damaged: {db.damaged}"))

    def _repairable(self, db: Db, name: str, problem: str, fix) -> dict:
        return repairable(db, name, problem, fix, self.stores.spell)

    def _check_schema(self, db: Db) -> dict:
        from ..store import apply_migrations, latest_version
        version, latest = db.opened.schema_version(), latest_version()
        if version > latest:
            db.newer = True
            return check(db.name, "schema", False, db.todo(
                f"version {version} is newer than this ekko-mem ({latest})",
                "upgrade ekko-mem (pip install -U ekko-mem); the db was not changed",
                "an older ekko-mem cannot undo a newer schema"))
        if version == latest:
            return check(db.name, "schema", True, f"version {version}")
        return self._repairable(db, "schema", f"version {version}, {latest} available",
                                lambda: f"migrated: {', '.join(apply_migrations(db.opened))}")

    def _check_tables(self, db: Db) -> list[dict]:
        from ..store import latest_version
        if db.opened.schema_version() != latest_version():
            return []  # still to be migrated: the schema line says so
        missing = db.opened.health.missing_schema_objects()
        if not missing:
            return [check(db.name, "tables", True, "every table, index and trigger is there")]
        return [check(db.name, "tables", False, db.todo(
            f"{db.path} lacks {', '.join(missing[:5])}", RESTORE,
            "doctor does not recreate what was removed from a db"))]

    def _check_fts(self, db: Db) -> dict:
        store = db.opened
        wrong = {t: c for t, c in store.health.fts_out_of_step().items()
                 if c["missing"] or c["extra"]}
        # The FTS5 self-check is a write; in a db opened read-only each index is only opened.
        verified = not store.read_only_reason
        damaged = store.health.fts_damaged(self_check=verified)
        if not wrong and not damaged:
            return check(db.name, "full-text index", True, "in step with nodes and messages"
                         + ("" if verified else " (self-check skipped: read-only)"))
        detail = "; ".join([f"{t}: {c['missing']} missing, {c['extra']} left over"
                            for t, c in wrong.items()]
                           + [f"{t} {problem}" for t, problem in damaged.items()])
        return self._repairable(db, "full-text index", detail, lambda: self._rebuild(store))

    @staticmethod
    def _rebuild(store) -> str:
        with store.db.atomic():
            store.nodes.rebuild_fts()
        return "rebuilt"

    def _check_expired(self, db: Db) -> dict:
        now = self.env.now_iso()
        due = db.opened.nodes.due_for_expiry(now)
        if not due:
            return check(db.name, "expiry", True, "no active node is past its expiresAt")
        return self._repairable(db, "expiry", f"{len(due)} active nodes past expiresAt",
                                lambda: self._expire(db.store, now))

    def _expire(self, store, now: str) -> str:
        with store.db.atomic():
            return f"marked {len(self.nodes.sweep_expired(store, now))} expired"

    # -- links that loop, which every walk along them would follow for ever -------------------
    def _check_cycles(self, db: Db) -> dict:
        from ..store.health import LinkCycles
        links = LinkCycles(db.opened.db)
        found = {kind: loops for kind in links.kinds if (loops := links.cycles(kind))}
        if not found:
            return check(db.name, "cycles", True,
                         "no version, summary or message links back to itself")
        named = [f"{kind} cycle: {_loop_text(loop)}" for kind, loops in found.items()
                 for loop in loops]
        problem = "; ".join(named[:5]) + (f" (and {len(named) - 5} more)" if named[5:] else "")
        return self._repairable(db, "cycles", problem,
                                lambda: self._break_cycles(db.store, links))

    def _break_cycles(self, store, links) -> str:
        """Clear the link that closed each loop (found again under the write lock)."""
        done = []
        with store.db.atomic():
            for kind in links.kinds:
                for loop in links.cycles(kind):
                    first, target = _closing_link(store, kind, loop)
                    done.append(first)
                    why = f"doctor: broke a {kind} cycle; {first} no longer" \
                          f" {_LINK_WORDS[kind]} {target}"
                    if kind == "supersede":
                        old = store.nodes.get_node(first)
                        new = {**old, "supersedesId": None}
                        store.nodes.replace_node(new)
                        self.audit_log.record(store, "update", new, "system", why,
                                              before=old, after=new)
                    else:  # the log and its summaries have no trail of their own
                        links.clear_link(kind, first)
                        self.audit_log.record(store, "update", {"id": None}, "system", why)
        if not done:
            return "no loop was left by the time the write lock was held"
        return (f"cleared the link that closed each, of {', '.join(done[:8])}"
                f"{f' and {len(done) - 8} more' if len(done) > 8 else ''}; 'ekko-mem audit'"
                " has each")

    # -- references, reported for a person to judge --------------------------------------------
    def _check_chains(self, db: Db) -> dict:
        bad = {k: v for k, v in db.opened.health.broken_chains().items() if v}
        if not bad:
            return check(db.name, "supersede chains", True)
        found = "; ".join(f"{k.replace('_', ' ')}: {', '.join(v[:5])}" for k, v in bad.items())
        return check(db.name, "supersede chains", False, db.todo(
            found, "look at each with 'ekko-mem show ID' and settle it with 'ekko-mem edit'"
                   " or 'ekko-mem forget'"))

    def _check_summaries(self, db: Db) -> list[dict]:
        if db.name != "workspace":
            return []
        stale = db.opened.health.summaries_missing_messages()
        if not stale:
            return [check(db.name, "summary ranges", True)]
        return [check(db.name, "summary ranges", False, db.todo(
            f"{len(stale)} summaries cite removed messages: {', '.join(stale[:5])}",
            "the summaries stay as written; see them with 'ekko-mem show ID'"))]

    def _check_sources(self, db: Db) -> list[dict]:
        """Every cited message is in its log or was purged on request. A user memory's
        reference into another workspace is external: that log is checked from there."""
        from ..store.refs import split_ref
        workspace = db.store if db.name == "workspace" else db.workspace
        if workspace is None:
            return []  # no workspace log to look the sources up in
        here = workspace.meta("store_id")
        rows = [(node, ref, *split_ref(ref)) for node, ref in db.opened.health.source_citations()]
        own = _found_in(db.store, [m for _, _, w, m in rows if w is None]) \
            if db.name == "user" else set()
        logged = _found_in(workspace, [m for _, _, w, m in rows
                                       if w == here or (w is None and m not in own)])
        missing: set[str] = set()
        unnamed: dict[str, dict[str, str | None]] = {}
        external: dict[str, set[str]] = {}
        for node, ref, where, mid in rows:
            if where not in (None, here):
                external.setdefault(where, set()).add(node)
            elif where is None and db.name == "user":
                if mid in own or (mid in logged and here is None):
                    continue
                unnamed.setdefault(node, {})[ref] = here if mid in logged else None
            elif mid not in logged:
                missing.add(node)
        if unnamed:
            self._place_unnamed(db, unnamed, here)
            missing |= {n for n, refs in unnamed.items() if None in refs.values()}
        return [*self._sources_lines(db, missing), *self._unnamed_lines(db, unnamed),
                *_external_lines(db.name, external)]

    def _sources_lines(self, db: Db, missing: set) -> list[dict]:
        if not missing:
            return [check(db.name, "source messages", True,
                          "every cited message is in the log or was purged on request")]
        return [check(db.name, "source messages", False, db.todo(
            f"{len(missing)} nodes cite messages that are gone: {', '.join(sorted(missing)[:5])}",
            "the nodes stay as they are; see them with 'ekko-mem show ID'"))]

    # -- user memory written before its references named their workspace ---------------------
    def _place_unnamed(self, db: Db, unnamed: dict, here: str | None) -> None:
        """Look up, in the other workspaces user memory was written from (only read), the
        plain ids not in this log; each found one is given its workspace's id."""
        wanted = {ref for refs in unnamed.values() for ref, where in refs.items()
                  if where is None}
        try:
            known = db.opened.erasure.known_workspaces() if wanted else []
        except EkkoError:  # an older schema without the table: the schema line says so
            known = []
        for workspace_id, root in known:
            if not wanted or workspace_id == here:
                continue
            try:
                other = self.stores.open_workspace(root, read_only=True)
            except EkkoError:
                continue  # not there any more, or not safe to open: the refs stay missing
            try:
                found = _found_in(other, sorted(wanted))
            finally:
                other.close()
            for refs in unnamed.values():
                refs.update({ref: workspace_id for ref in refs if ref in found})
            wanted -= found

    def _unnamed_lines(self, db: Db, unnamed: dict) -> list[dict]:
        placed = {n: {r: w for r, w in refs.items() if w} for n, refs in unnamed.items()}
        placed = {n: refs for n, refs in placed.items() if refs}
        if not placed:
            return []
        problem = (f"{len(placed)} user memories name workspace messages without their"
                   f" workspace, so other workspaces cannot tell where they are:"
                   f" {', '.join(sorted(placed)[:5])}")
        return [self._repairable(db, "source workspaces", problem,
                                 lambda: self._name_workspaces(db.store, placed))]

    def _name_workspaces(self, store, placed: dict) -> str:
        from ..store.refs import source_ref
        with store.db.atomic():
            for node_id, refs in placed.items():
                old = store.nodes.get_node(node_id)
                new = {**old, "sourceMessageIds": [
                    source_ref(refs[r], r) if r in refs else r for r in old["sourceMessageIds"]]}
                store.nodes.replace_node(new)
                self.audit_log.record(store, "update", new, "system",
                                      "doctor: sources named with their workspace",
                                      before=old, after=new)
        return f"named the workspace of {len(placed)} nodes' sources"


def _found_in(store, ids) -> set[str]:
    """Which of these message ids are in `store`'s log, or were purged from it on request."""
    ids = sorted(set(ids))
    found = set(ids) & store.health.purged_message_ids() if ids else set()
    for start in range(0, len(ids), 500):
        found |= store.messages.message_ids_exist(ids[start:start + 500])
    return found


def _external_lines(name: str, external: dict) -> list[dict]:
    if not external:
        return []
    nodes = set().union(*external.values())
    places = ", ".join(f"{w} ({len(n)})" for w, n in sorted(external.items()))
    return [check(name, "external sources", True,
                  f"{len(nodes)} nodes cite messages logged in other workspaces: {places};"
                  " each is checked from its own workspace")]


_LINK_WORDS = {"supersede": "supersedes", "summary parent": "continues",
               "message parent": "answers"}


def _closing_link(store, kind: str, loop: list[str]) -> tuple[str, str]:
    """(record, the record it names) of the link to clear. A loop starts at its oldest
    member, whose link names a record made no earlier: that one, unless a version names as
    superseded one that is not (the active head of a chain, say): that link is the wrong one,
    and clearing it leaves the others a chain in order."""
    pairs = [(loop[i], loop[(i + 1) % len(loop)]) for i in range(len(loop))]
    if kind == "supersede":
        for record, target in pairs:
            named = store.nodes.get_node(target)
            if named is not None and named["status"] != "superseded":
                return record, target
    return pairs[0]


def _loop_text(loop: list[str]) -> str:
    """mem_a -> mem_b -> mem_a, a long loop shortened in the middle."""
    shown = loop if len(loop) <= 4 else [*loop[:3], f"... {len(loop) - 4} more", loop[-1]]
    return " -> ".join([*shown, loop[0]])


def _wal_unread(store, path) -> bool:
    """Opened immutable (no -shm could be made), which skips a -wal that holds writes."""
    try:
        return (store.db.one("PRAGMA journal_mode")[0] != "wal"
                and os.path.getsize(f"{os.fspath(path)}-wal") > 0)
    except (OSError, EkkoError):
        return False


def _usable_workspace(first: Db):
    """The workspace store, when it opened and is sound enough to look messages up in."""
    if first.name == "workspace" and not first.damaged and not first.newer:
        return first.store
    return None
