"""What a context and a query say about entities and about the past: one line for each person
or thing the question names (or reaches through roles), and memories and edges as of a day."""
from __future__ import annotations

import sqlite3

from ekko_mem.policy.graph_lines import may_name_someone, name_words, newest_facts
from ekko_mem.policy.timeexpr import asked_as_of


def remembered(cli, *args, at=None):
    env = {"EKKO_NOW": at} if at else None
    result = cli("remember", "--scope", "workspace", "--json", *args, env=env)
    assert result.code == 0, result
    return result.json()["nodeId"]


def context(cli, question, *args, at=None):
    env = {"EKKO_NOW": at} if at else None
    result = cli("context", question, "--json", *args, env=env)
    assert result.code == 0, result
    return result.json()


def read_to(ws) -> int:
    db = sqlite3.connect(ws / ".ekko" / "memory.db")
    try:
        row = db.execute("select value from ekko_meta where key = 'graph_read_to'").fetchone()
        return int(row[0]) if row else 0
    finally:
        db.close()


def test_a_question_naming_someone_gets_their_line(cli, ws):
    node = remembered(cli, "我同事小王是前端，他生日是3月5日")
    answer = context(cli, "小王是谁？")
    (line,) = answer["entities"]
    assert (line["name"], line["kind"], line["facts"]) == ("小王", "person",
                                                         ["同事", "前端", "生日 3月5日"])
    assert line["sourceNodeIds"] == [node]
    assert "人物与关系：\n- 小王：同事；前端；生日 3月5日" in answer["text"]
    assert not any(i.startswith("ent_") for i in answer["usedMemoryIds"])


def test_a_chain_of_roles_reaches_the_person_asked_about(cli, ws):
    remembered(cli, "My sister's husband Tom is a dentist")
    remembered(cli, "My sister Anna lives in Paris since 2019")
    answer = context(cli, "what does my sister's husband do?")
    names = [e["name"] for e in answer["entities"]]
    assert names[0] == "Tom"
    assert answer["entities"][0]["facts"] == ["my sister's husband", "dentist"]
    anna = context(cli, "Where does Anna live?")["entities"]
    assert anna[0]["facts"] == ["sister", "lives in Paris (since 2019)"]
    assert "- Anna: sister; lives in Paris (since 2019)" in context(
        cli, "Where does Anna live?")["text"]


def test_a_question_naming_nobody_reads_no_graph(cli, ws):
    remembered(cli, "我同事小王是前端")
    answer = context(cli, "今晚吃什么？")
    assert answer["entities"] == [] and "人物与关系" not in answer["text"]
    assert read_to(ws) == 0  # the unread memory did not name anyone the question named
    context(cli, "小王做什么的？")
    assert read_to(ws) > 0


def test_a_replaced_memory_leaves_the_line_and_comes_back_as_of_then(cli, ws):
    old = remembered(cli, "My sister Anna is a nurse", at="2025-03-01T10:00:00Z")
    remembered(cli, "--supersedes", old, "My sister Anna is a doctor",
               at="2026-06-01T10:00:00Z")
    now = context(cli, "What does Anna do?", at="2026-07-01T10:00:00Z")
    assert now["entities"][0]["facts"] == ["sister", "doctor"]
    then = context(cli, "What does Anna do?", "--as-of", "2025-05-01",
                   at="2026-07-01T10:00:00Z")
    assert then["entities"][0]["facts"] == ["sister", "nurse"]
    assert then["diagnostics"]["asOf"] == "2025-05-01T23:59:59.999Z"
    assert "nurse" in then["text"] and "doctor" not in then["text"].split("Facts:")[-1]


def test_a_question_that_names_a_past_month_reads_memory_as_of_then(cli, ws):
    old = remembered(cli, "我住在杭州", at="2025-03-01T10:00:00Z")
    remembered(cli, "--supersedes", old, "我住在上海", at="2026-06-01T10:00:00Z")
    then = context(cli, "去年五月我住在哪？", at="2026-07-01T10:00:00Z")
    assert then["diagnostics"]["asOf"] == "2025-05-31T23:59:59.999Z"
    assert [n["content"] for n in then["relevantNodes"]] == ["我住在杭州"]
    now = context(cli, "我住在哪？", at="2026-07-01T10:00:00Z")
    assert now["diagnostics"]["asOf"] is None
    assert [n["content"] for n in now["relevantNodes"]] == ["我住在上海"]


def test_query_as_of_gives_what_held_then_with_its_status_today(cli, ws):
    old = remembered(cli, "我住在杭州", at="2025-03-01T10:00:00Z")
    new = remembered(cli, "--supersedes", old, "我住在上海", at="2026-06-01T10:00:00Z")
    then = cli("query", "我住在哪", "--as-of", "2025-05-01", "--json",
               env={"EKKO_NOW": "2026-07-01T10:00:00Z"}).json()
    assert [(n["id"], n["status"]) for n in then["relevant"]] == [(old, "superseded")]
    assert then["omitted"] == [] and then["asOf"] == "2025-05-01T23:59:59.999Z"
    before = cli("query", "我住在哪", "--as-of", "2024-01-01", "--json").json()
    assert before["relevant"] == []  # nothing was known yet
    today = cli("query", "我住在哪", "--json").json()
    assert [n["id"] for n in today["relevant"]] == [new]


def test_a_forgotten_memory_stays_forgotten_as_of_any_day(cli, ws):
    node = remembered(cli, "我住在杭州", at="2025-03-01T10:00:00Z")
    assert cli("forget", node, "--yes", env={"EKKO_NOW": "2026-01-01T00:00:00Z"}).code == 0
    then = cli("query", "我住在哪", "--as-of", "2025-05-01", "--json").json()
    assert then["relevant"] == []


def test_bad_as_of_is_one_line_and_exit_2(cli, ws):
    result = cli("context", "x", "--as-of", "someday")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "--as-of" in result.err or "someday" in result.err
    both = cli("query", "x", "--messages", "--as-of", "2025-01-01")
    assert both.code == 2 and "--messages" in both.err


def test_another_sessions_or_private_memory_stays_out_of_the_line(cli, ws):
    cli("remember", "--scope", "session", "--session", "other", "My colleague Bea is a nurse")
    remembered(cli, "--tag", "private", "My colleague Bea lives in Oslo")
    answer = context(cli, "What does Bea do?", "--session", "mine")
    assert all("nurse" not in f and "Oslo" not in f
               for e in answer["entities"] for f in e["facts"])


def test_remember_names_an_entity_with_its_kind(cli, ws):
    node = remembered(cli, "--entity", "Zed:project", "--entity", "Lin", "Zed ships every two weeks")
    graph = cli("graph", "Zed", "--json").json()
    assert graph["entity"]["kind"] == "project"
    assert [(e["relation"], e["sourceNodeId"]) for e in graph["edges"]] == [("mentioned", node)]
    assert cli("graph", "Lin", "--json").json()["entity"]["kind"] == "thing"
    shown = cli("show", node, "--json").json()["node"]
    assert shown["entities"] == ["Zed", "Lin"]
    # What someone said it is outlasts the rules' reading of a later statement.
    remembered(cli, "--entity", "Lin:organisation", "Lin is my colleague")
    assert cli("graph", "Lin", "--json").json()["entity"]["kind"] == "organisation"


def test_an_unknown_kind_stays_part_of_the_name(cli, ws):
    node = remembered(cli, "--entity", "ratio 3:2", "the prints are 3:2")
    assert cli("show", node, "--json").json()["node"]["entities"] == ["ratio 3:2"]


def test_words_looked_up_as_names():
    words = name_words("what does my sister's husband do? 小王呢")
    assert "my sister" in words and "husband" in words and "小王" in words
    assert len(name_words("x " * 5000)) <= 600


def test_a_context_reads_unread_memories_only_for_someone_they_name():
    assert may_name_someone("小王是谁？", ["我同事小王是前端"])
    assert may_name_someone("what does my sister do?", ["My sister is a nurse"])
    assert not may_name_someone("今晚吃什么？", ["我同事小王是前端"])
    assert not may_name_someone("Who is Bob?", ["My sister is a nurse"])


def test_facts_read_both_ways_and_keep_their_times():
    edges = [{"subject": "user", "relation": "sibling", "objectId": "e1", "value": "sister",
              "objectName": "Anna", "subjectName": "user"},
             {"subject": "e1", "relation": "spouse", "objectId": "e2", "value": "husband",
              "objectName": "Tom", "subjectName": "Anna"},
             {"subject": "e1", "relation": "works_as", "objectId": None, "value": "nurse",
              "validFrom": "2019", "objectName": None, "subjectName": "Anna"}]
    newest = edges[::-1]
    assert newest_facts("e1", newest, chinese=False)[0] == [
        "sister", "husband Tom", "nurse (since 2019)"]
    assert newest_facts("e1", newest, chinese=True)[0] == ["姐姐", "老公 Tom", "nurse（2019起）"]
    assert newest_facts("e2", edges[1:2], chinese=False) == (["Anna's husband"], edges[1:2])


def test_a_question_names_a_past_period_or_none():
    from datetime import datetime, timezone
    now = datetime(2026, 12, 2, tzinfo=timezone.utc)
    assert asked_as_of("去年五月我住在哪？", now) == "2025-05-31T23:59:59.999Z"
    assert asked_as_of("where did I live in 2024?", now) == "2024-12-31T23:59:59.999Z"
    assert asked_as_of("what is my plan next week?", now) is None
    assert asked_as_of("how do I configure nginx?", now) is None
    from ekko_mem.policy.timeexpr import asks_before_change
    assert asks_before_change("which database did we use before the switch?")
    assert asks_before_change("数据库换成MySQL之前用的什么？")
    assert not asks_before_change("what do we use now?")
    assert not asks_before_change("I moved here before")


def test_an_edit_in_place_retires_what_the_old_words_said(cli, ws):
    node = remembered(cli, "My colleague Bea is a nurse")
    assert context(cli, "What does Bea do?")["entities"][0]["facts"] == ["colleague", "nurse"]
    from ekko_mem import MemoryService
    with MemoryService(ws) as svc:
        result = svc.propose_update("update", {"content": "My colleague Bea is a pilot",
                                               "title": "My colleague Bea is a pilot"},
                                    target_id=node, actor="user")
    assert result["accepted"] and result["nodeId"] == node
    assert context(cli, "What does Bea do?")["entities"][0]["facts"] == ["colleague", "pilot"]
    edges = cli("graph", "Bea", "--json").json()["edges"]
    assert {(e["value"], bool(e["retiredAt"])) for e in edges if e["relation"] == "works_as"} \
        == {("nurse", True), ("pilot", False)}


def test_relative_times_are_read_from_when_the_memory_was_written(cli, ws):
    remembered(cli, "My sister Anna moved to Paris last year", at="2024-06-01T10:00:00Z")
    edges = cli("graph", "Anna", "--json").json()["edges"]
    assert [e["validFrom"] for e in edges if e["relation"] == "lives_in"] == ["2023"]


def test_before_the_switch_reads_memory_as_of_just_before_the_change(cli, ws):
    old = remembered(cli, "--type", "decision", "The project uses PostgreSQL as its database",
                     at="2025-03-01T10:00:00Z")
    remembered(cli, "--type", "decision", "--supersedes", old,
               "The project switched its database to MySQL", at="2026-06-01T10:00:00Z")
    before = context(cli, "which database did the project use before the switch?")
    assert before["diagnostics"]["asOf"] == "2026-06-01T09:59:59.999Z"
    assert [n["content"] for n in before["relevantNodes"]] == [
        "The project uses PostgreSQL as its database"]
    now = context(cli, "which database does the project use?")
    assert now["diagnostics"]["asOf"] is None
    assert [n["content"] for n in now["relevantNodes"]] == [
        "The project switched its database to MySQL"]


def test_before_a_change_nothing_replaced_sets_no_moment(cli, ws):
    remembered(cli, "我们用 Redis 做缓存")
    answer = context(cli, "缓存换之前用的什么？")
    assert answer["diagnostics"]["asOf"] is None


def test_naming_a_kind_is_audited_on_the_memory_and_cannot_be_undone(cli, ws):
    node = remembered(cli, "--entity", "Zed:project", "Zed ships every two weeks")
    events = cli("audit", "--node", node, "--json").jsonl()
    named = [e for e in events if e["eventType"] == "entity"]
    assert [(e["reason"], e["payload"]["after"]) for e in named] == [
        ("Zed is a project", {"name": "Zed", "kind": "project"})]
    again = remembered(cli, "--entity", "Zed:project", "Zed is written in Go")
    assert [e for e in cli("audit", "--node", again, "--json").jsonl()
            if e["eventType"] == "entity"] == []  # the same kind again changes nothing
    refused = cli("audit", "undo", named[0]["id"])
    assert refused.code == 4 and "cannot be undone" in refused.err
    assert cli("graph", "Zed", "--json").json()["entity"]["kind"] == "project"


def test_a_capitalised_name_is_named_only_with_its_capital(cli, ws):
    remembered(cli, "My colleague Bill is a nurse")
    assert context(cli, "What does Bill do?")["entities"][0]["name"] == "Bill"
    assert context(cli, "how do we split the bill tonight?")["entities"] == []


def test_a_question_about_a_day_to_come_or_a_bound_reads_memory_as_it_is(cli, ws):
    remembered(cli, "I'm allergic to peanuts", at="2026-01-10T10:00:00Z")
    for question in ("What should I cook for dinner on Friday?", "May I ask what to cook?",
                     "I'm flying to Paris in March, what should I pack?",
                     "what changed since 2024?"):
        answer = context(cli, question, at="2026-01-10T12:00:00Z")
        assert answer["diagnostics"]["asOf"] is None, question


def test_a_forgotten_or_expired_memory_gives_no_line_as_of_any_day(cli, ws):
    node = remembered(cli, "My sister Anna is a nurse", at="2026-01-10T10:00:00Z")
    cli("graph", "Anna")
    assert cli("forget", node, "--yes", env={"EKKO_NOW": "2026-02-10T10:00:00Z"}).code == 0
    then = context(cli, "What does Anna do?", "--as-of", "2026-01-20", at="2026-03-01T00:00:00Z")
    assert then["entities"] == []
    remembered(cli, "My colleague Bea is a pilot", "--expires", "2026-03-02T00:00:00Z",
               at="2026-03-01T10:00:00Z")
    assert context(cli, "What does Bea do?", at="2026-03-01T12:00:00Z")["entities"]
    assert context(cli, "What does Bea do?", at="2026-03-03T00:00:00Z")["entities"] == []


def test_a_much_named_entity_still_gets_its_newest_facts(cli, ws):
    for n in range(55):
        remembered(cli, "--entity", "Anna", f"Lunch note {n}")
    remembered(cli, "My sister Anna is a nurse")
    assert context(cli, "What does Anna do?")["entities"][0]["facts"] == ["sister", "nurse"]


def test_a_chain_of_roles_follows_only_edges_this_session_may_see(cli, ws):
    cli("remember", "--scope", "session", "--session", "a",
        "My sister Anna's husband Tom is a dentist")
    remembered(cli, "Tom lives in Paris")
    answer = context(cli, "Where does my sister's husband live?", "--session", "b")
    assert all(e["name"] != "Tom" for e in answer["entities"])


def test_a_role_that_changed_hands_names_only_the_one_who_holds_it(cli, ws):
    old = remembered(cli, "My wife Mary lives in Paris")
    remembered(cli, "Mary likes tennis")
    remembered(cli, "--supersedes", old, "My wife Jane lives in Rome")
    names = [e["name"] for e in context(cli, "Where does my wife live?")["entities"]]
    assert "Mary" not in names


def test_before_the_switch_to_a_version_replaced_since_finds_that_switch(cli, ws):
    first = remembered(cli, "--type", "decision", "Our database is MySQL",
                       at="2026-01-10T10:00:00Z")
    second = remembered(cli, "--type", "decision", "--supersedes", first,
                        "Our database is Postgres", at="2026-02-10T10:00:00Z")
    remembered(cli, "--type", "decision", "--supersedes", second, "Our database is SQLite",
               at="2026-03-10T10:00:00Z")
    answer = context(cli, "Which database did we use before we switched to Postgres?",
                     at="2026-04-01T00:00:00Z")
    assert answer["diagnostics"]["asOf"] == "2026-02-10T09:59:59.999Z"


def test_a_long_page_of_roles_costs_a_bounded_walk(cli, ws):
    remembered(cli, "My sister's husband Tom is a dentist")
    answer = context(cli, "my sister's husband's colleague " * 2000)
    assert answer["diagnostics"]["storeStatus"] == "ok"


def test_undoing_an_edit_in_place_reads_the_old_words_again(cli, ws):
    node = remembered(cli, "My colleague Bea is a nurse")
    cli("graph", "Bea")
    from ekko_mem import MemoryService
    with MemoryService(ws) as svc:
        svc.propose_update("update", {"content": "My colleague Bea is a pilot",
                                      "title": "My colleague Bea is a pilot"},
                           target_id=node, actor="user")
    (update,) = [e for e in cli("audit", "--node", node, "--json").jsonl()
                 if e["eventType"] == "update"]
    assert cli("audit", "undo", update["id"]).code == 0
    assert context(cli, "What does Bea do?")["entities"][0]["facts"] == ["colleague", "nurse"]


def test_a_year_before_1000_sorts_before_every_memory(cli, ws):
    remembered(cli, "我住在杭州")
    assert cli("query", "我住在哪", "--as-of", "0999-12-31", "--json").json()["relevant"] == []


def test_a_latin_name_beside_chinese_is_said(cli, ws):
    remembered(cli, "My sister Anna is a nurse")
    said = cli("log", "--json", "明天和Anna一起吃饭").json()["id"]
    assert said in [m["id"] for m in cli("graph", "Anna", "--json").json()["messages"]]


def test_a_filtered_export_keeps_only_the_aliases_its_memories_say(cli, ws, tmp_path):
    cli("remember", "--scope", "session", "--session", "a", "My sister Anna is a nurse")
    remembered(cli, "Anna likes tennis")
    cli("graph", "Anna")
    out = tmp_path / "ws.jsonl"
    assert cli("export", "--scope", "workspace", "-o", str(out)).code == 0
    import json
    entities = [json.loads(line)["data"] for line in out.read_text().splitlines()
                if json.loads(line).get("kind") == "entity"]
    anna = next(e for e in entities if e["name"] == "Anna")
    assert anna["aliases"] == []  # "My sister Anna" was said only in the session memory


def test_explain_names_the_entity_lines_and_their_memories(cli, ws):
    node = remembered(cli, "我同事小王是前端")
    answer = context(cli, "小王是谁？")
    assert node in answer["usedMemoryIds"]
    explained = cli("explain", "--last", "--json").json()
    (line,) = explained["retrieval"]["entities"]
    assert (line["name"], line["kind"], line["from"]) == ("小王", "person", [node])
    assert "a line on 小王 (person" in cli("explain", "--last").out
    # The run names the memory, so erasing it takes the run with it, name and all.
    assert cli("forget", node, "--hard", "--yes").code == 0
    assert cli("explain", "--last").code == 5


def test_as_of_a_year_month_or_week_means_its_end(cli, ws):
    remembered(cli, "我住在杭州", at="2025-12-30T10:00:00Z")
    for moment in ("2025", "2025-12", "2026-W01"):
        found = cli("query", "我住在哪", "--as-of", moment, "--json").json()
        assert [n["content"] for n in found["relevant"]] == ["我住在杭州"], moment
    assert cli("query", "我住在哪", "--as-of", "2025-11", "--json").json()["relevant"] == []
    bad = cli("query", "x", "--as-of", "2025-13")
    assert bad.code == 2 and len(bad.err.strip().splitlines()) == 1


def test_a_long_first_graph_read_reports_its_progress(ws):
    import io
    from ekko_mem import MemoryService
    from ekko_mem.actions import Progress
    with MemoryService(ws) as svc:
        for name in ("Bea", "Cal", "Dee"):
            svc.propose_update("create", {"scope": "workspace", "type": "fact",
                                          "title": f"My colleague {name} is a nurse",
                                          "content": f"My colleague {name} is a nurse"},
                               actor="user")
    stream = io.StringIO()
    shown = Progress("reading memories for the graph", stream)
    with MemoryService(ws) as svc:
        svc.entity_graph("Cal", progress=shown)
    assert stream.getvalue().endswith("reading memories for the graph 3/3")


def test_erasing_a_memory_keeps_an_entity_a_live_memory_names_outright(cli, ws):
    first = remembered(cli, "--entity", "Zed:project", "Zed ships every two weeks")
    cli("graph", "Zed")  # the graph has read the first memory, not the second
    remembered(cli, "--entity", "Zed", "Zed is written in Go")
    assert cli("forget", first, "--hard", "--yes").code == 0
    assert cli("graph", "Zed", "--json").json()["entity"]["kind"] == "project"


def test_a_question_about_now_or_a_month_to_come_sets_no_moment():
    from datetime import datetime, timezone
    now = datetime(2026, 6, 15, 10, tzinfo=timezone.utc)
    for question in ("Last year I moved to Berlin. What does Anna do now?",
                     "去年我换了工作，Anna现在是做什么的？",
                     "did we agree to ship v2 in July?", "从去年起我换过几次工作"):
        assert asked_as_of(question, now) is None, question
    assert asked_as_of("今年三月我们用了什么数据库？", now) == "2026-03-31T23:59:59.999Z"
    assert asked_as_of("去年我搬到了哪里？", now) == "2025-12-31T23:59:59.999Z"
    assert asked_as_of("2025年我从事什么工作？", now) == "2025-12-31T23:59:59.999Z"


def test_an_entity_line_keeps_its_newest_facts_and_only_their_memories(cli, ws):
    old = remembered(cli, "My sister Anna likes tennis")
    for hobby in ("golf", "chess", "hiking", "ramen", "jazz", "sailing", "opera", "pottery"):
        remembered(cli, f"My sister Anna likes {hobby}")
    newest = remembered(cli, "My sister Anna lives in Oslo")
    (line,) = context(cli, "where does Anna live?")["entities"]
    assert line["facts"][-1] == "lives in Oslo" and "likes tennis" not in line["facts"]
    assert newest in line["sourceNodeIds"] and old not in line["sourceNodeIds"]


def test_a_chain_of_roles_reads_past_edges_it_may_not_show(cli, ws):
    remembered(cli, "My sister Anna is a nurse")
    for hobby in ("golf", "chess", "hiking", "ramen", "jazz", "sailing"):
        cli("remember", "--scope", "session", "--session", "other",
            f"My sister Anna likes {hobby}")
    cli("graph", "Anna")
    answer = context(cli, "what does my sister do?")
    assert [e["name"] for e in answer["entities"]] == ["Anna"]
    assert "nurse" in answer["entities"][0]["facts"]


def test_graph_leaves_out_another_sessions_scratch_memory(cli, ws):
    remembered(cli, "我同事小王是前端")
    cli("remember", "--scope", "session", "--session", "other", "小王是我的邻居")
    relations = {e["relation"] for e in cli("graph", "小王", "--json").json()["edges"]}
    assert "neighbour" not in relations and "colleague" in relations
    mine = cli("graph", "小王", "--json", env={"EKKO_SESSION": "other"}).json()["edges"]
    assert "neighbour" in {e["relation"] for e in mine}


def test_as_of_the_last_month_a_calendar_holds(cli, ws):
    assert cli("query", "x", "--as-of", "9999-12", "--json").code == 0


def test_my_current_manager_is_the_one_the_live_edges_say(cli, ws):
    remembered(cli, "My manager Lee is a designer")
    for question in ("who is my current manager?", "我现在的老板是谁？"):
        assert [e["name"] for e in context(cli, question)["entities"]] == ["Lee"], question


def test_a_capitalised_word_that_opens_an_order_is_no_name(cli, ws):
    remembered(cli, "My friend Mark lives in Oslo")
    assert context(cli, "Mark the deploy task as done")["entities"] == []
    assert context(cli, "Mark lives where?")["entities"][0]["name"] == "Mark"
    assert context(cli, "Where does Mark live?")["entities"][0]["name"] == "Mark"


def test_two_periods_back_are_not_read_as_one():
    from datetime import date

    from ekko_mem.extract.entity_times import moment
    today = date(2026, 6, 15)  # a Monday, ISO week 25
    assert [moment(q, today, past=True) for q in ("上上周我在干嘛", "上上个月我吃了什么",
                                                    "大前年我在哪", "大前天", "上上周五")] == [
        "2026-W23", "2026-04", "2023", "2026-06-12", "2026-06-05"]
    assert [moment(q, today) for q in ("上周", "上个月", "前年", "后年", "下下周三")] == [
        "2026-W24", "2026-05", "2024", "2028", "2026-07-01"]
