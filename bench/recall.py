"""Recall of `context` on the MemoryBank dev set, beside a plain BM25-over-turns baseline.

Usage: python -m bench.recall [--data DIR] [--budgets 200,500] [--lang cn,en] [--json]
                              [--details FILE] [--semantic]

Protocol (the dataset's README): one fresh workspace per user and language; each query/response
pair is two messages (user, then assistant) created at 20:00 on its date, one session per date;
the question is asked from a new session. A retriever's turns are packed in rank order while
the running token count stays within the budget; the score is the mean fraction of evidence
messages packed. For `context`, the turns are the messages whose text appears in its JSON
output, in order of appearance. The baseline is computed in the same run on the same counts.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "memorybank"
ROLE_PREFIX = {"cn": ("用户: ", "助手: "), "en": ("User: ", "Assistant: ")}

STOP = set("""a an the and or but if of at by for with about to from in on into over under
is am are was were be been being do does did have has had i me my mine you your yours he him
his she her hers it its we us our they them their this that these those what which who whom
whose when where why how not no so too very can could will would shall should may might must
just than then there here as up down out off again also any some all each both few more most
other such only own same s t don now""".split())


# -- the protocol's token count and packing -------------------------------------------------
def turn_tokens(text: str) -> int:
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4 + (len(text) - ascii_chars))


def pack(ranked: list[int], sizes: list[int], budget: int) -> set[int]:
    packed, used = set(), 0
    for index in ranked:
        if used + sizes[index] > budget:
            break
        used += sizes[index]
        packed.add(index)
    return packed


# -- the baseline ----------------------------------------------------------------------------
def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def _stem(word: str) -> str:
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and len(word) > 4 and word[-3] in "sxz":
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def baseline_tokens(text: str) -> list[str]:
    out: list[str] = []
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word not in STOP:
            out.append(_stem(word))
    for run in re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff]+", text):
        out.extend(run)
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def bm25_rank(question: str, turns: list[str], k1: float = 1.5, b: float = 0.75) -> list[int]:
    docs = [baseline_tokens(t) for t in turns]
    n = len(docs)
    avg = sum(map(len, docs)) / max(n, 1)
    df: dict[str, int] = {}
    for doc in docs:
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    terms = set(baseline_tokens(question))
    scores = []
    for doc in docs:
        tf: dict[str, int] = {}
        for term in doc:
            tf[term] = tf.get(term, 0) + 1
        score = 0.0
        for term in terms:
            if term in tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] * (k1 + 1) / (
                    tf[term] + k1 * (1 - b + b * len(doc) / avg))
        scores.append(score)
    return sorted(range(n), key=lambda i: -scores[i])  # stable: ties keep conversation order


# -- the dataset -----------------------------------------------------------------------------
def load(data: Path, lang: str) -> list[dict]:
    """One entry per user: its turns (message texts, dates, pair keys) and labelled questions."""
    chats = json.loads((data / f"memory_bank_{lang}.json").read_text(encoding="utf-8"))
    labels = json.loads((data / "evidence.json").read_text(encoding="utf-8"))["labels"]
    users = []
    for raw_name, body in chats.items():
        name = raw_name.strip()
        history = {d.strip(): pairs for d, pairs in body["history"].items()}
        turns = []
        for day in sorted(history):
            for index, pair in enumerate(history[day]):
                for role, field, prefix in (("user", "query", ROLE_PREFIX[lang][0]),
                                            ("assistant", "response", ROLE_PREFIX[lang][1])):
                    turns.append({"text": prefix + (pair.get(field) or "").strip(),
                                  "role": role, "date": day, "pair": (day, index)})
        questions = [q for q in labels if q["lang"] == lang and q["user"].strip() == name
                     and q["answerable"]]
        if questions:
            users.append({"name": name, "turns": turns, "questions": questions})
    return users


# -- context through the service, as `context --format json` produces it ---------------------
def build_workspace(root: Path, user: dict, semantic: bool = False) -> dict:
    from ekko_mem.service import MemoryService
    from ekko_mem.env import Env
    env = _env(root, None)
    with MemoryService(root, env=Env(env, cwd=root)) as svc:
        svc.init_workspace(root, gitignore=False)
    set_semantic(root, semantic)
    with MemoryService(root, env=Env(env, cwd=root)) as svc:
        lines = [json.dumps({"sessionId": f"day-{t['date']}", "role": t["role"],
                             "content": t["text"], "createdAt": f"{t['date']}T20:00:00Z"},
                            ensure_ascii=False) for t in user["turns"]]
        svc.log_jsonl(lines)
    last = max(t["date"] for t in user["turns"])
    return {"now": (date.fromisoformat(last) + timedelta(days=1)).isoformat() + "T20:00:00Z"}


def set_semantic(root: Path, on: bool) -> None:
    """Semantic recall on or off for this workspace, as `config set retrieval.semantic`."""
    (root / ".ekko" / "config.toml").write_text(f"[retrieval]\nsemantic = {str(on).lower()}\n")


def _env(root: Path, now: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EKKO_")}
    env.update(EKKO_HOME=str(root / "home"), EKKO_WORKSPACE=str(root), EKKO_USER="bench")
    if now:
        env["EKKO_NOW"] = now
    return env


def context_turns(root: Path, now: str, question: str, qnum: int, budget: int,
                  turns: list[dict]) -> list[int]:
    from ekko_mem.service import MemoryService
    from ekko_mem.env import Env
    with MemoryService(root, env=Env(_env(root, now), cwd=root)) as svc:
        context = svc.build_context(question, session=f"probe-{qnum}", budget=budget,
                                    record=False)
    output = json.dumps(context, ensure_ascii=False, indent=2)
    found = []
    for index, turn in enumerate(turns):
        at = output.find(json.dumps(turn["text"], ensure_ascii=False)[1:-1])
        if at >= 0:
            found.append((at, index))
    return [index for _, index in sorted(found)]


# -- scoring ---------------------------------------------------------------------------------
def evidence_indexes(question: dict, turns: list[dict]) -> set[int]:
    pairs = {(e["date"], e["index"]) for e in question["evidence"]}
    return {i for i, t in enumerate(turns) if t["pair"] in pairs}


def run(data: Path, langs: list[str], budgets: list[int], details: list | None = None,
        semantic: bool = False) -> dict:
    """With `semantic`, each workspace is built with vectors and `context` is asked twice,
    with semantic recall off ("context") and on ("hybrid")."""
    methods = ("context", "bm25") + (("hybrid",) if semantic else ())
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="ekko-recall-") as tmp:
        for lang in langs:
            sums = {(m, b): 0.0 for m in methods for b in budgets}
            count = 0
            for unum, user in enumerate(load(data, lang)):
                root = Path(tmp) / f"{lang}-{unum}"
                root.mkdir()
                built = build_workspace(root, user, semantic)
                texts = [t["text"] for t in user["turns"]]
                sizes = [turn_tokens(t) for t in texts]
                for question in user["questions"]:
                    wanted = evidence_indexes(question, user["turns"])
                    count += 1
                    base_rank = bm25_rank(question["question"], texts)
                    for budget in budgets:
                        ranked = {"bm25": base_rank}
                        for method in methods[2:] + methods[:1]:
                            set_semantic(root, method == "hybrid")
                            ranked[method] = context_turns(root, built["now"],
                                                           question["question"], count,
                                                           budget, user["turns"])
                        for method, order in ranked.items():
                            got = pack(order, sizes, budget) & wanted
                            sums[(method, budget)] += len(got) / len(wanted)
                            if details is not None:
                                details.append({"lang": lang, "user": user["name"],
                                                "question": question["question"],
                                                "method": method, "budget": budget,
                                                "found": len(got), "of": len(wanted)})
            results[lang] = {"questions": count, **{
                f"{m}@{b}": round(100 * s / count, 1) for (m, b), s in sums.items()}}
    return results


# -- ablation: each part of the ranking switched off in turn, to show what it adds -----------
def _no_time():
    from ekko_mem.retrieval import analysis
    analysis.find_window = lambda text, now: None


def _no_pairs():
    from ekko_mem.service.recall import Recall
    Recall._partners = lambda self, *args: {}


def _no_stop_words():
    from ekko_mem.retrieval import analysis
    analysis.STOP_WORDS = frozenset()
    analysis.STOP_CHARS = frozenset()


def _no_floor():
    from ekko_mem.retrieval import scoring
    scoring.FLOOR = 0.0


def _no_stemming():
    from ekko_mem import tokens
    from ekko_mem.retrieval import analysis
    from ekko_mem.store import fts
    for module in (tokens, analysis, fts):
        module.stem = lambda word: word


def _no_unigrams():
    from ekko_mem import tokens
    from ekko_mem.retrieval import analysis

    def bigrams_only(run):
        return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)] + [
            run[-1]]
    for module in (tokens, analysis):
        module.cjk_tokens = bigrams_only


ABLATIONS = {"time windows": _no_time, "pair partners": _no_pairs,
             "stop words": _no_stop_words, "relevance floor": _no_floor,
             "stemming": _no_stemming, "CJK unigrams": _no_unigrams}


def ablate(data: Path, langs: list[str], budgets: list[int]) -> dict:
    """Context recall with each part switched off, each in a fresh process."""
    import subprocess
    out = {}
    for name in ABLATIONS:
        proc = subprocess.run([sys.executable, "-m", "bench.recall", "--data", str(data),
                               "--lang", ",".join(langs), "--budgets",
                               ",".join(map(str, budgets)), "--json", "--without", name],
                              capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[1])
        out[name] = json.loads(proc.stdout)
    return out


def table(results: dict, budgets: list[int]) -> str:
    hybrid = any(f"hybrid@{budgets[0]}" in r for r in results.values())
    head = [f"context@{b} | bm25@{b} | delta@{b}" + (
        f" | hybrid@{b} | hybrid-context@{b}" if hybrid else "") for b in budgets]
    rows = ["| lang | questions | " + " | ".join(head) + " |",
            "|---|---|" + ("---|" * (5 if hybrid else 3)) * len(budgets)]
    for lang, r in results.items():
        cells = []
        for b in budgets:
            cells += [f"{r[f'context@{b}']:.1f}%", f"{r[f'bm25@{b}']:.1f}%",
                      f"{r[f'context@{b}'] - r[f'bm25@{b}']:+.1f}"]
            if hybrid:
                cells += [f"{r[f'hybrid@{b}']:.1f}%",
                          f"{r[f'hybrid@{b}'] - r[f'context@{b}']:+.1f}"]
        rows.append(f"| {lang} | {r['questions']} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--budgets", default="200,500")
    parser.add_argument("--lang", default="cn,en")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--details", help="write one JSON line per question and method here")
    parser.add_argument("--ablate", action="store_true",
                        help="also measure context with each part of the ranking switched off")
    parser.add_argument("--semantic", action="store_true",
                        help="also measure context with semantic recall on (needs the"
                             " [semantic] extra); the 'hybrid' columns")
    parser.add_argument("--without", choices=sorted(ABLATIONS), action="append", default=[],
                        help="switch one part of the ranking off (for --ablate)")
    args = parser.parse_args(argv)
    for name in args.without:
        ABLATIONS[name]()
    data = Path(args.data)
    if not (data / "evidence.json").exists():
        sys.exit(f"bench.recall: no dataset at {data}; pass --data DIR")
    budgets = [int(b) for b in args.budgets.split(",")]
    details: list | None = [] if args.details else None
    results = run(data, args.lang.split(","), budgets, details, args.semantic)
    if details is not None:
        Path(args.details).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n"
                                              for d in details), encoding="utf-8")
    print(json.dumps(results, indent=2) if args.json else table(results, budgets))
    if args.ablate:
        print("\nContext recall with one part switched off (delta against the full ranking):")
        print("| without | " + " | ".join(f"{lang}@{b}" for lang in results for b in budgets)
              + " |")
        print("|---|" + "---|" * (len(results) * len(budgets)))
        for name, res in ablate(data, list(results), budgets).items():
            cells = [f"{res[lang][f'context@{b}']:.1f}% "
                     f"({res[lang][f'context@{b}'] - results[lang][f'context@{b}']:+.1f})"
                     for lang in results for b in budgets]
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
