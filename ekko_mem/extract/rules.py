"""Rule-based extractor: user messages in Chinese or English -> a MemoryExtraction-shaped dict.

Pure: no I/O, SQL, printing or clock; the caller passes `now` and `end_of_day`. The rules lean
conservative because a missed memory costs the user one more sentence, while a wrong one keeps
steering answers until someone notices: questions, hypotheticals, other people's tastes, small
talk and secrets become `ignored` entries, never nodes.

Per message: secrets check -> sentences -> skip filters -> per sentence the first rule that
fires wins: correction, project decision/constraint, task (TODO / done), food preferences (per
clause), and last the loose task phrases (我需要, I need to) that would otherwise swallow food.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

Item = dict[str, Any]
Fact = tuple[str, Any, tuple[str, ...]]  # (kind, value, the words that said it)

COOKING = "生活技能"
COOKING_PATH = (COOKING, "做饭", "饮食偏好")
COOKING_PREFIX = (COOKING, "做饭")
HEALTH_PATH = (COOKING, "健康")
CJK = r"[\u4e00-\u9fff]"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split("|"))


FOODS = _words(
    "香菜|葱|大葱|小葱|洋葱|姜|生姜|蒜|大蒜|辣椒|花椒|花生|牛肉|猪肉|羊肉|鸡肉|鸭肉|鱼|海鲜|虾|螃蟹|"
    "蟹|贝类|鸡蛋|牛奶|芹菜|韭菜|香菇|蘑菇|豆腐|番茄|西红柿|土豆|茄子|苦瓜|胡萝卜|内脏|肥肉|肉|"
    "味精|坚果|芝麻|奶酪|榴莲|鱼腥草|折耳根|"
    "cilantro|coriander|onion|green onion|spring onion|scallion|garlic|ginger|chili|chilli|"
    "pepper|peanut|nut|shellfish|shrimp|prawn|crab|lobster|seafood|fish|pork|beef|lamb|mutton|"
    "chicken|egg|milk|dairy|cheese|gluten|soy|tofu|mushroom|tomato|potato|eggplant|celery|msg|"
    "sesame|meat|bacon|olive|mayonnaise|butter|avocado|durian")
CUISINES_ZH = _words("川菜|粤菜|湘菜|鲁菜|苏菜|浙菜|闽菜|徽菜|东北菜|西北菜|日料|日本料理|"
                     "韩餐|韩国菜|西餐|法餐|意大利菜|泰国菜|越南菜|印度菜|墨西哥菜|家常菜")
CUISINES_EN = _words("sichuan|szechuan|cantonese|hunan|chinese|japanese|korean|thai|vietnamese|"
                     "indian|italian|french|mexican|greek|spanish|mediterranean")
# Flavour words that turn up where an ingredient would (别推荐辣的, I hate spicy food).
FLAVOUR_NOUNS = {
    "辣": "spicy", "辛辣": "spicy", "麻辣": "spicy", "油腻": "oil", "油": "oil", "咸": "salt",
    "甜": "sugar", "甜食": "sugar", "spicy": "spicy", "spice": "spicy", "spicy food": "spicy",
    "anything spicy": "spicy", "oily food": "oil", "greasy food": "oil", "fried food": "oil",
    "salty food": "salt", "sweets": "sugar", "sweet food": "sugar"}
# (field, level, phrases). "none" refuses (不吃辣), "low" reduces (少辣). The brief reads an off
# day's "nothing spicy" as a reduction, so it is "low" too.
FLAVOUR_SPEC = (
    ("oil", "low", ("少油|低油|少放油|不要太油|别太油|不要放太多油|别放太多油|不油腻|清淡|less oil|"
                   "low oil|not too oily|not oily|less oily|less greasy|not too greasy")),
    ("salt", "low", ("少盐|低盐|少放盐|不要太咸|别太咸|清淡|less salt|low salt|low sodium|"
                    "not too salty")),
    ("sugar", "low", "少糖|低糖|少放糖|不要太甜|别太甜|less sugar|low sugar|not too sweet"),
    ("spicy", "low", ("少辣|微辣|不要太辣|别太辣|不太辣|少放辣|不太能吃辣|不太吃辣|少吃辣|怕辣|"
                     "not too spicy|less spicy|mild|nothing spicy|nothing too spicy")),
    ("spicy", "none", ("不辣|不要辣|别放辣|不放辣|不吃辣|不能吃辣|吃不了辣|不爱吃辣|不喜欢辣|"
                      "不喜欢吃辣|讨厌辣|no spice|no spicy food|not spicy|don't eat spicy food|"
                      "don't eat spicy|do not eat spicy|can't eat spicy food|can't eat spicy|"
                      "can't handle spicy food|can't handle spice|don't like spicy food|"
                      "don't like spicy|hate spicy food")),
    ("spicy", "high", ("吃辣|爱吃辣|喜欢辣|喜欢吃辣|能吃辣|重辣|无辣不欢|多放辣|特辣|love spicy|"
                      "like spicy|spicy food|extra spicy|very spicy")),
)
# Canonical words per flavour value, so a title says exactly what its valueJson says.
FLAVOUR_WORDS = {
    ("oil", "low"): ("少油", "less oil"), ("salt", "low"): ("少盐", "low salt"),
    ("sugar", "low"): ("少糖", "less sugar"), ("spicy", "low"): ("少辣", "not too spicy"),
    ("spicy", "none"): ("不吃辣", "no spice"), ("spicy", "high"): ("吃辣", "spicy")}
KEYS = {"avoid": "avoid_ingredient", "like": "preferred_ingredient", "limit": "limit_ingredient",
        "cuisine": "preferred_cuisine", "flavour": "flavor_profile", "allow": "avoid_ingredient"}
IMPORTANCE = {"avoid": 0.9, "flavour": 0.85, "like": 0.8, "cuisine": 0.8, "limit": 0.85,
              "allow": 0.5}
# kind -> language -> (title, phrase after 临时：, content, tags); {x} is the value in words.
TEXT = {
    "avoid": {"zh": ("用户不吃{x}", "不吃{x}", "推荐菜谱时避免{x}", ("忌口", "菜谱推荐")),
              "en": ("Avoid {x}", "avoid {x}", "Avoid {x} when recommending recipes",
                     ("avoid", "recipes"))},
    "like": {"zh": ("用户喜欢{x}", "想吃{x}", "推荐菜谱时可以优先考虑{x}", ("喜好", "菜谱推荐")),
             "en": ("Likes {x}", "likes {x}", "Favour {x} when recommending recipes",
                    ("likes", "recipes"))},
    "cuisine": {"zh": ("用户喜欢{x}", "想吃{x}", "推荐菜谱时可以优先考虑{x}", ("菜系", "菜谱推荐")),
                "en": ("Likes {x} food", "{x} food", "Favour {x} dishes when recommending recipes",
                       ("cuisine", "recipes"))},
    "flavour": {"zh": ("用户偏好{x}", "{x}", "推荐菜谱时优先{x}", ("口味", "菜谱推荐")),
                "en": ("Prefers {x}", "{x}", "Prefer {x} when recommending recipes",
                       ("flavor", "recipes"))},
    "limit": {"zh": ("用户可接受少量{x}", "", "推荐菜谱时{x}可以少量使用，不要太多",
                     ("限量", "菜谱推荐")),
              "en": ("A little {x} is fine", "", ("{x} is fine in small amounts when recommending"
                     " recipes"), ("limit", "recipes"))},
    "allow": {"zh": ("用户不再忌口{x}", "", "推荐菜谱时不必再避开{x}", ("忌口", "菜谱推荐")),
              "en": ("No longer avoids {x}", "", "No need to avoid {x} when recommending recipes",
                     ("avoid", "recipes"))},
}

# Patterns are plain strings compiled on first use by _rx (IGNORECASE), so importing the CLI
# pays nothing for rules a command never runs.
EXPLICIT = (r"记住|记下|记一下|记录|帮我记|别忘了|不要忘了|以后|今后|往后|从现在(?:开始|起)|"
            r"从今|永远|一直|始终|每次都|总是|再也不|不再|从不|从来不|"
            r"\b(?:remember|note that|make a note|keep in mind|from now on|going forward|"
            r"in (?:the )?future|always|never|for good|anymore|any more|no longer|permanently|"
            r"every time|don't forget)\b")
REMEMBER = (r"记住|记下|记一下|记录|帮我记|别忘了|不要忘了|"
            r"\b(?:remember|note that|make a note|keep in mind|don't forget)\b")
CHANGE = (r"以后都不|今后都不|不再|再也不|从此不|\b(?:no longer|anymore|any more|never again)\b|"
          r"\bfrom now on,? (?:no|not|don't|never|i don't)\b")
TEMPORARY = (r"今天|今晚|今日|这两天|这几天|最近|这周|本周|暂时|这顿|这次|\b(?:today|tonight|"
             r"this week|for now|these days|lately|this time|right now|at the moment)\b")
HEALTH = (r"不舒服|胃疼|胃痛|肚子疼|生病|感冒|发烧|嗓子疼|喉咙痛|上火|拉肚子|难受|\b(?:not feeling "
          r"(?:well|good|great)|feel(?:ing)? sick|i'm sick(?! of)|upset stomach|stomach ?ache|"
          r"(?:have|got) (?:a cold|the flu)|sore throat|hung ?over|hangover)\b")
SENSITIVE = (r"(?:密码|口令|验证码|密钥|\bpassword|\bpasscode|\bpasswd|\bpin|\bapi[ _-]?key|"
             r"\bsecret|\btoken|\bprivate key)\s*(?:是|为|:|：|=|\bis\b)\s*\S|"
             r"我的(?:密码|银行卡|卡号|身份证|手机号|电话号码?)|身份证号|银行卡号|信用卡号|"
             r"\bmy (?:password|pin|credit card|card number|ssn|social security number|"
             r"phone number|bank account)\b|\bsk-[\w-]{8,}|"
             r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b|(?<!\d)(?:\d[ -]?){10,}\d(?!\d)|"
             r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[a-z]{2,}")
SMALL_TALK = (r"^(?:(?:你好|您好|嗨|哈喽|哈啰|谢谢你?|多谢|感谢|谢啦|好的|好滴|好|嗯|哈|再见|"
              r"拜拜|早上好|早安|晚安|午安|辛苦了|没问题|收到|明白了?|知道了|行|no problem|"
              r"no worries|ok|okay|hi|hello|hey|thanks|"
              r"thank you|thx|ty|bye|goodbye|good (?:morning|night|evening|afternoon)|cool|great|"
              r"nice|sure|got it|lol|yes|no|yep|nope|awesome|perfect|sounds good|so much|a lot|"
              r"there|again|you|all)[\s,.!~，。！～啊呀呢吧啦哦嘛]*)+$")
HYPOTHETICAL = (r"如果|假如|假设|要是|万一|倘若|^(?:if|suppose|imagine)\b|"
                r"\b(?:what if|hypothetically|what would happen)\b")
QUESTION = (r"[?？]\s*$|[吗呢么][。！!\s]*$|什么|怎么|怎样|为什么|为啥|哪些|哪个|哪里|如何|"
            r"多少|是不是|要不要|能不能|可不可以|有没有|^(?:what|how|why|when|where|which|who|whose|should|"
            r"shall|can|could|would|is|are|am|was|were|does|did|do(?! not\b)|will)\b")
# "Can you remember I don't eat pork?" is a request to store, not a question to answer.
REMEMBER_REQUEST = (r"^(?:请|你|麻烦你?)?(?:能不能|能|可以|可不可以)?(?:帮我)?"
                    r"(?:记住|记下|记一下|记录)|"
                    r"^(?:(?:can|could|would|will) you )?(?:please )?(?:remember|note|make a note|"
                    r"keep in mind)\b")
THIRD_PARTY = (r"老婆|老公|妻子|丈夫|太太|媳妇|男朋友|女朋友|男友|女友|朋友|同事|室友|家人|"
               r"妈妈|爸爸|母亲|父亲|儿子|女儿|孩子|宝宝|哥哥|姐姐|弟弟|妹妹|奶奶|爷爷|外婆|外公|老板|领导|"
               r"客人|别人|(?<![其吉])他|她|\bmy (?:wife|husband|partner|spouse|friends?|mom|mum|"
               r"mother|dad|father|parents|son|daughter|kids?|children|child|baby|boss|colleagues?|"
               r"coworkers?|roommates?|girlfriend|boyfriend|brother|sister|family|grandma|grandpa|"
               r"guests?)\b|^(?:he|she|they)\b|\b(?:he|she) (?:doesn't|does not|hates|likes|loves|"
               r"eats|can't|is)\b")
FOOD_CONTEXT = (r"做饭|做菜|菜谱|食谱|下厨|烹饪|饮食|口味|食材|忌口|吃|饭|餐|菜(?![单鸟])|"
                r"\b(?:foods?|cook\w*|recipes?|eat|eats|eating|meals?|dish|dishes|dinner|lunch|"
                r"breakfast|menu|cuisine|kitchen|diet|snacks?)\b")
TECH_ZH = (r"[A-Za-z]{2,}|数据库|代码|接口|框架|部署|测试|仓库|分支|提交|依赖|版本|服务器|"
           r"检索|索引|模块|函数|脚本|配置|日志|迁移|前端|后端|项目|架构|缓存")
TECH_EN = (r"\b(?:database|db|code|codebase|api|framework|library|deploy\w*|tests?|testing|repo|"
           r"repository|branch(?:es)?|commits?|push|merge|pr|release|build|dependenc\w+|versions?|"
           r"service|server|index|schema|modules?|functions?|scripts?|config\w*|logging|logs?|"
           r"migrations?|frontend|backend|project|python|sqlite|postgres\w*|mysql|redis|docker|"
           r"kubernetes|typescript|javascript|rust|lint\w*|ci|sql|orm|packages?|cli|json|http|"
           r"types?|type hints|tabs|spaces|git|ruff|pytest)\b|(?-i:\b\w*[a-z][A-Z]\w*)|\b[a-z]+\d")
# Strong markers say "we decided" outright; weak ones (决定, must) need a technical word too.
PROJECT_MARKERS = (
    ("decision", False, (r"我们决定|我们定了|我们商定|我们约定|团队决定|\bwe(?:'ve| have)? "
                        r"(?:decided|agreed)\b|\bwe(?: will|'ll| are going to|'re going to) "
                        r"(?:use|go with|adopt|switch to|stick with)\b|\bwe(?:'re| are) going "
                        r"with\b|\blet's go with\b")),
    ("constraint", False, r"禁止|严禁|\b(?:must not|must never|mustn't|never use)\b"),
    ("decision", True, (r"决定|采用|选用|改用|统一用|\b(?:decided to|will use|going with|"
                       r"switch(?:ed)? to|settled on)\b")),
    ("constraint", True, (r"必须|不要用|不能用|别用|不许|不准|不得|一律|只能用|只用|\b(?:must|"
                         r"don't use|do not use|always use|should always|should never|only use|"
                         r"is forbidden|not allowed)\b")),
)
AVOID_ZH = (r"对(?P<x>.+?)过敏",
            (r"(?:别给我推荐|不要给我推荐|别推荐|不要推荐|别给我放|不要给我放|别给我|不要给我|不要放|别放|"
            r"不放|不要加|别加|不加|不太喜欢吃|不太喜欢|不喜欢吃|不喜欢|不想吃|不爱吃|不吃|讨厌吃|讨厌|"
            r"忌口|不能吃|吃不了|避开|不要)[:：]?\s*(?P<x>.+)"))
AVOID_EN = ((r"\b(?:don't|do not|never|stop|please don't)\s+(?:ever\s+)?(?:recommend|suggest|"
            r"give me|add|put|include|use|cook with|serve|offer)(?:ing)?\s+(?:me\s+)?(?P<x>.+)"),
            r"\bi\s+(?:don't|do not|can't|cannot|never|won't|no longer)\s+(?:eat|have)\s+(?P<x>.+)",
            r"\bi\s+(?:hate|dislike|detest|can't stand|don't like|do not like)\s+(?P<x>.+)",
            r"\b(?:i'm|i am)\s+allergic\s+to\s+(?P<x>.+)",
            r"\bavoid(?:ing)?\s+(?P<x>.+)",
            r"^(?:no|hold the|without)\s+(?P<x>.+)")
LIKE_ZH = (r"(?<!不)(?:最喜欢吃|最喜欢|喜欢吃|喜欢|偏好|偏爱|爱吃|最爱)(?P<x>.+)",)
LIKE_EN = (r"\bi\s+(?:really\s+|also\s+|do\s+)?(?:like|love|prefer|enjoy|adore)\s+(?P<x>.+)",
           r"\b(?:i'm|i am)\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+(?P<x>.+)",
           r"\bmy\s+favou?rite\s+(?:food|ingredient|dish|cuisine)\s+is\s+(?P<x>.+)")
LITTLE = r"(?:一点点?|一些|少量|少许)"
LIMIT_ZH = (rf"(?P<x>{CJK}{{1,8}}?)(?:现在|其实|也|还是)*(?:可以|能|可)(?:接受|吃|放)?{LITTLE}",
            rf"(?:可以|能)(?:接受|吃|放){LITTLE}(?P<x>{CJK}{{1,8}})")
ALLOW_ZH = (rf"(?P<x>{CJK}{{1,8}}?)(?:现在|其实|也)*(?:可以|能)(?:吃|接受)了",
            rf"(?:现在|其实)(?:可以|能|也)?吃(?P<x>{CJK}{{1,8}}?)了")
OK_EN = (r"(?P<x>[a-z][a-z ]{0,30}?)\s+(?:is|are)\s+(?:fine|ok|okay|alright|acceptable)\b",
         r"\bi\s+can\s+(?:eat|have)\s+(?P<x>[a-z][a-z ]{0,40}?)(?:\s+(?:now|again|too))?[.!]*$",
         r"\bi\s+eat\s+(?P<x>[a-z][a-z ]{0,30}?)\s+(?:now|again)\b")
AMOUNT = r"一点|一些|少量|少许|small amounts?|a little|a bit|in moderation|not too much|sparingly"
LEAD_ZH = r"^(?:其实|现在|我们|我|对于|但是|但|不过|那)+"
LEAD_EN = (r"^(?:(?:actually|but|now|well|ok|okay|so|also|i think|i guess|a little|a bit of|"
           r"a bit|some|small amounts? of|a small amount of|the)\s+)+")
TASK_DONE = (r"^(?:我们?)?(?:已经)?(?:完成了|做完了|搞定了|已完成)[:：]?\s*(?P<x>.+)",
             r"^(?P<x>.+?)(?:已经)?(?:完成了|做完了|搞定了|已完成)了?[。！!.]*$",
             r"^(?:done|finished|completed)\b(?:\s+with)?\s*[:：-]?\s*(?P<x>.+)",
             r"^i(?:'ve| have|'m| am)?\s+(?:just\s+)?(?:finished|completed|done with)\s+(?P<x>.+)",
             r"^(?P<x>.+?)\s+(?:is|are)\s+(?:done|finished|complete)[.!]*$")
TASK_OPEN = (r"^(?:todo|to-do|待办(?:事项)?|任务)\s*[:：-]\s*(?P<x>.+)", r"^todo\s+(?P<x>.+)")
TASK_LOOSE = (r"(?:我需要|提醒我|别忘了|不要忘了)(?P<x>.+)",
              r"\b(?:i need to|remind me to|don't forget to)\s+(?P<x>.+)")
ZH_ITEM_LEAD = r"^(?:吃|用|放|加|给我|任何|带|有|推荐)+"
ZH_ITEM_TAIL = r"(?:了|啦|哦|吧|啊|呀|嘛|吗|呢|的菜|的东西|的食物|这类的?|之类的?|等等?|的)+$"
EN_ITEM_LEAD = (r"^(?:(?:any|the|a|an|some|more|much|too much|anything with|food with|foods with|"
                r"dishes with|eating|to eat|to cook|cooking with|cooking)\s+)+")
EN_ITEM_TAIL = (r"\s+(?:in|for|when|from|at|on|anymore|any more|again|please|ever|because|since|"
                r"as|if|unless|with|to|either|too|though|thanks|thank you|today|tonight|now)\b.*$")
NOT_FOOD_ZH = (r"太|很|什么|这|那|我|你|他|她|它|一点|东西|麻烦|担心|客气|着急|忘|事|人|话|时间|"
               r"方案|问题")
STOP_EN = _words("it|that|this|them|you|me|him|her|problem|problems|worries|idea|ideas|thanks|"
                 "one|way|time|anything|everything|nothing|something|please|stuff|much|lot")
EN_CLAUSE = (r"\s*[,;]\s*(?=(?:but|so|though|although|also|plus|please|nothing|no|just|i|we|"
             r"and i)\b)|\s+(?:but|and|so)\s+(?=(?:i|we)\b)")
SAY_PREFIX = (r"^(?:请记住|请记下|记住|记下|记一下|帮我记录一下|帮我记录|帮我记一下|注意|备注|"
              r"please remember|remember|please note|note)\s*(?:that\s+)?[,，:：]?\s*")
TRIM_END = r"[\s。！？；;!?.，,]+$"


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _has(pattern: str, text: str) -> bool:
    return _rx(pattern).search(text) is not None


def _first(patterns: tuple[str, ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        match = _rx(pattern).search(text)
        if match:
            return match
    return None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class _Turn:
    """What a whole message says about every memory in it: source, language, intent, time."""

    message_id: str
    zh: bool
    explicit: bool  # 记住 / 以后 / from now on / always: a lasting rule, fit for user scope
    remember: bool  # asked outright to remember: the strongest signal there is
    change: bool  # 以后都不 / no longer: replaces what was true before
    temporary: bool  # today, tonight, a passing ailment: never beyond this session
    health: str | None  # the clause naming the ailment, quoted in the memory's content
    end_of_day: str


def extract(messages: list[dict], *, now: str, end_of_day: str) -> dict:
    """Propose memories from the user's messages; assistant, system and tool turns never are.

    Returns {"summaryPatch", "nodes": [{operation, node, reason, target?}], "ignored":
    [{messageId, reason}]}. `end_of_day` is the expiresAt of today's passing states; `now` is
    accepted so every extractor has one signature (the service stamps the times itself).
    """
    users = [m for m in messages if m.get("role") == "user"]
    items: list[Item] = []
    ignored: list[dict] = []
    for message in users:
        found, reason = _from_message(message, end_of_day)
        items.extend(found)
        if reason:
            ignored.append({"messageId": message.get("id"), "reason": reason})
    items = _merge_duplicates(items)
    chinese = sum(1 for m in users if _has(CJK, str(m.get("content") or "")))
    return {"summaryPatch": _summary(items, chinese > 0 and chinese * 2 >= len(users)),
            "nodes": items, "ignored": ignored}


def _from_message(message: dict, end_of_day: str) -> tuple[list[Item], str | None]:
    # Phones type curly apostrophes (don’t); the rules spell them straight.
    text = str(message.get("content") or "").replace("\u2019", "'").replace("\u2018", "'")
    text = _rx(r"[ \t\u3000]+").sub(" ", text).strip()
    if not text:
        return [], "empty"
    if _has(SENSITIVE, text):
        return [], "sensitive"  # the whole message: a secret must not leak via a title either
    kept, skipped = [], []
    for sentence in _sentences(text):
        reason = _skip_reason(sentence)
        (skipped if reason else kept).append(reason or sentence)
    turn = _turn(str(message.get("id") or ""), kept, _has(CJK, text), end_of_day)
    items: list[Item] = []
    facts: list[Fact] = []
    for sentence in kept:
        items.extend(_from_sentence(sentence, turn, facts))
    items.extend(_food_items(facts, turn))
    if turn.health and not facts:
        items.append(_health_item(turn))
    if items:
        return items, None
    return [], skipped[0] if skipped else "no_rule_matched"


def _sentences(text: str) -> list[str]:
    parts = _rx(r"(?<=[。！？；;!?])|(?<=\.)\s+|\n+").split(text)
    return [part.strip() for part in parts if part and _has(r"\w", part)]


def _clauses(sentence: str, zh: bool) -> list[str]:
    # Chinese lists use 、 so a comma starts a clause; English lists use commas, so only a comma
    # before a new subject or connective does.
    return [c for c in _rx(r"[，,]" if zh else EN_CLAUSE).split(sentence) if c and c.strip()]


def _skip_reason(sentence: str) -> str | None:
    if len(sentence) <= 40 and _has(SMALL_TALK, sentence):
        return "small_talk"
    if _has(HYPOTHETICAL, sentence):
        return "hypothetical"
    if _has(QUESTION, sentence) and not _has(REMEMBER_REQUEST, sentence):
        return "question"
    if _has(THIRD_PARTY, sentence):
        return "third_party"
    return None


def _turn(message_id: str, sentences: list[str], zh: bool, end_of_day: str) -> _Turn:
    text = " ".join(sentences)
    health = next((c.strip(" ，,。.!！") for s in sentences for c in _clauses(s, zh)
                   if _has(HEALTH, c)), None)
    return _Turn(message_id, zh, _has(EXPLICIT, text), _has(REMEMBER, text), _has(CHANGE, text),
                 health is not None or _has(TEMPORARY, text), health, end_of_day)


def _from_sentence(sentence: str, turn: _Turn, facts: list[Fact]) -> list[Item]:
    for rule in (_correction, _project, _task):
        item = rule(sentence, turn)
        if item is not None:
            return [item]
    found = [f for clause in _clauses(sentence, turn.zh) for f in _food_facts(clause, sentence)]
    facts.extend(found)
    if found:
        return []
    match = _first(TASK_LOOSE, sentence)
    text = _task_text(match.group("x")) if match else ""
    return [_task_item("open", text, turn)] if text else []


# --- food preferences ------------------------------------------------------------------------

def _food_facts(clause: str, sentence: str) -> list[Fact]:
    rest, fields, said = _scan_flavours(clause)
    facts: list[Fact] = [("flavour", fields, tuple(said))] if fields else []
    zh = _has(CJK, clause)
    for kind, patterns in (("avoid", AVOID_ZH if zh else AVOID_EN),
                           ("like", LIKE_ZH if zh else LIKE_EN)):
        match = _first(patterns, rest.strip())
        if match:
            return facts + _ingredient_facts(kind, match.group("x"), sentence, zh)
    return facts


def _scan_flavours(clause: str) -> tuple[str, dict[str, str], list[str]]:
    """Take flavour phrases out of the clause, so 不要太辣 is never read as avoiding 太辣."""
    fields: dict[str, str] = {}
    said: list[str] = []

    def take(match: re.Match[str]) -> str:
        for field, level in _flavour_table()[match.group(0).lower()].items():
            # A negation sits right before the word: a bounded look-back keeps long texts
            # linear instead of rescanning the whole clause at every match.
            before = clause[max(0, match.start() - 40): match.start()]
            negated = _has(r"[不别没][^，,]{0,2}$|\b(?:not|never|no|don't|can't|won't)\b"
                           r"(?:\s+\w+){0,2}\s*$", before)
            fields[field] = "low" if level == "high" and negated else level
        said.append(match.group(0))
        return " "

    return _flavour_rx().sub(take, clause), fields, said


@cache
def _flavour_table() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for field, level, phrases in FLAVOUR_SPEC:
        for phrase in phrases.split("|"):
            table.setdefault(phrase, {})[field] = level  # 清淡 sets both oil and salt
    return table


@cache
def _flavour_rx() -> re.Pattern[str]:
    # Longest first, so at one position 不吃辣 beats 吃辣; 辣椒 and 辣条 are foods, not levels.
    alternatives = []
    for phrase in sorted(_flavour_table(), key=len, reverse=True):
        text = rf"\b{re.escape(phrase)}\b" if phrase.isascii() else re.escape(phrase)
        alternatives.append(text + "(?![椒条酱子油])" if phrase.endswith("辣") else text)
    return re.compile("|".join(alternatives), re.IGNORECASE)


def _ingredient_facts(kind: str, raw: str, sentence: str, zh: bool) -> list[Fact]:
    facts: list[Fact] = []
    for item in _split_items(raw, zh):
        field = FLAVOUR_NOUNS.get(_rx(r"^(?:太|很|过于|too |very )").sub("", item))
        cuisine = _cuisine(item, zh)
        if field:
            facts.append(("flavour", {field: "high" if kind == "like" else "low"}, (item,)))
        elif cuisine:
            if kind == "like":  # an avoided cuisine has no controlled key yet: dropped
                facts.append(("cuisine", cuisine, (item,)))
        elif _is_food(item, sentence, zh):
            facts.append((kind, item, (item,)))
    return facts


def _split_items(raw: str, zh: bool) -> list[str]:
    """香菜和葱 -> [香菜, 葱]; "cilantro, onions or garlic please" -> [cilantro, onion, garlic]."""
    raw = raw.strip(" \t。！？，,.!?；;：:")
    if zh:
        parts = _rx(r"[、,，/]|以及|还有|和|跟|与|及|或者?").split(raw)
        return [p for p in (_rx(ZH_ITEM_TAIL).sub("", _rx(ZH_ITEM_LEAD).sub("", p.strip()))
                            for p in parts) if p]
    raw = _rx(EN_ITEM_TAIL).sub("", _rx(EN_ITEM_LEAD).sub("", raw.lower()))
    parts = _rx(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor|&)\s+").split(raw)
    return [p for p in (_singular(_rx(EN_ITEM_LEAD).sub("", p.strip(" .!?"))) for p in parts) if p]


def _singular(word: str) -> str:
    # Values are matched exactly later, so "onions" and "onion" must be one value.
    if word in FOODS:
        return word
    for suffix in ("es", "s"):  # tomatoes, onions
        if word.endswith(suffix) and word[: -len(suffix)] in FOODS:
            return word[: -len(suffix)]
    return word


def _cuisine(item: str, zh: bool) -> str | None:
    if zh:
        return item if item in CUISINES_ZH else None
    word = _rx(r"\s+(?:food|cuisine|dishes|dish|cooking)$").sub("", item)
    if word not in CUISINES_EN:
        return None
    return "Sichuan" if word == "szechuan" else word.capitalize()


def _is_food(item: str, sentence: str, zh: bool) -> bool:
    """Known foods always count; any other word only when the sentence is about food."""
    if item in FOODS:
        return True
    if zh:
        shaped = _has(rf"^{CJK}{{1,8}}$", item) and not _has(NOT_FOOD_ZH, item)
    else:
        words = item.split()
        shaped = (_has(r"^[a-z][a-z -]{0,30}$", item) and len(words) <= 3
                  and not STOP_EN.intersection(words))
    return shaped and _has(FOOD_CONTEXT, sentence)


def _food_items(facts: list[Fact], turn: _Turn) -> list[Item]:
    """One node per ingredient; one flavor_profile per message, since the key holds one value."""
    flavour: dict[str, str] = {}
    said: list[str] = []
    out: list[Item | None] = []
    seen: set[tuple[str, str]] = set()
    for kind, value, words in facts:
        if kind == "flavour":
            if not flavour:
                out.append(None)  # keeps its place among the message's nodes
            flavour.update(value)
            said += [w for w in words if w not in said]
        elif (kind, value) not in seen:
            seen.add((kind, value))
            out.append(_food_item(kind, value, list(words), turn))
    return [item or _food_item("flavour", flavour, said, turn) for item in out]


def _food_item(kind: str, value: Any, entities: list[str], turn: _Turn) -> Item:
    stance = _stance(turn, IMPORTANCE[kind])
    words = _value_words(kind, value, turn.zh)
    wording = _wording(kind, words, turn.zh, turn.temporary, turn.health)
    node = _food_node(kind, value, entities, stance, wording, turn)
    item: Item = {"operation": "create", "node": node, "reason": _reason(turn)}
    if kind == "flavour" and turn.change and turn.explicit and not turn.temporary:
        # 以后都不吃辣 after 喜欢吃辣: the new lasting profile replaces the old one. The
        # extractor cannot see stored values, so the selector names the slot, not a value; the
        # service finds nothing to replace when there is no profile yet, and creates instead.
        item.update(operation="supersede", reason="user changed a lasting flavour preference",
                    target={"type": "preference", "key": KEYS[kind],
                            "categoryPathPrefix": list(COOKING_PREFIX)})
    return item


def _food_node(kind: str, value: Any, entities: list[str], stance: dict, wording: dict,
               turn: _Turn) -> dict:
    node = {"scope": stance["scope"], "domain": COOKING, "categoryPath": list(COOKING_PATH),
            "type": stance["type"], "key": KEYS[kind], "valueJson": value, **wording,
            "confidence": stance["confidence"], "importance": stance["importance"],
            "entities": entities, "sourceMessageIds": [turn.message_id]}
    if stance.get("expiresAt"):
        node["expiresAt"] = stance["expiresAt"]
    node["explicit"] = stance["explicit"]
    return node


def _stance(turn: _Turn, importance: float) -> dict:
    """Scope, type and weights. Temporary beats explicit: 记住，今天少辣 still ends tonight."""
    if turn.temporary:
        # While it lasts a passing constraint outranks preferences (design, 冲突消解).
        return {"scope": "session", "type": "constraint", "confidence": 0.9, "importance": 0.9,
                "expiresAt": turn.end_of_day, "explicit": turn.remember}
    if turn.explicit:
        boost = 0.05 if turn.remember else 0.0
        return {"scope": "user", "type": "preference", "explicit": True,
                "confidence": 0.99 if turn.remember else 0.95,
                "importance": round(min(0.95, importance + boost), 2)}
    # Said in passing: worth knowing now, but an inference never reaches user scope.
    return {"scope": "session", "type": "preference", "confidence": 0.6, "importance": 0.5,
            "explicit": False}


def _reason(turn: _Turn) -> str:
    if turn.temporary:
        return "temporary state: holds until the end of today"
    if turn.explicit:
        return "explicit lasting dietary preference"
    return "preference stated without explicit intent: kept to this session"


def _value_words(kind: str, value: Any, zh: bool) -> str:
    if kind != "flavour":
        return str(value)
    words = [FLAVOUR_WORDS[(field, level)][0 if zh else 1] for field, level in value.items()]
    return "".join(words) if zh else ", ".join(words)


def _wording(kind: str, words: str, zh: bool, temporary: bool, health: str | None) -> dict:
    title, phrase, content, tags = (
        part.format(x=words) if isinstance(part, str) else list(part)
        for part in TEXT[kind]["zh" if zh else "en"])
    content = content if zh else content[:1].upper() + content[1:]
    if not temporary:
        return {"title": title, "content": content + ("。" if zh else "."), "tags": tags}
    if zh:
        why = f"临时：{health}" if health else "临时"
        return {"title": f"临时：{phrase}", "content": f"{content}（{why}）。",
                "tags": [*tags, "临时"]}
    why = f"temporary: {health}" if health else "temporary"
    return {"title": f"Temporary: {phrase}", "content": f"{content} ({why}).",
            "tags": [*tags, "temporary"]}


def _health_item(turn: _Turn) -> Item:
    """今天胃不舒服 with no dish named: still worth a session note until tonight."""
    health = turn.health or ""
    node = {"scope": "session", "domain": COOKING, "categoryPath": list(HEALTH_PATH),
            "type": "constraint", "title": _clip(health, 60),
            "content": f"临时状态：{health}。" if turn.zh else f"Temporary state: {health}.",
            "confidence": 0.9, "importance": 0.9,
            "tags": ["临时", "健康"] if turn.zh else ["temporary", "health"], "entities": [],
            "sourceMessageIds": [turn.message_id], "expiresAt": turn.end_of_day,
            "explicit": turn.remember}
    return {"operation": "create", "node": node,
            "reason": "temporary health state: holds until the end of today"}


# --- corrections, project decisions, tasks ---------------------------------------------------

def _correction(sentence: str, turn: _Turn) -> Item | None:
    """香菜现在可以接受一点 / cilantro is fine now: replaces or lifts an earlier avoidance."""
    if turn.zh:
        candidates = [("limit", p) for p in LIMIT_ZH] + [("allow", p) for p in ALLOW_ZH]
    else:
        kind = "limit" if _has(AMOUNT, sentence) else "allow"
        candidates = [(kind, p) for p in OK_EN]
    for kind, pattern in candidates:
        match = _rx(pattern).search(sentence)
        if not match:
            continue
        subject = _rx(LEAD_ZH if turn.zh else LEAD_EN).sub("", match.group("x").strip().lower())
        subject = subject if turn.zh else _singular(subject)
        # Lifting an avoidance outright needs a known food; "the API is fine now" is not one.
        known = subject in FOODS if kind == "allow" else _is_food(subject, sentence, turn.zh)
        if subject and subject not in FLAVOUR_NOUNS and known:
            return _correction_item(kind, subject, turn)
    return None


def _correction_item(kind: str, ingredient: str, turn: _Turn) -> Item:
    # The user's own word about a stored preference: explicit and user scope, or the old
    # user-scope avoidance would win again in the next session.
    stance = {"scope": "user", "type": "preference", "confidence": 0.95,
              "importance": IMPORTANCE[kind], "explicit": True}
    value = {"ingredient": ingredient, "amount": "little"} if kind == "limit" else ingredient
    wording = _wording(kind, ingredient, turn.zh, False, None)
    node = _food_node(kind, value, [ingredient], stance, wording, turn)
    target = {"type": "preference", "key": "avoid_ingredient", "valueJson": ingredient,
              "categoryPathPrefix": list(COOKING_PREFIX)}
    if kind == "limit":
        return {"operation": "supersede", "node": node, "target": target,
                "reason": "user corrected an earlier avoidance: small amounts are fine"}
    return {"operation": "expire", "node": node, "target": target,
            "reason": "user no longer avoids this ingredient"}


def _project(sentence: str, turn: _Turn) -> Item | None:
    """我们决定用 SQLite / must not ...: a workspace decision or constraint, worded as said."""
    if _has(FOOD_CONTEXT, sentence) or _mentions_food(sentence, turn.zh):
        return None  # 必须少油 and "never use cilantro" are food preferences
    technical = _has(TECH_ZH if turn.zh else TECH_EN, sentence)
    for kind, needs_technical, pattern in PROJECT_MARKERS:
        if _has(pattern, sentence) and (technical or not needs_technical):
            return _project_item(kind, sentence, turn)
    return None


def _mentions_food(sentence: str, zh: bool) -> bool:
    if zh:
        return any(food in sentence for food in FOODS if not food.isascii())
    return any(_singular(w) in FOODS for w in _rx(r"[a-z]+").findall(sentence.lower()))


def _project_item(kind: str, sentence: str, turn: _Turn) -> Item:
    text = _rx(TRIM_END).sub("", _rx(SAY_PREFIX).sub("", sentence)).strip()
    domain = "工程" if turn.zh else "engineering"
    folder = {"decision": ("决策", "decisions"), "constraint": ("约束", "constraints")}[kind]
    node = {"scope": "workspace", "domain": domain,
            "categoryPath": [domain, folder[0 if turn.zh else 1]], "type": kind,
            "title": _clip(text, 60), "content": text + ("。" if turn.zh else "."),
            "confidence": 0.95, "importance": 0.85, "tags": [folder[0] if turn.zh else kind],
            "entities": _names(text, turn.zh), "sourceMessageIds": [turn.message_id],
            "explicit": True}
    return {"operation": "create", "node": node, "reason": f"project {kind} stated by the user"}


def _names(text: str, zh: bool) -> list[str]:
    """Tool names: Latin words inside Chinese; in English, words with inner capitals or digits
    (SQLite, FTS5) and capitalised words past the first."""
    words = _rx(r"[A-Za-z][A-Za-z0-9.+#_-]*[A-Za-z0-9+#]|[A-Za-z]").findall(text)
    if not zh:
        words = [w for i, w in enumerate(words) if w != "I" and (
            w[1:] != w[1:].lower() or _has(r"\d", w) or (i > 0 and w[0].isupper()))]
    return list(dict.fromkeys(words))


def _task(sentence: str, turn: _Turn) -> Item | None:
    for state, patterns in (("done", TASK_DONE), ("open", TASK_OPEN)):
        match = _first(patterns, sentence)
        text = _task_text(match.group("x")) if match else ""
        if text:
            return _task_item(state, text, turn)
    return None


def _task_text(raw: str) -> str:
    return _rx(TRIM_END).sub("", _rx(r"^(?:了|我们|我|已经)+").sub("", raw.strip())).strip()


def _task_item(state: str, text: str, turn: _Turn) -> Item:
    domain = "任务" if turn.zh else "tasks"
    said = {"open": ("待办：", "To do: "), "done": ("已完成：", "Done: ")}[state]
    node = {"scope": "workspace", "domain": domain, "categoryPath": [domain], "type": "task",
            "key": "task_state", "valueJson": {"state": state}, "title": _clip(text, 60),
            "content": said[0 if turn.zh else 1] + text, "confidence": 0.95,
            # A finished task matters little from now on (design, Token 成本策略).
            "importance": 0.7 if state == "open" else 0.3,
            "tags": ["待办"] if turn.zh else ["todo"], "entities": [],
            "sourceMessageIds": [turn.message_id], "explicit": True}
    if state == "open":
        return {"operation": "create", "node": node, "reason": "task opened by the user"}
    return {"operation": "update", "node": node, "target": {"type": "task", "text": text},
            "reason": "user reported the task done"}


# --- batch ---------------------------------------------------------------------------------

def _merge_duplicates(items: list[Item]) -> list[Item]:
    """The same memory said twice in one batch becomes one node that cites both messages."""
    first: dict[str, Item] = {}
    out: list[Item] = []
    for item in items:
        node = item["node"]
        slot = json.dumps([item["operation"], node.get("scope"), node.get("type"),
                           node.get("key"), node.get("valueJson"), node.get("title")],
                          ensure_ascii=False, sort_keys=True)
        if node.get("key") and slot in first:
            sources = first[slot]["node"]["sourceMessageIds"]
            sources.extend(s for s in node["sourceMessageIds"] if s not in sources)
            continue
        first.setdefault(slot, item)
        out.append(item)
    return out


def _summary(items: list[Item], zh: bool) -> str | None:
    if not items:
        return None
    labels = [("已完成：" if zh else "done: ") + item["node"]["title"]
              if item["operation"] == "update" else item["node"]["title"] for item in items]
    text = "记忆更新：" + "；".join(labels) if zh else "Memory: " + "; ".join(labels)
    return _clip(text, 200)
