"""How often `query --messages`'s first row is an evidence turn, beside a plain BM25's first row.

For each dev set of the shared recall protocol (`../shared/eval`): MemoryBank cn and en
(converted by the protocol's own converter, into a temporary file) and LoCoMo dev8. Each
conversation is logged into a fresh workspace with `log --jsonl` as the protocol's adapter logs
it (session dates kept, dia_id in metadata); then `query --messages QUESTION --json --limit 1`
runs for every answerable question (categories 1-4, with evidence). A question counts when the
first row's dia_id is one of its evidence turns. The BM25 beside it is the harness's own,
imported from the shared folder at run time; the data and the harness stay there.

    python bench/query_first_row.py                 # all three sets
    python bench/query_first_row.py --sets locomo --misses /tmp/misses.jsonl
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import partial
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SETS = ("mb-cn", "mb-en", "locomo")
ANSWERABLE = (1, 2, 3, 4)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _data(name: str, shared: Path, scratch: Path) -> Path:
    if name == "locomo":
        return shared / "datasets" / "locomo" / "locomo_dev8.json"
    lang = name.split("-")[1]
    out = scratch / f"mb_{lang}.json"
    with out.open("w", encoding="utf-8") as f:
        subprocess.run([sys.executable, str(shared / "eval" / "memorybank_to_locomo.py"),
                        "--lang", lang], stdout=f, check=True)
    return out


def _ingest(conv, adapter, exe: str, folder: Path) -> dict:
    """A fresh workspace holding the conversation, logged as the adapter logs it."""
    env = dict(os.environ, EKKO_HOME=str(folder / "home"), NO_COLOR="1")
    subprocess.run([exe, "init"], cwd=folder, env=env, capture_output=True, check=True)
    lines = []
    for t in conv.turns:
        at = adapter.when(t.session_date_time) + timedelta(seconds=t.index)
        role = "assistant" if t.speaker in ("助手", "Assistant") else "user"
        lines.append(json.dumps({
            "role": role, "sessionId": f"{conv.sample_id}-s{t.session}",
            "content": f"{t.speaker}: {t.text}",
            "createdAt": at.isoformat().replace("+00:00", "Z"),
            "metadata": {"dia_id": t.dia_id, "speaker": t.speaker}}, ensure_ascii=False))
    done = subprocess.run([exe, "log", "--jsonl", "-"], input="\n".join(lines), cwd=folder,
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"log failed for {conv.sample_id}: {done.stderr[-300:]}")
    return env


def _first_row(exe: str, folder: Path, env: dict, question: str) -> tuple[str | None, bool]:
    """The first row's dia_id, and whether it is marked weak."""
    done = subprocess.run([exe, "query", "--messages", question, "--json", "--limit", "1"],
                          cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"query failed ({done.returncode}): {done.stderr[-300:]}")
    rows = json.loads(done.stdout)["messages"]
    if not rows:
        return None, False
    meta = rows[0]["message"].get("metadata") or {}
    return meta.get("dia_id"), bool(rows[0].get("weak"))


def run_set(name: str, shared: Path, exe: str, jobs: int, misses) -> dict:
    harness = _load(shared / "eval" / "locomo_recall.py", "locomo_recall")
    adapter = _load(shared / "eval" / "ekko_adapter.py", "ekko_adapter")
    scratch = Path(tempfile.mkdtemp(prefix="ekko-first-row-"))
    try:
        convs = harness.load_locomo(str(_data(name, shared, scratch)))
        bm25 = harness.BM25Retriever()
        counts = {"questions": 0, "query": 0, "bm25": 0, "noRow": 0, "weakFirst": 0}
        for conv in convs:
            folder = scratch / conv.sample_id
            folder.mkdir()
            env = _ingest(conv, adapter, exe, folder)
            qas = [q for q in conv.qa if q.evidence and q.category in ANSWERABLE]
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                firsts = list(pool.map(partial(_first_row, exe, folder, env),
                                       [q.question for q in qas]))
            for qa, (first, weak) in zip(qas, firsts):
                ours = first in qa.evidence
                theirs = bm25(conv.turns, qa.question, 1)[0] in qa.evidence
                counts["questions"] += 1
                counts["query"] += ours
                counts["bm25"] += theirs
                counts["noRow"] += first is None
                counts["weakFirst"] += weak
                if misses is not None and theirs and not ours:
                    misses.write(json.dumps({"set": name, "question": qa.question,
                                             "evidence": qa.evidence, "first": first},
                                            ensure_ascii=False) + "\n")
        return counts
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated: {', '.join(SETS)}")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared folder")
    ap.add_argument("--bin", default=str(Path(sys.executable).with_name("ekko-mem")))
    ap.add_argument("--jobs", type=int, default=2, help="queries run at once")
    ap.add_argument("--misses", type=Path, help="write the questions BM25 gets and query misses")
    args = ap.parse_args(argv)
    wanted = [s for s in args.sets.split(",") if s]
    unknown = set(wanted) - set(SETS)
    if unknown:
        ap.error(f"unknown set(s) {', '.join(sorted(unknown))}; choose from {', '.join(SETS)}")
    if not (args.shared / "eval" / "locomo_recall.py").is_file():
        ap.error(f"no shared recall protocol under {args.shared}; pass --shared PATH")
    misses = args.misses.open("w", encoding="utf-8") if args.misses else None
    print(f"{'set':<8}{'questions':>10}{'query':>8}{'bm25':>8}{'no row':>8}{'weak 1st':>9}")
    report = {}
    for name in wanted:
        c = run_set(name, args.shared, args.bin, args.jobs, misses)
        report[name] = c
        n = c["questions"] or 1
        print(f"{name:<8}{c['questions']:>10}{100 * c['query'] / n:>7.1f}%"
              f"{100 * c['bm25'] / n:>7.1f}%{c['noRow']:>8}{c['weakFirst']:>9}", flush=True)
    if misses:
        misses.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
