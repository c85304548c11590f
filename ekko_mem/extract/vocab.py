"""The rule-based extractor's vocabulary: word lists and patterns, Chinese and English.

Data only, kept apart from the rules in rules.py that use it.
"""
from __future__ import annotations

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
# (field, level, phrases). "none" refuses (不吃辣), "low" reduces (少辣). "Nothing spicy" on an
# off day asks for a reduction while it lasts, so it is "low" too.
FLAVOUR_SPEC = (
    ("oil", "low", ("少油|低油|少放油|不要太油|别太油|不要放太多油|别放太多油|不油腻|清淡|less oil|"
                   "light on the oil|light on oil|go easy on the oil|low in oil|"
                   "low oil|not too oily|not oily|less oily|less greasy|not too greasy")),
    ("oil", "high", "重油|多油|多放油|油大一点|more oil|extra oil"),
    ("salt", "low", ("少盐|低盐|少放盐|不要太咸|别太咸|清淡|less salt|low salt|low sodium|"
                    "low in salt|light on the salt|light on salt|go easy on the salt|"
                    "not too salty")),
    ("sugar", "low", ("少糖|低糖|少放糖|不要太甜|别太甜|less sugar|low sugar|not too sweet|"
                     "low in sugar|light on the sugar|light on sugar")),
    ("spicy", "low", ("少辣|微辣|不要太辣|别太辣|不太辣|少放辣|不太能吃辣|不太吃辣|少吃辣|怕辣|"
                     "not too spicy|less spicy|mild|nothing spicy|nothing too spicy|"
                     "go easy on the spice|"
                     "easy on the spice|light on the spice|less spice|not much spice|"
                     "hold the spice")),
    ("spicy", "none", ("不辣|不要辣|别放辣|不放辣|不吃辣|不能吃辣|吃不了辣|不爱吃辣|不喜欢辣|"
                      "不喜欢吃辣|讨厌辣|no spice|no spicy food|not spicy|don't eat spicy food|"
                      "don't eat spicy|do not eat spicy|can't eat spicy food|can't eat spicy|"
                      "can't handle spicy food|can't handle spice|don't like spicy food|"
                      "don't like spicy|hate spicy food")),
    ("sugar", "high", "爱吃甜|喜欢吃甜|喜欢甜|嗜甜|甜食控|sweet tooth|love sweets|love sweet"),
    ("spicy", "high", ("吃辣|爱吃辣|喜欢辣|喜欢吃辣|能吃辣|重辣|无辣不欢|多放辣|特辣|love spicy|"
                      "like spicy|spicy food|extra spicy|very spicy")),
)
# After a flavour: what refuses it outright ("spicy food is a total no-go", 辣的完全不能吃).
REFUSED_AFTER = (r"^\s*(?:food|dishes|stuff)?\s*(?:is|are)\s+(?:a\s+)?(?:total\s+|complete\s+|"
                 r"hard\s+)?(?:no-go|no go|no-no|off the table|off limits|out)\b|"
                 r"^的?(?:我)?(?:完全|一点都|一点也|根本|真的)?(?:不能吃|吃不了|不吃|不碰|受不了)")
# A refusal outright, not a reduction: 辣的完全不能吃 is none, 别推荐辣的 only less.
REFUSAL = (r"完全|一点都|一点也|根本|绝对|不能吃|吃不了|不吃|不要|不碰|受不了|"
           r"\b(?:can't|cannot|never|no-go|"
           r"no go|no-no|off limits|off the table|at all|won't)\b")
# A degree word before a flavour describes a dish (粤菜比较清淡), unless the clause is about
# the person's own taste.
DESCRIBED = r"(?:比较|很|挺|蛮|非常|特别|相对|偏)\s*$"
OWN_TASTE = r"我|口味|喜欢|偏好|偏爱|要|想|爱|\b(?:i|my|prefer|like|want|love)\b"
# Canonical words per flavour value, so a title says exactly what its valueJson says.
FLAVOUR_WORDS = {
    ("oil", "low"): ("少油", "less oil"), ("salt", "low"): ("少盐", "low salt"),
    ("sugar", "low"): ("少糖", "less sugar"), ("spicy", "low"): ("少辣", "not too spicy"),
    ("spicy", "none"): ("不吃辣", "no spice"), ("spicy", "high"): ("吃辣", "spicy"),
    ("oil", "high"): ("重油", "more oil"), ("salt", "high"): ("咸口", "salty"),
    ("sugar", "high"): ("甜口", "sweet")}
# A statement that replaces a whole structured value rather than one field of it.
# English: only words that say the taste itself is replaced; "everything" or "totally" alone are
# too loose ("my buddy puts hot sauce on everything") to throw a stored profile away.
REPLACE_ALL = (r"完全|全部|全都|一切|整个|彻底|\b(?:(?:completely|entirely|totally) (?:different|"
               r"new|changed)|from scratch|start(?:ing)? over)\b")
# A limit on cooking time: a cooking word, a bound, a duration, in either order.
COOK_WORDS = (r"做饭|做菜|烹饪|下厨|煮饭|烧菜|晚饭|午饭|早饭|饭菜|"
              r"cook|cooking|meal|meals|recipe|recipes|dinner|lunch")
TIME_BOUND = (r"别超过|不要超过|不超过|不能超过|控制在|以内|之内|(?<=[钟时])内|最多|"
              r"under|within|at most|"
              r"no more than|less than|max(?:imum)?")
DURATION = (r"(?P<half>半个?小时|half an hour)|(?P<quarter>一刻钟)|(?P<hour1>an hour|一个?小时)"
            r"|(?P<n>\d+|[一二两三四五六七八九十]+)\s*(?P<unit>分钟|个?小时|minutes?|mins?|hours?|hrs?)")
ZH_NUMBERS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9, "十": 10}
KEYS = {"avoid": "avoid_ingredient", "like": "preferred_ingredient", "limit": "limit_ingredient",
        "cuisine": "preferred_cuisine", "flavour": "flavor_profile", "allow": "avoid_ingredient",
        "time": "cooking_time_preference"}
IMPORTANCE = {"avoid": 0.9, "flavour": 0.85, "like": 0.8, "cuisine": 0.8, "limit": 0.85,
              "allow": 0.5, "time": 0.75}
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
TEMPORARY = (r"今天|今晚|今日|这两天|这几天|最近|这周|本周|暂时|这顿|这次|这阵子|这段时间|这个周末|"
             r"\b(?:today|tonight|this week|this weekend|for now|these days|lately|this time|"
             r"right now|at the moment|for the time being|for a (?:few|couple(?: of)?) "
             r"(?:days|weeks)|for the next (?:few )?(?:days|weeks)|until (?:i|my|the)|"
             r"till (?:i|my|the))\b")
HEALTH = (r"不舒服|胃疼|胃痛|肚子疼|肚子痛|生病|感冒|发烧|嗓子疼|喉咙痛|上火|拉肚子|闹肚子|"
          r"(?:身体|胃|肚子|嗓子|喉咙|头|浑身)\S{0,2}难受|我(?:今天|现在|有点|好|很)?难受|头疼|头痛|"
          r"牙疼|牙痛|咳嗽|嗓子发炎|肠胃炎|\b(?:not feeling "
          r"(?:well|good|great|too good|so good|100%)|feel(?:ing)? (?:sick|ill|unwell|queasy|"
          r"nauseous|awful|terrible|rough|under the weather)|i'm sick(?! of)|"
          r"i am sick(?! of)|(?:i'm|i am) (?:ill|unwell|nauseous|queasy)|upset stomach|"
          r"stomach ?ache|tummy ?ache|(?:stomach|tummy|belly|gut)(?:'s| is| feels| has been)"
          r"(?: \w+)? (?:upset|off|bad|sore|acting up|killing me|hurting|not great)|"
          r"(?:have|got|having) (?:a |an )?(?:cold|the flu|flu|fever|headache|migraine|"
          r"toothache|cough|sore throat|stomach bug|food poisoning|upset stomach)|"
          r"sore throat|hung ?over|hangover)\b")
# Groups of patterns any one of which says it (text.first): the words every match of the
# first one contains spare compiling it for most texts (text.may_match); the last has none.
SENSITIVE = (r"(?:密码|口令|验证码|密钥|\bpassword|\bpasscode|\bpasswd|\bpin|\bapi[ _-]?key|"
             r"\bsecret|\btoken|\bprivate key)\s*(?:是|为|:|：|=|\bis\b)\s*\S|"
             r"我的(?:密码|银行卡|卡号|身份证|手机号|电话号码?)|身份证号|银行卡号|信用卡号|"
             r"\bmy (?:password|pin|credit card|card number|ssn|social security number|"
             r"phone number|bank account)\b|\bsk-[\w-]{8,}|"
             r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b|"
             r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[a-z]{2,}",
             r"(?<!\d)(?:\d[ -]?){10,}\d(?!\d)")
SMALL_TALK = (r"^(?:(?:你好|您好|嗨|哈喽|哈啰|谢谢你?|多谢|感谢|谢啦|好的|好滴|好|嗯|哈|再见|"
              r"拜拜|早上好|早安|晚安|午安|辛苦了|没问题|收到|明白了?|知道了|行|no problem|"
              r"no worries|ok|okay|hi|hello|hey|thanks|"
              r"thank you|thx|ty|bye|goodbye|good (?:morning|night|evening|afternoon)|cool|great|"
              r"nice|sure|got it|lol|yes|no|yep|nope|awesome|perfect|sounds good|so much|a lot|"
              r"there|again|you|all)[\s,.!~，。！～啊呀呢吧啦哦嘛]*)+$")
# Words in quotes after a reporting verb (菜谱上写着“少盐”, the sign says "no nuts").
QUOTED = (r"(?:写着|写的是|说|说过|说的是|提到|\b(?:says|said|reads|wrote|writes|read)\b)"
          r"[^“”\"「」]{0,10}[“「\"]")
HYPOTHETICAL = (r"如果|假如|假设|要是|万一|倘若|可能|也许|或许|说不定|考虑|打算换|想换|"
                r"^(?:if|suppose|imagine)\b|"
                r"\b(?:what if|hypothetically|what would happen|in theory|someday|some day|"
                r"at some point|maybe|perhaps|probably|thinking (?:about|of)|considering|"
                r"wondering|(?<!you )(?<!u )(?:could|might|would)(?! you\b)(?! u\b)"
                r"(?! like\b)(?! love\b)(?! prefer\b)(?! rather\b)|"
                r"(?:i|we)'d(?! like\b)(?! love\b)(?! prefer\b)(?! rather\b))\b")
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
               r"客人|别人|我(?:爸|妈|哥|姐|弟|妹|爷|奶|公|婆|外婆|外公|舅|姨|叔|婶)|老(?:爸|妈)|"
               r"(?<![其吉])他|她|\bmy (?:wife|husband|partner|spouse|friends?|mom|mum|"
               r"mother|dad|father|parents|son|daughter|kids?|children|child|baby|boss|colleagues?|"
               r"coworkers?|roommates?|girlfriend|boyfriend|brother|sister|family|grandma|grandpa|"
               r"guests?)\b|^(?:he|she|they)\b|\b(?:he|she) (?:doesn't|does not|hates|likes|loves|"
               r"eats|can't|is)\b")
FOOD_CONTEXT = (r"做饭|做菜|菜谱|食谱|下厨|烹饪|饮食|口味|食材|忌口|吃|饭|餐|菜(?![单鸟])|"
                r"\b(?:foods?|cook\w*|recipes?|eat|eats|eating|meals?|dish|dishes|dinner|lunch|"
                r"breakfast|menu|cuisine|kitchen|diet|snacks?)\b")
# Technical words: either pattern of a language says it, like SENSITIVE's.
TECH_ZH = (r"数据库|代码|接口|框架|部署|测试|仓库|分支|提交|依赖|版本|服务器|"
           r"检索|索引|模块|函数|脚本|配置|日志|迁移|前端|后端|项目|架构|缓存", r"[A-Za-z]{2,}")
TECH_EN = (r"\b(?:database|db|code|codebase|api|framework|library|deploy\w*|tests?|testing|repo|"
           r"repository|branch(?:es)?|commits?|push|merge|pr|release|build|dependenc\w+|versions?|"
           r"service|server|index|schema|modules?|functions?|scripts?|config\w*|logging|logs?|"
           r"migrations?|frontend|backend|project|python|sqlite|postgres\w*|mysql|redis|docker|"
           r"kubernetes|typescript|javascript|rust|lint\w*|ci|sql|orm|packages?|cli|json|http|"
           r"types?|type hints|tabs|spaces|git|ruff|pytest)\b",
           r"(?-i:\b\w*[a-z][A-Z]\w*)|\b[a-z]+\d")
# Strong markers say "we decided" outright; weak ones (决定, must) need a technical word too.
PROJECT_MARKERS = (
    ("decision", False, (r"我们决定|我们定了|我们商定|我们约定|团队决定|\bwe(?:'ve| have)? "
                        r"(?:decided|agreed)\b|\bwe(?: will|'ll| are going to|'re going to) "
                        r"(?:use|go with|adopt|switch to|stick with)\b|\bwe(?:'re| are) going "
                        r"with\b|\blet's go with\b")),
    ("constraint", False, r"禁止|严禁|\b(?:must not|must never|mustn't|never use)\b"),
    ("decision", True, (r"决定|采用|选用|改用|统一用|\b(?:decided to|will use|going with|"
                       r"switch(?:ed)? to|settled on)\b")),
    ("constraint", True, (r"以后(?:都|一律|统一)|今后|从现在(?:开始|起)|\b(?:from now on|going "
                         r"forward|every time)\b|必须|不要用|不能用|别用|不许|不准|不得|一律|"
                         r"只能用|只用|\b(?:must|"
                         r"don't use|do not use|always use|should always|should never|only use|"
                         r"is forbidden|not allowed)\b")),
)
# The object first (葱也别放, 香菜就不要加了), then the verb first.
AVOID_ZH = (rf"^(?P<x>{CJK}{{1,6}}?)(?:也|就|都|还是)?(?:别|不要|不用|甭)(?:放|加|用)"
            r"(?:了|啦|吧)?[。！!.]*$",
            # 辣的完全不能吃, 羊肉我是不碰的: the food first, then the refusal.
            rf"^(?:但是|不过|可是|就是|而且)?(?P<x>{CJK}{{1,6}}?)(?:的|类的|的东西)?(?:我)?(?:是)?"
            r"(?:也|就|都|还是|完全|一点都|一点也|根本|真的|实在|先|暂时|就先|最近)*(?:不能吃|吃不了|不吃|不碰|碰不了|"
            r"受不了|不喝|不爱吃)(?:了|啦|的)?[。！!.]*$",
            (r"(?:别给我推荐|不要给我推荐|别推荐|不要推荐|别给我放|不要给我放|别给我|不要给我|"
             r"不要放|别放|"
            r"不放|不要加|别加|不加|不太喜欢吃|不太喜欢|不喜欢吃|不喜欢|不想吃|不爱吃|不吃|讨厌吃|讨厌|"
            r"忌口|不能吃|吃不了|避开|不要)[:：]?\s*(?P<x>.+)"))
AVOID_EN = ((r"\b(?:don't|do not|never|stop|please don't)\s+(?:ever\s+)?(?:recommend|suggest|"
            r"give me|add|put|include|use|cook with|serve|offer)(?:ing)?\s+(?:me\s+)?(?P<x>.+)"),
            r"\bi\s+(?:don't|do not|can't|cannot|never|won't|no longer)\s+(?:eat|have)\s+(?P<x>.+)",
            r"\bi\s+(?:hate|dislike|detest|can't stand|don't like|do not like)\s+(?P<x>.+)",
            r"\bavoid(?:ing)?\s+(?P<x>.+)",
            r"\b(?:skip|leave out|hold)\s+(?:the\s+)?(?P<x>.+)",
            r"^(?:no|hold the|without)\s+(?P<x>.+)",
            r"^(?:but\s+|and\s+)?(?P<x>[a-z][a-z ]{0,30}?)\s+(?:is|are)\s+(?:a\s+)?(?:total\s+|"
            r"complete\s+|hard\s+|big\s+)?(?:no-go|no go|no-no|off the table|off limits|"
            r"out of the question|a hard no)\b")
LIKE_ZH = (r"(?<!不)(?:最喜欢吃|最喜欢|喜欢吃|喜欢|偏好|偏爱|爱吃|最爱|想吃|想做个?|"
           r"多放点?|多加点?|多用点?)(?P<x>.+)",)
LIKE_EN = (r"\bi\s+(?:really\s+|also\s+|do\s+)?(?:like|love|prefer|enjoy|adore)\s+(?P<x>.+)",
           r"\b(?:i'm|i am)\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+(?P<x>.+)",
           r"\bmy\s+favou?rite\s+(?:food|ingredient|dish|cuisine)\s+is\s+(?P<x>.+)",
           r"\b(?:i\s+)?feel(?:ing)?\s+like\s+(?P<x>.+)",
           r"\b(?:lots of|plenty of|throw in|more)\s+(?P<x>.+)")
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
# Verbs of errands, in the past: what a person reports having done. A report closes only the
# open task it names (policy/tasks.py), so reading one more report costs nothing.
_ERRAND_ZH = (r"交|交上去|交上|付|缴|还|寄|寄出去|发|发出去|办|办好|续|续好|取|取回来|拿|拿回来|"
              r"修|修好|订|订好|约|约好|买|买好|洗|洗好|签|签好|报|退|送|搬|剪|扔|充|补|换|写|"
              r"打|回|提交|处理|处理好|解决|搞|弄|做|整理|收拾|打扫|预约|预订|续费|缴费|还清")
_ERRAND_EN = (r"called|rang|phoned|texted|messaged|submitted|paid|sent|emailed|mailed|posted|"
              r"booked|renewed|returned|picked up|dropped off|filed|cancel(?:l)?ed|scheduled|"
              r"fixed|repaired|cleaned|finished|completed|handed in|turned in|signed|replied to|"
              r"answered|bought|ordered|sorted out|took care of|dealt with|wrapped up|"
              r"got back to|collected|registered for|signed up for|backed up|uploaded|"
              r"printed|washed|did|made|wrote|sent off|mailed off|topped up|refilled|"
              r"renewed|cleared|settled|confirmed|reserved|applied for")
TASK_DONE = (r"^(?:我们?)?(?:已经)?(?:完成了|做完了|搞定了|已完成|完成(?=\s*[:：]))"
             r"[:：]?\s*(?P<x>.+)",
             r"^(?P<x>.+?)(?:已经)?(?:完成了|做完了|搞定了|已完成)了?[。！!.]*$",
             r"^(?:done|finished|completed)\b(?:\s+with)?\s*[:：-]?\s*(?P<x>.+)",
             r"^i(?:'ve| have|'m| am)?\s+(?:just\s+)?(?:finished|completed|done with)\s+(?P<x>.+)",
             # passport renewal's done, expense report filed finally, dentist done ✅
             r"^(?P<x>[^,;]+?)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:all\s+)?(?:done|finished|"
             r"complete|sorted|taken care of|paid off|paid|filed|submitted|sent|booked|renewed)"
             r"(?:\s+(?:finally|now|already|today|for this month|for the month|at last))*"
             r"[\s.!✅✔️🎉👍]*$",
             # 报告交了, 车已经保养完了, 给我妈回过电话了: the thing, the deed, its result, 了.
             rf"^(?:我们?|咱们?)?(?:已经|终于|总算|刚|刚刚)?(?:把)?"
             rf"(?P<x>[^，,。；;不没未别要得该想会前准记]{{1,16}}?)"
             rf"(?:已经|都|也|终于|总算|刚|刚刚)?(?:(?:{_ERRAND_ZH})(?:好|完|掉|到|过|回来|出去|上去|过去)?"
             rf"|[\u4e00-\u9fff]{{1,2}}(?:好|完|掉|过|回来|出去|上去))(?:电话)?了"
             r"[。！!~～.✅✔️🎉👍\s\U0001F300-\U0001FAFF\u200d\u2600-\u27bf]*$",
             # called the landlord, paid the water and electric bills, got the car serviced
             rf"^(?:ok|okay|so|yay|finally|phew|well|btw|fyi|update)?[,!:\s]*(?:(?:i|we)"
             rf"(?:'ve| have)?\s+)?(?:just\s+|finally\s+|already\s+|now\s+)?"
             rf"(?P<x>(?:{_ERRAND_EN}|updated|got (?:the |my )?\w+(?: \w+)? (?:serviced|fixed|"
             rf"repaired|cleaned|washed|renewed|done)|got (?:the |my )?\w+(?: \w+){{0,3}} back)"
             rf"\b.*)")
TASK_OPEN = (r"^(?:(?:add|new|another)\s+(?:a\s+)?)?(?:todo|to-do|to do|(?:加个|加一个|添加|新)?"
             r"待办(?:事项)?|任务)\s*[:：-]\s*(?P<x>.+)",
             r"^todo\s+(?P<x>.+)",
             # 下周一要交季度报告, 周五前要把水电费交了: a day, then what must be done by it.
             r"^(?:我们?)?(?:明天|后天|大后天|今晚|今天|待会儿?|等会儿?|回头|下周[一二三四五六日天末]?|"
             r"这周[一二三四五六日天末]?|周[一二三四五六日天末](?:之?前)?|月底(?:之?前)?|月初|下个?月|"
             r"\d{1,2}号(?:之?前)?)(?:之?前)?(?:我们?)?(?:还)?(?:要|得|需要|必须|该)(?:去)?"
             r"(?P<x>[^，,。；;]{2,30})$",
             # gotta pay the water bill before friday, have to take the car in this weekend
             r"^(?:gotta|got to|have to|need to|must)\s+(?P<x>.+)")
TASK_LOOSE = (r"(?:我需要|提醒我|(?:别|不要)让我忘了|别忘了|不要忘了|记得要?|要记得|我得(?!了)|"
              r"我还得|"
              r"还得|回头要?)"
              r"(?P<x>.+)",
              r"\b(?:i need to|remind me to|don't let me forget to|don't forget to|"
              r"remember to|i have to|i've got to|"
              r"i gotta|i must|i still need to|i still have to|need to)\s+"
              r"(?!(?:say|admit|agree|tell you|be honest|laugh|go now)\b)(?P<x>.+)")
# A note to oneself ahead of what is noted (Note to self:, 记一下：, 备忘：).
NOTE_PREFIX = (r"^(?:note to self|self[- ]note|reminder|memo|to do|todo|备忘(?:录)?|记一下|"
               r"(?:帮我)?记(?:个|件)事|remember this|"
               r"帮我记(?:一下|着|下)?|提醒(?:我|一下)?|待办)\s*[:：,，-]\s*(?P<x>.+)")
# A note that states something (the gym closes at 9, 我对芒果过敏) rather than asks for a deed.
STATES = (r"^(?:i|i'm|i've|we|we're|my|our|the|this|that|it|it's|there|he|she|they|his|her|"
          r"their|[a-z]+'s)\b|^(?:我|咱|这|那|他|她|它)|\b(?:is|are|was|were|has|have|had)\b|"
          r"是|有")
# The user speaking of themself: in a sentence that names someone else, only such clauses are
# the user's (我不吃葱，我老公倒是特别爱吃).
FIRST_PERSON = r"我|咱|\b(?:i|i'm|i've|i'd|im|me|my|we|we're|our|us)\b"
# A negation right before a food verb turns it round: "I don't avoid gluten", 我并不讨厌.
NEGATED_BEFORE = (r"(?:\b(?:don't|do not|doesn't|does not|never|not|no longer|stopped|won't|"
                  r"didn't|can't say i)\s+(?:really\s+|actually\s+)?$)|(?:不再|并不|不|没|别)$")
# Said of the past only (以前不吃香菜, used to hate mushrooms): true then, not now.
PAST = (r"以前|之前|过去|曾经|原来|小时候|那时候|那会儿|上学的时候|\b(?:used to|back then|"
        r"as a kid|when i was (?:a kid|young|little|in)|in the past|previously|formerly|"
        r"years ago|once)\b")
NOW = r"现在|如今|目前|这几年|从现在|\b(?:now|these days|nowadays|currently|anymore|any more)\b"
# Someone else before the verb: 小王不吃香菜, 老张爱吃辣, Tom is avoiding gluten.
OTHER_SUBJECT = (r"(?:小|老|阿)[\u4e00-\u9fff]|"
                 r"[\u4e00-\u9fff](?:总|哥|姐|叔|姨|老师|先生|女士|同学|"
                 r"医生|师傅)|他们|她们|大家|有人|人家|对方|客户|孩子们|"
                 r"\b(?:he|she|they|his|her|their|someone|everyone|nobody|people)\b|"
                 r"(?-i:\b(?!I\b)[A-Z][a-z]+(?:'s)?\s+(?:is|was|has|does|doesn't|can't|won't|"
                 r"really|also|just|never|always|usually|only)\s+(?:\w+\s+)?$)")
ZH_ITEM_LEAD = r"^(?:的就是|的是|就是|是|吃|用|放|加|给我|任何|带|有|推荐)+"
ZH_ITEM_TAIL = r"(?:了|啦|哦|吧|啊|呀|嘛|吗|呢|的菜|的东西|的食物|这类的?|之类的?|等等?|的)+$"
EN_ITEM_LEAD = (r"^(?:(?:any|the|a|an|some|more|much|too much|anything with|food with|foods with|"
                r"dishes with|eating|to eat|to cook|cooking with|cooking)\s+)+")
EN_ITEM_TAIL = (r"\s+(?:in|for|when|from|at|on|anymore|any more|again|please|ever|because|since|"
                r"as|if|unless|with|to|either|too|though|thanks|thank you|today|tonight|now)\b.*$")
NOT_FOOD_ZH = (r"太|很|什么|这|那|我|你|他|她|它|一点|东西|麻烦|担心|客气|着急|忘|事|人|话|时间|"
               r"方案|问题")
STOP_EN = _words("it|that|this|them|you|me|him|her|problem|problems|worries|idea|ideas|thanks|"
                 "one|way|time|anything|everything|nothing|something|please|stuff|much|lot")
EN_CLAUSE = (r"\s*[,;]\s*(?:and\s+|plus\s+)?(?=(?:but|so|though|although|also|plus|please|"
             r"nothing|no|just|i|we|don't|never|hold|skip|without)\b)|"
             r"\s+(?:but|and|so|plus)\s+(?=(?:i|we|i'm|i'd|no|nothing|without|"
             r"hold the|skip|don't|never|please don't)\b)")
# A request to remember, before what is to be remembered: 以后都帮我记录：…, "Remember that …".
SAY_PREFIX = (r"^(?:(?:以后|今后)?(?:都|也)?(?:请|麻烦)?(?:帮我|给我)?"
              r"(?:记住|记下|记一下|记录一下|记录|记着)"
              r"|(?:请|麻烦)?(?:别忘了|不要忘了|注意|备注)"
              r"|(?:备忘(?:录)?|提醒一下)"
              r"|(?:please\s+)?(?:note to self|self[- ]note|reminder|memo|fyi|btw|"
              r"remember|note|keep in mind|don'?t forget|do not forget|"
              r"make a note)(?:\s+of)?\b)\s*(?:that\s+)?[,，:：]?\s*")
TRIM_END = r"[\s。！？；;!?.，,]+$"

# --- health and diet: what the body cannot take, never a mere dislike ----------------------
DIET_PATH = (COOKING, "做饭", "饮食限制")
ALLERGEN_TAIL = r"(?:也|都|还|又|有点|特别|严重|比较)+$"
# Allergens that are not food: a medicine (never a recipe's ingredient) or what is in the air.
MEDICINES = _words("青霉素|盘尼西林|阿莫西林|头孢|头孢类|磺胺|磺胺类|阿司匹林|布洛芬|对乙酰氨基酚|"
                   "扑热息痛|链霉素|庆大霉素|红霉素|碘|碘酒|麻药|麻醉药|抗生素|"
                   "penicillin|amoxicillin|ampicillin|cephalosporin|cephalosporins|sulfa|"
                   "sulfa drugs|sulfonamides|aspirin|ibuprofen|naproxen|nsaids|codeine|"
                   "morphine|acetaminophen|paracetamol|antibiotics|iodine|contrast dye|"
                   "anesthesia|novocaine|lidocaine")
AIRBORNE = _words("花粉|尘螨|螨虫|灰尘|猫毛|狗毛|猫|狗|宠物|柳絮|蜂蜇|乳胶|霉菌|紫外线|"
                  "pollen|dust|dust mites|cats|cat|dogs|dog|pet dander|dander|bee stings|"
                  "bees|latex|mold|mould|grass|hay|ragweed|wool|nickel|sunlight|perfume")
# Where an English allergen ends: the rest of the sentence is something else (", so be careful").
ALLERGEN_END = (r"\s*(?:[,;:(]|\s-\s|\s(?:so|but|because|which|though|and (?:i|we|so|it|that|"
                r"you|my|please)|please|thanks|lol|haha|when|if|since|as|too|also|which)\b).*$")
# A first-person allergy; the allergens follow or precede 过敏 / "allergic".
ALLERGY_ZH = (r"(?:^|我|[，,、；;]|也|还)(?:一直|从小|严重)?对(?P<x>[^，,。；;]+?)(?<!不)过敏",
              r"我(?:有)?(?P<x>[\u4e00-\u9fff、和]{1,12}?)(?<!不)过敏")
ALLERGY_EN = (r"\bi(?:'m| am|'ve been| have been)?\b[^.;?!]{0,40}?\ballergic\s+to\s+(?P<x>.+)",
              r"\bi\s+(?:have|got)\s+(?:an?\s+)?(?:\w+\s+)?(?P<x>[a-z][a-z -]{0,30}?)\s+"
              r"allerg(?:y|ies)\b",
              r"\bmy\s+(?P<x>[a-z][a-z -]{0,30}?)\s+allerg(?:y|ies)\b")
# (Chinese value, English value, the patterns that say it). The first that matches wins, so
# vegan comes before vegetarian.
DIETS = (
    ("纯素", "vegan", r"纯素|全素|严格素食|\b(?:i'm|i am|i eat|i went|i've gone)\s+(?:a\s+)?"
                    r"(?:strict\s+)?vegan\b"),
    ("素食", "vegetarian", r"(?:我|^|[，,、]|也)(?:是|也|一直|平时|只)?(?:个|一个|一名)?"
                          r"(?:素食主义者|素食者|吃素|"
                          r"不吃肉|不吃荤)|\b(?:i'm|i am|i eat|i went|i've gone)\s+(?:a\s+)?"
                          r"(?:strict\s+)?vegetarian\b|\bi\s+(?:don't|do not|never)\s+eat\s+"
                          r"(?:any\s+)?meat\b"),
    ("清真", "halal", r"我(?:只)?吃清真|我是穆斯林|"
                    r"\bi\s+(?:only\s+|strictly\s+)?(?:eat|keep)\s+halal\b|"
                    r"\b(?:i'm|i am)\s+muslim\b|\bhalal\s+only\b"),
    ("犹太洁食", "kosher", r"犹太洁食|\bi\s+(?:only\s+)?(?:eat|keep)\s+kosher\b"),
    ("乳糖不耐受", "lactose intolerance", r"乳糖不耐|\blactose[ -]intoleran(?:t|ce)\b"),
    ("无麸质", "gluten-free", r"麸质不耐|乳糜泻|\b(?:celiac|coeliac|gluten[ -]intoleran(?:t|ce))\b|"
                             r"\bi\s+(?:only\s+)?eat\s+gluten[ -]free\b"),
    ("孕期饮食", "pregnancy", r"我怀孕了|我(?:正在|现在|还在)?(?:是)?(?:孕期|孕妇)|"
                            r"我怀孕\S{0,4}(?:周|个月)|"
                            r"\b(?:i'm|i am)\s+pregnant\b"),
    ("糖尿病（控糖）", "diabetic (low sugar)", r"我有糖尿病|我是糖尿病|\b(?:i'm|i am)\s+diabetic\b|"
                                           r"\bi\s+have\s+(?:type\s+\d\s+)?diabetes\b"),
    ("痛风（低嘌呤）", "gout (low purine)", r"我有痛风|我痛风|\bi\s+have\s+gout\b"),
    ("高血压（低盐）", "high blood pressure (low salt)",
     r"我有高血压|我血压高|\bi\s+have\s+(?:high blood pressure|hypertension)\b"),
)
# A doctor's orders are a medical diet in the doctor's own words.
DOCTOR = (r"医生(?:让|要|叫|要求|嘱咐|建议)我(?P<x>.+)",
          r"\bmy\s+doctor\s+(?:told|wants|asked|says|said|advised)\s+(?:me\s+)?(?:to\s+|i\s+"
          r"(?:should|must)\s+)?(?P<x>.+)")
# Saying the opposite: 我不是素食主义者, "I'm not allergic to nuts", 我对花生不过敏.
DIET_DENIED = (r"不是|并不|没有|不过敏|\b(?:not|isn't|aren't|no)\s+(?:\w+\s+)?(?:allergic|"
               r"vegetarian|"
               r"vegan|pregnant|diabetic|lactose)\b|\bno longer\b|不再|已经不")

# --- habits: a routine of one's own life ----------------------------------------------------
HABIT_PATH_ZH = ("生活", "习惯")
HABIT_PATH_EN = ("life", "habits")
HABIT_ZH = (r"我(?:一般|通常|平时|平常|习惯|经常|总是|每天|每晚|每早|每周[一二三四五六日天]?|"
            r"每个?(?:早上|晚上|"
            r"周末|星期|月|工作日))(?:都|会|要)?(?P<x>.*[\u4e00-\u9fff].*)",)
HABIT_EN = (r"\bi\s+(?:usually|normally|typically|generally|regularly|always|often)\s+"
            r"(?P<x>[a-z].+)",
            r"\bi\s+(?P<x>[a-z]+(?:\s+[a-z]+){0,5}\s+every\s+(?:day|morning|night|evening|"
            r"week|weekend|weekday|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b.*)",
            r"^every\s+(?:day|morning|night|evening|week|weekend)\s+i\s+(?P<x>.+)",
            r"\bi\s+(?:have|'ve got)\s+a\s+habit\s+of\s+(?P<x>.+)",
            r"\bmy\s+(?:daily\s+|morning\s+|evening\s+)?routine\s+is\s+(?P<x>.+)")

# --- the project's stack and commands ------------------------------------------------------
# Tool name -> engineering key. Matched as whole words, with any version number after it.
STACK = {
    **dict.fromkeys(("python", "rust", "go", "golang", "typescript", "javascript", "java",
                     "kotlin", "ruby", "php", "swift", "c#", "c++", "scala", "elixir",
                     "haskell", "lua", "dart", "zig"), "language"),
    **dict.fromkeys(("postgresql", "postgres", "mysql", "mariadb", "sqlite", "mongodb",
                     "redis", "dynamodb", "cassandra", "clickhouse", "duckdb", "oracle",
                     "sql server"), "database"),
    **dict.fromkeys(("django", "flask", "fastapi", "rails", "spring", "express", "react",
                     "vue", "angular", "svelte", "next.js", "nextjs", "nuxt", "laravel",
                     "typer", "click", "pydantic"), "framework"),
    **dict.fromkeys(("npm", "pnpm", "yarn", "pip", "poetry", "uv", "cargo", "conda",
                     "pipenv", "maven", "gradle"), "package_manager"),
    **dict.fromkeys(("node", "node.js", "nodejs", "deno", "bun", "jvm"), "runtime"),
    **dict.fromkeys(("github actions", "gitlab ci", "jenkins", "circleci", "travis"), "ci"),
}
# "we use / 我们用 …": the sentence states the stack.
STACK_MARKERS = (r"我们(?:项目)?(?:一直|现在|目前)?(?:用|使用|采用|用的是|基于)|"
                 r"换成|改用|换用|迁到|迁移到|切换到|切到|"
                 r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|port(?:ed|ing)) "
                 r"(?:\w+ )?(?:from|to|over to)\b|\breplac(?:ed|ing)\b|"
                 r"项目(?:用|使用|基于|采用)|"
                 r"技术栈|前端|后端|数据库|框架|运行时|包管理|依赖|脚本|服务端|客户端|"
                 r"\b(?:backend|frontend|database|db|stack|dashboard|server|service|api|app|"
                 r"deps|dependencies|packages|runtime|workers?|tooling|admin tool)\b|"
                 r"\bwe(?:'re| are)?\s+(?:use|using|run|running|on|built on|build on|"
                 r"build with|write|code|develop)\b|\b(?:our|the)\s+(?:stack|project|app|"
                 r"service|backend|frontend|codebase|repo)\s+(?:uses|is|runs on|is built "
                 r"(?:on|with)|is written in)\b|\bwritten in\b|\bbuilt (?:with|on)\b")
# (key, patterns whose group x is the command). The command is code: Latin letters first.
COMMANDS = (
    ("test_command", (r"(?:测试|单测|跑测试)(?:的)?命令(?:现在)?"
                      r"(?:是|为|用|：|:|改成|换成|改为)\s*(?P<x>.+)",
                      r"(?:跑|运行|执行)?(?:单元)?测试(?:用|使用|是|跑)\s*(?P<x>[`A-Za-z.].*)",
                      r"\btests?\s+(?:run|runs|are run|is run)\s+(?:with|using|via)\s+(?P<x>.+)",
                      r"(?:用|使用)\s*(?P<x>[`A-Za-z.][^，。；]*?)\s*(?:来)?(?:跑|运行|执行|做)(?:单元)?测试",
                      r"\b(?:the\s+)?test(?:s)?\s+command\s+is\s+(?P<x>.+)",
                      r"\b(?:run|runs|running)\s+(?:the\s+|all\s+)?(?:unit\s+)?tests\s+"
                      r"(?:with|using|via)\s+(?P<x>.+)",
                      r"\btest\s+with\s+(?P<x>.+)",
                      r"\buse\s+(?P<x>.+?)\s+to\s+run\s+(?:the\s+|all\s+)?tests\b")),
    ("build_command", (r"(?:构建|编译|打包)(?:的)?命令(?:现在)?"
                      r"(?:是|为|用|：|:|改成|换成|改为)\s*(?P<x>.+)",
                       r"(?:构建|编译|打包)(?:用|使用|是)\s*(?P<x>[`A-Za-z.].*)",
                       r"\bbuilds?\s+(?:with|using|via)\s+(?P<x>.+)",
                       r"(?:用|使用)\s*(?P<x>[`A-Za-z.][^，。；]*?)\s*(?:来)?(?:构建|编译|打包)",
                       r"\b(?:the\s+)?build\s+command\s+is\s+(?P<x>.+)",
                       r"\bbuild\s+(?:it\s+|the project\s+)?(?:with|using|via)\s+(?P<x>.+)",
                       r"\buse\s+(?P<x>.+?)\s+to\s+build\b")),
    ("lint_command", (r"(?:代码检查|lint|格式检查)(?:的)?命令(?:现在)?"
                      r"(?:是|为|用|：|:|改成|换成|改为)\s*(?P<x>.+)",
                      r"(?:代码检查|lint|格式检查)\s*(?:用|使用|是)\s*(?P<x>[`A-Za-z.].*)",
                      r"(?:用|使用)\s*(?P<x>[`A-Za-z.][^，。；]*?)\s*(?:来)?(?:做)?(?:代码检查|lint)",
                      r"\b(?:the\s+)?lint(?:ing)?\s+command\s+is\s+(?P<x>.+)",
                      r"\blint\s+(?:it\s+|the code\s+)?(?:with|using|via)\s+(?P<x>.+)",
                      r"\buse\s+(?P<x>.+?)\s+to\s+lint\b")),
)
# Where a command ends: a clause that is no longer the command ("…, not pnpm test", 了).
COMMAND_END = (r"\s+(?:before|after|when|whenever|every|each|first|then|and then|please|"
               r"instead|so that|so|because|if|on|now|these days|nowadays|anymore|not|"
               r"rather than)\b.*$|,\s*(?:not|instead|rather|but|and|so)\b.*$|[，。；;]\s*.*$|"
               r"\s+(?:之前|以前|以后|前|后)"
               r".*$|(?:之前|以前|来|再).*$|\s*(?:了|啦|哈|喔|哦)+$")
# Words before a command that say when it holds, not what it is (is now bun test, 现在是).
COMMAND_LEAD = (r"^(?:(?:now|currently|actually|just|simply|still|always|from now on|"
                r"going forward|now just)\s+|(?:现在|目前|改成|换成|改为|改用|统一|一律|都)\s*)+")
# A tool named after these is not (or no longer) the one used; after the second kind, it is
# again (switched from npm to pnpm, 把 npm 换成 pnpm). The last one before a name decides.
TOOL_NOT = (r"\b(?:(?:ignore|forget|disregard|scratch) (?:what i said|that)(?: about)?|"
            r"used to use|used to run|previously used|formerly used|ignore|disregard|"
            r"not|no longer|instead of|rather than|never|don't|do not|doesn't|"
            r"does not|didn't|stopped using|stop using|quit|dropped|ditched|got rid of|"
            r"away from|off of|moved off|replac(?:e|ed|ing)|from)\b|"
            r"原来用|以前用|之前用|过去用|曾经用|不跑|不再跑|"
            r"而不是|不是|不用|不再用|不再|没用|没有用|别用|不要用|不使用|弃用|放弃|抛弃|换掉|"
            r"去掉|替换掉|替换|从|把")
TOOL_YES = (r"\b(?:to|with|onto|for|it's|(?:we|i)(?:'re|'m| are| am)? (?:use|using|run|running|"
            r"on|switched to|moved to|went with|picked|chose)|now use|now using|now on)\b|->|→|"
            r"换成|改成|改用|换用|迁到|迁移到|转到|改为|换为|用上|是|为|到|用")
# After a tool's name: pip 不用了, "MySQL is out".
TOOL_NOT_AFTER = (r"^\s*(?:也|就|都|已经|早就)?(?:不用|不再用|弃用|淘汰|换掉|不跑|不要)|"
                  r"^\s*(?:is|was|are)?\s*(?:gone|out|dropped|deprecated|no more|not anymore|"
                  r"history)\b")
# Connectives a clause ends at: what one clause denies, the next may state.
CONTRAST_SPLIT = r"[,，;；]\s*|\s+but\s+|但是|不过|而是"
# A standing rule for the project: from now on / 以后都 + something technical.
STANDING = (r"以后|今后|从现在(?:开始|起)|往后|每次|\b(?:from now on|going forward|"
            r"from here on|always|never|every time)\b")
ENGINEERING_WORDS = {
    "language": ("语言", "language"), "database": ("数据库", "database"),
    "framework": ("框架", "framework"), "package_manager": ("包管理器", "package manager"),
    "runtime": ("运行时", "runtime"), "ci": ("持续集成", "CI"),
    "test_command": ("测试命令", "test command"), "build_command": ("构建命令", "build command"),
    "lint_command": ("代码检查命令", "lint command")}

# Tools whose command says what it is for, when no test/build/lint word does (`ruff check .`).
COMMAND_TOOLS = {
    **dict.fromkeys(("pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox",
                     "go test", "cargo test", "npm test", "pnpm test", "yarn test",
                     "bun test", "deno test", "mvn test", "gradle test", "ctest"),
                    "test_command"),
    **dict.fromkeys(("make", "cmake", "go build", "cargo build", "npm run build",
                     "pnpm build", "pnpm run build", "yarn build", "bazel build",
                     "mvn package", "gradle build", "docker build", "python -m build"),
                    "build_command"),
    **dict.fromkeys(("ruff", "flake8", "pylint", "eslint", "golangci-lint", "cargo clippy",
                     "clippy", "deno lint", "rubocop", "stylelint", "shellcheck", "mypy",
                     "biome"), "lint_command"),
}
