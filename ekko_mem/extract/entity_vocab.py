"""Words and patterns for reading people, pets, places and projects out of statements.

Data only; entities.py, entity_words.py and entity_times.py read with it. Patterns are compiled
case-blind (text.rx), except those over Chinese words (entity_words.pattern), so a part that
must keep its case (a name is capitalised) says so with (?-i:...), and a part that must not
(a tool's name inside Chinese) with (?i:...).
"""
from __future__ import annotations

CJK = r"[\u4e00-\u9fff]"


def _table(spec: str) -> dict[str, tuple[str, str]]:
    """"relation: word=english word, …; …" -> {word: (relation, english word)}."""
    table = {}
    for group in spec.split(";"):
        relation, _, words = group.partition(":")
        for pair in words.split(","):
            word, _, english = pair.strip().partition("=")
            table[word] = (relation.strip(), english or word)
    return table


# What the object is to the subject: "user sibling Anna" reads "Anna is the user's sibling",
# with the word that said which one (sister) kept beside the relation.
ROLES_ZH = _table(
    "spouse: 老婆=wife, 媳妇=wife, 妻子=wife, 太太=wife, 爱人=spouse, 老公=husband, 丈夫=husband,"
    " 先生=husband; partner: 女朋友=girlfriend, 男朋友=boyfriend, 女友=girlfriend, 男友=boyfriend,"
    " 对象=partner, 未婚妻=fiancée, 未婚夫=fiancé; parent: 妈妈=mother, 妈=mother, 老妈=mother,"
    " 母亲=mother, 爸爸=father, 爸=father, 老爸=father, 父亲=father; child: 儿子=son,"
    " 女儿=daughter, 闺女=daughter, 孩子=child; sibling: 姐姐=sister, 姐=sister, 妹妹=sister,"
    " 妹=sister, 哥哥=brother, 哥=brother, 弟弟=brother, 弟=brother; grandparent: 奶奶=grandmother,"
    " 外婆=grandmother, 姥姥=grandmother, 爷爷=grandfather, 外公=grandfather, 姥爷=grandfather;"
    " relative: 叔叔=uncle, 舅舅=uncle, 姑姑=aunt, 表哥=cousin, 表姐=cousin, 表妹=cousin,"
    " 表弟=cousin, 堂哥=cousin, 堂姐=cousin, 堂妹=cousin, 堂弟=cousin, 姐夫=brother-in-law,"
    " 妹夫=brother-in-law, 嫂子=sister-in-law, 弟媳=sister-in-law, 岳父=father-in-law,"
    " 岳母=mother-in-law, 公公=father-in-law, 婆婆=mother-in-law; colleague: 同事=colleague;"
    " manager: 老板=boss, 领导=manager, 上司=manager, 主管=manager, 组长=team lead;"
    " report: 下属=report; friend: 朋友=friend, 好朋友=friend, 好友=friend, 闺蜜=friend,"
    " 哥们=friend, 发小=friend; roommate: 室友=roommate; classmate: 同学=classmate;"
    " neighbour: 邻居=neighbour; teacher: 老师=teacher, 导师=advisor")
ROLES_EN = _table(
    "spouse: wife, husband, spouse; partner: girlfriend, boyfriend, partner, fiancée, fiancee,"
    " fiancé, fiance; parent: mom=mother, mum=mother, mother, dad=father, father; child: son,"
    " daughter, kid, child;"
    " sibling: sister, brother, sibling, older sister=sister, younger sister=sister, little"
    " sister=sister, big sister=sister, older brother=brother, younger brother=brother, little"
    " brother=brother, big brother=brother; grandparent: grandma=grandmother, grandmother,"
    " grandpa=grandfather, grandfather; relative: uncle, aunt, cousin, sister-in-law,"
    " brother-in-law, mother-in-law, father-in-law; colleague: colleague, coworker=colleague,"
    " co-worker=colleague; manager: manager, boss, supervisor=manager, team lead; report:"
    " direct report=report; friend: friend, best friend=friend; roommate: roommate,"
    " flatmate=roommate; classmate: classmate; neighbour: neighbour, neighbor=neighbour;"
    " teacher: teacher, advisor")
PETS_ZH = _table("pet: 猫咪=cat, 小猫=cat, 猫=cat, 狗狗=dog, 小狗=dog, 狗=dog, 兔子=rabbit,"
                 " 仓鼠=hamster, 鹦鹉=parrot, 乌龟=turtle")
PETS_EN = _table("pet: cat, kitten=cat, dog, puppy=dog, rabbit, bunny=rabbit, hamster, parrot,"
                 " turtle, guinea pig")
# Roles one person holds at a time: "my wife" names her wherever it is said again, while
# "my colleague" could be any of several.
ONE_HOLDER = frozenset(("wife", "husband", "spouse", "girlfriend", "boyfriend", "partner",
                        "fiancée", "fiancé", "mother", "father", "boss", "manager"))
# Role words that say whether 他 or 她 may stand for the person.
FEMALE = frozenset(("wife", "girlfriend", "fiancée", "mother", "daughter", "sister",
                    "grandmother", "aunt", "sister-in-law", "mother-in-law"))
MALE = frozenset(("husband", "boyfriend", "fiancé", "father", "son", "brother", "grandfather",
                  "uncle", "brother-in-law", "father-in-law"))
PEOPLE_RELATIONS = frozenset(r for r, _ in (*ROLES_ZH.values(), *ROLES_EN.values()))

# Common surnames, for 小王 / 老张 / 王伟: a name is only read where one begins it.
SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶"
            "程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺"
            "顾毛郝龚邵钱严覃武戴莫孔向汤")
# Words a surname begins that are not names.
NOT_NAMES_ZH = frozenset("天天 常常 刚刚 慢慢 好好 渐渐 偷偷 往往 默默 明明 白白 人人 个个 高高 "
                         "早早 悄悄 稍稍 恰恰 仅仅 统统 处处 时时 年年 月月 多多 大大 轻轻 静静 "
                         "紧紧 满满 久久 深深 哈哈 呵呵 嘿嘿 嘻嘻 谢谢 宝宝 星星 看看 想想 试试 "
                         "周末 白天 高铁 高速 王者 马上 方便 方面 江湖 金额 钱包 毛病 陆续 高兴 "
                         "高中 任何 万一 叶子 石头 黄金 曾经 程序 苏打 孔子 龙虾 向来 汤圆 夏天 "
                         "秦朝 唐朝 宋朝 严格 武汉 黎明 贺卡 顾客 钟头 许多 何时 余下 杜绝 林子 "
                         "罗列 郑重 董事 袁大头 潘多拉 蒋介石".split())
# After 小 these make words, not nicknames: 小时候, 小心, 小孩, 小区.
NOT_NICK = "时心孩区说学组伙姐妹哥弟事声气点些人吃菜票费道路便便朋友"
# Where a Chinese name ends: the word after it.
ZH_AFTER = (r"是|在|叫|住|说|也|都|和|跟|的|今|明|昨|去|上|下|最|很|特|过|做|当|刚|已|还|又|就|"
            r"平|一|从|以|原|现|目|前|每|会|要|想|喜|爱|不|没|养|有|对|把|被|给|生|老家|负|干|"
            r"搞|人|[，,。.!！;；（()）\s]")
# Capitalised words that are not names.
NOT_NAMES_EN = frozenset(
    "I I'm I've I'd The A An My Our We He She They It This That Also And But So Then Yes No Hey "
    "Hi Oh Btw Fyi Note Mom Mum Dad Grandma Grandpa God Monday Tuesday Wednesday Thursday "
    "Friday Saturday Sunday January February March April May June July August September "
    "October November December Today Tomorrow Yesterday Now Last Next Everyone Nobody Someone "
    "What Who Where When Why How Which Remember Please Thanks Actually Well Ok Okay Just".split())

# A place or workplace that is a kind, not a name (在家上班, 住在宿舍).
GENERIC_ZH = frozenset("家 家里 这里 那里 这儿 那儿 这边 那边 附近 公司 单位 宿舍 学校 老家 "
                       "市区 郊区 城里 乡下 农村 楼上 楼下 隔壁 对面 酒店 宾馆 医院 银行 工厂 "
                       "外企 国企 大厂 小公司 创业公司 政府 研究所 店里 超市 外地 国外 海外 本地 "
                       "北方 南方 同一个城市 一个城市 大城市 小城市 出租屋".split())
GENERIC_LEAD_ZH = (r"^(?:的|得|地|了|着|过|一|这|那|某|个|别|其他|另)|"
                   r"(?:宿舍|家|公司|单位|学校|医院|小区|酒店|附近)$")
# Cities and provinces: a place where one works (在北京工作), never the workplace itself.
CITIES_ZH = frozenset("北京 上海 广州 深圳 杭州 成都 重庆 天津 南京 武汉 西安 苏州 长沙 郑州 青岛 "
                      "厦门 宁波 合肥 福州 济南 昆明 大连 沈阳 哈尔滨 长春 石家庄 太原 南昌 贵阳 "
                      "南宁 兰州 海口 三亚 珠海 东莞 佛山 无锡 香港 澳门 台北 美国 日本 英国 "
                      "加拿大 澳洲 新加坡 国外 老家 湖南 湖北 广东 四川 浙江 江苏 山东 河南 河北 "
                      "福建 江西 安徽 云南 贵州 广西 陕西 山西 东北 内蒙古 新疆 西藏".split())

JOBS_ZH = frozenset("护士 医生 老师 教师 律师 程序员 工程师 设计师 会计 产品经理 销售 厨师 "
                    "司机 警察 记者 教授 前端 后端 全栈 运维 测试 前端开发 后端开发 数据分析师 "
                    "架构师 研究员 公务员 药剂师 牙医 建筑师 翻译 作家 演员 消防员 飞行员 空姐 "
                    "保安 快递员 外卖员 产品 运营 客服 律师助理 财务 人事 HR 编辑 摄影师 咨询师 "
                    "会计师 兽医 幼师 主播 UI设计师 算法工程师 软件工程师 前端工程师 后端工程师 "
                    "工人 实习生".split())
JOBS_EN = frozenset(
    "nurse|doctor|teacher|lawyer|programmer|developer|software engineer|software developer|"
    "engineer|designer|accountant|product manager|project manager|salesperson|chef|cook|driver|"
    "police officer|journalist|professor|frontend developer|front-end developer|"
    "backend developer|back-end developer|web developer|data scientist|data analyst|"
    "architect|researcher|dentist|pharmacist|pilot|firefighter|writer|translator|consultant|"
    "electrician|plumber|vet|veterinarian|paramedic|therapist|physiotherapist|surgeon|"
    "mechanic|barista|photographer|editor|librarian|social worker|civil servant|"
    "flight attendant|graphic designer|ux designer|ui designer|devops engineer|"
    "frontend engineer|backend engineer|sre|accountant|midwife|carpenter|tutor".split("|"))
JOB_MODIFIERS = (r"(?:(?:senior|junior|lead|staff|principal|freelance|full-time|part-time|"
                 r"head|chief|registered|school|high school|primary school|trainee)\s+)*")
# What someone likes is a thing, not a pronoun (my husband loves it).
NOT_LIKED = frozenset("it that this them him her you me us everything anything 你 他 她 它 "
                      "这个 那个 这 那".split())
# Work read from 是做X的 / 是搞X的, not from the job list: small words that are not work.
NOT_WORK_ZH = frozenset("什么 啥 饭 这个 那个 这行 那行 事 事情 生意".split())
PLACE_STOP_EN = frozenset("Home Work School Town The City Downtown".split())
# Tools a project may use, beside the stack the engineering rules know.
MORE_TOOLS = ("postgresql", "elasticsearch", "kafka", "rabbitmq", "nginx", "graphql",
              "kubernetes", "docker", "terraform", "celery", "sqlalchemy", "supabase",
              "firebase", "s3", "mongo")

# Commit trailers that name people: trailer -> the part they took.
TRAILERS = {"co-authored-by": "co-author", "reviewed-by": "reviewer",
            "signed-off-by": "signed-off", "acked-by": "acked", "tested-by": "tester",
            "reported-by": "reporter", "suggested-by": "suggested", "helped-by": "helped",
            "author": "author"}
TRAILER = (r"(?m)^[ \t]*(?P<t>co-authored-by|reviewed-by|signed-off-by|acked-by|tested-by|"
           r"reported-by|suggested-by|helped-by|author)[ \t]*:[ \t]*(?P<n>[^<>\n]*?)[ \t]*"
           r"(?:<[^>\n]*>)?[ \t]*$")

# --- mood: what someone else said, or a guess, is nobody's fact --------------------------
HEARSAY = (r"听说|据说|好像|似乎|大概|估计|应该是|说不定|(?:说|讲|告诉我)(?:他|她|自己|过)|"
           r"\b(?:i heard|heard that|apparently|supposedly|rumou?r|i think|i guess|i believe|"
           r"seems?|seemed|(?:said|says|told me|mentioned)(?: that)?(?: (?:he|she|they)\b)|"
           r"claims?)\b")
UNSURE = (r"想|打算|计划|准备|希望|争取|要不|\b(?:want(?:s|ed)? to|plan(?:s|ning)? to|"
          r"hope|hoping|thinking|wish)\b")
# Said of a time to come: true only from a time the sentence names.
FUTURE = r"要|将|快要|即将|马上|\b(?:will|'ll|going to|gonna|about to|soon)\b"

# --- time --------------------------------------------------------------------------------
PAST = (r"以前|原来|之前|过去|曾经|那时候|那会儿|前(?:同事|老板|领导|男友|女友|妻|夫|室友)|"
        r"\b(?:used to|previously|formerly|back then|before|once|former|ex-)")
NOW = r"现在|目前|如今|这几年|\b(?:now|currently|these days|nowadays|at the moment)\b"
ENDED = (r"不再|已经不|早就不|早已不|\b(?:no longer|not\b.*\b(?:anymore|any more))\b|"
         r"\b(?:isn't|aren't|doesn't|don't)\b.*\b(?:anymore|any more)\b")
NEGATION = (r"不|没|非|未|别|\b(?:not|never|no|nobody|none)\b|n't\b")
PAST_TENSE = (r"了|过|已经|\b(?:was|were|did|had|\w+ed|left|quit|went|moved|joined|became|"
              r"switched|took|got|began)\b")
ZH_NUM = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})"
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
MONTH = (r"(?P<mon>(?-i:May)|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|"
         r"aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS_ZH = "一二三四五六日"
# Dates, first that matches wins; entity_times.py resolves each by the groups it filled.
DATES = (
    r"(?P<iso>\d{4}-\d{2}(?:-\d{2})?)\b",
    rf"(?P<y>\d{{4}})\s*年(?:\s*(?P<m>{ZH_NUM})\s*月(?:份)?(?:\s*(?P<d>{ZH_NUM})\s*[日号])?)?",
    rf"(?P<ry>大前年|去年|今年|明年|前年|后年)(?:(?P<m>{ZH_NUM})月(?:份)?(?:(?P<d>{ZH_NUM})[日号])?)?",
    rf"(?P<rm>上上个?月|上个?月|这个?月|本月|下下个?月|下个?月)(?:(?P<d>{ZH_NUM})[日号])?",
    rf"(?<![\d一二三四五六七八九十])(?P<m>{ZH_NUM})\s*月(?:份)?(?:\s*(?P<d>{ZH_NUM})\s*[日号])?",
    r"(?P<rd>大前天|前天|昨天|今天|明天|大后天|后天)",
    r"(?P<wk>上上|上|这|本|下下|下)?个?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])",
    r"(?P<rw>上上|上|这|本|下下|下)个?(?:周|星期|礼拜)(?![一二三四五六日天])",
    rf"\b{MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?",
    rf"\b(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}(?:,?\s+(?P<y>\d{{4}}))?",
    rf"\b{MONTH}(?:\s+(?P<y>\d{{4}}))?",
    r"\b(?P<y>(?:19|20)\d{2})\b",
    r"\b(?P<ry>last|this|next)\s+year\b",
    r"\b(?P<rm>last|this|next)\s+month\b",
    r"\b(?P<rd>yesterday|today|tomorrow)\b",
    r"\b(?:(?P<wk>last|this|next|on)\s+)?(?P<wd>monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b",
    r"\b(?P<rw>last|this|next)\s+week\b",
)
# Where a time said as a bound begins or ends it.
SINCE = (r"从(?P<t>.{1,10}?)(?:开始|起)|自从(?P<t2>.{1,10})|"
         r"\b(?:since|starting|as of|from)\s+(?P<t3>[\w ,-]{2,20})")
UNTIL = (r"到(?P<t>.{1,10}?)为止|(?P<t2>\S{2,10}?)之前|"
         r"\b(?:until|till|up to)\s+(?P<t3>[\w ,-]{2,20})")
# From one time to another: 从2015年到2020年, "from 2015 to 2018".
SPAN = (r"从(?P<a>.{1,10}?)到(?P<b>.{1,10}?)(?:为止|都|一直|我|他|她|住|在|是)|"
        r"(?P<a3>\d{4}\s*年)到(?P<b3>\d{4}\s*年|今年|现在)|"
        r"\bfrom\s+(?P<a2>[\w ]{2,16}?)\s+(?:to|until|till)\s+(?P<b2>[\w ]{2,16})")
STARTED = (r"搬到|搬去|搬来|搬回|入职|加入|跳槽|换成|改用|迁到|迁移到|切到|开始|"
           r"\b(?:moved|relocated|joined|started|switched|migrated|began)\b")
STOPPED = r"离职|辞职|离开|\b(?:left|quit)\b"

# --- clauses and lead words -------------------------------------------------------------
SENTENCE_END = (r"(?<=[。！？!?；;])\s*|(?<=[a-z0-9\)])(?<!\bSt)(?<!\bMr)(?<!\bMs)(?<!\bMrs)"
                r"(?<!\bDr)(?<!\bJr)(?<!\bInc)(?<!\bCo)\.\s+|\n+")
CLAUSE_ZH = r"[，,]|(?=但是|不过|可是)"
CLAUSE_EN = (r"\s*,?\s+but\s+|,?\s*(?:and|so)\s+(?=(?:i|i'm|my|we|our|she|he|they|her|his)\b)|"
             r",\s*(?=(?:now|currently|these days|today|and now|my|our|i|i'm)\b)")
LEAD_ZH = (r"^(?:(?:但是|不过|可是|而且|然后|另外|对了|其实|哦|嗯|啊|还有|顺便说一下|顺便|所以|"
           r"btw|fyi)[，,\s]*)+")
LEAD_EN = (r"^(?:(?:but|and|so|also|oh|btw|fyi|by the way|actually|well|anyway|ok|okay|"
           r"and now|now|currently|these days|today|back then|previously)\b[,\s]*)+")
# Words between the subject and the verb that say when, not what.
ADVERBS_ZH = (r"^(?:以前|原来|之前|过去|曾经|现在|目前|如今|最近|后来|一直|也|还|都|就|已经|"
              r"刚|刚刚|早就|从小|去年|今年|明年|前年|上个?月|下个?月|这个?月|本月|"
              r"\d{4}\s*年(?:\s*\d{1,2}\s*月)?|" + ZH_NUM + r"\s*月(?:份)?|"
              r"从.{1,10}?(?:开始|起)|自从.{1,10}?(?:以后|之后|以来|开始|起)|"
              r"自从(?:\d{4}\s*年|去年|前年|上个?月)|"
              r"从(?:\d{4}\s*年|去年|前年)到(?:\d{4}\s*年|去年|今年|现在)|"
              r"到(?:\d{4}\s*年|今年|现在)|不再|已经不|早就不|要|将|会|快要|马上|即将)+")
LEAD_TIME_EN = (r"^(?:(?:(?:from|starting)\s+(?:next|this)\s+(?:month|year|week|\w+day)|"
                r"(?:in|on|since|by|until|as of)\s+(?:early\s+|late\s+|mid\s+)?(?:\w+\s+)?"
                r"\d{4}|(?:last|this|next)\s+(?:year|month|week|\w+day)|yesterday|today|"
                r"(?:in|since)\s+(?-i:[A-Z])[a-z]+|(?:now|currently|these days|back then))"
                r"\s*,?\s*)+")
ADVERBS_EN = (r"^(?:(?:used to|still|now|currently|also|just|actually|really|previously|"
              r"formerly|recently|finally|originally|already|no longer|'ll be|will be|does|do|"
              r"did)\s+)+")

# --- subjects and what is said of them ---------------------------------------------------
# %NAME% and the like are filled in by entity_words.py from the tables above; %END% is what
# may close a clause after its last word.
END_ZH = r"[啊呀哦了的啦呢过。！!~\s]*$"
END_EN = (r"(?:\s+(?:for|since|until|till|from|in|now|these days|currently|lol|haha|though|"
          r"too|as well)\b[^,;]*)?[\s.!~]*$")
PROJECT_ZH = (r"^(?:我们|咱们)的?(?:这个)?(?:项目|工程)(?:叫|是)?\s*"
              r"(?P<n>(?-i:[A-Z])[A-Za-z0-9.-]*)?|"
              r"^(?:我们|咱们)(?=(?:之前|以前|原来|现在|目前|一直|后来|去年|上个?月)?"
              r"(?:把|从|用|换|迁|改|切|的?(?:后端|前端|数据库|服务)))|"
              r"^(?:项目|后端|前端|数据库|服务端)(?=.{0,5}?(?:用|是|换|从|迁|改|切|把))")
PROJECT_EN = (r"^(?:our|the|my)\s+(?:current\s+)?project(?:,?\s+(?P<n>(?-i:[A-Z])[\w.-]*),?)?|"
              r"^(?:the\s+)?(?P<n2>(?-i:[A-Z])[\w.-]*)\s+project\b|"
              r"^we(?=\s+(?:switched|moved|migrated|replaced|use|are using|'re using|run|"
              r"are running|'re running|'ve switched|have switched)\b)|"
              r"^(?:our|the)\s+(?:backend|frontend|app|service|stack|database|db)\b")
OWNER_ZH = r"^(?:我们家|我家|我们|咱们|我|咱)的?"
OWNER_EN = r"^(?:my|our)\s+"
PRONOUN_ZH = r"^(?:他|她)(?:的)?"
PRONOUN_EN = r"^(?:he|she|his|her)\b\s*"
USER_ZH = r"^我(?!们)(?:的(?=生日))?|^我们(?:家)?(?=搬|住|养|有|在\S{2,8}住)"
USER_EN = (r"^(?:i\b|my\s+(?=birthday\b)|we(?=\s+(?:have|got|live|lived|moved|have\s+lived|"
           r"have\s+moved|are\s+from)\b|'ve\s+(?:got|lived|moved)\b|'re\s+from\b))")
# Another name for someone, right after the first: 小王（王伟）, "Bob (Robert Smith)".
ALIAS_AFTER_ZH = r"\s*[（(]\s*(?P<n>%NAME%)\s*[）)]"
ALIAS_AFTER_EN = (r"\s*(?:\(\s*(?P<n>%NAME%)\s*\)|,\s*(?:aka|a\.k\.a\.|also known as)\s+"
                  r"(?P<n2>%NAME%)\s*,?)")
# A clause without its own subject goes on about the last one when it starts so.
GOES_ON_ZH = (r"^(?:是|叫|名叫|名字|在|住|做|当|也|还|生日|老家|今年|平时|大名|全名|本名|真名|"
              r"搬|换|改用|迁|切)")
GOES_ON_EN = r"^(?:is|was|works|worked|lives|lived|who|whose|has)\b"

PREDICATES_ZH = (
    ("role_of", r"^(?:也)?是我(?:们家?)?的?(?:大学|高中|初中|小学|研究生|最好的|好|以前的|前|新)?"
                r"(?P<r>%ROLE%)(?:之一)?%END%"),
    ("alias", r"^(?:的)?(?:大名|全名|本名|真名|大号|也就是|就是)(?:叫|是)?\s*(?P<n>%NAME%)%END%"),
    ("role_of_other", r"^是(?P<n>%NAME%)的(?P<r>%ROLE%)%END%"),
    ("naming", r"^(?:的)?(?:叫|名叫|名字叫|名字是)\s*(?P<n>%PETNAME%)%END%"),
    ("naming", r"^是\s*(?P<n>%NAME%)%END%"),
    ("have", r"^(?:有|养了|养着|养)(?:一|两|三)?(?:个|位|只|条)?(?P<r>%ROLE%)"
             r"(?:[，,\s]*(?:叫|名叫|名字叫)\s*(?P<n>%PETNAME%))?%END%"),
    ("job", r"^在(?P<o>%ORG%)(?:当|做)(?:一名|一个|一位|个|名)?(?P<j>%JOB%)%END%"),
    ("job", r"^(?:是|当|做)(?:一名|一个|一位|个|名)?(?P<j>(?:中学|小学|高中|初中|大学|幼儿园|"
            r"资深|高级|初级|实习|兼职)?(?:%JOB%))%END%"),
    ("job", r"^是(?:做|干|搞)(?P<j>[^，。的]{1,8})的%END%"),
    ("works_at", r"^在(?P<o>%ORG%)(?:上班|工作|实习|任职|打工)%END%"),
    ("works_at", r"^(?:入职|加入|跳槽到|跳槽去)了?(?P<o>%ORG%)%END%"),
    ("works_at", r"^(?:从)?(?P<o>%ORG%)(?:离职|辞职)%END%"),
    ("lives", r"^(?:住在|住(?!院|校|店|宿舍|酒店|宾馆|的|得|了|过))(?P<p>%PLACE%)%END%"),
    ("lives", r"^在(?P<p>%PLACE%)(?:住|生活|定居)%END%"),
    ("lives", r"^(?:搬到|搬去|搬来|搬回)了?(?P<p>%PLACE%)(?:住)?%END%"),
    ("hometown", r"^是(?P<p>%CITY%)人%END%|^老家(?:是|在)(?P<p2>%PLACE%)%END%"),
    ("birthday", r"^(?:的)?生日(?:是|在)\s*(?P<d>.{2,16}?)%END%"),
    ("birthday", r"^(?P<d>.{2,12}?)(?:过|是)?生日%END%"),
    ("birthday", r"^(?:是)?(?P<d>.{4,16}?)(?:出生|生)的?%END%"),
    ("switch", r"^(?:把)?[^，从]{0,6}?从\s*(?P<a>%TOOL%)\s*(?:换成|换到|迁到|迁移到|切到|切换到|"
               r"改成|改用|升级到)了?\s*(?P<b>%TOOL%)"),
    ("switch", r"^把\s*(?P<a>%TOOL%)\s*换成了?\s*(?P<b>%TOOL%)"),
    ("switched", r"^[^，]{0,6}?(?:换成|改用|迁到|迁移到|切到|切换到)了?\s*(?P<b>%TOOL%)"),
    ("uses", r"^[^，]{0,6}?(?:用|使用|采用|基于)(?:的是|的)?\s*(?P<t>%TOOL%)"),
    ("uses", r"^(?:的)?(?:用的)?是\s*(?P<t>%TOOL%)"),
    ("likes", r"^(?:很|特别|超|最|非常|超级)?(?:喜欢|爱)(?P<v>%CJK%{1,8}?)%END%"),
    ("works_on", r"^在?(?:做|负责|开发|搞)(?:一个)?(?:叫)?\s*(?P<n>(?-i:[A-Z])[A-Za-z0-9.-]*)"
                 r"\s*的?项目"),
)
PREDICATES_EN = (
    ("role_of", r"^(?:is|'s|was|are|be|has\s+been|'s\s+been)\s+(?:also\s+)?(?:one\s+of\s+)?"
                r"(?:my|our)\s+(?:best\s+|old\s+|former\s+|new\s+)?(?P<r>%ROLE%)s?\b%END%"),
    ("role_of_other", r"^(?:is|'s|was)\s+(?P<n>%NAME%)'s\s+(?P<r>%ROLE%)\b%END%"),
    ("alias", r"^(?:is\s+)?(?:aka|also\s+known\s+as|whose\s+(?:full\s+|real\s+)?name\s+is)\s+"
              r"(?P<n>%NAME%)%END%"),
    ("naming", r"^(?:'s\s+name\s+is|name\s+is|is\s+called|is\s+named|'s\s+called|goes\s+by)"
               r"\s+(?P<n>%NAME%)%END%"),
    ("have", r"^(?:have|'ve\s+got|have\s+got|got|has)\s+(?:a|an|one)\s+(?P<r>%ROLE%)"
             r"(?:(?:,\s*|\s+)(?:named\s+|called\s+)?(?P<n>%NAME%))?%END%"),
    ("job", r"^(?:is|'s|am|'m|are|'re|was|be|works\s+as|work\s+as|worked\s+as|'ve\s+been|"
            r"have\s+been|has\s+been|'s\s+been)\s+(?:an?\s+)?"
            r"(?P<j>%MOD%(?:%JOB%))(?:\s+(?:at|for)\s+(?P<o>%ORG%))?%END%"),
    ("works_at", r"^(?:works?|worked|working|is\s+working|'s\s+working|'m\s+working|"
                 r"am\s+working|(?:'ve|have|has|'s)\s+been\s+working|been\s+working)\s+"
                 r"(?:at|for)\s+(?P<o>%ORG%)"),
    ("works_at", r"^(?:joined|started\s+at|started\s+working\s+at|left|quit)\s+(?P<o>%ORG%)"),
    ("lives", r"^(?:live|lives|lived|living|'ve\s+lived|have\s+lived|has\s+lived|'s\s+lived|"
              r"is\s+living|'s\s+living|'m\s+living|am\s+living|are\s+living|does\s+live|"
              r"do\s+live)\s+in\s+(?P<p>%PLACE%)"),
    ("lives", r"^(?:moved|'ve\s+moved|have\s+moved|has\s+moved|'s\s+moved|moved\s+back|"
              r"relocated)\s+to\s+(?P<p>%PLACE%)"),
    ("lives", r"^(?:'m|am|is|'s|are|'re)\s+based\s+in\s+(?P<p>%PLACE%)"),
    ("hometown", r"^(?:'m|am|is|'s|are|'re)\s+(?:originally\s+)?from\s+(?P<p>%PLACE%)|"
                 r"^grew\s+up\s+in\s+(?P<p2>%PLACE%)"),
    ("birthday", r"^(?:'s\s+)?birthday(?:\s+is\s+|'s\s+|\s+)(?:on\s+)?(?P<d>.{3,30}?)%END%"),
    ("birthday", r"^(?:was\s+)?born\s+on\s+(?P<d>.{3,30}?)%END%"),
    ("switch", r"^(?:'ve\s+|have\s+)?(?:switched|moved|migrated)\s+(?:(?:the|our)\s+(?:\w+\s+)"
               r"{0,2})?from\s+(?P<a>%TOOL%)\s+(?:over\s+)?to\s+(?P<b>%TOOL%)"),
    ("switch", r"^(?:'ve\s+|have\s+)?replaced\s+(?P<a>%TOOL%)\s+with\s+(?P<b>%TOOL%)"),
    ("switched", r"^(?:'ve\s+|have\s+)?(?:switched|moved|migrated)\s+(?:(?:the|our)\s+"
                 r"(?:\w+\s+){0,2})?(?:over\s+)?to\s+(?P<b>%TOOL%)"),
    ("uses", r"^(?:uses|use|is\s+using|are\s+using|'re\s+using|runs\s+on|run\s+on|"
             r"is\s+built\s+(?:on|with)|is\s+on)\s+(?P<t>%TOOL%)"),
    ("likes", r"^(?:really\s+)?(?:likes|loves|enjoys|is\s+into|'s\s+into)\s+"
              r"(?P<v>[a-z][a-z' -]{1,30}?)%END%"),
    ("works_on", r"^(?:'m|am|are|'re)\s+(?:working\s+on|building)\s+(?:a\s+project\s+called\s+)?"
                 r"(?P<n>(?-i:[A-Z])[\w.-]*)"),
)
# Questions: the chain of roles from the user, then what is asked of its last link.
ASKED = (("works_as", r"做什么的|干什么的|做啥的|干啥的|什么工作|职业|\bwhat does\b.*\bdo\b|"
                      r"\b(?:job|occupation|profession|work as)\b"),
         ("works_at", r"在哪(?:里|儿)?(?:上班|工作)|哪(?:个|家)公司|\bwhere does\b.*\bwork\b|"
                      r"\b(?:work(?:s)? (?:at|for)|employer|company)\b"),
         ("lives_in", r"住(?:在)?哪|在哪(?:里|儿)?住|\bwhere does\b.*\blive\b|\blives? in\b"),
         ("birthday", r"生日|哪天生|\bbirthday\b|\bborn\b"),
         ("likes", r"喜欢什么|爱什么|\b(?:like|likes|into)\b"))
