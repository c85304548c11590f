"""The scripting contract: every command's --json shape is pinned, colour and streams behave."""
from __future__ import annotations

import json

NODE_KEYS = {"id", "scope", "domain", "categoryPath", "type", "title", "content", "status",
             "confidence", "importance", "tags", "entities", "sourceMessageIds", "explicit",
             "actor", "createdAt", "updatedAt"}
MESSAGE_KEYS = {"id", "sessionId", "role", "content", "createdAt"}
WRITE_KEYS = {"accepted", "nodeId", "reason", "operation", "scope"}


def keys(obj):
    return set(obj)


def test_json_shapes_of_every_command(cli, hermetic):
    init = cli("init", "--json").json()
    assert keys(init) == {"workspace", "db", "workspaceId", "created", "configCreated",
                          "gitignore"}
    (logged,) = cli("log", "记住，我以后做饭不要香菜。", "-s", "c", "--json").jsonl()
    assert keys(logged) == MESSAGE_KEYS
    (hist,) = cli("history", "-s", "c", "--json").jsonl()
    assert keys(hist) == MESSAGE_KEYS
    migrate = cli("migrate", "--json").json()
    assert keys(migrate) == {"version", "latest", "applied", "pending", "db", "appliedNow",
                             "dryRun"}
    written = cli("remember", "--type", "decision", "--title", "use FTS5", "--json").jsonl()
    assert keys(written[0]) == WRITE_KEYS
    from_text = cli("remember", "以后做饭别给我推荐葱", "-s", "c", "--json").jsonl()
    assert keys(from_text[0]) == WRITE_KEYS | {"sourceMessageId"}
    node_id = written[0]["nodeId"]
    query = cli("query", "FTS5", "--json").json()
    assert keys(query) == {"exact", "relevant", "omitted", "scores"}
    assert NODE_KEYS <= keys(query["relevant"][0]) <= NODE_KEYS | {
        "key", "valueJson", "workspaceId", "userId", "sessionId", "supersedesId", "parentId",
        "expiresAt", "weak"}
    show = cli("show", node_id, "--json").json()
    assert keys(show) == {"kind", "node", "chain", "sources", "events"}
    (event,) = cli("audit", "--node", node_id, "--json").jsonl()
    assert keys(event) == {"id", "eventType", "nodeId", "sessionId", "workspaceId", "actor", "reason",
                           "payload", "createdAt"}
    context = cli("context", "今晚吃什么？", "-s", "c", "--json").json()
    assert keys(context) == {"contextId", "queryText", "latestSummary", "recentMessages",
                             "activeTasks", "relevantNodes", "constraints", "preferences",
                             "relevantMessages", "relevantSummaries", "entities",
                             "usedMemoryIds", "ranking", "diagnostics", "text"}
    assert keys(context["diagnostics"]) == {"enabled", "storeStatus", "warnings",
                                            "retrievedNodeCount", "omittedNodeCount", "budget",
                                            "usedTokens", "tokenCounter", "omitted",
                                            "truncated", "candidatesConsidered",
                                            "belowRelevanceFloor", "ranked", "packed",
                                            "cutForBudget", "asOf"}
    explain = cli("explain", "--last", "--json").json()
    assert keys(explain) == {"contextId", "queryText", "sessionId", "createdAt", "items",
                             "retrieval"}
    summary = cli("summarize", "-s", "c", "--json").json()
    assert keys(summary) == {"sessionId", "summary", "skipped", "extraction"}
    assert keys(summary["summary"]) == {"id", "sessionId", "fromMessageId", "toMessageId",
                                        "summary", "constraints", "preferences", "decisions",
                                        "completedWork", "pendingWork", "knownIssues",
                                        "needsRegeneration", "createdAt", "currentGoal"} - (
        set() if "currentGoal" in summary["summary"] else {"currentGoal"})
    extract = cli("extract", "-s", "c", "--json").json()
    assert keys(extract) == {"sessionId", "messageIds", "results", "queued", "reason"}
    forget = cli("forget", node_id, "--json").json()
    assert keys(forget) == {"deletedIds", "mode", "reason"}
    undo_target = cli("audit", "--node", node_id, "--json").jsonl()[0]["id"]
    undo = cli("audit", "undo", undo_target, "--json").json()
    assert keys(undo) == {"undoneEventId", "eventId", "changedIds"}
    assert keys(cli("expire", "--json").json()) == {"expiredIds"}
    export = [json.loads(line) for line in cli("export").out.splitlines()]
    assert keys(export[0]) == {"kind", "format", "version"}
    assert all(keys(line) == {"kind", "data"} for line in export[1:])
    imported = cli("import", "-", "--json", input="\n".join(map(json.dumps, export))).json()
    assert keys(imported) == {"imported", "skipped"}
    doctor = cli("doctor", "--json").json()
    assert keys(doctor) == {"ok", "checks", "repaired", "repairable"}
    assert keys(doctor["checks"][0]) == {"db", "check", "ok", "detail", "fixed"}
    config = cli("config", "--json").json()
    assert keys(config[0]) == {"key", "value", "source", "description"}
    assert cli("schema", "node").json()["title"] == "MemoryNode"


def test_refusals_keep_the_shape_and_the_exit_code(cli, ws):
    out = cli("remember", "--scope", "global", "--title", "x", "--json")
    assert out.code == 4
    (result,) = out.jsonl()
    assert result["accepted"] is False and result["nodeId"] is None
    assert {"reason", "hint", "requiresConfirmation", "code"} <= keys(result)


def test_no_colour_when_piped_or_asked(cli, ws):
    cli("remember", "--type", "fact", "--title", "x")
    for args, env in ((("query", "x"), {}), (("query", "x", "--no-color"), {}),
                      (("audit",), {"NO_COLOR": "1"})):
        out = cli(*args, env=env)
        assert "\x1b[" not in out.out and out.code == 0


def test_quiet_prints_nothing_but_errors(cli, ws):
    assert cli("log", "x", "-q").out == ""
    assert cli("remember", "--title", "y", "-q").out == ""
    bad = cli("remember", "--title", "y", "--type", "nope", "-q")
    assert bad.out == "" and bad.err and bad.code == 2


def test_every_command_has_help(cli):
    from typer.main import get_command

    from ekko_mem.app import app
    group = get_command(app)
    for name in group.commands:
        out = cli(name, "--help")
        assert out.code == 0 and "Usage" in out.out, name


def test_completion_offers_known_values(cli, ws):
    cli("remember", "--scope", "user", "--category", "生活技能/做饭/饮食偏好", "--key",
        "avoid_ingredient", "--value", "香菜")

    def complete(words, index):
        return cli(env={"COMP_WORDS": words, "COMP_CWORD": str(index),
                        "_EKKO_MEM_COMPLETE": "complete_bash"}).out.split()

    assert complete("ekko-mem remember --scope ", 3) == ["session", "workspace", "user",
                                                         "global"]
    assert complete("ekko-mem query --type pre", 3) == ["preference"]
    assert complete("ekko-mem log --role a", 3) == ["assistant"]
    assert complete("ekko-mem context --format m", 3) == ["markdown"]
    assert "生活技能" in complete("ekko-mem query --domain ", 3)
    # the category held in the db, and the built-in schema's own
    assert complete("ekko-mem query --category 生活", 3) == ["生活技能/做饭", "生活技能/做饭/饮食偏好",
                                                            "生活技能/健康"]
    assert "avoid_ingredient" in complete("ekko-mem forget --key av", 3)
