"""Held-out extraction cases, written apart from the rules they measure: the author read
neither the extractor code nor the existing golden cases or rule tests, and labelled each
message only from the written labelling brief.

Each case is (utterance, expected) where expected is a list of
(operation, scope, type, key, valueJson) tuples; [] means nothing should be stored.
30 Chinese cases come first, then 30 English cases.
"""
from __future__ import annotations

CASES = [
    # ---------------------------------------------------------------- Chinese
    # Food preferences
    ("记住，我不吃香菜，葱也别放。", [
        ("create", "user", "preference", "avoid_ingredient", "香菜"),
        ("create", "user", "preference", "avoid_ingredient", "葱"),
    ]),
    ("记住：我偏爱川菜，以后做菜都少油少盐。", [
        ("create", "user", "preference", "preferred_cuisine", "川菜"),
        ("create", "user", "preference", "flavor_profile", {"oil": "low", "salt": "low"}),
    ]),
    ("我想做个粤菜，多放点虾仁，二十分钟内能搞定最好。", [
        ("create", "session", "preference", "preferred_cuisine", "粤菜"),
        ("create", "session", "preference", "preferred_ingredient", "虾仁"),
        ("create", "session", "preference", "cooking_time_preference", "≤20min"),
    ]),
    ("顺便说一下，以后工作日的晚饭都控制在半小时以内，多用鸡胸肉。", [
        ("create", "user", "preference", "cooking_time_preference", "≤30min"),
        ("create", "user", "preference", "preferred_ingredient", "鸡胸肉"),
    ]),
    # Passing states (session constraints)
    ("我今天胃不舒服，晚饭别放辣。", [
        ("create", "session", "constraint", "flavor_profile", {"spicy": "none"}),
    ]),
    ("最近嗓子发炎，菜里先别放辣椒和姜。", [
        ("create", "session", "constraint", "avoid_ingredient", "辣椒"),
        ("create", "session", "constraint", "avoid_ingredient", "姜"),
    ]),
    # Health and diet
    ("我是纯素食者，蛋和奶都不吃，对芒果也过敏。", [
        ("create", "user", "constraint", "dietary_restriction", "纯素"),
        ("create", "user", "constraint", "allergy", "芒果"),
    ]),
    ("对了，我有痛风，饮食得按低嘌呤来；另外我对芝麻过敏。", [
        ("create", "user", "constraint", "dietary_restriction", "痛风（低嘌呤）"),
        ("create", "user", "constraint", "allergy", "芝麻"),
    ]),
    # Habits
    ("我每周六早上都去爬山。", [
        ("create", "user", "habit", None, None),
    ]),
    ("我习惯每天早上六点半起床，先跑五公里再上班。", [
        ("create", "user", "habit", None, None),
    ]),
    # Developer memory
    ("我们这个项目用 Go 1.22 写，数据库是 PostgreSQL 16，跑测试用 `go test ./...`，"
     "构建用 `make build`。", [
        ("create", "workspace", "fact", "language", "Go 1.22"),
        ("create", "workspace", "fact", "database", "PostgreSQL 16"),
        ("create", "workspace", "fact", "test_command", "go test ./..."),
        ("create", "workspace", "fact", "build_command", "make build"),
    ]),
    ("对了，前端是 React，包管理用 pnpm，运行时是 Node.js 20。", [
        ("create", "workspace", "fact", "framework", "React"),
        ("create", "workspace", "fact", "package_manager", "pnpm"),
        ("create", "workspace", "fact", "runtime", "Node.js 20"),
    ]),
    ("后端是 Python 3.11 加 FastAPI，依赖用 uv 管理，本地开发用 SQLite。", [
        ("create", "workspace", "fact", "language", "Python 3.11"),
        ("create", "workspace", "fact", "framework", "FastAPI"),
        ("create", "workspace", "fact", "package_manager", "uv"),
        ("create", "workspace", "fact", "database", "SQLite"),
    ]),
    ("脚本工具用 TypeScript 写，运行在 Deno 2 上，lint 用 `deno lint`。", [
        ("create", "workspace", "fact", "language", "TypeScript"),
        ("create", "workspace", "fact", "runtime", "Deno 2"),
        ("create", "workspace", "fact", "lint_command", "deno lint"),
    ]),
    ("以后提交前必须先跑 `golangci-lint run`，另外禁止直接往 main 分支推代码。", [
        ("create", "workspace", "constraint", "lint_command", "golangci-lint run"),
        ("create", "workspace", "constraint", None, None),
    ]),
    ("我们决定下个版本先不做国际化。", [
        ("create", "workspace", "decision", None, None),
    ]),
    # Tasks
    ("我们决定日志统一改成 JSON 格式输出。待办：把旧的日志解析脚本删掉。", [
        ("create", "workspace", "decision", None, None),
        ("create", "workspace", "task", "task_state", {"state": "open"}),
    ]),
    ("提醒我明天把数据库迁移脚本再检查一遍。", [
        ("create", "workspace", "task", "task_state", {"state": "open"}),
    ]),
    # Negatives
    ("川菜一般都会放花椒吗？", []),                                  # question
    ("你觉得 Django 和 FastAPI 哪个更适合做后台？", []),             # question
    ("如果我对海鲜过敏的话，这道菜该怎么改？", []),                  # hypothetical
    ("假如以后换成 MySQL，迁移成本大不大？", []),                    # hypothetical
    ("我妈不吃辣，她口味一直很清淡。", []),                          # someone else
    ("我老公是素食主义者，他连鸡蛋都不吃。", []),                    # someone else
    ("菜谱上写着“少盐少油，三十分钟出锅”。", []),                  # quoted speech
    ("其实我不过敏，上次只是吃坏了肚子。", []),                      # denial
    ("我并没有乳糖不耐受，牛奶照喝。", []),                          # denial
    ("昨天晚上我去吃了一顿火锅，辣得不行。", []),                    # past one-off
    ("哈哈，谢谢你，今天辛苦啦！", []),                              # small talk
    ("我最近很喜欢听周杰伦的歌。", []),                              # not food/health/project
    # ---------------------------------------------------------------- English
    # Food preferences
    ("Please remember I never eat cilantro or mushrooms.", [
        ("create", "user", "preference", "avoid_ingredient", "cilantro"),
        ("create", "user", "preference", "avoid_ingredient", "mushroom"),
    ]),
    ("From now on keep things low in salt and sugar, and I'd love to see more Thai dishes.", [
        ("create", "user", "preference", "flavor_profile", {"salt": "low", "sugar": "low"}),
        ("create", "user", "preference", "preferred_cuisine", "Thai"),
    ]),
    ("Feel like Italian, something with lots of garlic that's ready in 15 minutes.", [
        ("create", "session", "preference", "preferred_cuisine", "Italian"),
        ("create", "session", "preference", "preferred_ingredient", "garlic"),
        ("create", "session", "preference", "cooking_time_preference", "≤15min"),
    ]),
    ("btw, from now on keep weeknight dinners to 45 minutes max, and throw in tofu "
     "whenever you can.", [
        ("create", "user", "preference", "cooking_time_preference", "≤45min"),
        ("create", "user", "preference", "preferred_ingredient", "tofu"),
    ]),
    # Passing states (session constraints)
    ("My stomach is a bit off today, so skip the onions in tonight's dinner.", [
        ("create", "session", "constraint", "avoid_ingredient", "onion"),
    ]),
    ("Lately I've been feeling bloated, so go light on the oil for now.", [
        ("create", "session", "constraint", "flavor_profile", {"oil": "low"}),
    ]),
    # Health and diet
    ("I keep halal, and I'm also allergic to walnuts.", [
        ("create", "user", "constraint", "dietary_restriction", "halal"),
        ("create", "user", "constraint", "allergy", "walnut"),
    ]),
    ("Heads up: I'm diabetic and allergic to sesame.", [
        ("create", "user", "constraint", "dietary_restriction", "diabetic (low sugar)"),
        ("create", "user", "constraint", "allergy", "sesame"),
    ]),
    # Habits
    ("Every morning I do twenty minutes of yoga before work.", [
        ("create", "user", "habit", None, None),
    ]),
    ("I cycle to the office every weekday, rain or shine.", [
        ("create", "user", "habit", None, None),
    ]),
    # Developer memory
    ("Our backend is written in Rust and all the data lives in PostgreSQL 15.", [
        ("create", "workspace", "fact", "language", "Rust"),
        ("create", "workspace", "fact", "database", "PostgreSQL 15"),
    ]),
    ("The dashboard uses Vue, we manage packages with yarn, and it runs on Node.js 18.", [
        ("create", "workspace", "fact", "framework", "Vue"),
        ("create", "workspace", "fact", "package_manager", "yarn"),
        ("create", "workspace", "fact", "runtime", "Node.js 18"),
    ]),
    ("FYI the admin tool is Python 3.12 + Django backed by SQLite, deps via poetry.", [
        ("create", "workspace", "fact", "language", "Python 3.12"),
        ("create", "workspace", "fact", "framework", "Django"),
        ("create", "workspace", "fact", "database", "SQLite"),
        ("create", "workspace", "fact", "package_manager", "poetry"),
    ]),
    ("Tests run with `pytest -x`, the frontend builds with `npm run build`, "
     "and the edge workers run on Bun.", [
        ("create", "workspace", "fact", "test_command", "pytest -x"),
        ("create", "workspace", "fact", "build_command", "npm run build"),
        ("create", "workspace", "fact", "runtime", "Bun"),
    ]),
    ("Going forward, always run `ruff check .` before merging, and never force-push to main.", [
        ("create", "workspace", "constraint", "lint_command", "ruff check ."),
        ("create", "workspace", "constraint", None, None),
    ]),
    ("We decided to drop GraphQL and stick with plain REST.", [
        ("create", "workspace", "decision", None, None),
    ]),
    # Tasks
    ("We've decided to freeze features until 2.0 ships. TODO: draft the release notes.", [
        ("create", "workspace", "decision", None, None),
        ("create", "workspace", "task", "task_state", {"state": "open"}),
    ]),
    ("Remind me to rotate the staging API keys on Friday.", [
        ("create", "workspace", "task", "task_state", {"state": "open"}),
    ]),
    # Negatives
    ("Which cuisines use the most cumin?", []),                          # question
    ("Can I swap butter for olive oil in this recipe?", []),             # question
    ("If I went vegan, where would I get my protein?", []),              # hypothetical
    ("Suppose we switched to MongoDB, would the tests still pass?", []),  # hypothetical
    ("My wife can't stand olives, and she's allergic to kiwi.", []),     # someone else
    ("My brother has been on a keto diet for months.", []),              # someone else
    ("The recipe card says 'always use fresh basil, never dried'.", []),  # quoted speech
    ("I'm not allergic to anything, as far as I know.", []),             # denial
    ("No, I don't avoid gluten, that was my roommate.", []),             # denial
    ("I tried a great ramen place last weekend.", []),                   # past one-off
    ("lol thanks, that was super helpful!", []),                         # small talk
    ("I really enjoyed the new Wes Anderson film.", []),                 # not food/health/project
]
