"""A replaced memory is replaced everywhere: a new version never keeps the old title or content
beside a new text, title, key or value (remember --supersedes, edit, propose_update)."""
from __future__ import annotations

import sys

COOK = "生活技能/做饭/饮食偏好"
ELM, OAK = "I live at 12 Elm Street", "I live at 88 Oak Avenue"


def written(result) -> dict:
    assert result.code == 0, result
    return result.jsonl()[0]


def shown(cli, node_id: str) -> dict:
    return cli("show", node_id, "--json").json()


def found(cli, *args) -> list[dict]:
    result = cli("query", *args, "--json").json()
    return result["exact"] + result["relevant"]


def avoid_cilantro(cli) -> str:
    return written(cli("remember", "--scope", "user", "--category", COOK, "--type",
                       "preference", "--key", "avoid_ingredient", "--value", "香菜", "--title",
                       "用户不吃香菜", "--content", "推荐菜谱时避免香菜。", "--json"))["nodeId"]


def title_editor(tmp_path, title: str) -> str:
    """An EDITOR that changes the node's title and nothing else."""
    script = tmp_path / "retitle.py"
    script.write_text("import json, sys\npath = sys.argv[1]\nnode = json.load(open(path))\n"
                      f"node['title'] = {title!r}\njson.dump(node, open(path, 'w'))\n")
    return f"{sys.executable} {script}"


def test_free_text_supersede_titles_the_new_version_from_the_text(cli, ws):
    old = written(cli("remember", ELM, "--json"))["nodeId"]
    new = written(cli("remember", "--supersedes", old, OAK, "--json"))
    assert new["supersededId"] == old
    node = shown(cli, new["nodeId"])
    assert (node["node"]["title"], node["node"]["content"]) == (OAK, OAK)
    assert [(v["id"], v["title"]) for v in node["chain"]] == [(old, ELM), (new["nodeId"], OAK)]
    human = cli("show", new["nodeId"]).out
    assert f"title         {OAK}" in human and f"active     {OAK}" in human
    assert [(n["id"], n["title"]) for n in found(cli, "Oak")] == [(new["nodeId"], OAK)]
    assert found(cli, "Elm") == []
    assert new["nodeId"] not in cli("query", "Elm").out
    # Only a query that asks for superseded versions finds the old words, on the old node.
    assert [(n["id"], n["status"]) for n in found(cli, "Elm", "--include-superseded")] == [
        (old, "superseded")]


def test_free_text_supersede_drops_the_request_as_a_fresh_remember_does(cli, ws):
    old = written(cli("remember", "记住：部署用 staging 端口 5433", "--json"))["nodeId"]
    new = written(cli("remember", "--supersedes", old, "记住：部署用 staging 端口 5434",
                      "--json"))["nodeId"]
    node = shown(cli, new)["node"]
    assert (node["title"], node["content"]) == ("部署用 staging 端口 5434",) * 2


def test_free_text_supersede_a_rule_understands_takes_its_key_value_and_words(cli, ws):
    old = avoid_cilantro(cli)
    new = written(cli("remember", "--supersedes", old, "香菜现在可以接受一点", "--json"))
    node = shown(cli, new["nodeId"])["node"]
    assert node["key"] == "limit_ingredient"
    assert node["valueJson"] == {"ingredient": "香菜", "amount": "little"}
    assert node["title"] == "用户可接受少量香菜" and "避免" not in node["content"]
    assert node["scope"] == "user"


def test_new_key_value_and_title_without_content_never_keep_the_old_rule(cli, ws):
    old = avoid_cilantro(cli)
    new = written(cli("remember", "--supersedes", old, "--key", "limit_ingredient", "--value",
                      '{"ingredient": "香菜", "amount": "little"}', "--title", "用户可接受少量香菜",
                      "--json"))["nodeId"]
    node = shown(cli, new)["node"]
    assert (node["title"], node["content"]) == ("用户可接受少量香菜", "用户可接受少量香菜")
    assert node["categoryPath"] == COOK.split("/")  # untouched fields still carry over
    text = cli("context", "推荐一个菜谱").out
    assert "用户可接受少量香菜" in text and "避免香菜" not in text
    hits = found(cli, "香菜")
    assert new in [n["id"] for n in hits]
    assert "推荐菜谱时避免香菜。" not in [n["content"] for n in hits]


def test_a_new_value_alone_is_said_by_its_key_and_value(cli, ws):
    old = avoid_cilantro(cli)
    new = written(cli("remember", "--supersedes", old, "--value", "葱", "--json"))["nodeId"]
    node = shown(cli, new)["node"]
    assert node["valueJson"] == "葱"
    assert "香菜" not in node["title"] + node["content"]
    assert node["title"] == "avoid_ingredient: 葱"


def test_new_content_alone_gets_its_own_title(cli, ws):
    old = avoid_cilantro(cli)
    new = written(cli("remember", "--supersedes", old, "--content", "推荐菜谱时完全不放香菜。",
                      "--json"))["nodeId"]
    node = shown(cli, new)["node"]
    assert (node["title"], node["content"]) == ("推荐菜谱时完全不放香菜。",) * 2


def test_an_edit_of_the_title_only_updates_the_content(cli, ws, tmp_path):
    old = written(cli("remember", ELM, "--json"))["nodeId"]
    edited = cli("edit", old, "--json", env={"EDITOR": title_editor(tmp_path, OAK)})
    assert edited.code == 0, edited
    assert edited.json()["operation"] == "updated"
    node = shown(cli, old)["node"]
    assert (node["title"], node["content"]) == (OAK, OAK)
    assert found(cli, "Elm") == []


def test_propose_update_supersede_and_update_restate_the_text(service):
    made = service.propose_update("create", {"type": "fact", "title": ELM, "content": ELM},
                                  actor="user")
    new = service.propose_update("supersede", {"title": OAK}, target_id=made["nodeId"],
                                 actor="user")
    assert new["accepted"], new
    node = service.find_node(new["nodeId"])
    assert (node["title"], node["content"]) == (OAK, OAK)
    retold = service.propose_update("update", {"content": "I live at 7 Pine Road"},
                                    target_id=new["nodeId"], actor="user")
    assert retold["operation"] == "updated", retold
    node = service.find_node(new["nodeId"])
    assert (node["title"], node["content"]) == ("I live at 7 Pine Road",) * 2
    # An update that says nothing about the words keeps them.
    service.propose_update("update", {"importance": 0.9}, target_id=new["nodeId"], actor="user")
    assert service.find_node(new["nodeId"])["content"] == "I live at 7 Pine Road"


def test_propose_update_with_a_new_value_words_it_as_the_rules_do(service):
    made = service.propose_update("create", {
        "scope": "user", "categoryPath": COOK.split("/"), "type": "preference",
        "key": "flavor_profile", "valueJson": {"spicy": "low"}, "title": "用户偏好少辣",
        "content": "推荐菜谱时优先少辣。"}, actor="user")
    new = service.propose_update("update", {"valueJson": {"spicy": "none"}},
                                 target_id=made["nodeId"], actor="user")
    assert new["operation"] == "superseded", new
    node = service.find_node(new["nodeId"])
    assert node["valueJson"] == {"spicy": "none"}
    assert (node["title"], node["content"]) == ("用户偏好不吃辣", "推荐菜谱时优先不吃辣。")


def test_mcp_update_tool_restates_the_text(service):
    from ekko_mem.mcp_tools import MemoryTools
    made = service.propose_update("create", {"type": "fact", "title": ELM, "content": ELM},
                                  actor="user")
    answer = MemoryTools(service).propose({"operation": "supersede",
                                           "targetId": made["nodeId"],
                                           "node": {"content": OAK}, "reason": "moved"},
                                          confirm=True)
    assert answer["accepted"], answer
    node = service.find_node(answer["nodeId"])
    assert (node["title"], node["content"]) == (OAK, OAK)
