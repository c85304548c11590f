"""The layering rules of ARCHITECTURE.md, checked on the source itself."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ekko_mem"
INNER = ("service", "store", "policy", "extract", "retrieval")


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found |= {f"{name}.{alias.name}" for alias in node.names}
    return found


def test_no_class_has_more_than_two_bases():
    wide = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and len(node.bases) > 2:
                wide.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert wide == []


@pytest.mark.parametrize("layer", INNER)
def test_inner_layers_import_no_rendering_and_no_cli(layer):
    banned = re.compile(r"^(ekko_mem\.(render|cli|app|actions\w*|options|mcp_server|mcp_tools)|typer|rich"
                        r"|click)(\.|$)")
    offenders = {f"{path.relative_to(PACKAGE)} imports {name}"
                 for path in (PACKAGE / layer).rglob("*.py")
                 for name in _imports(path) if banned.match(name)}
    assert offenders == set()


def test_store_imports_nothing_above_it():
    above = re.compile(r"^ekko_mem\.(service|render|cli|app|actions\w*|mcp_server|mcp_tools)(\.|$)")
    offenders = {f"{path.relative_to(PACKAGE)} imports {name}"
                 for path in (PACKAGE / "store").rglob("*.py")
                 for name in _imports(path) if above.match(name)}
    assert offenders == set()


def test_full_text_query_syntax_is_built_only_in_the_store():
    # The store takes plain text or index tokens and builds its own MATCH expressions.
    syntax = re.compile(r"store\.fts|match_all|match_terms|\bMATCH\b|\bmatch \?")
    offenders = [str(path.relative_to(PACKAGE)) for path in _modules()
                 if "store" not in path.relative_to(PACKAGE).parts[:1]
                 and syntax.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_sql_lives_only_in_the_store():
    sql = re.compile(r"[\"'](select|insert into|update \w+ set|delete from|create table)\b",
                     re.IGNORECASE)
    offenders = [str(path.relative_to(PACKAGE)) for path in _modules()
                 if path.relative_to(PACKAGE).parts[0] != "store"
                 and sql.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_imports_are_resolved_relative_and_inside_functions():
    # What the layer checks rely on: a lazy `from ..policy.packing import` inside a method.
    names = _imports(PACKAGE / "service" / "context.py")
    assert "ekko_mem.policy.packing" in names
    assert "ekko_mem.policy.packing.pack_context" in names


def test_the_services_query_fields_are_the_models():
    from ekko_mem.models import MemoryQuery
    from ekko_mem.service.query import _QUERY_FIELDS
    assert {f.alias or name for name, f in MemoryQuery.model_fields.items()} == _QUERY_FIELDS


def test_every_test_file_is_filed_under_a_capability():
    import fnmatch
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("## Tests"):]
    named = set(re.findall(r"`(test_[a-z_*]+\.py)`", table))
    files = {p.name for p in (PACKAGE.parent / "tests").glob("test_*.py")}
    assert {f for f in files if not any(fnmatch.fnmatch(f, n) for n in named)} == set()
    assert {n for n in named if not any(fnmatch.fnmatch(f, n) for f in files)} == set()
