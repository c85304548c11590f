"""Git hooks: a post-commit hook that logs each commit and records its trailers as memories.

The hook fails open (a missing or failing ekko-mem never blocks a commit), chains with a hook
that is already there instead of replacing it, and marks its lines so uninstall removes only
what it added.

A commit does not wait for its record: the hook reads the commit's sha and branch while git
waits (one `git rev-parse`), then records them in a detached background process, so a later
checkout cannot change what is recorded. Everything else (subject, paths, trailers) is read
from the sha, which does not change.

A commit is recorded once, however often amend, rebase or cherry-pick make it again under a
new sha. What a commit replays is known only while git is at it (the rebase's `done` list,
CHERRY_PICK_HEAD, the reflog's last line), so the hook reads it before going to the
background and appends `OLD NEW` to `.ekko/rewritten-commits`. A record takes the commits
that file joins to its own as one, and decides under the write lock, in whatever order the
records run: when one of them is recorded, this one is not.

Trailers are read in English and Chinese (`Decision:`, `决定：`). Git takes only ASCII keys
with an ASCII colon as trailers, so the last paragraph of the message is also read here: when
its every line is `Key: value` or `Key：value` (continuation lines folded as git folds them),
it is the trailer block; otherwise git's own reading stands.

A trailer is the user's statement only when the user wrote and committed the commit: its
author's and committer's e-mail are the one git would commit under here now (`git var
GIT_COMMITTER_IDENT`: user.email, or the GIT_COMMITTER_EMAIL and EMAIL that override it). A
cherry-picked, applied or rebased commit of someone else's is recorded as theirs: imported,
at lower confidence, its reason naming them.
"""
from __future__ import annotations

import os
import re
import sys

from ..env import DIR_NAME
from ..errors import Rejected, StoreUnavailable
from .stores import Stores, UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .messages import Messages
    from .remembering import Remembering

BEGIN = "# >>> ekko-mem post-commit >>>"
END = "# <<< ekko-mem post-commit <<<"
# trailer key (lower case) -> what it records; a Chinese key records in Chinese wording
TRAILERS = {"decision": "decision", "决定": "decision", "决策": "decision",
            "constraint": "constraint", "约束": "constraint",
            "todo": "open", "to-do": "open", "待办": "open", "done": "done", "完成": "done"}
_TRAILER_LINE = re.compile(r"([\w-]+)[ \t]*[:：][ \t]*(.*)")
OTHERS_CONFIDENCE = 0.6  # what another person's trailer says: below the user's own 0.95
REWRITTEN = "rewritten-commits"  # in .ekko: "OLD NEW" a line, appended by the hook
ROTATE_BYTES = 64 * 1024  # then the file becomes REWRITTEN.1; the last two are read
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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
    rewritten = quote(os.path.join(workspace, DIR_NAME, REWRITTEN))
    # Absolute paths baked in: hooks run with the committer's PATH and, in linked worktrees,
    # from a folder that has no .ekko of its own. Nothing here may fail a hook under `set -e`.
    # What the commit replays is read before the subshell, while the rebase or cherry-pick is
    # still at it. The subshell ignores hang-ups and Ctrl-C and holds none of git's streams,
    # so git returns at once and closing the terminal does not kill it; a failure stays
    # silent (fails open).
    return "\n".join([
        BEGIN,
        f"EKKO_MEM_BIN={quote(binary)}",
        '[ -x "$EKKO_MEM_BIN" ] || EKKO_MEM_BIN=$(command -v ekko-mem 2>/dev/null)',
        'if [ -n "$EKKO_MEM_BIN" ]; then',
        "  { read -r EKKO_MEM_GIT; read -r EKKO_MEM_SHA; read -r EKKO_MEM_BRANCH; }"
        " <<EKKO_MEM_REV || :",
        "$(git rev-parse --git-dir HEAD --abbrev-ref HEAD 2>/dev/null)",
        "EKKO_MEM_REV",
        # The reflog's last line, if it is this commit's: "OLD NEW who when<TAB>action: ..."
        "  EKKO_MEM_LAST=$(tail -n 1 \"$EKKO_MEM_GIT/logs/HEAD\" 2>/dev/null) || EKKO_MEM_LAST=",
        "  EKKO_MEM_DID=${GIT_REFLOG_ACTION:-} EKKO_MEM_FROM=",
        '  case $EKKO_MEM_LAST in ?*" $EKKO_MEM_SHA "*) EKKO_MEM_DID=${EKKO_MEM_LAST#*"\t"} ;;'
        " esac",
        "  case $EKKO_MEM_DID in",
        '    "commit (amend)"*) EKKO_MEM_FROM=${EKKO_MEM_LAST%% *} ;;',
        "    commit*) ;;",  # a commit of its own, even in the middle of a rebase
        '    *) if [ -f "$EKKO_MEM_GIT/rebase-merge/done" ]; then',
        # "pick SHA subject", "fixup -C SHA subject": the commit replayed is the last done
        '         EKKO_MEM_FROM=$(tail -n 1 "$EKKO_MEM_GIT/rebase-merge/done" 2>/dev/null)'
        " || EKKO_MEM_FROM=",
        "         EKKO_MEM_FROM=${EKKO_MEM_FROM#* }",
        '         case $EKKO_MEM_FROM in -?" "*) EKKO_MEM_FROM=${EKKO_MEM_FROM#* } ;; esac',
        "         EKKO_MEM_FROM=${EKKO_MEM_FROM%% *}",
        '       elif [ -f "$EKKO_MEM_GIT/CHERRY_PICK_HEAD" ]; then',
        '         read -r EKKO_MEM_FROM <"$EKKO_MEM_GIT/CHERRY_PICK_HEAD" || :',
        "       fi ;;",
        "  esac",
        '  case $EKKO_MEM_FROM in *[!0-9a-f]*|"$EKKO_MEM_SHA") EKKO_MEM_FROM= ;; esac',
        '  if [ -n "$EKKO_MEM_FROM" ]; then',
        f'    {{ printf \'%s %s\\n\' "$EKKO_MEM_FROM" "$EKKO_MEM_SHA" >>{rewritten}; }}'
        " 2>/dev/null || :",
        "  fi",
        "  ( trap '' HUP INT QUIT",
        f'    EKKO_WORKSPACE={quote(workspace)} exec "$EKKO_MEM_BIN" hooks run post-commit'
        f' {flags["rev"]} "${{EKKO_MEM_SHA:-HEAD}}"'
        f' ${{EKKO_MEM_BRANCH:+{flags["branch"]} "$EKKO_MEM_BRANCH"}}'
        " </dev/null >/dev/null 2>&1 ) &",
        "fi",
        END, ""])


class Hooks(UseCase):
    def __init__(self, stores: Stores, *, messages: Messages, remembering: Remembering) -> None:
        super().__init__(stores)
        self.messages = messages
        self.remembering = remembering

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
        for name in (self._rewrites_path(), self._rewrites_path() + ".1"):
            if os.path.exists(name):  # the hook's own file
                os.remove(name)
        if remaining.strip() in ("", "#!/bin/sh"):
            os.remove(path)
            return {"hook": path, "removed": True, "deletedFile": True}
        with open(path, "w", encoding="utf-8") as out:
            out.write(remaining + "\n")
        return {"hook": path, "removed": True, "deletedFile": False}

    def record_commit(self, rev: str = "HEAD", branch: str | None = None) -> dict:
        """Log a commit as a tool message in the hooks session, with the memories its
        trailers state: once for it and the commits `.ekko/rewritten-commits` joins to it
        (its amends, rebases and cherry-picks). `branch` is the branch it was made on
        (default: the one checked out now)."""
        root = self.stores.root
        sha = _git(["rev-parse", rev], root).strip()
        session = self.config.get("hooks.session")
        if self.store.messages.find_commit_message(session, sha):
            return {"sha": sha, "recorded": False, "reason": "already recorded"}
        author, author_email, committer, committer_email, subject = _git(
            ["log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%s", sha], root).split("\0", 4)
        subject = subject.strip()
        someone = _someone_else(_user_email(root), (author, author_email),
                                (committer, committer_email))
        if not branch:
            branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], root).strip()
        paths = _git(["diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha],
                     root).split()
        trailers = self._trailers(sha) if self.config.get("hooks.trailers") else []
        # The message and its memories are committed together: a reader never sees the
        # commit recorded without them, and a record that fails is retried whole.
        with self.store.db.atomic():
            # Read under the write lock: whatever was recorded before it was taken, the
            # rewrite that joins it to this commit was written to the file before that.
            rewrites = self._rewrites()
            for other in _reached(rewrites, sha):
                held = self.store.messages.find_commit_message(session, other)
                if held:
                    return self._recorded_as(sha, other, held, rewrites, trailers, someone)
            meta = {"source": "git", "sha": sha, "branch": branch, "paths": paths[:200]}
            if someone:
                meta["author"] = someone
            message = self.messages.log_message(subject or sha, session=session, role="tool",
                                                meta=meta)
            recorded = self._remember(trailers, message["id"], sha, someone)
        return {"sha": sha, "recorded": True, "messageId": message["id"], "memories": recorded}

    def _recorded_as(self, sha: str, other: str, message_id: str, rewrites: list,
                     trailers: list, someone: str | None) -> dict:
        """The answer for a commit whose version `other` is recorded: nothing more, unless
        this is a later version that states trailers the recorded one did not."""
        if other == sha:
            return {"sha": sha, "recorded": False, "reason": "already recorded"}
        recorded: list = []
        if trailers and sha in _reached(rewrites, other, both_ways=False):
            try:
                before = set(self._trailers(other))
            except Rejected:  # that commit is gone from the repository
                before = set()
            recorded = self._remember([t for t in trailers if t not in before], message_id,
                                      sha, someone)
        return {"sha": sha, "recorded": False, "messageId": message_id, "memories": recorded,
                "reason": f"the same commit as {other[:12]}, recorded already"}

    def _trailers(self, sha: str) -> list[tuple[str, str]]:
        body, _, parsed = _git(["log", "-1", "--format=%B%x00%(trailers:only,unfold)", sha],
                               self.stores.root).partition("\0")
        return commit_trailers(body, parsed)

    def _remember(self, trailers: list, message_id: str, sha: str,
                  someone: str | None) -> list[dict]:
        """The memories the trailers state, their source the message `message_id`."""
        items = [_trailer_item(key, value, message_id, sha) for key, value in trailers
                 if key.lower() in TRAILERS and value]
        if someone:
            for item in items:
                item["reason"] += f" by {someone}, not by the repository user"
                item["node"]["confidence"] = OTHERS_CONFIDENCE
        return self.remembering.apply_items(
            items, actor="import" if someone else "user") if items else []

    def _rewrites_path(self) -> str:
        return os.path.join(self.stores.root, DIR_NAME, REWRITTEN)

    def _rewrites(self) -> list[tuple[str, str]]:
        """(old, new) for each rewrite the hook wrote, oldest first; the file is rotated
        here when it has grown (under the write lock, so by one record at a time)."""
        path = self._rewrites_path()
        pairs = []
        for name in (path + ".1", path):
            try:
                with open(name, encoding="ascii", errors="replace") as lines:
                    pairs += [(w[0], w[1]) for w in map(str.split, lines)
                              if len(w) == 2 and all(_SHA.fullmatch(x) for x in w)]
            except OSError:  # none yet
                continue
        try:
            if os.path.getsize(path) > ROTATE_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        return pairs


def _reached(rewrites: list, sha: str, both_ways: bool = True) -> list[str]:
    """`sha` and the commits its rewrites made (with `both_ways`, also those it was made
    from, and theirs), nearest first."""
    near: dict[str, set[str]] = {}
    for old, new in rewrites:
        near.setdefault(old, set()).add(new)
        if both_ways:
            near.setdefault(new, set()).add(old)
    found, seen = [sha], {sha}
    for commit in found:
        for other in sorted(near.get(commit, ())):
            if other not in seen:
                seen.add(other)
                found.append(other)
    return found


def _user_email(root) -> str | None:
    """The e-mail git would commit under here now; None when git knows none."""
    try:
        ident = _git(["var", "GIT_COMMITTER_IDENT"], root)
    except Rejected:
        return None
    end = ident.rfind(">")
    start = ident.rfind("<", 0, max(end, 0))
    if start < 0 or end < 0:
        return None
    return ident[start + 1:end].strip() or None


def _someone_else(user: str | None, *people: tuple[str, str]) -> str | None:
    """"Name <e-mail>" of the first of the commit's author and committer who is not the
    user (e-mails compared without case), None when both are the user."""
    for name, email in people:
        if user is None or email.strip().casefold() != user.casefold():
            return f"{name.strip()} <{email.strip()}>"
    return None


def commit_trailers(body: str, parsed: str) -> list[tuple[str, str]]:
    """The (key, value) trailers of a commit: the last paragraph of its message `body` when
    that is a trailer block in either language, else what git `parsed` (unfolded)."""
    own = _trailer_block(body)
    if own is not None:
        return own
    pairs = []
    for line in parsed.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
    return pairs


def _trailer_block(body: str) -> list[tuple[str, str]] | None:
    """The trailers of the message's last paragraph, or None when some line of it is neither
    `Key: value` (either colon) nor a continuation. The first paragraph is the subject."""
    paragraphs, current = [], []
    for line in body.splitlines():
        if line.strip():
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    if len(paragraphs) < 2:
        return None
    pairs: list[list[str]] = []
    for line in paragraphs[-1]:
        if line[0] in " \t" and pairs:
            pairs[-1].append(line.lstrip())  # git folds a continuation into one space
            continue
        match = _TRAILER_LINE.fullmatch(line)
        if match is None:
            return None
        pairs.append([match.group(1), match.group(2)])
    return [(key, " ".join(parts).strip()) for key, *parts in pairs]


def _trailer_item(key: str, value: str, message_id: str, sha: str) -> dict:
    """What one trailer proposes, as `apply_items` takes it: a decision or constraint, an
    open task, or a done statement that closes the open task it names."""
    kind, zh = TRAILERS[key.lower()], not key.isascii()
    item: dict[str, object] = {"operation": "create",
                               "reason": f"{key} trailer of commit {sha[:12]}"}
    if kind in ("decision", "constraint"):
        domain = "工程" if zh else "engineering"
        folder = {"decision": "决策", "constraint": "约束"}[kind] if zh else f"{kind}s"
        item["node"] = {"scope": "workspace", "type": kind, "domain": domain,
                        "categoryPath": [domain, folder], "title": value, "content": value,
                        "tags": ["git"], "sourceMessageIds": [message_id]}
        return item
    # Stored as `remember "待办：…"` stores a task, so either closes the other.
    domain = "任务" if zh else "tasks"
    said = {"open": ("待办：", "To do: "), "done": ("已完成：", "Done: ")}[kind][0 if zh else 1]
    item["node"] = {"scope": "workspace", "domain": domain, "categoryPath": [domain],
                    "type": "task", "key": "task_state", "valueJson": {"state": kind},
                    "title": value if len(value) <= 60 else value[:59].rstrip() + "…",
                    "content": said + value,
                    "importance": 0.7 if kind == "open" else 0.3,
                    "tags": ["git", "待办" if zh else "todo"], "sourceMessageIds": [message_id]}
    if kind == "done":
        item.update(operation="update", target={"type": "task", "text": value})
    return item
