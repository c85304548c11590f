"""The recipes in the README and in docs/ run as written, in order, each page in a fresh workspace.

A recipe is a ```sh block right after a `<!-- recipe -->` line. Each page's blocks run as one
bash script, so a later block sees what an earlier one made (a variable, a memory, a folder).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TUTORIAL = ROOT / "docs" / "tutorial.md"


def recipes(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return re.findall(r"<!-- recipe -->\n```sh\n(.*?)```", text, flags=re.S)


PAGES = [page for page in [README, *sorted((ROOT / "docs").rglob("*.md"))] if recipes(page)]
HEADING = "用户做饭偏好"
# What a page's run must print: the model got the memory, the hook's decision was recorded,
# and so on. llm-echo escapes non-ASCII, so a heading may come back as \u escapes.
PRINTS = {
    "README.md": ['"system": ', HEADING, "soft-deleted", "hard-deleted"],
    "docs/tutorial.md": ['"system": ', HEADING, "superseded", "use SQLite with FTS5",
                         "write the migration tests", "hard-deleted"],
    "docs/howto/user-memory.md": ["对花生过敏"],
    "docs/howto/inspect-and-edit.md": ["用户不吃香菜"],
}


def test_the_pages_have_the_recipes_users_need():
    tour = "\n".join(recipes(README))
    for needle in ("ekko-mem remember", "ekko-mem context", "llm -m echo", "ekko-mem forget"):
        assert needle in tour, needle
    walk = "\n".join(recipes(TUTORIAL))
    for needle in ("ekko-mem log", "ekko-mem remember", "ekko-mem query --key", "ekko-mem context",
                   "--supersedes", "hooks", "ekko-mem show", "ekko-mem edit", "ekko-mem audit",
                   "audit undo", "--hard --purge-sources", "ekko-mem export", "ekko-mem import"):
        assert needle in walk, needle
    assert {str(p.relative_to(ROOT)) for p in PAGES} >= set(PRINTS)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_recipes_run(page, hermetic, tmp_path):
    if not Path(sys.executable).with_name("llm").exists():
        pytest.skip("the llm package (test extra) is not installed")
    script = "set -euo pipefail\n" + "\n".join(recipes(page))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "EDITOR": "true", "LLM_USER_PATH": str(tmp_path / "llm"),
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    proc = subprocess.run(["bash", "-c", script], cwd=hermetic, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for text in PRINTS.get(str(page.relative_to(ROOT)), []):
        escaped = text.encode("unicode_escape").decode()
        assert text in proc.stdout or escaped in proc.stdout, text
