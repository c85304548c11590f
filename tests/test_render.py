"""Each result type's renderer, called directly on a constructed result: exact human text,
JSON and markdown, what quiet leaves out, and what goes to stderr."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from ekko_mem import render
from ekko_mem import results as r
from ekko_mem.errors import Answer, NeedsConfirmation

NODE = {"id": "mem_1", "scope": "workspace", "type": "preference", "title": "no cilantro",
        "key": "food.cilantro", "valueJson": False, "status": "active", "confidence": 0.9}
ACCEPTED = Answer({"accepted": True, "operation": "created", "nodeId": "mem_1",
                   "scope": "workspace", "supersededId": "mem_0", "notes": ["kept the key"]})
REFUSAL = NeedsConfirmation("writing to user memory needs confirmation", "add --yes")
REFUSED = Answer({"accepted": False, "operation": "rejected", "nodeId": None, "scope": "user",
                  "reason": REFUSAL.message}, REFUSAL)


# Human times are local: these tests read them in UTC, wherever they run.
pytestmark = pytest.mark.usefixtures("utc")


def pretty(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def lines(*rows: str) -> str:
    return "".join(row + "\n" for row in rows)


def quiet_human_and_json(shown, result, text: str) -> None:
    """The common case: text for people, nothing when quiet, the answer as JSON."""
    assert shown(result) == (text, "")
    assert shown(result, quiet=True) == ("", "")
    assert shown(result, as_json=True) == (pretty(result.data), "")


def leaves(kind: type) -> list[type]:
    below = kind.__subclasses__()
    return [k for sub in below for k in leaves(sub)] if below else [kind]


# -- dispatch -----------------------------------------------------------------------------------

def test_every_result_type_has_a_renderer_with_human_and_json():
    for kind in leaves(r.Result):
        view = render.renderer_for(kind)
        assert issubclass(view, render.Renderer), kind
        assert "human" in vars(view) or kind is r.Exported, kind


def test_the_json_flag_wins_over_the_format(shown):
    result = r.Context({"text": "remember this", "diagnostics": {"warnings": []}})
    assert shown(result, fmt="markdown", as_json=True) == (pretty(result.data), "")


def test_results_compare_by_type_and_fields_and_refuse_unknown_fields():
    assert r.Migration({}, dry_run=True) == r.Migration(data={}, status=False, dry_run=True)
    assert r.Summarized({}) != r.Extracted({})
    assert repr(r.Logged(["m"])) == "Logged(messages=['m'], notes=())"
    with pytest.raises(TypeError):
        r.Logged()
    with pytest.raises(TypeError):
        r.Shown({}, reveal=True)


def test_results_and_dispatch_import_no_rich_typing_or_dataclasses():
    code = ("import sys, ekko_mem.results, ekko_mem.render, ekko_mem.render.messages;"
            " print(sorted({'rich', 'typing', 'dataclasses', 'pydantic', 'typer'}"
            " & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out == "[]\n"


# -- the workspace ------------------------------------------------------------------------------

INIT = {"workspace": "/w", "db": "/w/.ekko/memory.db", "workspaceId": "ws_1", "created": True,
        "configCreated": True, "gitignore": "added"}


def test_init(shown):
    gitignore = "added .ekko/ to .gitignore (memory stays private)\n"
    assert shown(r.Initialised(INIT)) == ("initialised /w/.ekko/memory.db\n", gitignore)
    assert shown(r.Initialised(INIT), quiet=True) == ("", "")
    again = {**INIT, "created": False, "gitignore": "present"}
    assert shown(r.Initialised(again)) == (
        "already initialised: /w/.ekko/memory.db (nothing changed)\n", "")
    assert shown(r.Initialised(INIT), as_json=True) == (pretty(INIT), "")


MIGRATION = {"db": "m.db", "version": 3, "latest": 4, "dryRun": False, "appliedNow": [],
             "applied": [{"version": 1, "name": "m001_create_tables", "appliedAt": "T1"}],
             "pending": [[4, "m004_add_index"]]}


def test_migrate(shown):
    head = "m.db: schema version 3 (latest 4)"
    assert shown(r.Migration(MIGRATION)) == (lines(head, "nothing to apply"), "")
    ran = {**MIGRATION, "appliedNow": ["m004_add_index"]}
    assert shown(r.Migration(ran))[0] == lines(head, "applied  m004_add_index")
    assert shown(r.Migration(MIGRATION, status=True))[0] == lines(
        head, "applied  001 m001_create_tables at T1", "pending  004 m004_add_index")
    applied = {**MIGRATION, "applied": [{**MIGRATION["applied"][0],
                                         "appliedAt": "2024-01-02T03:04:05.000Z"}]}
    assert "at 2024-01-02 03:04 UTC" in shown(r.Migration(applied, status=True))[0]
    assert shown(r.Migration(MIGRATION, status=True), quiet=True) == ("", "")
    assert shown(r.Migration(MIGRATION, dry_run=True))[0] == lines(
        head, "would apply  004 m004_add_index")
    assert shown(r.Migration(MIGRATION), as_json=True)[0] == pretty(MIGRATION)


def test_config_piped_is_tab_separated_with_values_as_json(shown):
    rows = [{"key": "context.budget", "value": 1200, "source": "default"},
            {"key": "extract.llm", "value": "llm -m x", "source": "workspace"}]
    assert shown(r.Settings(rows)) == (lines("context.budget\t1200\tdefault",
                                             'extract.llm\t"llm -m x"\tworkspace'), "")
    assert shown(r.Settings(rows), as_json=True)[0] == pretty(rows)


def test_schema_is_json_in_every_format(shown):
    schema = {"type": "object", "title": "Extraction"}
    assert shown(r.Schema(schema)) == (pretty(schema), "")
    assert shown(r.Schema(schema), as_json=True) == (pretty(schema), "")


@pytest.mark.parametrize("action, data, line", [
    ("install", {"hook": "post-commit", "installed": True, "chained": True},
     "installed post-commit (chained after the existing hook)"),
    ("install", {"hook": "post-commit", "installed": True}, "installed post-commit"),
    ("install", {"hook": "post-commit", "installed": False, "reason": "not a git repository"},
     "post-commit: not a git repository"),
    ("uninstall", {"hook": "post-commit", "removed": True}, "removed ekko-mem from post-commit"),
    ("uninstall", {"hook": "post-commit", "removed": False, "reason": "not installed"},
     "post-commit: not installed"),
    ("run", {"sha": "0123456789abcdef", "recorded": True, "messageId": "msg_1"},
     "recorded 0123456789ab as msg_1"),
    ("run", {"sha": "0123456789abcdef", "recorded": False, "reason": "already recorded"},
     "0123456789ab: already recorded"),
])
def test_hooks(shown, action, data, line):
    assert shown(r.HookOutcome(action, data)) == (line + "\n", "")
    assert shown(r.HookOutcome(action, data), quiet=True) == ("", "")
    assert shown(r.HookOutcome(action, data), quiet=True, as_json=True) == (pretty(data), "")


def test_doctor(shown):
    report = {"ok": False, "repairable": True, "checks": [
        {"ok": True, "fixed": False, "db": "workspace", "check": "integrity", "detail": "ok"},
        {"ok": False, "fixed": True, "db": "user", "check": "fts", "detail": "rebuilt"},
        {"ok": False, "fixed": False, "db": "user", "check": "file mode", "detail": ""}]}
    quiet_human_and_json(shown, r.DoctorReport(report), lines(
        "ok    workspace integrity         ok",
        "FIXED user      fts               rebuilt",
        "FAIL  user      file mode"))


def test_export_is_compact_json_lines_in_every_format(shown):
    records = [{"kind": "message", "id": "msg_1"}, {"kind": "node", "title": "少油"}]
    expected = '{"kind":"message","id":"msg_1"}\n{"kind":"node","title":"少油"}\n'
    assert shown(r.Exported(iter(records))) == (expected, "")
    assert shown(r.Exported(iter(records)), as_json=True) == (expected, "")


def test_import(shown):
    report = {"imported": {"message": 2, "summary": 0, "node": 1, "event": 3}, "skipped": 4}
    quiet_human_and_json(shown, r.ImportReport(report), "imported 2 messages, 0 summaries,"
                         " 1 memories, 3 audit events; 4 already present\n")


# -- messages -----------------------------------------------------------------------------------

MESSAGE = {"id": "msg_1", "sessionId": "s1", "role": "user", "content": "hello\n  world",
           "createdAt": "2024-01-02T03:04:05Z"}


def test_log(shown):
    logged = r.Logged([MESSAGE], ("credential masked",))
    note = "ekko-mem: note: credential masked\n"
    assert shown(logged) == ("msg_1\n", note)
    assert shown(logged, quiet=True) == ("", "")
    assert shown(logged, as_json=True) == (json.dumps(MESSAGE, ensure_ascii=False,
                                                      separators=(",", ":")) + "\n", note)


def test_history_piped_is_tab_separated_one_line_each(shown):
    history = r.History({"sessionId": "s1", "messages": [MESSAGE]})
    assert shown(history) == ("2024-01-02 03:04 UTC\tmsg_1\tuser\thello world\n", "")
    assert shown(history, quiet=True) == ("", "")
    assert shown(history, as_json=True)[0].count("\n") == 1


def test_sessions(shown):
    found = [{"sessionId": "s1", "messages": 2, "firstAt": "T1",
              "lastAt": "2024-01-02T03:04:05Z"}]
    assert shown(r.Sessions(found)) == ("s1\t2\tT1\t2024-01-02 03:04 UTC\n", "")
    assert shown(r.Sessions(found), as_json=True)[0] == (
        '{"sessionId":"s1","messages":2,"firstAt":"T1","lastAt":"2024-01-02T03:04:05Z"}\n')


def test_message_search(shown):
    hits = {"messages": [{"message": MESSAGE, "score": 1.234}]}
    assert shown(r.MessageHits(hits)) == (
        "msg_1\ts1\t2024-01-02 03:04 UTC\tuser\thello world\t1.23\n", "")
    assert shown(r.MessageHits({"messages": []})) == ("", "no message matches\n")
    assert shown(r.MessageHits(hits), as_json=True)[0] == pretty(hits)


# -- memory -------------------------------------------------------------------------------------

def test_writes_print_what_was_stored_and_carry_the_first_refusal(shown):
    written = r.Writes([ACCEPTED, REFUSED])
    assert shown(written) == (lines("created mem_1 (workspace), superseding mem_0",
                                    "  note: kept the key"), "")
    assert shown(written, quiet=True) == ("", "")
    out, _ = shown(written, as_json=True)
    assert [json.loads(line) for line in out.splitlines()] == [ACCEPTED, REFUSED]
    assert written.error is REFUSAL
    assert r.Writes([ACCEPTED]).error is None


def test_an_edit_without_changes_is_a_note(shown):
    assert shown(r.Writes([], notes=("no changes",))) == ("", "no changes\n")
    assert shown(r.Writes([], notes=("no changes",)), as_json=True) == ("", "no changes\n")
    assert shown(r.Writes([], notes=("no changes",)), quiet=True) == ("", "")


FORGOTTEN = {"mode": "hard", "deletedIds": ["mem_1"], "alreadyErased": ["mem_2"],
             "purgedMessageIds": ["msg_1"], "summariesDropped": ["sum_1"],
             "verify": {"clean": True, "textsChecked": 2, "filesChecked": ["memory.db", "wal"]}}


def test_forget(shown):
    quiet_human_and_json(shown, r.ForgetOutcome(FORGOTTEN), lines(
        "hard-deleted mem_1",
        "already erased mem_2 (finished what was left)",
        "purged message msg_1",
        "dropped summary sum_1 (the next 'ekko-mem summarize' rebuilds it)",
        "verified: none of 2 erased texts is left in memory.db, wal or the full-text index"))


def test_forget_names_the_scan_command_when_nothing_could_be_verified(shown):
    unverified = {"mode": "hard", "deletedIds": [], "verify": {"clean": None}}
    assert shown(r.ForgetOutcome(unverified, "ekko-mem doctor SCAN")) == (
        "not verified: this run erased no text to scan for;"
        " 'ekko-mem doctor SCAN TEXT' checks any text\n", "")


def test_forget_candidates_are_printed_even_when_quiet(shown):
    candidates = {"mode": "soft", "deletedIds": [], "candidates": [
        {"id": "mem_1", "scope": "user", "status": "active", "title": "no cilantro"}]}
    assert shown(r.ForgetOutcome(candidates), quiet=True) == (
        "mem_1\tuser\tactive\tno cilantro\n", "")


def test_query(shown):
    found = {"exact": [NODE], "relevant": [{**NODE, "id": "mem_2", "key": None}],
             "omitted": [{"nodeId": "mem_9", "reason": "expired"}], "scores": {}}
    assert shown(r.QueryResult(found)) == (lines(
        "exact",
        "mem_1\tworkspace\tpreference\tno cilantro [food.cilantro=false]\tactive\t0.90",
        "relevant",
        "mem_2\tworkspace\tpreference\tno cilantro\tactive\t0.90",
        "omitted",
        "mem_9\texpired"), "")
    assert shown(r.QueryResult(found), quiet=True) == ("", "")
    nothing = {"exact": [], "relevant": [], "omitted": [], "scores": {}}
    assert shown(r.QueryResult(nothing)) == ("", "no memory matches\n")
    assert shown(r.QueryResult(found), as_json=True)[0] == pretty(found)


def test_query_on_a_terminal_is_a_table_with_no_escape_codes_when_asked(shown, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    found = {"exact": [NODE], "relevant": [], "omitted": [], "scores": {}}
    out, err = shown(r.QueryResult(found), no_color=True)
    assert "\x1b" not in out and err == ""
    assert [line.rstrip() for line in out.splitlines()] == [
        "exact",
        "id                                                        status",
        "scope type            memory                              conf",
        "────────────────────────────────────────────────────────────────",
        "mem_1                 no cilantro  [food.cilantro=false]  active",
        "workspace preference                                      0.90"]
    coloured, _ = shown(r.QueryResult(found))
    assert "\x1b[" in coloured and re.sub(r"\x1b\[[0-9;]*m", "", coloured) == out


def test_audit_names_what_each_memory_says(shown):
    events = [{"createdAt": "2024-01-02T03:04:05.000Z", "id": "evt_2", "eventType": "delete",
               "nodeId": "mem_1", "actor": "user", "reason": "said so " * 10},
              {"createdAt": "T1", "id": "evt_1", "eventType": "create", "nodeId": "mem_0",
               "actor": "user", "reason": "purged"},
              {"createdAt": "T0", "id": "evt_0", "eventType": "import", "actor": "user",
               "reason": "old"}]
    trail = r.AuditTrail(events, {"mem_1": "no  cilantro\n"})
    assert shown(trail) == (lines(
        "2024-01-02 03:04 UTC\tevt_2\tdelete\tmem_1\tuser\t"
        + ("said so " * 10)[:49].rstrip() + "…\tno cilantro",
        "T1\tevt_1\tcreate\tmem_0\tuser\tpurged\t(erased)",
        "T0\tevt_0\timport\t-\tuser\told\t"), "")
    assert shown(trail, quiet=True) == ("", "")
    assert shown(trail, as_json=True)[0] == "".join(
        json.dumps(e, separators=(",", ":")) + "\n" for e in events)


def test_undo(shown):
    undone = {"undoneEventId": "evt_1", "eventId": "evt_2", "changedIds": ["mem_1", "mem_2"]}
    quiet_human_and_json(shown, r.Undone(undone), "undid evt_1 as evt_2: mem_1, mem_2\n")


def test_show_a_node(shown):
    node = {**NODE, "tags": [], "content": "", "createdAt": "2024-01-02T03:04:05.000Z"}
    record = {"kind": "node", "node": node, "chain": [{**node, "id": "mem_0",
                                                       "status": "superseded"}, node],
              "sources": [MESSAGE], "events": [{"createdAt": "T1", "id": "evt_1",
                                                "eventType": "create", "actor": "user",
                                                "reason": "said so"}]}
    assert shown(r.Shown(record)) == (lines(
        "id            mem_1",
        "scope         workspace",
        "status        active",
        "type          preference",
        "key           food.cilantro",
        "valueJson     False",
        "title         no cilantro",
        "confidence    0.9",
        "createdAt     2024-01-02 03:04 UTC",
        "",
        "versions (oldest first):",
        "    mem_0 superseded no cilantro  [food.cilantro=false]",
        "  * mem_1 active     no cilantro  [food.cilantro=false]",
        "",
        "source messages:",
        "  msg_1 2024-01-02 03:04 UTC [user] hello world",
        "",
        "audit:",
        "  T1 evt_1 create    user      said so"), "")
    assert shown(r.Shown(record), as_json=True)[0] == pretty(record)
    assert shown(r.Shown(record), quiet=True) == ("", "")


def test_show_a_message(shown):
    record = {"kind": "message", "message": {"id": "msg_1", "role": "user", "meta": {"a": 1}},
              "nodes": [NODE]}
    assert shown(r.Shown(record))[0] == lines(
        "id               msg_1",
        "role             user",
        'meta             {"a": 1}',
        "",
        "memories from this message:",
        "  mem_1 active     no cilantro  [food.cilantro=false]")


def test_expire(shown):
    assert shown(r.Expired({"expiredIds": ["mem_1"]})) == ("expired mem_1\n", "")
    assert shown(r.Expired({"expiredIds": []})) == ("nothing to expire\n", "")
    assert shown(r.Expired({"expiredIds": []}), quiet=True) == ("", "")


# -- context ------------------------------------------------------------------------------------

CONTEXT = {"contextId": "ctx_1", "text": "## Preferences\n- no cilantro",
           "diagnostics": {"warnings": ["the user db is locked"]}}


@pytest.mark.parametrize("fmt", ["human", "text", "markdown"])
def test_context_text_is_written_as_packed_with_warnings_on_stderr(shown, fmt):
    warning = "ekko-mem: warning: the user db is locked\n"
    assert shown(r.Context(CONTEXT), fmt=fmt) == (CONTEXT["text"] + "\n", warning)
    assert shown(r.Context(CONTEXT), fmt=fmt, quiet=True) == (CONTEXT["text"] + "\n", "")
    assert shown(r.Context({**CONTEXT, "text": ""}), fmt=fmt, quiet=True) == ("", "")


def test_context_json(shown):
    assert shown(r.Context(CONTEXT), fmt="json") == (
        pretty(CONTEXT), "ekko-mem: warning: the user db is locked\n")


def test_explain(shown):
    explained = {
        "contextId": "ctx_1", "createdAt": "T1", "queryText": "dinner?", "sessionId": "s1",
        "retrieval": {"candidatesConsidered": 5, "ranked": 4, "packed": 2, "cutForBudget": 1,
                      "belowRelevanceFloor": 1},
        "items": [{"kind": "node", "id": "mem_1", "title": "no cilantro", "scope": "user",
                   "via": ["fts", "key"], "reason": "a standing preference",
                   "sources": [{"sessionId": "s1", "createdAt": "T0",
                                "content": "I hate cilantro"}]},
                  {"kind": "summary", "id": "sum_1", "title": "cooking plans"}]}
    assert shown(r.Explanation(explained)) == (lines(
        "context ctx_1 (T1) for: dinner?",
        "ranked list: 5 candidates considered, 4 ranked, 2 packed, 1 cut for the budget,"
        " 1 below the relevance floor",
        "- no cilantro  (mem_1, user)  [found by fts, key]",
        "    why: a standing preference",
        "    from s1 at T0: I hate cilantro",
        "- summary sum_1: cooking plans"), "")
    assert shown(r.Explanation(explained), as_json=True)[0] == pretty(explained)


# -- summaries and extraction -------------------------------------------------------------------

def test_summary_chain(shown):
    chain = [{"id": "sum_1", "fromMessageId": "msg_1", "toMessageId": "msg_9",
              "parentSummaryId": None, "needsRegeneration": True, "summary": "talked food"}]
    assert shown(r.SummaryChain(chain)) == (lines(
        "sum_1  msg_1..msg_9  parent -  (needs regeneration)", "    talked food"), "")
    assert shown(r.SummaryChain(chain), quiet=True) == ("", "")
    assert shown(r.SummaryChain(chain), as_json=True)[0].count("\n") == 1


def test_a_prompt_is_written_as_is_in_every_format(shown):
    assert shown(r.Prompt("Summarise:\nmsg")) == ("Summarise:\nmsg", "")
    assert shown(r.Prompt("Summarise:\nmsg"), as_json=True) == ("Summarise:\nmsg", "")


EXTRACTION = {"results": [
    {"accepted": True, "operation": "created", "nodeId": "mem_1", "scope": "session"},
    {"accepted": False, "operation": "rejected", "reason": "too vague"},
    {"accepted": False, "operation": "ignored", "reason": "small talk"}]}


def test_summarize(shown):
    done = {"sessionId": "s1", "skipped": False, "extraction": EXTRACTION,
            "summary": {"id": "sum_2", "parentSummaryId": "sum_1", "summary": "talked food"}}
    assert shown(r.Summarized(done)) == (lines(
        "sum_2 (parent sum_1): talked food", "  created mem_1 (session)",
        "  not stored: too vague"), "")
    assert shown(r.Summarized(done), quiet=True) == ("", "")
    assert shown(r.Summarized(done), as_json=True)[0] == pretty(done)
    skipped = {"summary": None, "skipped": True, "reason": "too few new messages"}
    assert shown(r.Summarized(skipped)) == ("", "nothing done: too few new messages\n")
    applied = {"kind": "extraction", **EXTRACTION}
    assert shown(r.Summarized(applied))[0] == lines("  created mem_1 (session)",
                                                    "  not stored: too vague")


def test_a_queued_llm_failure_is_a_warning_naming_the_retry(shown):
    queued = {"summary": None, "skipped": False, "queued": "job_1", "error": "exit 1"}
    warning = ("ekko-mem: warning: the LLM command failed (exit 1); queued as job_1, nothing"
               " written; retry with 'ekko-mem extract RETRY'\n")
    assert shown(r.Summarized(queued, "ekko-mem extract RETRY")) == ("", warning)
    assert shown(r.Extracted(queued, "ekko-mem extract RETRY"), as_json=True) == (
        pretty(queued), warning)
    assert shown(r.Extracted(queued, "ekko-mem extract RETRY"), quiet=True) == ("", "")


def test_extract(shown):
    assert shown(r.Extracted(EXTRACTION)) == (lines("  created mem_1 (session)",
                                                    "  not stored: too vague"), "")
    assert shown(r.Extracted({"results": [], "reason": "no new messages"})) == (
        "no new messages\n", "")
    assert shown(r.Extracted({"results": []})) == ("no memory in the new messages\n", "")
    assert shown(r.Extracted(EXTRACTION), quiet=True) == ("", "")


def test_jobs_and_retries(shown):
    jobs = [{"id": "job_1", "kind": "extract", "sessionId": "s1", "attempts": 2,
             "error": "boom"}]
    assert shown(r.Jobs(jobs)) == ("job_1  extract  s1  tries 2  boom\n", "")
    assert shown(r.Jobs([])) == ("the retry queue is empty\n", "")
    outcomes = [{"jobId": "job_1", "status": "done"},
                {"jobId": "job_2", "status": "failed", "error": "exit 1"}]
    assert shown(r.Retries(outcomes)) == (lines("job_1: done", "job_2: failed (exit 1)"), "")
    assert shown(r.Retries([])) == ("the retry queue is empty\n", "")
    assert shown(r.Retries(outcomes), as_json=True)[0] == (
        '{"jobId":"job_1","status":"done"}\n'
        '{"jobId":"job_2","status":"failed","error":"exit 1"}\n')


def test_a_title_from_memory_is_printed_as_written_on_a_terminal(shown, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    graph = {"entity": {"name": "[bold]Anna[/bold]", "kind": "person", "aliases": []},
             "scope": "workspace", "depth": 1, "asOf": None, "truncated": False,
             "edges": [{"subject": "user", "relation": "sibling", "object": "[bold]Anna[/bold]",
                        "value": "sister", "validFrom": None, "validTo": None,
                        "recordedAt": "2026-01-02T03:04:05.000Z", "retiredAt": None,
                        "sourceNodeId": "mem_1"}]}
    out, _ = shown(r.EntityGraph(graph), no_color=True)
    assert out.splitlines()[0].startswith("[bold]Anna[/bold] (person)")
