"""remember, query, forget, audit, show, edit through the command's entry point."""
from __future__ import annotations

import sys

import pytest

COOK = "生活技能/做饭/饮食偏好"


def remember_cilantro(cli, *extra):
    return cli("remember", "--scope", "user", "--category", COOK, "--type", "preference",
               "--key", "avoid_ingredient", "--value", "香菜", "--title", "用户不吃香菜",
               "--content", "推荐菜谱时避免香菜。", "--tag", "忌口", "--entity", "香菜",
               "--json", *extra)


def test_remember_with_flags_returns_the_design_shape(cli, ws):
    out = remember_cilantro(cli)
    assert out.code == 0, out
    (result,) = out.jsonl()
    assert result["accepted"] is True and result["nodeId"].startswith("mem_")
    again = remember_cilantro(cli)
    assert again.jsonl()[0]["operation"] == "refreshed"
    found = cli("query", "--key", "avoid_ingredient", "--value", "香菜", "--json").json()
    assert [n["id"] for n in found["exact"]] == [result["nodeId"]]
    assert found["exact"][0]["categoryPath"] == COOK.split("/")


def test_remember_exit_codes(cli, ws):
    bad_key = cli("remember", "--category", COOK, "--type", "preference", "--key", "colour",
                  "--value", "red", "--title", "x")
    assert bad_key.code == 4 and bad_key.err.startswith("ekko-mem: key 'colour' is not allowed")
    bad_type = cli("remember", "x", "--type", "opinion")
    assert bad_type.code == 2 and "use one of: preference, fact" in bad_type.err
    glob = cli("remember", "x", "--scope", "global", "--title", "t", "--json")
    assert glob.code == 4 and glob.jsonl()[0]["accepted"] is False
    secret = cli("remember", "--title", "prod password: hunter2hunter2", "--scope", "workspace")
    assert secret.code == 3 and "hunter2" not in secret.err
    bad_conf = cli("remember", "--title", "x", "--confidence", "3")
    assert bad_conf.code == 2
    assert all(n["scope"] == "global" for n in cli("query", "--json").json()["exact"])


def test_query_tables_and_omitted(cli, ws):
    first = remember_cilantro(cli).jsonl()[0]["nodeId"]
    newer = cli("remember", "--supersedes", first, "--key", "limit_ingredient", "--value",
                '{"ingredient": "香菜", "amount": "little"}', "--title", "用户可接受少量香菜",
                "--json").jsonl()[0]
    assert newer["supersededId"] == first
    result = cli("query", "香菜", "--json").json()
    assert [n["id"] for n in result["relevant"] if not n.get("weak")] == [newer["nodeId"]]
    assert {"nodeId": first, "reason": "superseded"} in result["omitted"]
    plain = cli("query", "香菜")
    assert newer["nodeId"] in plain.out and plain.code == 0


def test_forget_flow_soft_confirm_hard(cli, ws):
    a = remember_cilantro(cli).jsonl()[0]["nodeId"]
    b = cli("remember", "--scope", "user", "--category", COOK, "--type", "preference",
            "--key", "avoid_ingredient", "--value", "葱", "--title", "不吃葱",
            "--json").jsonl()[0]["nodeId"]
    many = cli("forget", "--category", COOK, "--json")
    assert many.code == 3 and many.json()["requiresConfirmation"] is True
    assert {c["id"] for c in many.json()["candidates"]} == {a, b}
    one = cli("forget", "--key", "avoid_ingredient", "--value", "葱", "--json")
    assert one.code == 0 and one.json()["deletedIds"] == [b]
    hard = cli("forget", a, "--hard")
    assert hard.code == 3
    gone = cli("forget", a, "--hard", "--yes", "--json")
    assert gone.code == 0 and gone.json()["mode"] == "hard"
    assert cli("show", a).code == 5
    nothing = cli("forget", "--key", "avoid_ingredient", "--value", "蒜")
    assert nothing.code == 5 and nothing.err.startswith("ekko-mem: no memory matches")


def test_audit_lists_and_undo(cli, ws):
    nid = remember_cilantro(cli).jsonl()[0]["nodeId"]
    cli("forget", nid)
    events = cli("audit", "--json").jsonl()
    assert [e["eventType"] for e in events][:2] == ["delete", "create"]
    undo = cli("audit", "undo", events[0]["id"][:16], "--json")
    assert undo.code == 0, undo
    assert cli("query", "--key", "avoid_ingredient", "--json").json()["exact"][0]["id"] == nid
    assert cli("audit", "--node", nid, "--json").jsonl()[0]["eventType"] == "undo"


def test_undo_never_makes_a_second_active_value_of_a_single_valued_key(cli, ws):
    first = cli("remember", "我们项目用 pnpm 管理依赖", "--json").json()["nodeId"]
    assert cli("forget", first, "--yes", "-q").code == 0
    second = cli("remember", "我们项目用 yarn 管理依赖", "--json").json()["nodeId"]
    deleted = cli("audit", "--node", first, "--json").jsonl()[0]
    before = cli("audit", "--json", "-n", "100").out
    refused = cli("audit", "undo", deleted["id"])
    assert refused.code == 4, refused
    assert refused.err == (f"ekko-mem: undoing {deleted['id']} would make a second active value"
                           f" of the single-valued key 'package_manager' ({second} holds it);"
                           f" forget {second} first, then undo again\n")
    assert cli("audit", "--json", "-n", "100").out == before
    active = cli("query", "--key", "package_manager", "--json").json()["exact"]
    assert [n["id"] for n in active] == [second]
    assert cli("forget", second, "--yes", "-q").code == 0
    assert cli("audit", "undo", deleted["id"], "-q").code == 0
    active = cli("query", "--key", "package_manager", "--json").json()["exact"]
    assert [n["id"] for n in active] == [first]


def test_show_explains_why(cli, ws):
    out = cli("log", "记住，我以后做饭不要香菜。", "-s", "chat")
    mid = out.out.strip()
    nid = remember_cilantro(cli, "--source", mid).jsonl()[0]["nodeId"]
    shown = cli("show", nid, "--json").json()
    assert shown["sources"][0]["id"] == mid
    assert shown["events"][0]["eventType"] == "create"
    text = cli("show", nid[:12])
    assert "source messages:" in text.out and "记住" in text.out
    msg = cli("show", mid, "--json").json()
    assert msg["kind"] == "message" and msg["nodes"][0]["id"] == nid


def _editor(tmp_path, body: str):
    script = tmp_path / "fake_editor.py"
    script.write_text("import json, sys\npath = sys.argv[1]\n" + body)
    return f"{sys.executable} {script}"


def test_edit_validates_and_writes_an_update(cli, ws, tmp_path):
    nid = remember_cilantro(cli).jsonl()[0]["nodeId"]
    editor = _editor(tmp_path, "n = json.load(open(path))\nn['importance'] = 0.5\n"
                               "json.dump(n, open(path, 'w'))\n")
    out = cli("edit", nid, "--json", env={"EDITOR": editor})
    assert out.code == 0 and out.jsonl()[0]["operation"] == "updated"
    assert cli("show", nid, "--json").json()["node"]["importance"] == 0.5
    broken = _editor(tmp_path, "open(path, 'w').write('{not json')\n")
    bad = cli("edit", nid, env={"EDITOR": broken})
    assert bad.code == 4 and "not valid JSON" in bad.err
    invalid = _editor(tmp_path, "n = json.load(open(path))\nn['key'] = 'colour'\n"
                                "json.dump(n, open(path, 'w'))\n")
    refused = cli("edit", nid, env={"EDITOR": invalid})
    assert refused.code == 4 and "not allowed" in refused.err
    assert cli("show", nid, "--json").json()["node"]["key"] == "avoid_ingredient"
    changed = _editor(tmp_path, "n = json.load(open(path))\nn['valueJson'] = '葱'\n"
                                "json.dump(n, open(path, 'w'))\n")
    sup = cli("edit", nid, "--json", env={"EDITOR": changed}).jsonl()[0]
    assert sup["operation"] == "superseded" and sup["supersededId"] == nid


def test_remember_from_stdin(cli, ws):
    out = cli("remember", "--title", "deploys go through staging first", "--type", "constraint",
              "--json", input="")
    assert out.code == 0, out
    assert out.jsonl()[0]["scope"] == "workspace"


def test_key_and_value_alone_make_a_memory(cli, ws):
    out = cli("remember", "--scope", "user", "--category", COOK, "--key", "avoid_ingredient",
              "--value", "蒜", "--json")
    assert out.code == 0, out
    node = cli("show", out.jsonl()[0]["nodeId"], "--json").json()["node"]
    assert node["type"] == "preference" and node["title"] == "avoid_ingredient: 蒜"


def test_remember_reads_piped_text_when_given_nothing_else(cli, ws):
    out = cli("remember", "--json", input="以后做饭别给我推荐香菜\n")
    assert out.code == 0, out
    assert [r["scope"] for r in out.jsonl()] == ["user"]
    assert cli("query", "--key", "avoid_ingredient", "--json").json()["exact"][0][
        "valueJson"] == "香菜"


def test_chinese_names_of_built_in_keys_are_the_keys(cli, ws):
    out = cli("remember", "--key", "忌口", "--value", "香菜", "--type", "preference",
              "--category", "生活技能/做饭", "--scope", "user", "--yes", "--json")
    assert out.code == 0, out
    node = cli("show", out.jsonl()[0]["nodeId"], "--json").json()["node"]
    assert (node["key"], node["valueJson"]) == ("avoid_ingredient", "香菜")


@pytest.mark.parametrize("key, value, where", [
    ("test_command", "pytest -q", ("engineering", ["engineering"], "fact")),
    ("测试命令", "pytest -q", ("工程", ["工程"], "fact")),
    ("avoid_ingredient", "葱", ("生活技能", ["生活技能", "做饭"], "preference")),
])
def test_a_built_in_key_without_a_category_goes_where_it_belongs(cli, ws, key, value, where):
    out = cli("remember", "--key", key, "--value", value, "--scope", "workspace", "--yes",
              "--json")
    assert out.code == 0, out
    node = cli("show", out.jsonl()[0]["nodeId"], "--json").json()["node"]
    assert (node["domain"], node["categoryPath"], node["type"]) == where


def test_a_refused_key_names_where_it_belongs_or_the_nearest_allowed_key(cli, ws):
    elsewhere = cli("remember", "--type", "fact", "--key", "test_command", "--value", "pytest",
                    "--domain", "general")
    assert elsewhere.code == 4
    assert "'test_command' belongs to engineering (fact): give that category" in elsewhere.err
    typo = cli("remember", "--key", "avoid_ingrediant", "--value", "葱", "--type", "preference",
               "--category", "生活技能/做饭")
    assert typo.code == 4 and "did you mean 'avoid_ingredient'?" in typo.err


@pytest.mark.parametrize("said, kept", [
    ("Remember that the staging server runs on port 8443", "the staging server runs on port 8443"),
    ("Please keep in mind that prod deploys need two approvals.", "prod deploys need two approvals"),
    ("Don't forget: the VPN needs 2FA", "the VPN needs 2FA"),
    ("以后都帮我记录：周五下午不开会", "周五下午不开会"),
    ("记住，周报周一交", "周报周一交"),
    ("Notes are kept in the wiki", "Notes are kept in the wiki"),  # a word, not a request
])
def test_the_request_to_remember_is_not_part_of_the_memory(cli, ws, said, kept):
    out = cli("remember", said, "--json")
    assert out.code == 0, out
    node = cli("show", out.jsonl()[0]["nodeId"], "--json").json()["node"]
    assert (node["title"], node["content"]) == (kept, kept)
