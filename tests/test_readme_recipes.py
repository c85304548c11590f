"""The README's recipes run as written, in order, in a fresh workspace."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def recipes() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(r"<!-- recipe -->\n```sh\n(.*?)```", text, flags=re.S)


def test_readme_has_the_recipes_the_users_need():
    joined = "\n".join(recipes())
    for needle in ("ekko-mem remember", "ekko-mem query --key", "ekko-mem context",
                   "hooks install", "ekko-mem show", "ekko-mem edit", "ekko-mem audit",
                   "--hard --purge-sources", "ekko-mem export", "ekko-mem import"):
        assert needle in joined, needle


def test_recipes_run(hermetic, tmp_path):
    if not Path(sys.executable).with_name("llm").exists():
        pytest.skip("the llm package (test extra) is not installed")
    script = "set -euo pipefail\n" + "\n".join(recipes())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "EDITOR": "true", "LLM_USER_PATH": str(tmp_path / "llm"),
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    proc = subprocess.run(["bash", "-c", script], cwd=hermetic, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    heading = "用户做饭偏好"
    escaped = heading.encode("unicode_escape").decode()
    assert '"system": ' in proc.stdout and (heading in proc.stdout or escaped in proc.stdout)
    assert "use SQLite with FTS5" in proc.stdout
    assert "hard-deleted" in proc.stdout
