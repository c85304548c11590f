"""One table of value rules (values.py): the options, config.toml's settings, the pydantic
models, the MCP tools' input schemas and the service take each value as its rule says; help
prints the choices the table lists; a refusal names the design's field, which the command line
spells as its flag; and errors are masked where they are printed, not where they are made."""
from __future__ import annotations

import importlib
import inspect
import json

import pytest

from ekko_mem import cli, helptext
from ekko_mem.config_values import SETTINGS
from ekko_mem.errors import Rejected
from ekko_mem.options import COMMANDS, flag, spell_step
from ekko_mem.values import VALUES, check

KEY = "sk-proj-Zx81kQ2mW9vL4tR7yB3nC6pD"
RULED = [(name, opt) for name, command in COMMANDS.items() for opt in command.options
         if opt.rule is not None]


def _enum(spec: dict):
    """The choices a JSON Schema property allows, through null options and list items."""
    for option in spec.get("anyOf", [spec]):
        option = option.get("items", option)
        if "enum" in option:
            return tuple(option["enum"])
        if "const" in option:
            return (option["const"],)
    return None


def _bounds(spec: dict) -> tuple:
    option = next((o for o in spec.get("anyOf", [spec]) if o.get("type") != "null"), spec)
    return option.get("minimum"), option.get("maximum")


# -- the option table -------------------------------------------------------------------------

def test_every_option_for_a_value_in_the_table_has_its_rule_from_there():
    assert {opt.rule.name for _, opt in RULED} >= {
        "budget", "counter", "limit", "listing", "confidence", "importance", "scope", "type",
        "actor", "role", "format", "since"}
    named = set(VALUES) | {rule.field for rule in VALUES.values() if rule.field} | {
        "scopes", "types"}
    for name, command in COMMANDS.items():
        for opt in command.options:
            if opt.kind != "flag" and (opt.param in named or opt.field in named):
                assert opt.rule is not None, (name, opt.flag)


@pytest.mark.parametrize("command, opt", RULED, ids=[f"{c} {o.flag}" for c, o in RULED])
def test_each_ruled_option_takes_what_its_rule_says(command, opt):
    rule = opt.rule
    assert (opt.choices, opt.range, opt.noun) == (rule.given, rule.range, rule.noun)
    if rule.setting is not None:
        assert opt.default is None  # unset, the service reads the setting
    elif rule.default is not None:
        assert opt.default == rule.default
    shown = helptext.render(command)
    for word in rule.given:
        assert word in opt.help, (command, opt.flag, word)
    for word in set(rule.choices) - set(rule.given):  # the service's own, never offered
        assert word not in opt.help.replace(",", " ").split(), (command, opt.flag, word)
    assert opt.help.split()[0] in shown


def test_help_lists_every_memory_type_and_only_the_actors_a_person_gives():
    remember = helptext.render("remember")
    assert all(kind in remember for kind in VALUES["type"].choices) and "habit" in remember
    actor = next(o for o in COMMANDS["remember"].options if o.flag == "--actor")
    assert actor.help == "Who proposes it: user, agent or extractor."
    assert "system" not in actor.help and "import" not in actor.help


@pytest.mark.parametrize("actor", ["system", "import"])
def test_ekko_mems_own_actors_are_refused_on_the_command_line(cli, ws, actor):
    out = cli("remember", "the staging port is 5433", "--actor", actor)
    assert out.code == 2 and out.out == ""
    assert out.err == (f"ekko-mem: unknown actor '{actor}'; use one of: user, agent,"
                       " extractor\n")
    assert cli("audit", "--json").out == ""  # nothing written


def test_each_actions_defaults_are_the_options_defaults():
    """An action is always called with every option (cli.invoke); a default it states for
    itself must be the table's, or a Python caller of it gets another answer."""
    for name, command in COMMANDS.items():
        source = inspect.getsource(command.run)
        module = source.split("from .", 1)[1].split(" import", 1)[0]
        action = getattr(importlib.import_module(f"ekko_mem.{module}"), command.run.__name__)
        params = inspect.signature(action).parameters
        for opt in command.options:
            given = params.get(opt.param)
            if given is not None and given.default is not inspect.Parameter.empty:
                assert given.default == opt.default, (name, opt.flag)


# -- settings, models and the MCP tools -------------------------------------------------------

def test_each_setting_a_value_has_is_the_values_rule():
    settled = [rule for rule in VALUES.values() if rule.setting]
    assert {r.setting for r in settled} == {"context.budget", "context.counter",
                                            "context.recent"}
    for rule in settled:
        setting = SETTINGS[rule.setting]
        assert (setting.range, setting.choices, setting.default) == (
            rule.range, rule.choices, rule.default), rule.name


def test_the_models_take_the_tables_choices_bounds_and_defaults():
    from ekko_mem import models
    node = models.MemoryNode.model_json_schema()["properties"]
    for field in ("scope", "type", "status", "actor"):
        assert _enum(node[field]) == VALUES[field].choices, field
    assert node["actor"]["default"] == VALUES["actor"].default
    draft = models.NodeDraft.model_json_schema()["properties"]
    for field in ("confidence", "importance"):
        assert _bounds(node[field]) == _bounds(draft[field]) == VALUES[field].range, field
    query = models.MemoryQuery.model_json_schema()["properties"]
    assert _bounds(query["limit"]) == VALUES["limit"].range
    assert query["limit"]["default"] == VALUES["limit"].default
    assert _enum(query["scopes"]) == VALUES["scope"].choices
    assert _enum(query["types"]) == VALUES["type"].choices
    assert _enum(models.MemoryMessage.model_json_schema()["properties"]["role"]) == \
        VALUES["role"].choices
    forget = models.ForgetRequest.model_json_schema()["properties"]
    assert (_enum(forget["mode"]), forget["mode"]["default"]) == (
        VALUES["mode"].choices, VALUES["mode"].default)
    propose = models.ProposeUpdate.model_json_schema()["properties"]
    assert _enum(propose["operation"]) == VALUES["operation"].choices


def test_the_mcp_tools_input_schemas_take_the_tables_choices_and_bounds(service):
    from ekko_mem.mcp_tools import tool_list
    tools = {t["name"]: t["inputSchema"]["properties"] for t in tool_list(service)}
    assert _bounds(tools["memory_search"]["limit"]) == VALUES["limit"].range
    assert _enum(tools["memory_search"]["scopes"]) == VALUES["scope"].choices
    assert _bounds(tools["memory_context"]["budget"]) == VALUES["budget"].range
    assert str(VALUES["budget"].default) in tools["memory_context"]["budget"]["description"]
    log = tools["memory_log"]["role"]
    assert (_enum(log), log["default"]) == (VALUES["role"].choices, VALUES["role"].default)
    node = tools["memory_propose_update"]["node"]["properties"]
    assert _enum(node["scope"]) == VALUES["scope"].choices
    assert _enum(node["type"]) == VALUES["type"].choices
    assert _bounds(node["confidence"]) == VALUES["confidence"].range
    assert _enum(tools["memory_forget"]["mode"]) == VALUES["mode"].choices


# -- the service checks once, through the table ----------------------------------------------

@pytest.mark.parametrize("name, value, says", [
    ("budget", 1_000_001, "budget must be from 0 to 1,000,000, not 1000001"),
    ("budget", -1, "budget must be from 0 to 1,000,000, not -1"),
    ("limit", 10_001, "limit must be from 1 to 10,000, not 10001"),
    ("limit", "5", "limit must be a whole number from 1 to 10,000, not '5'"),
    ("limit", True, "limit must be a whole number"),
    ("confidence", "high", "confidence must be a number from 0 to 1, not 'high'"),
    ("confidence", float("nan"), "confidence must be from 0 to 1, not nan"),
    ("scope", "galaxy", "unknown scope 'galaxy'"),
    ("actor", "robot", "unknown actor 'robot'"),
])
def test_a_value_outside_its_rule_is_refused_in_the_tables_words(name, value, says):
    with pytest.raises(Rejected) as refused:
        check(name, value)
    assert refused.value.message.startswith(says)


def test_a_value_inside_its_rule_comes_back_in_its_canonical_form():
    assert check("scope", " User ") == "user"
    assert check("confidence", "0.5") == 0.5
    assert check("limit", 10_000) == 10_000 and check("budget", 0) == 0
    assert check("actor", "system") == "system"  # ekko-mem's own, taken from inside
    assert check("since", "yesterday") == "yesterday" and check("limit", None) is None


def test_the_service_refuses_at_its_entry_with_the_tables_bounds(service):
    with pytest.raises(Rejected, match="budget must be from 0 to 1,000,000"):
        service.build_context("q", budget=1_000_001)
    with pytest.raises(Rejected, match="limit must be from 1 to 10,000"):
        service.retrieve({"limit": 10_001})
    with pytest.raises(Rejected, match="limit must be from 1 to 10,000"):
        service.search_messages("q", limit=0)
    assert "exact" in service.retrieve({"limit": 10_000})
    refused = service.propose_update("create", {"title": "t"}, actor="robot")
    assert refused["accepted"] is False and refused["reason"].startswith("unknown actor")


def test_a_refusal_names_the_field_and_the_command_line_spells_its_flag(service):
    answer = service.propose_update("create", {"title": "t", "confidence": 3}, actor="user")
    assert answer["reason"] == "confidence must be from 0 to 1, not 3.0"
    assert answer["hint"] == "ask again with confidence=0.8"  # no flag: not only the CLI asks
    assert answer.error.line(spell_step) == (
        "ekko-mem: confidence must be from 0 to 1, not 3.0; rerun with --confidence 0.8")


def test_every_field_a_refusal_names_is_a_flag_the_command_line_can_spell():
    # options.spell_step turns a step's field into a flag; an unknown one would be a KeyError
    for rule in VALUES.values():
        if rule.field is not None:
            assert flag(rule.field).startswith("--"), rule.name


# -- errors are masked where they are printed --------------------------------------------------

def test_an_error_keeps_what_was_said_and_the_edges_mask_it(cli, ws):
    from ekko_mem.errors import UsageError
    assert KEY in UsageError(f"bad {KEY}").message  # errors.py holds no scanner
    value = json.dumps({"a": KEY})
    out = cli("remember", "--scope", "user", "--key", "avoid_ingredient", "--value", value,
              "--json")
    assert out.code == 4 and KEY not in out.out + out.err
    assert "[secret removed]" in json.loads(out.out)["reason"] and "[secret removed]" in out.err
    rehearsed = cli("remember", "--scope", "user", "--key", "avoid_ingredient", "--value", value,
                    "--dry-run")
    assert KEY not in rehearsed.out + rehearsed.err and "[secret removed]" in rehearsed.out


def test_mcp_error_replies_are_masked(service):
    from ekko_mem.errors import UsageError
    from ekko_mem.mcp_server import Server, _tool_result
    from ekko_mem.mcp_tools import MemoryTools
    server = Server(MemoryTools(service))
    unknown = server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": KEY, "arguments": {}}})
    assert KEY not in json.dumps(unknown) and "[secret removed]" in unknown["error"]["message"]

    def refused():
        raise UsageError(f"cannot use {KEY}", "try again")
    failed = _tool_result(refused)
    assert failed["isError"] and failed["content"][0]["text"] == (
        "cannot use [secret removed]; try again")


def test_the_cli_masks_its_error_line(capsys, monkeypatch):
    from ekko_mem.errors import UsageError

    def fails(*args, **kwargs):
        raise UsageError(f"cannot use {KEY}", "try again")
    monkeypatch.setattr(cli, "parse_fast", lambda argv: ("log", {}))
    monkeypatch.setattr(cli, "dispatch", fails)
    assert cli.main(["log"]) == 2
    assert capsys.readouterr().err == "ekko-mem: cannot use [secret removed]; try again\n"
