"""MemoryService on real SQLite files: the design's 测试验收 items for structured memory."""
from __future__ import annotations

import sqlite3

import pytest

from ekko_mem import MemoryService
from ekko_mem.env import Env

COOK = ["生活技能", "做饭", "饮食偏好"]


def cilantro(**extra):
    node = {"scope": "user", "domain": "生活技能", "categoryPath": COOK, "type": "preference",
            "key": "avoid_ingredient", "valueJson": "香菜", "title": "用户不吃香菜",
            "content": "推荐菜谱时避免香菜。", "confidence": 0.99, "importance": 0.95,
            "tags": ["忌口", "菜谱推荐"], "entities": ["香菜"], "explicit": True}
    node.update(extra)
    return node


def flavor(**extra):
    node = {"scope": "user", "domain": "生活技能", "categoryPath": COOK, "type": "preference",
            "key": "flavor_profile", "valueJson": "少油少辣", "title": "用户偏好少油少辣",
            "content": "推荐菜谱时优先少油少辣。", "explicit": True}
    node.update(extra)
    return node


def at(ws, now, **kw):
    return MemoryService(ws, env=Env(environ={**__import__("os").environ, "EKKO_NOW": now}),
                         **kw)


def ids(result):
    return [n["id"] for n in result["exact"] + result["relevant"]]


def test_create_then_active_query_hits(service):
    created = service.propose_update("create", cilantro(), reason="用户明确要求记录长期饮食偏好",
                                     actor="agent")
    assert created["accepted"] is True and created["nodeId"].startswith("mem_")
    assert set(created) >= {"accepted", "nodeId", "reason"}
    found = service.retrieve({"categoryPathPrefix": ["生活技能", "做饭"], "types": ["preference"]})
    assert created["nodeId"] in ids(found)


def test_exact_key_value_lookup_finds_cooking_preference(service):
    nid = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    service.propose_update("create", cilantro(valueJson="葱", title="不吃葱", entities=["葱"]),
                           reason="r", actor="user")
    found = service.retrieve({"key": "avoid_ingredient", "valueJson": "香菜"})
    assert [n["id"] for n in found["exact"]] == [nid]


def test_multi_valued_key_keeps_both_and_single_valued_supersedes(service):
    a = service.propose_update("create", cilantro(), reason="r", actor="user")
    b = service.propose_update("create", cilantro(valueJson="葱", title="不吃葱"), reason="r",
                               actor="user")
    assert a["operation"] == b["operation"] == "created"
    f1 = service.propose_update("create", flavor(), reason="r", actor="user")
    f2 = service.propose_update("create", flavor(valueJson={"spicy": "high"}, title="爱吃辣"),
                                reason="r", actor="user")
    assert f2["operation"] == "superseded" and f2["supersededId"] == f1["nodeId"]
    active = service.retrieve({"key": "avoid_ingredient"})["exact"]
    assert {n["valueJson"] for n in active} == {"香菜", "葱"}


def test_synonym_keys_and_values_are_normalised(service):
    result = service.propose_update("create", cilantro(key="disliked_ingredient"), reason="r",
                                    actor="user")
    node = service.find_node(result["nodeId"])
    assert node["key"] == "avoid_ingredient"
    spicy = service.propose_update("create", flavor(key="taste"), reason="r", actor="user")
    assert service.find_node(spicy["nodeId"])["valueJson"] == {"oil": "low", "spicy": "low"}
    english = service.propose_update("create", flavor(valueJson="not too spicy, less oil",
                                                      scope="session"),
                                     reason="r", actor="user")
    assert service.find_node(english["nodeId"])["valueJson"] == {"spicy": "low", "oil": "low"}


def test_disallowed_key_rejected_for_a_person_demoted_for_an_agent(service):
    person = service.propose_update("create", cilantro(key="favourite_colour"), reason="r",
                                    actor="user")
    assert person["accepted"] is False and person["code"] == 4
    assert "allowed keys" in person["hint"]
    agent = service.propose_update("create", cilantro(key="favourite_colour"), reason="r",
                                   actor="agent")
    assert agent["accepted"] is True and agent["scope"] == "session"
    assert "demoted" in agent["notes"][0]


def test_supersede_keeps_old_out_of_default_results(service):
    old = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    new = service.propose_update("supersede", {
        "key": "limit_ingredient", "valueJson": {"ingredient": "香菜", "amount": "little"},
        "title": "用户可接受少量香菜", "content": "香菜现在可以接受一点，但不要太多。"},
        target_id=old, reason="用户更正", actor="user")
    assert new["accepted"] and new["supersededId"] == old
    default = service.retrieve({"categoryPathPrefix": COOK})
    assert new["nodeId"] in ids(default) and old not in ids(default)
    assert {"nodeId": old, "reason": "superseded"} in default["omitted"]
    wide = service.retrieve({"categoryPathPrefix": COOK, "includeSuperseded": True})
    assert old in ids(wide)
    shown = service.show(new["nodeId"])
    assert [n["id"] for n in shown["chain"]] == [old, new["nodeId"]]
    assert service.find_node(new["nodeId"])["supersedesId"] == old
    assert service.find_node(old)["status"] == "superseded"


def test_expired_nodes_not_returned_and_swept_with_audit(ws):
    early = at(ws, "2026-03-01T08:00:00Z")
    temp = early.propose_update("create", {
        "scope": "session", "domain": "生活技能", "categoryPath": COOK, "type": "constraint",
        "key": "flavor_profile", "valueJson": {"spicy": "low"}, "title": "今天胃不舒服，少辣",
        "expiresAt": "2026-03-01T23:59:59Z"}, reason="r", actor="user")
    assert temp["accepted"], temp
    assert temp["nodeId"] in ids(early.retrieve({"types": ["constraint"]}))
    later = at(ws, "2026-03-02T09:00:00Z")
    result = later.retrieve({"types": ["constraint"]})
    assert temp["nodeId"] not in ids(result)
    assert {"nodeId": temp["nodeId"], "reason": "expired"} in result["omitted"]
    assert temp["nodeId"] in ids(later.retrieve({"types": ["constraint"],
                                                 "includeExpired": True}))
    assert later.expire_due()["expiredIds"] == [temp["nodeId"]]
    assert later.find_node(temp["nodeId"])["status"] == "expired"
    kinds = [e["eventType"] for e in later.audit(node_id=temp["nodeId"])]
    assert kinds == ["expire", "create"]


def test_soft_delete_not_retrieved_but_audited(service):
    nid = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    out = service.forget({"key": "avoid_ingredient", "valueJson": "香菜", "scope": "user"},
                         reason="用户明确要求忘记该饮食偏好")
    assert out == {"deletedIds": [nid], "mode": "soft", "reason": "用户明确要求忘记该饮食偏好"}
    assert nid not in ids(service.retrieve({"key": "avoid_ingredient"}))
    assert service.find_node(nid)["status"] == "deleted"
    assert service.audit(node_id=nid)[0]["eventType"] == "delete"


def test_several_candidates_require_confirmation_and_change_nothing(service):
    a = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    b = service.propose_update("create", cilantro(valueJson="葱", title="不吃葱"), reason="r",
                               actor="user")["nodeId"]
    out = service.forget({"categoryPathPrefix": COOK, "scope": "user"}, reason="r")
    assert out["requiresConfirmation"] is True and out["deletedIds"] == []
    assert {c["id"] for c in out["candidates"]} == {a, b}
    assert all(service.find_node(i)["status"] == "active" for i in (a, b))
    done = service.forget({"categoryPathPrefix": COOK, "scope": "user"}, reason="r",
                          confirm=True)
    assert set(done["deletedIds"]) == {a, b}


def _db_bytes(path):
    data = b""
    for suffix in ("", "-wal", "-shm"):
        try:
            with open(f"{path}{suffix}", "rb") as handle:
                data += handle.read()
        except FileNotFoundError:
            pass
    return data


def test_hard_delete_cleans_node_fts_and_bytes(service, ws):
    secret = "独一无二的秘方 zanzibarquokka"
    nid = service.propose_update("create", {"scope": "workspace", "type": "recipe",
                                            "domain": "生活技能", "title": secret,
                                            "content": secret + " 的做法"},
                                 reason="r", actor="user")["nodeId"]
    service.propose_update("update", {"importance": 0.9}, target_id=nid, reason="r",
                           actor="user")
    assert ids(service.retrieve({"queryText": "zanzibarquokka"})) == [nid]
    asked = service.forget({"id": nid}, mode="hard", reason="privacy")
    assert asked["requiresConfirmation"] is True
    out = service.forget({"id": nid}, mode="hard", reason="privacy", confirm=True)
    assert out["deletedIds"] == [nid] and out["mode"] == "hard"
    service.close()
    db = ws / ".ekko" / "memory.db"
    raw = sqlite3.connect(db)
    assert raw.execute("select count(*) from memory_nodes where id = ?", (nid,)).fetchone()[0] == 0
    assert raw.execute("select count(*) from memory_nodes_fts where memory_nodes_fts match"
                       " 'zanzibarquokka'").fetchone()[0] == 0
    raw.close()
    blob = _db_bytes(db)
    for needle in ("zanzibarquokka", "独一无二", "秘方"):
        assert needle.encode() not in blob, needle
    # the event keeps ids only: how it was erased, and which messages it came from
    payload = MemoryService(ws).audit(node_id=nid)[0]["payload"]
    assert payload["before"] is None and payload["after"]["mode"] == "hard"
    assert set(payload["after"]) == {"mode", "sourceMessageIds"}


def test_hard_delete_with_purge_sources_removes_messages(service, ws):
    mid = service.log_message("记住 blorptastic 的配方", session="s")["id"]
    nid = service.propose_update("create", {"scope": "workspace", "type": "recipe",
                                            "title": "blorptastic recipe",
                                            "sourceMessageIds": [mid]},
                                 reason="r", actor="user")["nodeId"]
    out = service.forget({"sourceMessageId": mid}, mode="hard", confirm=True,
                         purge_sources=True, reason="erase")
    assert out["deletedIds"] == [nid]
    assert service.store.messages.get_message(mid) is None
    service.close()
    assert b"blorptastic" not in _db_bytes(ws / ".ekko" / "memory.db")


def test_failure_between_two_writes_leaves_no_half_write(service, monkeypatch):
    old = service.propose_update("create", flavor(), reason="r", actor="user")["nodeId"]
    store = service.user_store()

    def boom(node):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(store.nodes, "insert_node", boom)
    with pytest.raises(RuntimeError):
        service.propose_update("create", flavor(valueJson={"spicy": "high"}, title="爱吃辣"),
                               reason="r", actor="user")
    monkeypatch.undo()
    assert service.find_node(old)["status"] == "active"  # the supersede was rolled back
    assert len(service.audit(node_id=old)) == 1


def test_duplicates_are_refreshed_not_created(service):
    first = service.propose_update("create", cilantro(), reason="r", actor="user")
    again = service.propose_update("create", cilantro(tags=["新标签"]), reason="r",
                                   actor="user")
    assert again["operation"] == "refreshed" and again["nodeId"] == first["nodeId"]
    assert len(service.retrieve({"key": "avoid_ingredient"})["exact"]) == 1
    assert "新标签" in service.find_node(first["nodeId"])["tags"]


def test_scope_policy(service):
    no_intent = service.propose_update("create", cilantro(explicit=False), reason="r",
                                       actor="agent")
    assert no_intent["accepted"] is False and no_intent["requiresConfirmation"] is True
    assert no_intent["code"] == 3
    confirmed = service.propose_update("create", cilantro(explicit=False), reason="r",
                                       actor="agent", confirm=True)
    assert confirmed["accepted"] and confirmed["scope"] == "user"
    inferred = service.propose_update("create", flavor(explicit=False), reason="r",
                                      actor="extractor")
    assert inferred["accepted"] and inferred["scope"] == "session"
    for actor in ("user", "agent", "extractor"):
        glob = service.propose_update("create", cilantro(scope="global"), reason="r",
                                      actor=actor)
        assert glob["accepted"] is False and "global" in glob["reason"]
    temporary = service.propose_update("create", {
        "scope": "user", "type": "constraint", "domain": "生活技能", "categoryPath": COOK,
        "title": "今天胃不舒服", "content": "今天胃不舒服，少辣"}, reason="r", actor="agent",
        confirm=True)
    assert temporary["scope"] == "session"
    assert service.find_node(temporary["nodeId"]).get("expiresAt")


def test_project_constraints_default_to_workspace(service):
    out = service.propose_update("create", {"type": "constraint", "domain": "engineering",
                                            "title": "Never push to main directly"},
                                 reason="r", actor="user")
    assert out["scope"] == "workspace"
    keyed = service.propose_update("create", {"type": "fact", "domain": "工程", "key": "db",
                                              "valueJson": "SQLite"}
                                   | {"title": "数据库用 SQLite"}, reason="r", actor="agent")
    assert keyed["scope"] == "workspace"
    assert service.find_node(keyed["nodeId"])["key"] == "database"


def test_sensitive_data_needs_confirmation(service):
    out = service.propose_update("create", {"scope": "workspace", "type": "fact",
                                            "title": "staging key sk-abcdefghijklmnopqrstuvwx1234"},
                                 reason="r", actor="user")
    assert out["accepted"] is False and out["code"] == 3
    assert "sk-abcdefgh" not in out["reason"]
    ok = service.propose_update("create", {"scope": "workspace", "type": "fact",
                                           "title": "staging key sk-abcdefghijklmnopqrstuvwx1234"},
                                reason="r", actor="user", confirm=True)
    assert ok["accepted"]
    session = service.propose_update("create", {"scope": "session", "type": "fact",
                                                "title": "mail me at a.person@example.com"},
                                     reason="r", actor="user")
    assert session["accepted"]


def test_every_change_leaves_an_audit_row_and_undo_reverses(service):
    nid = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    service.propose_update("update", {"importance": 0.5}, target_id=nid, reason="less",
                           actor="user")
    service.propose_update("expire", target_id=nid, reason="done", actor="user")
    events = service.audit(node_id=nid)
    assert [e["eventType"] for e in events] == ["expire", "update", "create"]
    assert events[1]["payload"]["before"]["importance"] == 0.95
    undo = service.undo(events[0]["id"])
    assert undo["changedIds"] == [nid]
    assert service.find_node(nid)["status"] == "active"
    assert service.audit(node_id=nid)[0]["eventType"] == "undo"


def test_undo_a_supersede_restores_the_old_node(service):
    old = service.propose_update("create", flavor(), reason="r", actor="user")["nodeId"]
    new = service.propose_update("create", flavor(valueJson={"spicy": "high"}, title="辣"),
                                 reason="r", actor="user")["nodeId"]
    event = service.audit(node_id=new)[0]
    service.undo(event["id"])
    assert service.find_node(old)["status"] == "active"
    assert service.find_node(new)["status"] == "deleted"


def test_id_prefixes_resolve_like_git(service):
    nid = service.propose_update("create", cilantro(), reason="r", actor="user")["nodeId"]
    assert service.show(nid[:14])["node"]["id"] == nid
    from ekko_mem.errors import NotFound
    with pytest.raises(NotFound):
        service.show("mem_zzzz")


def test_sessions_do_not_see_each_others_session_memory(ws):
    a = MemoryService(ws, session="a")
    nid = a.propose_update("create", {"scope": "session", "type": "fact", "title": "scratch"},
                           reason="r", actor="user")["nodeId"]
    assert nid in ids(a.retrieve({"queryText": "scratch"}))
    b = MemoryService(ws, session="b")
    assert nid not in ids(b.retrieve({"queryText": "scratch"}))


def test_category_prefix_matches_whole_path_segments(service):
    made = {}
    for path in ("生活技能/做饭", "生活技能/做饭/菜谱", "生活技能/做饭-外卖", "生活技能/做饭菜",
                 "生活技能"):
        made[path] = service.propose_update("create", {"scope": "workspace", "type": "fact",
                                                       "categoryPath": path.split("/"),
                                                       "title": path}, actor="user")["nodeId"]
    found = service.retrieve({"categoryPathPrefix": ["生活技能", "做饭"],
                              "scopes": ["workspace"]})
    assert set(ids(found)) == {made["生活技能/做饭"], made["生活技能/做饭/菜谱"]}
