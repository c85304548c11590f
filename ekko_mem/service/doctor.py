"""`doctor`: is every memory db healthy? Integrity, FTS in step, file modes, schema version,
expired-but-active nodes, broken chains and orphaned references; --repair fixes what it can."""
from __future__ import annotations

import os
import stat

from ..errors import EkkoError


def _check(db, name, ok, detail="", fixed=False) -> dict:
    return {"db": db, "check": name, "ok": ok, "detail": detail, "fixed": fixed}


class DoctorService:
    def doctor(self, *, repair: bool = False) -> dict:
        from pathlib import Path  # not on the start-up path of other commands
        checks: list[dict] = []
        targets = []
        try:
            targets.append(("workspace", Path(self.db_path)))
        except EkkoError as exc:
            checks.append(_check("workspace", "found", False, exc.message))
        if os.path.exists(self.env.user_db()):
            targets.append(("user", Path(self.env.user_db())))
        for name, path in targets:
            checks += self._check_files(name, path, repair)
            checks += self._check_db(name, path, repair)
        problems = [c for c in checks if not c["ok"] and not c["fixed"]]
        return {"ok": not problems, "checks": checks, "repaired": repair}

    def _check_files(self, name, path, repair) -> list[dict]:
        out = []
        folder = path.parent
        for target, wanted in [(folder, 0o700)] + [
                (path.with_name(path.name + s), 0o600) for s in ("", "-wal", "-shm")]:
            if not target.exists():
                continue
            mode = stat.S_IMODE(target.stat().st_mode)
            if mode & ~wanted:
                fixed = False
                if repair:
                    os.chmod(target, wanted)
                    fixed = True
                out.append(_check(name, "permissions", False,
                                  f"{target} is {oct(mode)}, should be {oct(wanted)}", fixed))
        if not out:
            out.append(_check(name, "permissions", True, f"{folder} 0700, files 0600"))
        return out

    def _check_db(self, name, path, repair) -> list[dict]:
        from ..store import apply_migrations, latest_version, open_store
        try:
            store = open_store(path, migrate=False, allow_newer=True)
        except EkkoError as exc:
            return [_check(name, "open", False, exc.message)]
        try:
            return self._db_checks(name, store, repair, apply_migrations, latest_version)
        except EkkoError as exc:
            return [_check(name, "read", False, exc.message)]
        finally:
            store.close()

    def _db_checks(self, name, store, repair, apply_migrations, latest_version) -> list[dict]:
        out = []
        result = store.integrity_check()
        out.append(_check(name, "integrity", result == ["ok"], "; ".join(result[:3])))
        version, latest = store.schema_version(), latest_version()
        if version > latest:
            out.append(_check(name, "schema", False,
                              f"version {version} is newer than this ekko-mem ({latest})"))
            return out
        if version < latest:
            fixed = bool(repair and apply_migrations(store))
            out.append(_check(name, "schema", False, f"version {version}, {latest} available",
                              fixed))
        else:
            out.append(_check(name, "schema", True, f"version {version}"))
        out.append(self._check_fts(name, store, repair))
        out.append(self._check_expired(name, store, repair))
        chains = store.broken_chains()
        bad = {k: v for k, v in chains.items() if v}
        out.append(_check(name, "supersede chains", not bad, "; ".join(
            f"{k.replace('_', ' ')}: {', '.join(v[:5])}" for k, v in bad.items())))
        out += self._check_references(name, store)
        return out

    def _check_fts(self, name, store, repair) -> dict:
        step = store.fts_out_of_step()
        wrong = {t: c for t, c in step.items() if c["missing"] or c["extra"]}
        healthy = not wrong and store.fts_index_ok()
        detail = "; ".join(f"{t}: {c['missing']} missing, {c['extra']} left over"
                           for t, c in wrong.items()) or ("" if healthy else "index damaged")
        if healthy:
            return _check(name, "full-text index", True, "in step with nodes and messages")
        if repair:
            with store.db.atomic():
                store.rebuild_fts()
            return _check(name, "full-text index", False, detail + " (rebuilt)", True)
        return _check(name, "full-text index", False, detail + "; run doctor --repair")

    def _check_expired(self, name, store, repair) -> dict:
        now = self.env.now_iso()
        due = store.due_for_expiry(now)
        if not due:
            return _check(name, "expiry", True, "no active node is past its expiresAt")
        if repair:
            with store.db.atomic():
                self._sweep_expired(store, now)
        return _check(name, "expiry", False, f"{len(due)} active nodes past expiresAt",
                      fixed=repair)

    def _check_references(self, name, store) -> list[dict]:
        out = []
        if name == "workspace":
            stale = store.summaries_missing_messages()
            out.append(_check(name, "summary ranges", not stale,
                              f"{len(stale)} summaries cite removed messages" if stale else ""))
            workspace = store
        else:
            try:
                workspace = self.store
            except EkkoError:
                return out
        purged = workspace.purged_message_ids()
        missing = store.missing_sources(
            lambda ids: (set(ids) & purged) | workspace.message_ids_exist(ids))
        out.append(_check(name, "source messages", not missing,
                          f"{len(missing)} nodes cite messages that are gone:"
                          f" {', '.join(missing[:5])}" if missing else
                          "every cited message is in the log or was purged on request"))
        return out
