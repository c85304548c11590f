"""The README is a front page, docs/ hangs together, and the reference pages are the code's.

docs/reference/ is written by scripts/gen_docs.py from the option table, the settings table
and the JSON schemas; the coverage tests below walk those tables themselves, so a generator
that skipped something fails here instead of agreeing with itself. Every relative link in the
README and in docs/ must reach a file, and an anchor a heading of that file.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
GEN = ROOT / "scripts" / "gen_docs.py"
REFERENCE = DOCS / "reference"


def pages() -> list[Path]:
    return [README, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


# -- links --------------------------------------------------------------------------------------

FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"(`+).+?\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code, with inline code taken out."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            out.append(CODE_SPAN.sub("", line))
    return out


def anchors(page: Path) -> set[str]:
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces as -,
    a repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    problems = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists():
                problems.append(f"{target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                problems.append(f"{target}: no heading #{anchor}")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## Some part: 中文\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "# Title", "",
        "[fine](other.md#some-part-中文) [fine too](#title) [web](https://example.com/x)",
        "[gone](missing.md) [no such part](other.md#nowhere)",
        "`[in code](missing-too.md)`", "```", "[fenced](missing-three.md)", "```", ""]),
        encoding="utf-8")
    assert broken_links(page) == ["missing.md: no such file",
                                  "other.md#nowhere: no heading #nowhere"]


# -- the README ----------------------------------------------------------------------------------


def test_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_keeps_the_set_up_lines_verbatim():
    text = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    test_line = next(line for line in ci if line.startswith("python3 -m venv .venv"))
    assert test_line in text.splitlines()
    install = next(line for line in text.splitlines()
                   if line.startswith('export EKKO_HOME="$(mktemp -d)"'))
    assert ".venv/bin/pip install . && .venv/bin/ekko-mem init && " in install
    assert ".venv/bin/pip install '.[semantic]'" in text
    assert "prebuilt for Linux x86_64" in " ".join(text.split())


def test_readme_lists_every_command():
    from ekko_mem.options import COMMANDS
    table = README.read_text(encoding="utf-8").split("## Commands", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    for name in {name.split()[0] for name in COMMANDS}:
        assert any(re.search(rf"`{re.escape(name)}\b", row) for row in rows), name


# -- the reference pages -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gen_docs():
    """scripts/gen_docs.py as a module, without its environment settings leaking into tests."""
    name = "gen_docs_for_docs"
    with mock.patch.dict(os.environ):
        spec = importlib.util.spec_from_file_location(name, GEN)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up by name
        spec.loader.exec_module(module)
    yield module
    sys.modules.pop(name, None)


def test_reference_pages_are_what_the_generator_writes(gen_docs):
    wanted = gen_docs.reference_pages()
    on_disk = {f"docs/reference/{p.name}": p.read_text(encoding="utf-8")
               for p in REFERENCE.glob("*.md")}
    assert set(on_disk) == set(wanted), "run `python scripts/gen_docs.py`"
    stale = sorted(name for name, text in wanted.items() if on_disk[name] != text)
    assert stale == [], f"{stale} out of date; run `python scripts/gen_docs.py`"


def run_gen(*args):
    return subprocess.run([sys.executable, str(GEN), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_check_reports_drift_in_the_reference_pages_only(tmp_path):
    assert run_gen("--out", str(tmp_path)).returncode == 0
    reference = tmp_path / "docs" / "reference"
    (reference / "commands.md").write_text("edited by hand\n", encoding="utf-8")
    (reference / "config.md").unlink()
    (reference / "old.md").write_text("# Gone\n", encoding="utf-8")
    shutil.copy(DOCS / "tutorial.md", tmp_path / "docs" / "tutorial.md")  # hand-written

    result = run_gen("--check", "--out", str(tmp_path))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["stale: docs/reference/commands.md",
                                          "missing: docs/reference/config.md",
                                          "extra: docs/reference/old.md"]
    assert run_gen("--out", str(tmp_path)).returncode == 0
    assert run_gen("--check", "--out", str(tmp_path)).returncode == 0
    assert (tmp_path / "docs" / "tutorial.md").exists() and not (reference / "old.md").exists()


def section(text: str, heading: str) -> str:
    """The text under `## heading`, up to the next `## `."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_command_reference_covers_every_command_argument_and_option():
    from ekko_mem.options import COMMANDS
    text = (REFERENCE / "commands.md").read_text(encoding="utf-8")
    for name, command in COMMANDS.items():
        body = section(text, f"`ekko-mem {name}`")
        for opt in command.options:
            for flag in opt.flags:
                assert f"`{flag}`" in body, f"{flag} of {name}"
        if command.arg:
            label = (command.arg.metavar or command.arg.param.upper()).replace("|", r"\|")
            assert f"`{label}`" in body, name
    for code in ("0", "1", "2", "3", "4", "5", "6", "7", "130"):
        assert f"| `{code}` |" in section(text, "Exit codes")


def test_settings_reference_covers_every_key():
    from ekko_mem.config_values import SETTINGS
    text = (REFERENCE / "config.md").read_text(encoding="utf-8")
    for key, setting in SETTINGS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
        if isinstance(setting.default, (bool, int)):
            assert str(setting.default).lower() in row, key


def test_json_reference_covers_every_shape_and_field():
    from ekko_mem.models import SCHEMAS
    text = (REFERENCE / "json.md").read_text(encoding="utf-8")
    for name, model in SCHEMAS.items():
        body = section(text, name)
        for field in model.model_json_schema()["properties"]:
            assert f"| `{field}` |" in body, f"{name}.{field}"
