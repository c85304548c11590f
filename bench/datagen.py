"""Synthetic memory in mixed Chinese and English: node drafts and session messages.

Deterministic for a seed. Words are drawn Zipf-like from a vocabulary with a real head (the
words people actually write: 香菜, 部署, deploy, test...) and a long generated tail, so FTS
terms range from very common to rare, as in real text. Category trees grow with the size of
the workspace (one project subtree per ~200 nodes), so prefix listings stay selective.
"""
from __future__ import annotations

import itertools
import random
from datetime import datetime, timedelta, timezone


def _words(text: str) -> list[str]:
    return text.split()


ZH_HEAD = _words(
    "香菜 做饭 少油 少辣 清淡 晚餐 早餐 午餐 菜谱 红烧肉 清蒸鱼 花生 过敏 豆浆 小笼包 川菜 微辣 "
    "部署 测试 数据库 检索 排序 会议 周会 项目 需求 上线 回滚 缓存 索引 性能 接口 文档 发布 "
    "客户 预算 报销 机票 酒店 出差 健身 跑步 睡眠 体检 理财 基金 学习 英语 论文 阅读 复盘 "
    "决定 约定 偏好 习惯 任务 截止 周三 周末 下周 本地 云端 隐私 权限 备份 迁移 日志 告警"
)
EN_HEAD = _words(
    "deploy test database search ranking meeting project release rollback cache index latency "
    "api docs customer budget flight hotel travel gym running sleep invest learning paper "
    "decision preference habit task deadline tuesday weekend local cloud privacy backup "
    "migration logging alert sqlite python typer pytest docker kubernetes postgres redis "
    "frontend backend review merge branch commit hook cilantro spicy oil recipe dinner lunch"
)
ZH_CHARS = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同"
            "工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起"
            "小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形"
            "相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月"
            "公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老")
ROLES = ("user", "assistant")

# (domain, level 2, level 3 choices): the category trees; a project subtree is added per size.
TREES = [
    ("生活技能", "做饭", ("饮食偏好", "菜谱", "食材")),
    ("生活技能", "健康", ("运动", "睡眠", "体检")),
    ("生活技能", "出行", ("机票", "酒店", "签证")),
    ("生活技能", "理财", ("预算", "基金", "报销")),
    ("工程", "backend", ("database", "api", "cache")),
    ("工程", "frontend", ("react", "css", "build")),
    ("工程", "ci", ("github-actions", "release", "hooks")),
    ("engineering", "infra", ("k8s", "monitoring", "backup")),
    ("work", "meetings", ("weekly", "1on1", "planning")),
    ("学习", "英语", ("词汇", "口语", "阅读")),
    ("research", "papers", ("retrieval", "memory", "agents")),
]
TYPES = (("fact", 30), ("preference", 20), ("decision", 15), ("task", 15), ("constraint", 10),
         ("recipe", 4), ("skill", 3), ("correction", 3))
INGREDIENTS = _words("香菜 花生 葱 姜 蒜 辣椒 牛肉 羊肉 海鲜 虾 牛奶 鸡蛋 豆腐 芹菜 洋葱 cilantro "
               "peanut shellfish gluten lactose mushroom olive")
ENGINEERING_VALUES = {
    "language": ("python", "go", "rust", "typescript"), "database": ("sqlite", "postgres"),
    "framework": ("typer", "fastapi", "django", "react"), "test_command": ("pytest -q",
                                                                          "make test"),
    "package_manager": ("pip", "uv", "poetry"), "ci": ("github-actions", "gitlab-ci"),
}


class Words:
    """Zipf-like draws over a head of real words and a generated tail."""

    def __init__(self, rng: random.Random, head: list[str], tail: list[str]) -> None:
        self.words = head + tail
        weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.words))]
        self.cum = list(itertools.accumulate(weights))
        self.rng = rng

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)


class Generator:
    def __init__(self, nodes: int, messages: int, seed: int = 7) -> None:
        self.rng = rng = random.Random(seed)
        self.n_nodes, self.n_messages = nodes, messages
        zh_tail = sorted({rng.choice(ZH_CHARS) + rng.choice(ZH_CHARS) for _ in range(6000)})
        en_tail = sorted({"".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou")
                                  for _ in range(rng.randint(2, 4))) for _ in range(6000)})
        rng.shuffle(zh_tail)
        rng.shuffle(en_tail)
        self.zh = Words(rng, ZH_HEAD, zh_tail)
        self.en = Words(rng, EN_HEAD, en_tail)
        self.sessions = [f"s{index:06d}" for index in range(max(4, messages // 40))]
        self.projects = [f"p{index:05d}" for index in range(max(1, nodes // 200))]
        self.entities = [f"客户{index}" if index % 2 else f"acme-{index}"
                         for index in range(max(10, nodes // 20))]
        self.entity_words = Words(rng, [], self.entities)
        self.type_names = [t for t, _ in TYPES]
        self.type_cum = list(itertools.accumulate(w for _, w in TYPES))
        self.start = datetime(2025, 1, 1, tzinfo=timezone.utc)

    # -- text ------------------------------------------------------------------------------
    def sentence(self, low: int, high: int) -> str:
        """A mixed sentence: runs of Chinese words and English words, as people write."""
        parts: list[str] = []
        remaining = self.rng.randint(low, high)
        while remaining > 0:
            take = min(remaining, self.rng.randint(1, 4))
            if self.rng.random() < 0.6:
                parts.append("".join(self.zh.draw(take)))
            else:
                parts.append(" ".join(self.en.draw(take)))
            remaining -= take
        return " ".join(parts)

    # -- messages --------------------------------------------------------------------------
    def messages(self):
        """Message dicts for `log --jsonl`, session after session, time moving forward."""
        per_session = max(1, self.n_messages // len(self.sessions))
        moment = self.start
        count = 0
        for sid in self.sessions:
            for turn in range(per_session):
                if count >= self.n_messages:
                    return
                moment += timedelta(seconds=self.rng.randint(5, 600))
                msg = {"id": f"msg_bench{count:013d}", "sessionId": sid,
                       "role": ROLES[turn % 2], "content": self.sentence(4, 40),
                       "createdAt": moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")}
                if turn % 10 == 0:
                    msg["metadata"] = {"source": "agent", "turn": turn}
                count += 1
                yield msg
        while count < self.n_messages:  # rounding remainder into the last session
            moment += timedelta(seconds=30)
            yield {"id": f"msg_bench{count:013d}", "sessionId": self.sessions[-1],
                   "role": "user", "content": self.sentence(4, 40),
                   "createdAt": moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")}
            count += 1

    # -- nodes -----------------------------------------------------------------------------
    def node_draft(self, index: int) -> tuple[dict, str]:
        """One node draft for prepare_node, and the status it should end with."""
        rng = self.rng
        kind = rng.choices(self.type_names, cum_weights=self.type_cum)[0]
        domain, level2, leaves = rng.choice(TREES)
        path = [domain, level2, rng.choice(leaves)]
        if rng.random() < 0.5:  # project subtrees: the tree widens as memory grows
            path.append(rng.choice(self.projects))
        draft = {"scope": "workspace", "domain": domain, "categoryPath": path, "type": kind,
                 "title": self.sentence(2, 6)[:60], "content": self.sentence(8, 40),
                 "confidence": round(rng.uniform(0.5, 1.0), 2),
                 "importance": round(rng.uniform(0.2, 1.0), 2),
                 "tags": sorted(set(self.zh.draw(rng.randint(0, 2)) + self.en.draw(
                     rng.randint(0, 1)))),
                 "entities": sorted(set(self.entity_words.draw(rng.randint(0, 2))))}
        self._keyed(draft, kind, path)
        if rng.random() < 0.1:
            draft["scope"] = "session"
            draft["sessionId"] = rng.choice(self.sessions)
        if rng.random() < 0.3 and self.n_messages:
            draft["sourceMessageIds"] = [f"msg_bench{rng.randrange(self.n_messages):013d}"]
        roll = rng.random()
        status = "superseded" if roll < 0.08 else "expired" if roll < 0.10 else "active"
        return draft, status

    def _keyed(self, draft: dict, kind: str, path: list[str]) -> None:
        rng = self.rng
        if kind == "task":
            draft["key"] = "task_state"
            draft["valueJson"] = {"state": rng.choice(("open", "open", "doing", "done"))}
        elif path[:2] == ["生活技能", "做饭"] and kind in ("preference", "constraint"):
            draft["key"] = rng.choice(("avoid_ingredient", "preferred_ingredient"))
            draft["valueJson"] = rng.choice(INGREDIENTS)
        elif draft["domain"] == "工程" and kind in ("fact", "decision", "constraint"):
            key = rng.choice(sorted(ENGINEERING_VALUES))
            draft["key"] = key
            draft["valueJson"] = rng.choice(ENGINEERING_VALUES[key])

    # -- queries ---------------------------------------------------------------------------
    def fts_terms(self) -> dict[str, list[str]]:
        """Search terms by how common they are: head words, middle ranks and the rare tail."""
        zh, en = self.zh.words, self.en.words
        return {"zh_common": zh[:8], "zh_mid": zh[100:108], "zh_rare": zh[3000:3008],
                "en_common": en[:8], "en_mid": en[100:108], "en_rare": en[3000:3008],
                "mixed": [f"{zh[i]} {en[i]}" for i in range(20, 28)]}
