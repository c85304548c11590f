"""Git hooks: a post-commit hook that logs each commit and records its decision trailers.

The hook fails open (a missing or failing ekko-mem never blocks a commit), chains with a hook
that is already there instead of replacing it, and marks its lines so uninstall removes only
what it added. Recording is keyed by commit sha, since `git rebase` re-runs post-commit for
every replayed commit.

A commit does not wait for its record: the hook reads the commit's sha and branch while git
waits (two `git rev-parse`, a few ms), then records them in a detached background process, so
a later checkout cannot change what is recorded. Everything else (subject, paths, trailers)
is read from the sha, which does not change.
"""
from __future__ import annotations

import os
import sys

from ..errors import Rejected, StoreUnavailable
from .stores import UseCase

BEGIN = "# >>> ekko-mem post-commit >>>"
END = "# <<< ekko-mem post-commit <<<"
TRAILERS = {"decision": "decision", "constraint": "constraint"}


def _git(args: list[str], cwd) -> str:
    import subprocess
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=20)
    except FileNotFoundError:
        raise StoreUnavailable("git is not installed", "install git first") from None
    if proc.returncode != 0:
        raise Rejected(f"git {' '.join(args)} failed: {proc.stderr.strip()[:200]}",
                       "run this inside a git repository")
    return proc.stdout


def _block(binary: str, workspace: str, flags: dict) -> str:
    """The hook's lines. `flags` spells the `hooks run` options rev and branch (the command
    line owns their spelling)."""
    from shlex import quote
    # Absolute paths baked in: hooks run with the committer's PATH and, in linked worktrees,
    # from a folder that has no .ekko of its own. The record runs in a subshell that ignores
    # hang-ups and Ctrl-C and holds none of git's streams, so git returns at once and
    # closing the terminal does not kill it; a failure stays silent (fails open).
    return "\n".join([
        BEGIN,
        f"EKKO_MEM_BIN={quote(binary)}",
        '[ -x "$EKKO_MEM_BIN" ] || EKKO_MEM_BIN=$(command -v ekko-mem 2>/dev/null)',
        'if [ -n "$EKKO_MEM_BIN" ]; then',
        "  EKKO_MEM_SHA=$(git rev-parse HEAD 2>/dev/null)",
        "  EKKO_MEM_BRANCH=$(git rev-parse --abbrev-ref HEAD 2>/dev/null)",
        "  ( trap '' HUP INT QUIT",
        f'    EKKO_WORKSPACE={quote(workspace)} exec "$EKKO_MEM_BIN" hooks run post-commit'
        f' {flags["rev"]} "${{EKKO_MEM_SHA:-HEAD}}"'
        f' ${{EKKO_MEM_BRANCH:+{flags["branch"]} "$EKKO_MEM_BRANCH"}}'
        " </dev/null >/dev/null 2>&1 ) &",
        "fi",
        END, ""])


class Hooks(UseCase):
    needs = ("messages", "nodes")

    def _hook_path(self) -> str:
        path = _git(["rev-parse", "--git-path", "hooks/post-commit"], self.stores.root).strip()
        return path if os.path.isabs(path) else os.path.join(str(self.stores.root), path)

    def install_hooks(self, binary: str | None, flags: dict) -> dict:
        """Add the post-commit block; the hook runs `binary` (None: the ekko-mem installed
        beside this Python) with the `hooks run` options spelt as `flags` says (rev, branch).
        A block written by an older ekko-mem is replaced."""
        path = self._hook_path()
        binary = os.path.abspath(binary or os.path.join(os.path.dirname(sys.executable),
                                                        "ekko-mem"))
        block = _block(binary, str(self.stores.root), flags)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        existing = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                existing = handle.read()
        if existing is not None and BEGIN in existing:
            head, _, rest = existing.partition(BEGIN)
            old, _, tail = rest.partition(END)
            if BEGIN + old + END + "\n" == block:
                return {"hook": path, "installed": False, "reason": "already installed"}
            self._write_hook(path, head + block + tail.lstrip("\n"))
            chained = head.strip() not in ("", "#!/bin/sh")
            return {"hook": path, "installed": True, "chained": chained, "updated": True}
        if existing is None:
            text = "#!/bin/sh\n" + block
            chained = False
        elif existing.startswith("#!") and "sh" in existing.splitlines()[0]:
            text = existing.rstrip("\n") + "\n\n" + block
            chained = True
        else:
            raise Rejected(f"{path} exists and is not a shell script",
                           "add a line calling 'ekko-mem hooks run post-commit' to it yourself")
        self._write_hook(path, text)
        return {"hook": path, "installed": True, "chained": chained}

    @staticmethod
    def _write_hook(path: str, text: str) -> None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(path, 0o755)

    def uninstall_hooks(self) -> dict:
        path = self._hook_path()
        if not os.path.exists(path):
            return {"hook": path, "removed": False, "reason": "no hook"}
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if BEGIN not in text:
            return {"hook": path, "removed": False, "reason": "not installed"}
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        remaining = (head.rstrip("\n") + "\n" + tail.lstrip("\n")).strip("\n")
        if remaining.strip() in ("", "#!/bin/sh"):
            os.remove(path)
            return {"hook": path, "removed": True, "deletedFile": True}
        with open(path, "w", encoding="utf-8") as out:
            out.write(remaining + "\n")
        return {"hook": path, "removed": True, "deletedFile": False}

    def record_commit(self, rev: str = "HEAD", branch: str | None = None) -> dict:
        """Log a commit as a tool message in the hooks session, once per sha. `branch` is
        the branch it was made on (default: the one checked out now)."""
        root = self.stores.root
        sha = _git(["rev-parse", rev], root).strip()
        session = self.config.get("hooks.session")
        if self.store.messages.find_commit_message(session, sha):
            return {"sha": sha, "recorded": False, "reason": "already recorded"}
        subject = _git(["log", "-1", "--format=%s", sha], root).strip()
        if not branch:
            branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], root).strip()
        paths = _git(["diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha],
                     root).split()
        trailers = _git(["log", "-1", "--format=%(trailers:only,unfold)", sha], root)
        message = self.messages.log_message(subject or sha, session=session, role="tool", meta={
            "source": "git", "sha": sha, "branch": branch, "paths": paths[:200]})
        recorded = []
        if self.config.get("hooks.trailers"):
            for line in trailers.splitlines():
                key, sep, value = line.partition(":")
                kind = TRAILERS.get(key.strip().lower())
                if sep and kind and value.strip():
                    result = self.nodes.propose_update("create", {
                        "scope": "workspace", "type": kind, "domain": "engineering",
                        "categoryPath": ["engineering", f"{kind}s"], "title": value.strip(),
                        "content": value.strip(), "tags": ["git"],
                        "sourceMessageIds": [message["id"]]},
                        reason=f"{key.strip()} trailer of commit {sha[:12]}", actor="user")
                    recorded.append(result)
        return {"sha": sha, "recorded": True, "messageId": message["id"], "memories": recorded}
