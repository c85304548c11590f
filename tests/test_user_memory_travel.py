"""User memory travels: remembered in one workspace, it is read, checked, superseded, edited,
shown and forgotten from another workspace and from outside any workspace, with its source
message named by the workspace it was logged in. The installed command, in two workspaces
that share one EKKO_HOME."""
from __future__ import annotations

import sys

import pytest

from ekko_mem.service.drafts import TITLE_MAX, title_from


@pytest.fixture
def places(tmp_path, cli_proc):
    """Workspaces a and b (their ids), and a folder in no workspace; one user home."""
    found = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        made = cli_proc("init", "--json", cwd=tmp_path / name)
        assert made.code == 0, made
        found[name] = (tmp_path / name, made.json()["workspaceId"])
    (tmp_path / "out").mkdir()
    found["out"] = (tmp_path / "out", None)
    return found


def remembered(result) -> dict:
    assert result.code == 0, result
    return result.json()


def shown_node(cli_proc, cwd, node_id) -> dict:
    shown = cli_proc("show", node_id, "--json", cwd=cwd)
    assert shown.code == 0, shown
    return shown.json()


def editor(tmp_path, content: str) -> str:
    """An EDITOR that sets the node's content."""
    script = tmp_path / "edit.py"
    script.write_text("import json, sys\npath = sys.argv[1]\nnode = json.load(open(path))\n"
                      f"node['content'] = {content!r}\njson.dump(node, open(path, 'w'))\n")
    return f"{sys.executable} {script}"


def test_a_preference_remembered_in_one_workspace_works_in_another(cli_proc, places, tmp_path):
    (a, ws_a), (b, ws_b) = places["a"], places["b"]
    said = remembered(cli_proc("remember", "我不吃葱", "--json", cwd=a))
    assert said["scope"] == "user"
    node = said["nodeId"]
    shown_in_a = shown_node(cli_proc, a, node)
    assert shown_in_a["node"]["sourceMessageIds"] == [f"{ws_a}:{said['sourceMessageId']}"]
    assert [m["content"] for m in shown_in_a["sources"]] == ["我不吃葱"]

    assert "葱" in cli_proc("context", "推荐一个晚饭菜谱", cwd=b).out
    assert node in [n["id"] for n in cli_proc("query", "葱", "--json", cwd=b).json()["exact"]
                    + cli_proc("query", "葱", "--json", cwd=b).json()["relevant"]]
    doctor = cli_proc("doctor", "--json", cwd=b)
    assert doctor.code == 0, doctor.out
    checks = {(c["db"], c["check"]): c for c in doctor.json()["checks"]}
    assert checks[("user", "source messages")]["ok"]
    assert ws_a in checks[("user", "external sources")]["detail"]
    repaired = cli_proc("doctor", "--repair", "--json", cwd=b)
    assert repaired.code == 0 and not any(c["fixed"] for c in repaired.json()["checks"])
    shown_in_b = shown_node(cli_proc, b, node)
    assert shown_in_b["sources"] == []
    assert shown_in_b["externalSources"] == [{
        "ref": f"{ws_a}:{said['sourceMessageId']}", "workspaceId": ws_a,
        "messageId": said["sourceMessageId"], "root": str(a)}]

    # edit, the MCP update tool and supersede, all from b, keep a's reference
    edited = cli_proc("edit", node, "--json", cwd=b,
                      env={"EDITOR": editor(tmp_path, "推荐菜谱时不放葱。")})
    assert edited.code == 0, edited
    assert edited.json()["operation"] == "updated"
    from ekko_mem import MemoryService
    from ekko_mem.mcp_tools import MemoryTools
    with MemoryService(b) as svc:
        answer = MemoryTools(svc).propose({"operation": "update", "targetId": node,
                                           "node": {"importance": 0.9},
                                           "reason": "用户强调过"})
    assert answer["accepted"], answer
    after = shown_node(cli_proc, b, node)["node"]
    assert after["content"] == "推荐菜谱时不放葱。" and after["importance"] == 0.9
    assert after["sourceMessageIds"] == shown_in_a["node"]["sourceMessageIds"]
    newer = remembered(cli_proc("remember", "--supersedes", node, "我不吃葱，也不吃蒜",
                                "--json", cwd=b))
    assert newer["supersededId"] == node
    latest = shown_node(cli_proc, a, newer["nodeId"])
    assert latest["node"]["sourceMessageIds"] == [f"{ws_b}:{newer['sourceMessageId']}"]
    assert latest["externalSources"][0]["root"] == str(b)
    assert cli_proc("doctor", cwd=a).code == 0
    assert cli_proc("doctor", cwd=b).code == 0


def test_show_and_forget_a_user_memory_outside_any_workspace(cli_proc, places):
    a, out = places["a"][0], places["out"][0]
    node = remembered(cli_proc("remember", "我不吃葱", "--json", cwd=a))["nodeId"]
    shown = cli_proc("show", node, cwd=out)
    assert shown.code == 0, shown
    assert "source messages logged elsewhere:" in shown.out and str(a) in shown.out
    message = shown_node(cli_proc, out, node)["node"]["sourceMessageIds"][0]
    elsewhere = cli_proc("show", message, cwd=out)
    assert elsewhere.code == 5
    assert elsewhere.err == (f"ekko-mem: {message} is logged in another workspace ({a}); run"
                             f" 'ekko-mem show {message.split(':')[1]}' to read it there\n")
    assert cli_proc("show", message, "--json", cwd=a).json()["message"]["content"] == "我不吃葱"
    assert cli_proc("forget", node, cwd=out).code == 0
    assert shown_node(cli_proc, out, node)["node"]["status"] == "deleted"


def test_a_workspace_fact_outside_any_workspace_is_refused_with_nothing_written(cli_proc,
                                                                                places,
                                                                                tmp_path):
    out = places["out"][0]
    refused = cli_proc("remember", "--scope", "workspace", "--title", "we deploy on fridays",
                       cwd=out)
    assert refused.code == 6
    assert refused.err.startswith(f"ekko-mem: no workspace memory found in {out}")
    assert not (out / ".ekko").exists()
    kept = remembered(cli_proc("remember", "--scope", "user", "--title", "no scallions",
                               "--json", cwd=out))
    assert shown_node(cli_proc, out, kept["nodeId"])["node"]["title"] == "no scallions"


def test_free_text_outside_any_workspace_is_logged_in_the_user_log(cli_proc, places, tmp_path):
    (a, _), out = places["a"], places["out"][0]
    said = remembered(cli_proc("remember", "我不吃葱", "--json", cwd=out))
    assert said["scope"] == "user"
    node = shown_node(cli_proc, out, said["nodeId"])
    # a plain id: the message is in the user db's own log, readable from anywhere
    assert node["node"]["sourceMessageIds"] == [said["sourceMessageId"]]
    assert [m["content"] for m in node["sources"]] == ["我不吃葱"]
    assert shown_node(cli_proc, a, said["nodeId"])["sources"][0]["content"] == "我不吃葱"
    assert cli_proc("doctor", "--json", cwd=a).code == 0
    assert "葱" in cli_proc("context", "推荐一个晚饭菜谱", cwd=a).out
    assert not (out / ".ekko").exists()

    # what only a workspace can hold is still refused there, and its text is not logged
    refused = cli_proc("remember", "We use PostgreSQL 16 for this project", cwd=out)
    assert refused.code == 6, refused
    assert refused.err.startswith(f"ekko-mem: no workspace memory found in {out}")
    for stored in (tmp_path / "home").glob("memory.db*"):
        assert b"PostgreSQL" not in stored.read_bytes(), stored


def test_a_hard_forget_purges_the_source_where_it_lives_and_reports_what_it_cannot_reach(
        cli_proc, places):
    (a, ws_a), (b, _), (out, _) = places["a"], places["b"], places["out"]
    first = remembered(cli_proc("remember", "记住：我对花生过敏", "--json", cwd=a))
    second = remembered(cli_proc("remember", "我不吃香菜", "--json", cwd=a))
    here = cli_proc("forget", first["nodeId"], "--hard", "--purge-sources", "--yes", "--json",
                    cwd=a)
    assert here.code == 0, here
    assert here.json()["purgedMessageIds"] == [first["sourceMessageId"]]
    assert not [key for key in here.json() if key.startswith("_")]
    (a / ".ekko").chmod(0o777)  # a cannot be opened safely from elsewhere
    try:
        stuck = cli_proc("forget", second["nodeId"], "--hard", "--purge-sources", "--yes",
                         "--json", cwd=b)
    finally:
        (a / ".ekko").chmod(0o700)
    assert stuck.code == 6
    ref = f"{ws_a}:{second['sourceMessageId']}"
    assert stuck.json()["pending"] == [{"messageId": ref, "nodeId": second["nodeId"],
                                        "reason": stuck.json()["pending"][0]["reason"]}]
    assert str(a) in stuck.err
    done = cli_proc("forget", second["nodeId"], "--hard", "--purge-sources", "--yes", cwd=out)
    assert done.code == 0, done
    history = cli_proc("history", "--json", cwd=a)
    assert second["sourceMessageId"] not in history.out and first["sourceMessageId"] not in \
        history.out


def test_a_reference_into_another_workspace_is_not_taken_on_an_agents_word(cli_proc, places):
    (a, ws_a), (b, _) = places["a"], places["b"]
    logged = cli_proc("log", "我喜欢清淡的菜", cwd=a).out.strip()
    invented = cli_proc("remember", "--scope", "user", "--title", "likes mild food",
                        "--source", f"{ws_a}:{logged}", cwd=b)
    assert invented.code == 4
    assert invented.err.startswith(f"ekko-mem: source message {ws_a}:{logged} is in another"
                                   " workspace's log")
    plain = cli_proc("remember", "--scope", "workspace", "--title", "mild food",
                     "--source", f"{ws_a}:{logged}", "--json", cwd=a)
    assert plain.code == 0, plain
    assert shown_node(cli_proc, a, plain.json()["nodeId"])["node"]["sourceMessageIds"] == [
        logged]


def test_references_survive_export_and_import(cli_proc, places, tmp_path):
    (a, ws_a), (b, _) = places["a"], places["b"]
    said = remembered(cli_proc("remember", "我不吃葱", "--json", cwd=a))
    saved = tmp_path / "memory.jsonl"
    assert cli_proc("export", "--output", saved, cwd=a).code == 0
    elsewhere = {"EKKO_HOME": tmp_path / "home2"}  # another machine: a is not known there
    assert cli_proc("import", saved, "--yes", cwd=b, env=elsewhere).code == 0
    shown = cli_proc("show", said["nodeId"], "--json", cwd=b, env=elsewhere).json()
    ref = f"{ws_a}:{said['sourceMessageId']}"
    assert shown["node"]["sourceMessageIds"] == [ref]
    assert shown["externalSources"] == [{"ref": ref, "workspaceId": ws_a,
                                         "messageId": said["sourceMessageId"], "root": None}]
    assert cli_proc("doctor", cwd=b, env=elsewhere).code == 0


@pytest.mark.parametrize("content, title", [
    ("word " * 40, ("word " * 24).strip() + "…"),
    ("a sentence that runs " * 8, ("a sentence that runs " * 5).strip() + " a sentence…"),
    ("用户" * 100, "用户" * 59 + "用…"),
    ("a" * 200, "a" * (TITLE_MAX - 1) + "…"),
    ("short and whole", "short and whole"),
])
def test_a_title_cut_from_the_content_ends_on_a_word_or_character(content, title):
    assert title_from(content) == title
    assert len(title_from(content)) <= TITLE_MAX


def test_a_long_remembered_text_gets_a_bounded_title(cli_proc, places):
    a = places["a"][0]
    text = ("The staging database is refreshed from production every Sunday night, so any"
            " schema change must be applied to both environments before Friday evening.")
    made = remembered(cli_proc("remember", "--scope", "workspace", "--content", text,
                               "--json", cwd=a))
    title = shown_node(cli_proc, a, made["nodeId"])["node"]["title"]
    assert title == ("The staging database is refreshed from production every Sunday night,"
                     " so any schema change must be applied to both…")
