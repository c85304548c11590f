"""The entity graph through a memory's whole life: exported and imported (entities as records,
edges read again from the imported memories), undone (edges retired and revived with their
memory in the same transaction), and erased (no byte of what only the erased memory said)."""
from __future__ import annotations

import json
import sqlite3

from ekko_mem.store import open_store
from test_erasure import files_holding

EDGE_FIELDS = ("subject", "relation", "object", "value", "validFrom", "validTo", "recordedAt",
               "retiredAt")


def remembered(cli, *args, cwd=None):
    result = cli("remember", "--scope", "workspace", "--json", *args, cwd=cwd)
    assert result.code == 0, result
    return result.json()["nodeId"]


def graph(cli, name, cwd=None, env=None) -> dict:
    result = cli("graph", name, "--json", cwd=cwd, env=env)
    assert result.code == 0, result
    return result.json()


def seen(out: dict) -> tuple:
    """What two workspaces must agree on: the entity, and each edge's ends, value and times."""
    return ({k: out["entity"][k] for k in ("name", "kind", "aliases")},
            [tuple(e[k] for k in EDGE_FIELDS) for e in out["edges"]])


def said_outright(ws, name, kind, aliases=()) -> None:
    """An entity's kind and aliases as a person states them (remember --entity NAME:KIND),
    which no reading of the memories' text gives back."""
    store = open_store(str(ws / ".ekko" / "memory.db"))
    try:
        with store.db.atomic():
            entity = store.graph.entity_id(name, kind, list(aliases), "2026-02-01T00:00:00.000Z",
                                           "ent_" + name.encode().hex())
            store.graph.set_kind(entity, kind)
    finally:
        store.close()


def statuses(out: dict) -> dict:
    """{(relation, value): whether its edge holds} for the edges of `out`."""
    return {(e["relation"], e["value"]): e["retiredAt"] is None for e in out["edges"]}


# -- export and import ---------------------------------------------------------------------
def _seeded(cli, ws):
    remembered(cli, "我同事小王是前端，他生日是3月5日")
    nurse = remembered(cli, "My sister Anna is a nurse")
    graph(cli, "Anna")  # read while the nurse still holds: retired by the supersede below
    remembered(cli, "--supersedes", nurse, "My sister Anna is a doctor")
    said_outright(ws, "小王", "person", ["王工"])
    said_outright(ws, "Kestrel", "project")
    return {name: seen(graph(cli, name)) for name in ("小王", "Anna", "Kestrel")}


def _fresh_workspace(cli, tmp_path, name="other"):
    target = tmp_path / name
    target.mkdir()
    assert cli("init", cwd=target).code == 0
    return target


def test_export_and_import_give_the_same_graph(cli, ws, tmp_path):
    before = _seeded(cli, ws)
    assert before["Anna"][1][1][3] == "nurse" and before["Anna"][1][1][7] is not None
    exported = cli("export")
    assert exported.code == 0, exported
    entities = [json.loads(line)["data"] for line in exported.out.splitlines()
                if json.loads(line)["kind"] == "entity"]
    assert {e["name"]: (e["kind"], e["aliases"], e["scope"]) for e in entities} == {
        "小王": ("person", ["我同事小王", "王工"], "workspace"),
        "Anna": ("person", ["My sister Anna"], "workspace"),
        "Kestrel": ("project", [], "workspace")}
    target = _fresh_workspace(cli, tmp_path)
    first = cli("import", "-", "--json", input=exported.out, cwd=target)
    assert first.code == 0, first
    assert first.json()["imported"]["entity"] == 3
    after = {name: seen(graph(cli, name, cwd=target)) for name in ("小王", "Anna", "Kestrel")}
    assert after == before
    again = cli("import", "-", "--json", input=exported.out, cwd=target)
    assert again.code == 0, again
    assert sum(again.json()["imported"].values()) == 0
    assert {name: seen(graph(cli, name, cwd=target)) for name in after} == before


def test_an_imported_entity_merges_by_name_and_its_kind_is_kept(cli, ws, tmp_path):
    target = _fresh_workspace(cli, tmp_path)
    remembered(cli, "My colleague Robin lives in Lisbon", cwd=target)
    assert graph(cli, "Robin", cwd=target)["entity"]["kind"] == "person"  # the rules' guess
    remembered(cli, "My colleague Robin lives in Lisbon")
    graph(cli, "Robin")
    said_outright(ws, "Robin", "pet", ["Robbie"])
    lines = [line for line in cli("export").out.splitlines()
             if json.loads(line)["kind"] in ("header", "entity")]
    result = cli("import", "-", "--json", input="\n".join(lines), cwd=target)
    assert result.code == 0, result
    out = graph(cli, "robbie", cwd=target)
    assert out["entity"] == {"name": "Robin", "kind": "pet",
                             "aliases": ["My colleague Robin", "Robbie"]}
    assert len(out["edges"]) == 2  # the target's own, untouched


def test_a_malformed_entity_is_refused_on_one_line_and_nothing_is_written(cli, ws, tmp_path):
    _seeded(cli, ws)
    exported = cli("export").out.splitlines()
    at = next(i for i, line in enumerate(exported) if json.loads(line)["kind"] == "entity")
    target = _fresh_workspace(cli, tmp_path)
    db = target / ".ekko" / "memory.db"

    def refused(record: dict) -> str:
        lines = list(exported)
        lines[at] = json.dumps({"kind": "entity", "data": record}, ensure_ascii=False)
        result = cli("import", "-", input="\n".join(lines), cwd=target)
        assert result.code == 4, result
        assert result.out == "" and result.err.count("\n") == 1
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("select (select count(*) from memory_nodes) +"
                                " (select count(*) from memory_entities)").fetchone() == (0,)
        finally:
            conn.close()
        return result.err

    good = json.loads(exported[at])["data"]
    line = at + 1
    assert refused({**good, "kind": "dragon"}) == (
        f"ekko-mem: line {line}: entity kind: Input should be 'person', 'pet', 'place',"
        " 'organisation', 'project' or 'thing'; fix that line; nothing was imported\n")
    assert refused({**good, "colour": "red"}).startswith(
        f"ekko-mem: line {line}: entity colour: Extra inputs are not permitted")
    assert refused({**good, "id": "mem_1"}).startswith(
        f"ekko-mem: line {line}: entity id is not a well-formed entity id")
    assert refused({**good, "name": "  "}) == (
        f"ekko-mem: line {line}: entity name is blank; give the name it is known by;"
        " nothing was imported\n")
    assert refused({**good, "aliases": ["ok", ""]}).startswith(
        f"ekko-mem: line {line}: entity alias is blank")
    assert refused({**good, "name": "x" * 5000}).startswith(f"ekko-mem: line {line}: entity name")
    assert refused({**good, "name": "A\u0000B"}).startswith(f"ekko-mem: line {line}: entity")


def test_user_entities_go_to_the_user_db_and_need_the_same_yes(cli, ws, tmp_path):
    assert cli("remember", "--scope", "user", "--yes",
               "My colleague Zoltan lives in Lisbon").code == 0
    assert graph(cli, "Zoltan")["scope"] == "user"
    exported = cli("export").out
    assert {json.loads(line)["data"]["scope"] for line in exported.splitlines()
            if json.loads(line)["kind"] == "entity"} == {"user"}
    target = _fresh_workspace(cli, tmp_path)
    env = {"EKKO_HOME": str(tmp_path / "other-home")}
    only = "\n".join(line for line in exported.splitlines()
                     if json.loads(line)["kind"] in ("header", "entity"))
    asked = cli("import", "-", input=only, cwd=target, env=env)
    assert asked.code == 3, asked
    assert "2 user-scope entities" in asked.err
    done = cli("import", "-", "--json", "--yes", input=exported, cwd=target, env=env)
    assert done.code == 0, done
    assert seen(graph(cli, "Zoltan", cwd=target, env=env)) == seen(graph(cli, "Zoltan"))


def test_an_export_by_scope_holds_the_entities_of_the_memories_it_holds(cli, ws):
    remembered(cli, "My colleague Robin lives in Lisbon")
    cli("remember", "--scope", "session", "My sister Anna is a nurse")
    graph(cli, "Robin")
    said_outright(ws, "Kestrel", "project")

    def names(*args):
        return sorted(json.loads(line)["data"]["name"]
                      for line in cli("export", *args).out.splitlines()
                      if json.loads(line)["kind"] == "entity")
    assert names() == ["Anna", "Kestrel", "Lisbon", "Robin"]
    assert names("--scope", "workspace") == ["Lisbon", "Robin"]
    assert names("--scope", "session") == ["Anna"]
    assert names("--scope", "user") == []


# -- undo -----------------------------------------------------------------------------------
def _event(cli, node, kind):
    return next(e["id"] for e in cli("audit", "--json", "-n", "1000").jsonl()
                if e.get("nodeId") == node and e["eventType"] == kind)


def test_undoing_a_supersede_brings_the_old_edges_back(cli, ws):
    nurse = remembered(cli, "My sister Anna is a nurse")
    graph(cli, "Anna")
    doctor = remembered(cli, "--supersedes", nurse, "My sister Anna is a doctor")
    assert statuses(graph(cli, "Anna"))[("works_as", "doctor")] is True
    supersede = _event(cli, doctor, "supersede")
    assert cli("audit", "undo", supersede).code == 0
    now = statuses(graph(cli, "Anna"))
    assert now[("works_as", "nurse")] is True and now[("works_as", "doctor")] is False
    # Undoing the undo puts the doctor back in force, and the nurse out again.
    undo = _event(cli, doctor, "undo")
    assert cli("audit", "undo", undo).code == 0
    now = statuses(graph(cli, "Anna"))
    assert now[("works_as", "nurse")] is False and now[("works_as", "doctor")] is True
    edges = graph(cli, "Anna")["edges"]
    assert sorted(e["value"] for e in edges if e["retiredAt"] is None) == ["doctor", "sister"]


def test_undoing_a_forget_brings_the_edges_back_and_undoing_a_create_retires_them(cli, ws):
    node = remembered(cli, "我同事王小舟是前端，他生日是3月5日")
    graph(cli, "王小舟")
    assert cli("forget", node, "--yes").code == 0
    assert not any(statuses(graph(cli, "王小舟")).values())
    assert cli("audit", "undo", _event(cli, node, "delete")).code == 0
    assert all(statuses(graph(cli, "王小舟")).values())
    assert cli("audit", "undo", _event(cli, node, "create")).code == 0
    out = graph(cli, "王小舟")
    assert out["edges"] and not any(statuses(out).values())


def test_an_undo_before_the_graph_read_the_memory_needs_nothing(cli, ws):
    nurse = remembered(cli, "My sister Anna is a nurse")
    doctor = remembered(cli, "--supersedes", nurse, "My sister Anna is a doctor")
    assert cli("audit", "undo", _event(cli, doctor, "supersede")).code == 0
    now = statuses(graph(cli, "Anna"))
    assert now[("works_as", "nurse")] is True and now[("works_as", "doctor")] is False


# -- erasure --------------------------------------------------------------------------------
def test_erasing_one_of_two_memories_keeps_the_entity_and_nothing_only_the_first_said(cli, ws):
    first = remembered(cli, "我同事王小舟是前端，他生日是3月5日")
    remembered(cli, "王小舟住在杭州")
    before = graph(cli, "王小舟")
    assert before["entity"]["aliases"] == ["我同事王小舟"]
    assert cli("forget", first, "--hard", "--purge-sources", "--yes").code == 0
    out = graph(cli, "王小舟")
    assert out["entity"] == {"name": "王小舟", "kind": "person", "aliases": []}
    assert [(e["subject"], e["relation"], e["object"]) for e in out["edges"]] == [
        ("王小舟", "lives_in", "杭州")]
    assert graph(cli, "杭州")["edges"] == out["edges"]
    assert cli("graph", "我同事王小舟").code == 5  # the alias only the erased memory said
    assert files_holding(ws / ".ekko", "我同事") == []


def test_a_memory_written_after_an_erasure_is_still_read(cli, ws):
    node = remembered(cli, "My colleague Zephyrine lives in Lisbon")
    graph(cli, "Zephyrine")
    assert cli("forget", node, "--hard", "--yes").code == 0
    # The erased memory was the last row read; the next one must not be taken as read.
    remembered(cli, "My sister Bella lives in Porto")
    assert graph(cli, "Bella")["entity"]["name"] == "Bella"


def test_an_erased_entity_does_not_come_back_from_an_older_export(cli, ws):
    node = remembered(cli, "My colleague Zephyrine lives in Lisbon")
    graph(cli, "Zephyrine")
    said_outright(ws, "Zephyrine", "person", ["Zeph"])
    old = cli("export").out
    assert cli("forget", node, "--hard", "--purge-sources", "--yes").code == 0
    result = cli("import", "-", "--json", input=old)
    assert result.code == 0, result
    assert result.json()["imported"].get("entity", 0) == 0
    assert cli("graph", "Zeph").code == 5
    assert files_holding(ws / ".ekko", "Zeph") == []
