"""The entity graph: entities and edges stored with the memory whose text gave them, retired
when it is replaced or forgotten, gone with it when it is erased."""
from __future__ import annotations

from ekko_mem.store import open_store


def test_the_store_keeps_entities_by_name_and_edges_either_way_round(ws):
    store = open_store(str(ws / ".ekko" / "memory.db"))
    graph = store.graph
    with store.db.atomic():
        anna = graph.entity_id("Anna", "person", ["my sister Anna"], "2026-01-01", "ent_1")
        again = graph.entity_id("Anna", "person", ["Annie"], "2026-01-02", "ent_2")
        graph.add_edge({"id": "edg_1", "subject": "user", "relation": "sibling",
                        "objectId": anna, "value": "sister", "recordedAt": "2026-01-01",
                        "sourceNodeId": "mem_1"})
        graph.add_edge({"id": "edg_2", "subject": anna, "relation": "works_as",
                        "value": "nurse", "validFrom": "2019", "recordedAt": "2026-01-01",
                        "sourceNodeId": "mem_2"})
    assert again == anna == "ent_1"
    assert graph.find_entity("annie")["name"] == "Anna"
    assert graph.find_entity("anna")["aliases"] == ["my sister Anna", "Annie"]
    assert [(e["name"], e["said"]) for e in graph.named(["annie", "Bob"])] == [
        ("Anna", ["Annie"])]
    edges = graph.edges_of(anna, 10)
    assert [(e["subjectName"], e["relation"], e["objectName"], e["value"], e["validFrom"])
            for e in edges] == [("user", "sibling", "Anna", "sister", None),
                                ("Anna", "works_as", None, "nurse", "2019")]
    with store.db.atomic():
        assert graph.retire_from(["mem_2"], "2026-02-01") == 1
    assert [e["retiredAt"] for e in graph.edges_of(anna, 10)] == [None, "2026-02-01"]
    with store.db.atomic():
        assert graph.erase_from(["mem_1"]) == 1
    assert [e["id"] for e in graph.edges_of(anna, 10)] == ["edg_2"]
    with store.db.atomic():
        assert graph.erase_from(["mem_2"]) == 1
    assert graph.edges_of(anna, 10) == []  # the erasure settles whether Anna goes too
    store.close()


def graph_of(ws, name):
    """The entity called `name` and its edges, as the db holds them once `graph` has read
    what was written since it last read."""
    from ekko_mem import MemoryService
    with MemoryService(ws) as svc:
        svc.graph.catch_up(svc.store)
    store = open_store(str(ws / ".ekko" / "memory.db"))
    try:
        entity = store.graph.find_entity(name)
        return entity, store.graph.edges_of(entity["id"], 50) if entity else []
    finally:
        store.close()


def remembered(cli, *args):
    result = cli("remember", "--scope", "workspace", "--json", *args)
    assert result.code == 0, result
    return result.json()["nodeId"]


def test_a_remembered_statement_writes_its_edges_with_its_node(cli, ws):
    node = remembered(cli, "我同事小王是前端，他生日是3月5日")
    entity, edges = graph_of(ws, "小王")
    assert entity["kind"] == "person"
    assert [(e["subject"], e["relation"], e["value"]) for e in edges] == [
        ("user", "colleague", "colleague"), (entity["id"], "works_as", "前端"),
        (entity["id"], "birthday", "--03-05")]
    assert {e["sourceNodeId"] for e in edges} == {node}
    assert all(e["retiredAt"] is None for e in edges)


def test_superseding_or_forgetting_retires_the_edges(cli, ws):
    old = remembered(cli, "My sister Anna is a nurse")
    new = remembered(cli, "--supersedes", old, "My sister Anna is a doctor")
    _, edges = graph_of(ws, "Anna")
    retired = {e["value"] for e in edges if e["retiredAt"]}
    live = {e["value"] for e in edges if e["retiredAt"] is None}
    assert retired == {"sister", "nurse"} and live == {"sister", "doctor"}
    assert cli("forget", new, "--yes").code == 0
    _, edges = graph_of(ws, "Anna")
    assert edges and all(e["retiredAt"] for e in edges)


def test_a_hard_delete_leaves_no_byte_of_the_entity(cli, ws):
    from test_erasure import files_holding
    name = "Zebulonia"
    node = remembered(cli, f"My sister {name} is a nurse")
    folder = ws / ".ekko"
    assert graph_of(ws, name)[0] is not None
    assert cli("forget", node, "--hard", "--purge-sources", "--yes").code == 0
    assert graph_of(ws, name) == (None, [])
    assert files_holding(folder, name) == []


def test_graph_shows_the_entity_and_its_edges_with_both_times(cli, ws):
    remembered(cli, "My sister Anna is a nurse")
    remembered(cli, "Anna's husband Tom is a pilot")
    out = cli("graph", "anna", "--json").json()  # case aside
    assert out["entity"] == {"name": "Anna", "kind": "person", "aliases": ["My sister Anna"]}
    assert [(e["subject"], e["relation"], e["object"], e["value"]) for e in out["edges"]] == [
        ("user", "sibling", "Anna", "sister"), ("Anna", "works_as", None, "nurse"),
        ("Anna", "spouse", "Tom", "husband")]
    assert set(out["edges"][0]) >= {"validFrom", "validTo", "recordedAt", "retiredAt"}
    assert out["truncated"] is False
    deeper = cli("graph", "Anna", "--depth", "2", "--json").json()["edges"]
    assert ("Tom", "works_as", "pilot") in [(e["subject"], e["relation"], e["value"])
                                            for e in deeper]
    text = cli("graph", "Anna")
    assert text.code == 0
    assert text.out.splitlines()[0] == "Anna (person), also My sister Anna"
    assert "Anna\tworks_as\tnurse\t" in text.out


def test_an_unknown_name_is_one_line_and_exit_5(cli, ws):
    result = cli("graph", "Nobody")
    assert result.code == 5 and result.out == ""
    assert result.err == ("ekko-mem: no entity named 'Nobody'; names come from remembered"
                          " statements; check the spelling\n")


def test_as_of_keeps_what_held_then(cli, ws):
    first = cli("remember", "--scope", "workspace", "--json", "My sister Anna is a nurse",
                env={"EKKO_NOW": "2026-01-10T12:00:00Z"}).json()["nodeId"]
    assert cli("remember", "--scope", "workspace", "--supersedes", first, "--json",
               "My sister Anna is a doctor", env={"EKKO_NOW": "2026-03-10T12:00:00Z"}).code == 0

    def values(as_of):
        out = cli("graph", "Anna", "--as-of", as_of, "--json",
                  env={"EKKO_NOW": "2026-04-01T12:00:00Z"}).json()
        return sorted(e["value"] for e in out["edges"])
    assert values("2026-01-01") == []
    assert values("2026-02-01") == ["nurse", "sister"]
    assert values("2026-03-10") == ["doctor", "sister"]
    everything = cli("graph", "Anna", "--json").json()["edges"]
    assert sorted(e["value"] for e in everything) == ["doctor", "nurse", "sister", "sister"]


def test_depth_two_is_bounded(cli, ws):
    store = open_store(str(ws / ".ekko" / "memory.db"))
    with store.db.atomic():
        hub = store.graph.entity_id("Hub", "person", [], "2026-01-01", "ent_hub")
        for i in range(30):
            friend = store.graph.entity_id(f"F{i}", "person", [], "2026-01-01", f"ent_f{i}")
            for j, relation in enumerate(("friend", "works_as")):
                store.graph.add_edge({
                    "id": f"edg_{i}_{j}", "subject": hub if j == 0 else friend,
                    "relation": relation, "objectId": friend if j == 0 else None,
                    "value": None if j == 0 else "cook", "recordedAt": "2026-01-01",
                    "sourceNodeId": "mem_x"})
    store.close()
    one = cli("graph", "Hub", "--json").json()
    assert len(one["edges"]) == 30 and one["truncated"] is False
    two = cli("graph", "Hub", "--depth", "2", "--json").json()
    assert len(two["edges"]) == 50 and two["truncated"] is True
    assert "first 50 edges only" in cli("graph", "Hub", "--depth", "2").out


def test_a_write_reads_no_graph_and_graph_reads_what_was_written_since(cli, ws):
    remembered(cli, "My sister Anna is a nurse")
    store = open_store(str(ws / ".ekko" / "memory.db"))
    try:
        assert store.graph.find_entity("Anna") is None  # nothing read while writing
    finally:
        store.close()
    assert cli("graph", "Anna", "--json").json()["entity"]["name"] == "Anna"
    remembered(cli, "My brother Ben is a pilot")
    assert cli("graph", "Ben", "--json").json()["entity"]["name"] == "Ben"
    assert cli("graph", "Anna", "--json").code == 0  # read once, not twice
    store = open_store(str(ws / ".ekko" / "memory.db"))
    try:
        assert len(store.graph.edges_of(store.graph.find_entity("Anna")["id"], 50)) == 2
    finally:
        store.close()


def test_graph_lists_the_messages_that_say_the_name(cli, ws):
    remembered(cli, "My sister Anna is a nurse")
    said = cli("log", "--json", "Anna called, she moves next week",
               env={"EKKO_NOW": "2026-03-01T10:00:00Z"}).json()["id"]
    cli("log", "Annabel sent the photos")
    graph = cli("graph", "Anna", "--json").json()
    ids = [m["id"] for m in graph["messages"]]
    assert said in ids
    assert all("Annabel" not in cli("show", i, "--json").json()["message"]["content"]
               for i in ids)
    before = cli("graph", "Anna", "--as-of", "2026-02-01", "--json").json()
    assert said not in [m["id"] for m in before["messages"]]
