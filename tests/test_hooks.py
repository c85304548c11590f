"""The post-commit hook in real temporary git repositories.

The installed command installs the hook (it writes the path it was started as into the hook)
and git runs it, so every commit here goes through the binary. The hook records in the
background, so a test waits for the records it expects (`recorded`) before reading them.
"""
from __future__ import annotations

import os
import subprocess
import time

import pytest

WAIT_S = 60  # a bound on a background record under a loaded machine, not a speed check


def git(repo, *args, env=None):
    full = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", **(env or {})}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=full)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def repo(cli_proc, hermetic):
    git(hermetic, "init", "-q", "-b", "main")
    out = cli_proc("init", "--git-hooks")
    assert out.code == 0, out
    return hermetic


def commit(repo, name, message):
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git_log(cli, cwd=None):
    return cli("history", "-s", "git", "-n", "100", "--json", cwd=cwd).jsonl()


def recorded(cli, count, cwd=None):
    """The git session's messages once `count` commits are recorded (the hook's background
    record lands after git returns)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        log = git_log(cli, cwd)
        if len(log) >= count or time.monotonic() > deadline:
            assert len(log) == count, log
            return log
        time.sleep(0.05)


def test_commit_is_logged_with_sha_branch_paths_and_trailers(cli, repo):
    sha = commit(repo, "a.txt", "Add search\n\nDecision: use SQLite FTS5\n"
                                "Constraint: never push to main directly\n")
    (msg,) = recorded(cli, 1)
    assert msg["role"] == "tool" and msg["content"] == "Add search"
    assert msg["metadata"] == {"source": "git", "sha": sha, "branch": "main",
                               "paths": ["a.txt"]}
    decisions = cli("query", "--type", "decision", "--json").json()["exact"]
    assert [d["title"] for d in decisions] == ["use SQLite FTS5"]
    assert decisions[0]["sourceMessageIds"] == [msg["id"]]
    assert decisions[0]["scope"] == "workspace"
    constraints = cli("query", "--type", "constraint", "--json").json()["exact"]
    assert constraints[0]["title"] == "never push to main directly"


def test_recording_is_idempotent_and_a_rewritten_commit_is_the_same_commit(cli, repo):
    commit(repo, "a.txt", "one\n\nDecision: keep it small")
    recorded(cli, 1)
    assert cli("hooks", "run", "post-commit", "--json").json()["recorded"] is False
    git(repo, "commit", "-q", "--amend", "-m", "one, amended\n\nDecision: keep it small")
    git(repo, "checkout", "-q", "-b", "side", "HEAD")
    commit(repo, "b.txt", "two")
    recorded(cli, 2)
    git(repo, "checkout", "-q", "main")
    commit(repo, "c.txt", "three")
    recorded(cli, 3)
    git(repo, "checkout", "-q", "side")
    git(repo, "rebase", "-q", "main")
    # whatever background record is still running, the replays are already recorded
    cli("hooks", "run", "post-commit", "--json")
    log = recorded(cli, 3)
    assert sorted(m["content"] for m in log) == ["one", "three", "two"]
    shas = [m["metadata"]["sha"] for m in git_log(cli)]
    assert len(shas) == len(set(shas))
    decisions = cli("query", "--type", "decision", "--json").json()["exact"]
    assert len(decisions) == 1  # the same trailer again refreshes, never duplicates


def test_linked_worktree_commits_land_in_the_main_workspace(cli, repo, tmp_path):
    commit(repo, "a.txt", "base")
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(other), "-b", "feature")
    recorded(cli, 1)
    commit(other, "w.txt", "from the worktree")
    log = recorded(cli, 2)
    assert log[-1]["content"] == "from the worktree"
    assert log[-1]["metadata"]["branch"] == "feature"


def test_chains_with_an_existing_hook_and_uninstall_removes_only_ours(cli, cli_proc, hermetic):
    git(hermetic, "init", "-q", "-b", "main")
    hook = hermetic / ".git" / "hooks" / "post-commit"
    hook.write_text("#!/bin/sh\necho mine >> user-hook.log\n")
    hook.chmod(0o755)
    cli("init")
    assert cli_proc("hooks", "install", "--json").json()["chained"] is True
    assert cli("hooks", "install", "--json").json()["installed"] is False
    commit(hermetic, "a.txt", "one")
    assert (hermetic / "user-hook.log").read_text() == "mine\n"
    recorded(cli, 1)
    assert cli("hooks", "uninstall", "--json").json()["removed"] is True
    assert hook.read_text() == "#!/bin/sh\necho mine >> user-hook.log\n"


def test_uninstall_deletes_a_hook_it_created(cli, repo):
    hook = repo / ".git" / "hooks" / "post-commit"
    assert hook.exists()
    assert cli("hooks", "uninstall", "--json").json()["deletedFile"] is True
    assert not hook.exists()


def test_hook_fails_open_when_ekko_mem_is_missing_or_broken(cli, repo):
    from conftest import BIN
    hook = repo / ".git" / "hooks" / "post-commit"
    installed = hook.read_text()
    assert f"EKKO_MEM_BIN={BIN}" in installed
    hook.write_text(installed.replace(f"EKKO_MEM_BIN={BIN}", "EKKO_MEM_BIN=/nonexistent/ekko"))
    (repo / "x.txt").write_text("x")
    git(repo, "add", "x.txt", env={"PATH": "/usr/bin:/bin"})
    git(repo, "commit", "-q", "-m", "still commits", env={"PATH": "/usr/bin:/bin"})
    assert git(repo, "log", "-1", "--format=%s").strip() == "still commits"
    hook.write_text(installed)
    db = repo / ".ekko" / "memory.db"
    db.write_bytes(b"garbage" * 100)
    for suffix in ("-wal", "-shm"):
        (repo / ".ekko" / f"memory.db{suffix}").unlink(missing_ok=True)
    commit(repo, "y.txt", "commits with a broken memory db")
    assert git(repo, "log", "-1", "--format=%s").strip() == "commits with a broken memory db"


def test_every_commit_of_a_burst_is_recorded_once(cli, repo):
    # Back-to-back commits start their background records at once; none may be lost.
    shas = [commit(repo, f"f{i}.txt", f"burst {i}") for i in range(8)]
    log = recorded(cli, 8)
    assert sorted(m["metadata"]["sha"] for m in log) == sorted(shas)


def test_the_hook_names_the_commit_and_its_branch_before_git_returns(cli, repo):
    hook = (repo / ".git" / "hooks" / "post-commit").read_text()
    begin = hook.index("# >>> ekko-mem post-commit >>>")
    block = hook[begin:]
    assert "rev-parse" in block and "--abbrev-ref HEAD" in block
    run = next(line for line in block.splitlines() if "hooks run post-commit" in line)
    assert '--rev "${EKKO_MEM_SHA:-HEAD}"' in run and '--branch "$EKKO_MEM_BRANCH"' in run
    assert run.rstrip().endswith("</dev/null >/dev/null 2>&1 ) &")  # detached, no streams
    # What the background run is given is what it records, whatever is checked out by then.
    (repo / "a.txt").write_text("a")
    git(repo, "add", "a.txt")
    git(repo, "-c", f"core.hooksPath={repo / 'no-hooks'}", "commit", "-q", "-m", "on main")
    sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "later")
    out = cli("hooks", "run", "post-commit", "--rev", sha, "--branch", "main", "--json")
    assert out.code == 0, out
    (msg,) = git_log(cli)
    assert msg["metadata"]["branch"] == "main" and msg["metadata"]["sha"] == sha


def test_install_replaces_a_block_from_an_older_version_and_keeps_the_rest(cli, hermetic):
    git(hermetic, "init", "-q", "-b", "main")
    hook = hermetic / ".git" / "hooks" / "post-commit"
    old = ("#!/bin/sh\necho mine >> user-hook.log\n\n# >>> ekko-mem post-commit >>>\n"
           "ekko-mem hooks run post-commit </dev/null >/dev/null 2>&1 || true\n"
           "# <<< ekko-mem post-commit <<<\necho after >> user-hook.log\n")
    hook.write_text(old)
    hook.chmod(0o755)
    cli("init")
    out = cli("hooks", "install", "--json").json()
    assert out["installed"] is True and out["updated"] is True and out["chained"] is True
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\necho mine >> user-hook.log\n")
    assert text.rstrip().endswith("echo after >> user-hook.log")
    assert text.count("# >>> ekko-mem post-commit >>>") == 1 and "|| true" not in text
    assert "EKKO_MEM_SHA" in text
    assert cli("hooks", "install", "--json").json()["installed"] is False
    commit(hermetic, "a.txt", "one")
    recorded(cli, 1)
    assert (hermetic / "user-hook.log").read_text() == "mine\nafter\n"


# --- trailers in English and Chinese ---------------------------------------------------------

@pytest.fixture
def plain_repo(cli, hermetic):
    """A git repo with a memory db and no hook: each test records with `hooks run` itself."""
    git(hermetic, "init", "-q", "-b", "main")
    assert cli("init").code == 0
    return hermetic


def record(cli, repo, name, message):
    commit(repo, name, message)
    out = cli("hooks", "run", "post-commit", "--json")
    assert out.code == 0, out
    return out.json()["memories"]


def titles(cli, kind):
    return sorted(n["title"] for n in cli("query", "--type", kind, "--json").json()["exact"])


def task_states(cli):
    tasks = cli("query", "--type", "task", "--json").json()["exact"]
    return {t["title"]: t["valueJson"]["state"] for t in tasks}


def test_chinese_trailers_record_memories_and_a_later_commit_closes_the_task(cli, repo):
    commit(repo, "a.txt", "加存储\n\n决定：用 SQLite 存储\n约束: 不要直接推 main\n待办：补文档\n")
    (msg,) = recorded(cli, 1)  # the message and its memories are written together
    decisions = cli("query", "--type", "decision", "--json").json()["exact"]
    assert [(d["title"], d["categoryPath"]) for d in decisions] == [
        ("用 SQLite 存储", ["工程", "决策"])]
    assert decisions[0]["sourceMessageIds"] == [msg["id"]]
    assert titles(cli, "constraint") == ["不要直接推 main"]
    (task,) = cli("query", "--type", "task", "--json").json()["exact"]
    assert (task["key"], task["valueJson"], task["content"], task["domain"]) == (
        "task_state", {"state": "open"}, "待办：补文档", "任务")
    commit(repo, "b.txt", "写文档\n\n完成：补文档")
    recorded(cli, 2)
    assert task_states(cli) == {"补文档": "done"}


def test_english_todo_and_done_trailers_open_and_close_tasks(cli, plain_repo):
    record(cli, plain_repo, "a.txt", "Start\n\nTodo: write the usage docs\nTo-do: add a bench")
    assert task_states(cli) == {"write the usage docs": "open", "add a bench": "open"}
    (done,) = record(cli, plain_repo, "b.txt", "Docs\n\nDone: write the usage docs")
    assert done["accepted"] is True
    assert task_states(cli) == {"write the usage docs": "done", "add a bench": "open"}
    # Stored as remember stores a task: a done statement there closes a task opened here.
    assert cli("remember", "Done: add a bench").code == 0
    assert task_states(cli) == {"write the usage docs": "done", "add a bench": "done"}


def test_a_done_trailer_naming_no_open_task_or_several_closes_none(cli, plain_repo):
    record(cli, plain_repo, "a.txt", "Start\n\n待办：修登录页\n待办：修登录框")
    (none,) = record(cli, plain_repo, "b.txt", "Parser\n\n完成：重写解析器")
    (several,) = record(cli, plain_repo, "c.txt", "Login\n\n完成：修登录")
    assert none["operation"] == several["operation"] == "unmatched"
    assert len(several["candidates"]) == 2
    assert task_states(cli) == {"修登录页": "open", "修登录框": "open"}


def test_only_the_last_paragraph_is_read_as_trailers(cli, plain_repo):
    record(cli, plain_repo, "a.txt",
           "决定：用 Postgres\n\n决定：不是这一行\nDecision: nor this one\n\n收尾的说明。")
    record(cli, plain_repo, "b.txt", "Body\n\nTodo: not this one\n\n约束：只读这一段")
    record(cli, plain_repo, "c.txt", "决定：只有标题的提交")
    assert titles(cli, "decision") == [] and task_states(cli) == {}
    assert titles(cli, "constraint") == ["只读这一段"]


def test_mixed_and_folded_trailers_are_read_as_git_folds_them(cli, plain_repo):
    record(cli, plain_repo, "a.txt", "Mixed\n\nDecision: use SQLite\n  with FTS5\n决策：保留 WAL\n"
                                     "Signed-off-by: T <t@example.com>")
    assert titles(cli, "decision") == ["use SQLite with FTS5", "保留 WAL"]


@pytest.mark.parametrize("message", [
    "s\n\nDecision: x\n  continued  here\nConstraint: y",
    "s\n\nDecision : spaced\nTodo:tight",
    "s\n\nDecision: x\nSigned-off-by: a <b@c>\nsome text that is not a trailer",
    "s\n\nDecision: x\nsome text",
    "Decision: a subject is not a trailer",
])
def test_english_trailers_read_as_git_reads_them(plain_repo, message):
    from ekko_mem.service.hooks import commit_trailers
    commit(plain_repo, "a.txt", message)
    body = git(plain_repo, "log", "-1", "--format=%B")
    parsed = git(plain_repo, "log", "-1", "--format=%(trailers:only,unfold)")
    by_git = [tuple(part.strip() for part in line.split(":", 1))
              for line in parsed.splitlines() if line]
    assert commit_trailers(body, parsed) == by_git


def test_trailers_off_records_none_in_either_language(cli, plain_repo):
    assert cli("config", "set", "hooks.trailers", "false").code == 0
    memories = record(cli, plain_repo, "a.txt",
                      "Off\n\n决定：用 SQLite\nDecision: use SQLite\n待办：补文档\nTodo: docs")
    assert memories == [] and len(git_log(cli)) == 1
    assert titles(cli, "decision") == [] and task_states(cli) == {}
