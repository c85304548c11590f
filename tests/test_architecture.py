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
    banned = re.compile(r"^(ekko_mem\.(render|cli|app|commands|actions\w*|options|mcp_server|mcp_tools)|typer|rich"
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
    from ekko_mem.service.queries import _QUERY_FIELDS
    assert {f.alias or name for name, f in MemoryQuery.model_fields.items()} == _QUERY_FIELDS


def test_every_test_file_is_filed_under_a_capability():
    import fnmatch
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("## Tests"):]
    named = set(re.findall(r"`(test_[a-z_*]+\.py)`", table))
    files = {p.name for p in (PACKAGE.parent / "tests").glob("test_*.py")}
    assert {f for f in files if not any(fnmatch.fnmatch(f, n) for n in named)} == set()
    assert {n for n in named if not any(fnmatch.fnmatch(f, n) for f in files)} == set()


# -- wiring a reader can follow (ARCHITECTURE.md, "How a command reaches the SQL") ------------

# Every name resolved at run time rather than by an import a reader can follow; each is named
# and justified in ARCHITECTURE.md.
LAZY_NAMES = {("__init__.py", "__getattr__")}


def test_nothing_is_looked_up_by_name_but_what_architecture_names():
    found = {(str(path.relative_to(PACKAGE)), word) for path in _modules()
             for word in ("__getattr__", "__import__")
             if word in path.read_text(encoding="utf-8")}
    assert found == LAZY_NAMES
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for module, word in LAZY_NAMES:
        assert f"`ekko_mem/{module}`" in text and f"`{word}`" in text, (module, word)


def test_no_dispatch_table_names_code_in_a_string():
    """"module:Class" and "module:function" strings were how renderers, actions and use
    cases were found; now each is a reference an editor follows."""
    named = [(str(path.relative_to(PACKAGE)), node.value) for path in _modules()
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and re.fullmatch(r"[a-z_.]+:[A-Z_a-z]+", node.value)
             and "extract" not in path.relative_to(PACKAGE).parts]
    assert named == []


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _cached_properties(path: Path, cls: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    return {f.name: f for f in body if isinstance(f, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id == "cached_property"
                    for d in f.decorator_list)}


def _built(prop: ast.FunctionDef) -> tuple[str, str, ast.Call]:
    """(module, class) a lazy attribute imports, and the call that builds it."""
    body = [s for s in prop.body if not (isinstance(s, ast.Expr)
                                         and isinstance(s.value, ast.Constant))]  # docstring
    first, last = body[0], body[-1]
    assert isinstance(first, ast.ImportFrom) and len(first.names) == 1, prop.name
    assert isinstance(last, ast.Return) and isinstance(last.value, ast.Call), prop.name
    return first.module, first.names[0].name, last.value


def _use_cases() -> dict[str, ast.FunctionDef]:
    return _cached_properties(PACKAGE / "service" / "__init__.py", "MemoryService")


def test_each_use_case_has_one_name_for_its_attribute_module_and_class():
    import importlib

    from ekko_mem.service.stores import UseCase
    cases = _use_cases()
    assert len(cases) >= 18
    for attribute, prop in cases.items():
        module, cls, _ = _built(prop)
        assert isinstance(prop.returns, ast.Name) and prop.returns.id == cls, attribute
        assert module == attribute == _snake(cls), (attribute, module, cls)
        kind = getattr(importlib.import_module(f"ekko_mem.service.{module}"), cls)
        assert issubclass(kind, UseCase), cls


def test_each_use_case_is_given_the_use_cases_its_constructor_names():
    import importlib
    import inspect
    cases = _use_cases()
    for attribute, prop in cases.items():
        module, cls, call = _built(prop)
        kind = getattr(importlib.import_module(f"ekko_mem.service.{module}"), cls)
        stores, *needs = list(inspect.signature(kind).parameters.values())
        assert (stores.name, stores.annotation) == ("stores", "Stores"), cls
        for need in needs:  # keyword-only, typed as the use case of that name
            assert need.kind is inspect.Parameter.KEYWORD_ONLY, (cls, need.name)
            assert need.name in cases, (cls, need.name)
            assert need.annotation == _built(cases[need.name])[1], (cls, need.name)
        given = {k.arg: ast.unparse(k.value) for k in call.keywords}
        assert given == {n.name: f"self.{n.name}" for n in needs}, attribute


def test_the_service_lists_its_use_cases_and_builds_each_once(service):
    from ekko_mem import MemoryService
    assert set(_use_cases()) <= set(dir(MemoryService))
    assert service.nodes.queries is service.queries is service.remembering.queries
    assert service.context.recall is service.queries.recall


def test_each_public_method_is_its_owners_with_the_same_signature():
    import inspect

    from ekko_mem.service import MemoryService
    tree = ast.parse((PACKAGE / "service" / "__init__.py").read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef)
                and n.name == "MemoryService").body
    cases = _use_cases()
    checked = 0
    for method in body:
        if not isinstance(method, ast.FunctionDef) or method.name.startswith("_") \
                or method.name in cases or method.name == "close":
            continue
        (line,) = method.body  # one line: it passes straight through
        reached = line.value if isinstance(line, (ast.Return, ast.Expr)) else None
        target = reached.func if isinstance(reached, ast.Call) else reached
        assert isinstance(target, ast.Attribute) and target.attr == method.name, method.name
        owner = target.value
        assert isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) \
            and owner.value.id == "self", method.name
        assert owner.attr in cases or owner.attr == "stores", method.name
        if isinstance(reached, ast.Call):
            mine = list(inspect.signature(getattr(MemoryService, method.name))
                        .parameters.values())[1:]
            theirs = [p for p in inspect.signature(getattr(
                _owner_class(owner.attr), method.name)).parameters.values()
                      if p.name != "self"]
            assert mine == theirs, method.name
            checked += 1
    assert checked >= 45


def _owner_class(attribute: str) -> type:
    import importlib
    if attribute == "stores":
        from ekko_mem.service.stores import Stores
        return Stores
    module, cls, _ = _built(_use_cases()[attribute])
    return getattr(importlib.import_module(f"ekko_mem.service.{module}"), cls)


def test_the_store_names_each_part_with_its_type():
    import importlib
    parts = _cached_properties(PACKAGE / "store" / "sqlite.py", "SqliteMemoryStore")
    assert {"summaries", "recall", "transfer", "erasure", "health", "compaction",
            "vectors"} <= set(parts)
    for name, prop in parts.items():
        module, cls, call = _built(prop)
        assert isinstance(prop.returns, ast.Name) and prop.returns.id == cls, name
        assert ast.unparse(call) == f"{cls}(self.db)", name
        assert hasattr(importlib.import_module(f"ekko_mem.store.{module}"), cls), name


def test_each_command_runs_a_function_that_imports_its_action():
    import importlib

    from ekko_mem import commands
    from ekko_mem.options import COMMANDS
    tree = ast.parse((PACKAGE / "commands.py").read_text(encoding="utf-8"))
    bodies = {f.name: f.body for f in tree.body if isinstance(f, ast.FunctionDef)}
    for name, command in COMMANDS.items():
        assert getattr(commands, command.run.__name__) is command.run, name
        imported = bodies[command.run.__name__][0]
        assert isinstance(imported, ast.ImportFrom), name
        assert imported.names[0].name == command.run.__name__, name  # one name for both
        module = importlib.import_module(f"ekko_mem.{imported.module}")
        assert callable(getattr(module, command.run.__name__)), name


# -- the layer table and "The rules" in ARCHITECTURE.md -----------------------------------------

def _rules_text() -> str:
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return text[text.index("### The rules"):text.index("## How a command reaches the SQL")]


def test_every_rule_names_the_test_that_checks_it():
    rules = [r for r in _rules_text().split("\n- ")[1:]]
    assert len(rules) >= 12
    here = set(globals())
    for rule in rules:
        named = re.findall(r"`(test_\w+)`", rule) + re.findall(r"`tests/(test_\w+)\.py`", rule)
        assert named, rule[:60]
        for name in named:
            assert name in here or (PACKAGE.parent / "tests" / f"{name}.py").exists(), name


def _top_modules(path: Path) -> set[str]:
    """The package's modules `path` imports, named as the layer table names them: `store`,
    `policy.sensitive`, `values`... (a module of its own layer is left out)."""
    own = path.relative_to(PACKAGE).parts[0]
    found = set()
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] != "ekko_mem" or len(parts) == 1 or parts[1] == own:
            continue
        if parts[1] == "policy" and len(parts) > 2 and parts[2][:1].islower():
            found.add(f"policy.{parts[2]}")
        elif (PACKAGE / parts[1]).is_dir() or (PACKAGE / f"{parts[1]}.py").exists():
            found.add(parts[1])
    return found


def _row(layer: str) -> set[str]:
    """What the layer table's "may import" cell names for `layer`."""
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith(f"| `{layer}/` |"))
    return set(re.findall(r"`([a-z_.]+)`", line.rsplit("|", 2)[1]))


def _layer_imports(layer: str) -> dict[str, set[str]]:
    return {str(p.relative_to(PACKAGE)): _top_modules(p) for p in (PACKAGE / layer).rglob("*.py")}


def _beyond_its_row(layer: str) -> dict[str, list[str]]:
    """Each module of `layer` that imports a module its row does not name, with those."""
    allowed = _row(layer)
    wider = {path: sorted(m for m in names if m not in allowed
                          and m.split(".")[0] not in allowed)
             for path, names in _layer_imports(layer).items()}
    return {path: names for path, names in wider.items() if names}


def test_render_imports_only_what_its_row_names():
    assert _row("render") == {"results", "policy.printable", "policy.localtime",
                              "policy.sensitive", "models", "errors"}
    assert _beyond_its_row("render") == {}
    # Views are told what they need (colour or not); none reads the environment itself.
    reads = [p.name for p in (PACKAGE / "render").rglob("*.py")
             if re.search(r"os\.environ|getenv|\bEnv\(", p.read_text(encoding="utf-8"))]
    assert reads == []


def test_the_service_imports_only_what_its_row_names():
    assert {"store", "policy", "values", "env"} <= _row("service")
    assert _beyond_its_row("service") == {}


def test_the_store_imports_only_what_its_row_names():
    assert _row("store") == {"errors", "tokens", "canonical"}
    assert _beyond_its_row("store") == {}


def test_the_pure_layers_do_no_io():
    io = re.compile(r"\bopen\(|os\.environ|getenv|\bimport (?:sqlite3|subprocess|socket|shutil)"
                    r"|\bfrom (?:sqlite3|subprocess|socket|shutil|urllib)\b")
    found = {str(p.relative_to(PACKAGE)) for layer in ("policy", "retrieval", "extract")
             for p in (PACKAGE / layer).rglob("*.py") if io.search(p.read_text(encoding="utf-8"))}
    assert found == {"extract/llm.py"}  # runs the configured LLM command


# The service asks the store by kind; it names none of the store's tables or constants.
NAMES_TABLES: set[str] = set()
READS_CONSTANTS: set[tuple[str, str]] = set()


def test_the_service_names_no_table_and_reads_no_store_constant():
    table = re.compile(r"\bmemory_[a-z_]+\b")
    naming = {str(p.relative_to(PACKAGE)) for p in (PACKAGE / "service").rglob("*.py")
              for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
              if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and not node.value.startswith(("memory_get", "memory_search"))
              and table.fullmatch(node.value.strip())}
    assert naming == NAMES_TABLES
    constants = {(str(p.relative_to(PACKAGE)), name) for p in _modules()
                 if p.relative_to(PACKAGE).parts[0] != "store"
                 for name in _imports(p) if name.startswith("ekko_mem.store.")
                 and re.fullmatch(r"[A-Z][A-Z0-9_]*", name.rsplit(".", 1)[1])}
    assert constants == READS_CONSTANTS


COMMAND_LAYER = ("cli.py", "app.py", "options.py", "commands.py", "actions*.py", "mcp_server.py",
                 "mcp_tools.py")


def test_the_command_layer_reaches_extract_and_store_through_the_service():
    direct = {f"{p.name} imports {name}" for pattern in COMMAND_LAYER for p in PACKAGE.glob(pattern)
              for name in _imports(p) if re.match(r"ekko_mem\.(extract|store)(\.|$)", name)}
    assert direct == set()


def test_values_is_pure_and_its_readers_read_it():
    assert _top_modules(PACKAGE / "values.py") == {"errors", "policy.vocab", "policy.budget"}
    for reader in ("options.py", "config_values.py", "models.py", "mcp_tools.py",
                   "service/context.py", "service/queries.py", "service/drafts.py",
                   "service/nodes.py"):
        assert "values" in _top_modules(PACKAGE / reader), reader
    # The vocabularies reach the readers through the table, not around it.
    for reader in ("options.py", "config_values.py", "service/queries.py",
                   "service/drafts.py", "service/nodes.py"):
        assert "policy.vocab" not in _top_modules(PACKAGE / reader), reader


def test_errors_hold_no_scanner_and_the_service_spells_no_flag():
    assert _top_modules(PACKAGE / "errors.py") == set()
    flag = re.compile(r"(?<![\w-])--(?:[a-z][a-z0-9-]*|\{|$)")
    spelt = set()
    for layer in ("service", "store", "policy", "retrieval"):
        for path in (PACKAGE / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and flag.search(node.value):
                    spelt.add(str(path.relative_to(PACKAGE)))
    # git's own flags; credentials written on a command line (--password=...)
    assert spelt - {"service/hooks.py", "policy/sensitive.py",
                    "policy/sensitive_patterns.py"} == set()


HEAVY = ("pydantic", "rich", "typer", "click")


def test_inner_layers_load_nothing_heavy_at_module_level():
    found = []
    for layer in INNER:
        for path in (PACKAGE / layer).rglob("*.py"):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found += [f"{path.relative_to(PACKAGE)}: {n}" for n in names
                          if n.split(".")[0] in HEAVY]
    assert found == []


def test_a_free_text_remember_loads_no_typing_pydantic_or_rich(tmp_path):
    import os
    import subprocess
    import sys
    env = {**os.environ, "EKKO_HOME": str(tmp_path / "home"), "EKKO_WORKSPACE": str(tmp_path)}
    code = "import sys; from ekko_mem.cli import main; sys.exit(main(sys.argv[1:]))"
    subprocess.run([sys.executable, "-c", code, "init", "-q", str(tmp_path)], env=env,
                   check=True)
    code = ("import sys; from ekko_mem.cli import main;"
            " assert main(['remember', '-q', '我喜欢打篮球']) == 0;"
            " print(sorted({'typing', 'pydantic', 'rich', 'typer', 'click'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_each_renderer_is_a_function_that_imports_its_view():
    from ekko_mem import render
    tree = ast.parse((PACKAGE / "render" / "__init__.py").read_text(encoding="utf-8"))
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    for kind, find in render.RENDERERS.items():
        body = functions[find.__name__].body
        assert len(body) == 2 and isinstance(body[0], ast.ImportFrom), kind.__name__
        assert isinstance(body[1], ast.Return) and isinstance(body[1].value, ast.Name)
        assert body[1].value.id == body[0].names[0].name, kind.__name__
        assert issubclass(find(), render.Renderer), kind.__name__
