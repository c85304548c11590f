"""ekko-mem as an `llm` plugin: the `ekko:` fragment, the Ekko toolbox, the entry point.

`llm` runs as the installed command with its own LLM_USER_PATH in the test's folder, and the
`echo` model of llm-echo, which answers with the prompt it was given (and the results of the
tool calls a JSON prompt asks for). The toolbox is also called in this process, as llm's
Python API hands it out.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")
pytest.importorskip("llm_echo")

LLM = Path(sys.executable).with_name("llm")
PACKAGE = Path(__file__).resolve().parent.parent / "ekko_mem"
QUESTION = "今晚吃什么？"
KEY = "glpat-Ab12Cd34Ef56Gh78Ij90"


@pytest.fixture
def home(ws, tmp_path, monkeypatch):
    """llm's own folder in the test's, the clock fixed; the workspace initialised."""
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-user"))
    monkeypatch.delenv("LLM_LOAD_PLUGINS", raising=False)  # the entry points, as installed
    monkeypatch.setenv("EKKO_NOW", "2026-03-01T12:00:00Z")
    return ws


@pytest.fixture
def cilantro(home, cli) -> str:
    out = cli("remember", "以后做饭别给我推荐香菜，我喜欢少油少辣", "--json")
    assert out.code == 0, out
    return next(row["nodeId"] for row in out.jsonl()
                if cli("show", row["nodeId"], "--json").json()["node"]["valueJson"] == "香菜")


def run_llm(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(LLM), *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ), timeout=120)


def echoed(stdout: str) -> list[dict]:
    """The JSON objects llm-echo printed: the prompt it got, then one per tool round."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(stdout):
        if stdout[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(stdout, at)
        found.append(value)
    return found


def tool_output(stdout: str) -> str:
    results = [r for obj in echoed(stdout) for r in obj.get("tool_results", [])]
    assert len(results) == 1, stdout
    return results[0]["output"]


def call(name: str, arguments: dict) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]},
                      ensure_ascii=False)


# -- the entry point -------------------------------------------------------------------------
def test_llm_lists_the_plugin_of_the_installed_package(home):
    done = run_llm("plugins", cwd=home)
    assert done.returncode == 0, done.stderr
    ours = [p for p in json.loads(done.stdout) if p["name"] == "ekko-mem"]
    assert len(ours) == 1
    assert set(ours[0]["hooks"]) == {"register_fragment_loaders", "register_tools"}


def imported(path: Path) -> set[str]:
    """What a module imports: `name` for `import name`, `.mod` and `.mod:name` for
    `from .mod import name` (one dot a level)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names |= {module} | {f"{module}:{alias.name}" for alias in node.names}
    return names


def test_only_the_plugin_imports_llm_and_nothing_imports_the_plugin():
    modules = {path.relative_to(PACKAGE).as_posix(): imported(path)
               for path in PACKAGE.rglob("*.py")}
    uses_llm = {m for m, names in modules.items()
                if any(n == "llm" or n.startswith(("llm.", "llm:")) for n in names)}
    assert uses_llm == {"llm_plugin.py"}
    assert {m for m, names in modules.items() if any("llm_plugin" in n for n in names)} == set()


# -- the fragment ----------------------------------------------------------------------------
def test_the_fragment_is_the_text_ekko_mem_context_prints(cilantro, home, cli):
    printed = cli("context", QUESTION)
    assert printed.code == 0 and "香菜" in printed.out
    done = run_llm("-m", "echo", "-f", f"ekko:{QUESTION}", QUESTION, cwd=home)
    assert done.returncode == 0, done.stderr
    assert echoed(done.stdout)[0]["prompt"] == printed.out.rstrip("\n") + "\n" + QUESTION


def test_the_budget_form_keeps_the_context_within_it(cilantro, home, cli):
    whole = cli("context", QUESTION).out.rstrip("\n")
    cut = cli("context", QUESTION, "--budget", "20").out.rstrip("\n")
    assert cut != whole  # 20 tokens is less than the whole context
    done = run_llm("-m", "echo", "-f", f"ekko:budget=20:{QUESTION}", "x", cwd=home)
    assert done.returncode == 0, done.stderr
    assert echoed(done.stdout)[0]["prompt"] == cut + "\nx"


def test_a_bad_budget_is_one_error_line_and_no_prompt(cilantro, home):
    done = run_llm("-m", "echo", "-f", f"ekko:budget=abc:{QUESTION}", "x", cwd=home)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Error: Could not load fragment ekko:budget=abc:{QUESTION}: ekko-mem: budget 'abc' is"
        " not a whole number of tokens; write it like ekko:budget=300:QUESTION"]


@pytest.mark.parametrize("budget, says", [
    ("-5", "ekko-mem: budget '-5' is not a whole number of tokens;"
           " write it like ekko:budget=300:QUESTION"),
    ("", "ekko-mem: budget '' is not a whole number of tokens;"
         " write it like ekko:budget=300:QUESTION"),
    ("99999999", "ekko-mem: budget: Input should be less than or equal to 1000000;"
                 " write it like ekko:budget=300:QUESTION"),
])
def test_each_bad_budget_names_the_fix(home, budget, says):
    from ekko_mem.llm_plugin import ToolFailed, memory_context
    with pytest.raises((ValueError, ToolFailed)) as failed:
        memory_context(f"budget={budget}:{QUESTION}")
    assert str(failed.value) == says


def test_without_a_workspace_the_fragment_is_empty_and_says_why(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_llm("-m", "echo", "-f", f"ekko:{QUESTION}", "x", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert echoed(done.stdout)[0]["prompt"] == "\nx"
    assert "ekko-mem: warning: no workspace memory found" in done.stderr


# -- the tools, through llm ------------------------------------------------------------------
def test_llm_runs_the_tools_a_model_calls(cilantro, home):
    found = run_llm("-m", "echo", "-T", "Ekko", call("Ekko_search", {"query": "香菜"}),
                    cwd=home)
    assert found.returncode == 0, found.stderr
    assert cilantro in [row["id"] for row in json.loads(tool_output(found.stdout))["relevant"]]
    gone = run_llm("-m", "echo", "-T", "Ekko",
                   call("Ekko_forget", {"id": cilantro, "reason": "用户要求忘记"}), cwd=home)
    assert json.loads(tool_output(gone.stdout))["deletedIds"] == [cilantro]


def test_a_secret_is_refused_until_confirmed_through_llm(home, cli):
    asked = run_llm("-m", "echo", "-T", "Ekko",
                    call("Ekko_remember", {"title": f"deploy token {KEY}", "reason": "asked"}),
                    cwd=home)
    answer = json.loads(tool_output(asked.stdout))
    assert answer["accepted"] is False and answer["requiresConfirmation"] is True
    assert KEY not in tool_output(asked.stdout)
    assert cli("query", "deploy token", "--json").json()["relevant"] == []


def test_a_failure_comes_back_to_the_model_as_one_line(home, tmp_path):
    missing = tmp_path / "missing"
    done = run_llm("-m", "echo", "-T", f'Ekko(workspace="{missing}")',
                   call("Ekko_remember", {"title": "x", "reason": "asked"}), cwd=home)
    assert done.returncode == 0, done.stderr
    assert tool_output(done.stdout) == (
        f"Error: ekko-mem: {missing} has no memory db ({missing}/.ekko/memory.db is missing);"
        f" run init {missing}")


# -- the tools, in this process --------------------------------------------------------------
@pytest.fixture
def ekko(home):
    toolbox = llm.get_tools()["Ekko"]
    from ekko_mem.llm_plugin import Ekko
    assert toolbox is Ekko
    return toolbox()


def test_the_toolbox_offers_search_remember_and_forget(ekko):
    assert {tool.name for tool in ekko.tools()} == {"Ekko_search", "Ekko_remember",
                                                    "Ekko_forget"}
    described = {tool.name: tool.description for tool in ekko.tools()}
    assert not any(line.startswith(" ") for text in described.values()
                   for line in text.splitlines())


def test_search_finds_the_memory(ekko, cilantro):
    rows = json.loads(ekko.search("香菜"))["relevant"]
    assert rows[0]["id"] == cilantro and rows[0]["valueJson"] == "香菜"


def test_remember_takes_the_mcp_path(ekko, cli):
    asked = json.loads(ekko.remember("不吃葱", "用户说的", type="preference", scope="user",
                                     key="avoid_ingredient", value="葱"))
    assert asked["accepted"] is False and asked["requiresConfirmation"] is True
    made = json.loads(ekko.remember("不吃葱", "用户说的", type="preference", scope="user",
                                    key="avoid_ingredient", value="葱", explicit=True))
    assert made["accepted"] is True and made["scope"] == "user"
    node = cli("show", made["nodeId"], "--json").json()["node"]
    assert (node["key"], node["valueJson"], node["actor"]) == ("avoid_ingredient", "葱", "agent")
    trail = cli("audit", "--node", made["nodeId"], "--json").jsonl()
    assert [(event["eventType"], event["actor"]) for event in trail] == [("create", "agent")]


def test_a_confirmed_secret_is_kept_and_never_shown(ekko):
    made = json.loads(ekko.remember(f"deploy token {KEY}", "asked", confirm=True))
    assert made["accepted"] is True
    found = ekko.search("deploy token")
    assert KEY not in found and "[secret removed]" in found
    assert made["nodeId"] in found


def test_forget_by_id_is_soft(ekko, cilantro, cli):
    assert json.loads(ekko.forget(cilantro, "用户要求忘记"))["deletedIds"] == [cilantro]
    assert cilantro not in ekko.search("香菜")
    assert cli("show", cilantro, "--json").json()["node"]["status"] == "deleted"
    events = cli("audit", "--node", cilantro, "--json").jsonl()
    assert (events[0]["eventType"], events[0]["actor"]) == ("delete", "agent")


def test_bad_arguments_are_one_line(ekko):
    from ekko_mem.llm_plugin import ToolFailed
    with pytest.raises(ToolFailed) as failed:
        ekko.remember("x", "asked", type="bogus")
    assert str(failed.value).startswith("ekko-mem: node.type: Input should be ")
    assert "\n" not in str(failed.value)
