"""The post-commit hook records a commit once, however often it is rewritten: amended,
rebased, cherry-picked, twenty times each, while other processes keep the machine busy and
the background records land in any order.

The hook decides what a commit replays while git is at it, and each record looks at the
others under the write lock; so the test waits until every background record has ended (a
wrapper around the installed command counts them) and then reads the log once.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import BIN

TIMES = 20
WAIT_S = 300  # a bound on the background records of a loaded machine, not a speed check


def git(repo, *args, when: int = 0):
    stamp = f"2026-01-01T{when // 3600:02d}:{when // 60 % 60:02d}:{when % 60:02d}+0000"
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_COMMITTER_DATE": stamp, "GIT_EDITOR": "true"}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


class Repo:
    """A repository with the hook installed, its records counted as they end."""

    def __init__(self, path, ended) -> None:
        self.path, self.ended, self.commits, self.clock = path, ended, 0, 0

    def run(self, *args, commits: int = 1) -> str:
        """git `args`, which makes `commits` commits; the sha of HEAD after it. Each call
        commits at a later second, so a replay never comes out as the commit it replays."""
        self.clock += 1
        git(self.path, *args, when=self.clock)
        self.commits += commits
        return git(self.path, "rev-parse", "HEAD")

    def commit(self, name: str, message: str) -> str:
        (self.path / name).write_text(message)
        git(self.path, "add", name)
        return self.run("commit", "-q", "-m", message)

    def settled(self) -> None:
        """Every background record ended (the hook starts one per commit)."""
        deadline = time.monotonic() + WAIT_S
        while self._ended() < self.commits and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self._ended() == self.commits

    def _ended(self) -> int:
        return len(self.ended.read_text().splitlines()) if self.ended.exists() else 0


@pytest.fixture
def repo(cli_proc, hermetic, tmp_path):
    git(hermetic, "init", "-q", "-b", "main")
    assert cli_proc("init", "--git-hooks").code == 0
    ended = tmp_path / "ended"
    wrapper = tmp_path / "ekko-mem"
    wrapper.write_text(f'#!/bin/sh\n"{BIN}" "$@"\necho $? >>"{ended}"\n')
    wrapper.chmod(0o755)
    hook = hermetic / ".git" / "hooks" / "post-commit"
    hook.write_text(hook.read_text().replace(f"EKKO_MEM_BIN={BIN}", f"EKKO_MEM_BIN={wrapper}"))
    return Repo(hermetic, ended)


@pytest.fixture
def busy():
    """Both cores kept busy while git runs and the records start."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 2)]
    yield
    for proc in burners:
        proc.kill()
        proc.wait()


def recorded(cli) -> dict[str, str]:
    """sha -> subject of each commit the git session holds."""
    log = cli("history", "-s", "git", "-n", "1000", "--json").jsonl()
    shas = [m["metadata"]["sha"] for m in log]
    assert len(shas) == len(set(shas)), shas
    return {m["metadata"]["sha"]: m["content"] for m in log}


@pytest.mark.slow
def test_amends_rebases_and_cherry_picks_record_each_commit_once(cli, repo, busy):
    versions = {"base": [repo.commit("base.txt", "base")],
                "one": [repo.commit("one.txt", "one\n\nDecision: keep it small")]}
    for n in range(1, TIMES + 1):
        versions["one"].append(repo.run("commit", "-q", "--amend", "-m",
                                        f"one, take {n}\n\nDecision: keep it small"))
    git(repo.path, "checkout", "-q", "-b", "side")
    versions["s1"] = [repo.commit("s1.txt", "s1")]
    versions["s2"] = [repo.commit("s2.txt", "s2")]
    for _ in range(TIMES):
        repo.run("rebase", "-q", "--force-rebase", "main", commits=2)
        versions["s1"].append(git(repo.path, "rev-parse", "HEAD~1"))
        versions["s2"].append(git(repo.path, "rev-parse", "HEAD"))
    git(repo.path, "checkout", "-q", "-b", "feature", "main")
    versions["f"] = [repo.commit("f.txt", "f")]
    for _ in range(TIMES):
        git(repo.path, "checkout", "-q", "-B", "picks", "main")
        versions["f"].append(repo.run("cherry-pick", versions["f"][0]))
    git(repo.path, "checkout", "-q", "main")
    versions["last"] = [repo.commit("last.txt", "last")]
    assert repo.commits == 3 + TIMES + 2 + 2 * TIMES + TIMES + 1
    repo.settled()
    found = recorded(cli)
    for name, shas in versions.items():
        assert len(set(shas)) == len(shas), name  # every rewrite made a new commit
        assert len(set(shas) & set(found)) == 1, (name, [found.get(s) for s in shas])
    assert len(found) == len(versions)
    decisions = cli("query", "--type", "decision", "--json").json()["exact"]
    assert [d["title"] for d in decisions] == ["keep it small"]


def test_an_amend_adds_the_trailers_it_adds_to_the_commit_recorded(cli, repo):
    first = repo.commit("a.txt", "pick a store\n\nDecision: use SQLite")
    repo.settled()
    (message,) = cli("history", "-s", "git", "--json").jsonl()
    amended = repo.run("commit", "-q", "--amend", "-m", "pick a store\n\nDecision: use SQLite"
                       "\nConstraint: no network in tests")
    repo.settled()
    assert recorded(cli) == {first: "pick a store"}
    constraints = cli("query", "--type", "constraint", "--json").json()["exact"]
    assert [(c["title"], c["sourceMessageIds"]) for c in constraints] == [
        ("no network in tests", [message["id"]])]
    assert len(cli("query", "--type", "decision", "--json").json()["exact"]) == 1
    again = cli("hooks", "run", "post-commit", "--rev", amended, "--json").json()
    assert (again["recorded"], again["messageId"], again["reason"]) == (
        False, message["id"], f"the same commit as {first[:12]}, recorded already")
    assert len(cli("query", "--type", "constraint", "--json").json()["exact"]) == 1


def test_a_commit_of_its_own_in_the_middle_of_a_rebase_is_recorded(cli, repo):
    repo.commit("base.txt", "base")
    git(repo.path, "checkout", "-q", "-b", "side")
    picked = repo.commit("s.txt", "to edit")
    git(repo.path, "checkout", "-q", "main")
    repo.commit("m.txt", "on main")
    git(repo.path, "checkout", "-q", "side")
    editing = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i -e 's/^pick/edit/'"}
    subprocess.run(["git", "rebase", "-q", "-i", "main"], cwd=repo.path, env=editing,
                   capture_output=True, check=True)
    repo.commits += 1  # the pick it stopped at
    own = repo.commit("new.txt", "made while editing")
    repo.run("rebase", "--continue", commits=0)
    repo.settled()
    found = recorded(cli)
    assert sorted(found.values()) == ["base", "made while editing", "on main", "to edit"]
    # The pick and its replay are one commit: whichever record ran first holds it.
    replayed = git(repo.path, "rev-parse", "HEAD~1")
    assert own in found and len({picked, replayed} & set(found)) == 1


def test_the_hook_survives_set_e_and_a_repository_without_a_reflog(cli, repo):
    hook = repo.path / ".git" / "hooks" / "post-commit"
    text = hook.read_text()
    hook.write_text(text.replace("#!/bin/sh\n", "#!/bin/sh\nset -e\n", 1)
                    + "echo after >>after.log\n")
    git(repo.path, "config", "core.logAllRefUpdates", "false")
    for n in range(2):
        repo.commit(f"{n}.txt", f"commit {n}")
    repo.run("commit", "-q", "--amend", "-m", "commit 1, amended")
    repo.settled()
    assert (repo.path / "after.log").read_text() == "after\n" * 3
    assert len(recorded(cli)) == 3  # with no reflog an amend cannot be told from a commit


def test_the_rewrites_file_is_rotated_and_both_halves_read(cli, repo, monkeypatch):
    from ekko_mem.service import hooks
    monkeypatch.setattr(hooks, "ROTATE_BYTES", 200)
    first = repo.commit("a.txt", "one")
    repo.settled()
    rewrites = repo.path / ".ekko" / "rewritten-commits"
    for n in range(5):
        repo.run("commit", "-q", "--amend", "-m", f"one, take {n}")
    repo.settled()
    latest = git(repo.path, "rev-parse", "HEAD")
    assert len(rewrites.read_text().splitlines()) == 5
    assert cli("hooks", "run", "post-commit", "--json").json()["reason"] == \
        f"the same commit as {first[:12]}, recorded already"
    assert not rewrites.exists() and len((repo.path / ".ekko" / "rewritten-commits.1")
                                         .read_text().splitlines()) == 5
    assert cli("hooks", "run", "post-commit", "--rev", latest, "--json").json()["reason"] \
        == f"the same commit as {first[:12]}, recorded already"
    assert cli("hooks", "uninstall").code == 0
    assert list((repo.path / ".ekko").glob("rewritten-commits*")) == []
