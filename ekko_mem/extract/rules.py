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
from functools import cache

from .engineering import engineering_items
from .habits import habit_item
from .health import health_items
from .text import Item, Spelt, held_in, longest_first
from .text import Turn as _Turn
from .text import chinese as _chinese
from .text import clip as _clip
from .text import first as _first
from .text import fold as _fold
from .text import has as _has
from .text import rx as _rx
from .text import search as _search
from .text import singular as _singular
from .text import split as _split
from .text import split_items as _split_items
from .text import sub as _sub
from .text import without_request
from .vocab import (
    COOK_WORDS,
    DURATION,
    TIME_BOUND,
    ZH_NUMBERS,
    ALLOW_ZH,
    AMOUNT,
    AVOID_EN,
    AVOID_ZH,
    CHANGE,
    COOKING,
    COOKING_PATH,
    COOKING_PREFIX,
    CUISINES_EN,
    CUISINES_ZH,
    DESCRIBED,
    EN_CLAUSE,
    EXPLICIT,
    FIRST_PERSON,
    FLAVOUR_NOUNS,
    FLAVOUR_SPEC,
    FLAVOUR_WORDS,
    FOODS,
    FOOD_CONTEXT,
    HEALTH,
    HEALTH_PATH,
    HYPOTHETICAL,
    IMPORTANCE,
    KEYS,
    LEAD_EN,
    LEAD_ZH,
    LIKE_EN,
    LIKE_ZH,
    LIMIT_ZH,
    NEGATED_BEFORE,
    NOTE_PREFIX,
    NOT_FOOD_ZH,
    NOW,
    OTHER_SUBJECT,
    PAST,
    STATES,
    OK_EN,
    OWN_TASTE,
    PROJECT_MARKERS,
    QUESTION,
    QUOTED,
    REMEMBER,
    REFUSAL,
    REFUSED_AFTER,
    REMEMBER_REQUEST,
    REPLACE_ALL,
    SENSITIVE,
    SMALL_TALK,
    STOP_EN,
    TASK_DONE,
    TASK_LOOSE,
    TASK_OPEN,
    TECH_EN,
    TECH_ZH,
    TEMPORARY,
    TEXT,
    THIRD_PARTY,
    TRIM_END,
)

# (kind, value, the words that said it): a flavour's value is {field: level}, as 少油少辣 is
# {"oil": "low", "spicy": "low"}; an ingredient's or a cuisine's is the word.
Fact = tuple[str, str | dict[str, str], tuple[str, ...]]



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
    chinese = sum(1 for m in users if _chinese(str(m.get("content") or "")))
    return {"summaryPatch": _summary(items, chinese > 0 and chinese * 2 >= len(users)),
            "nodes": items, "ignored": ignored}


def _from_message(message: dict, end_of_day: str) -> tuple[list[Item], str | None]:
    # Phones type curly apostrophes (don’t); the rules spell them straight.
    text = str(message.get("content") or "").replace("\u2019", "'").replace("\u2018", "'")
    if "\t" in text or "\u3000" in text or "  " in text:  # else every run is one space already
        text = _sub(r"[ \t\u3000]+", " ", text)
    text = text.strip()
    if not text:
        return [], "empty"
    if _first(SENSITIVE, text):
        return [], "sensitive"  # the whole message: a secret must not leak via a title either
    kept: list[str] = []
    skipped: list[str] = []
    for sentence in _sentences(text):
        reason = _skip_reason(sentence)
        if reason == "third_party":
            sentence = _own_part(sentence)
            reason = None if sentence else reason
        if not reason:
            sentence = _present(sentence)
            reason = None if sentence else "past"
        (skipped if reason else kept).append(reason or sentence)
    turn = _turn(str(message.get("id") or ""), kept, _chinese(text), end_of_day)
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
    # A full stop after a space is code (ruff check .), not the end of a sentence.
    parts = _split(r"(?<=[。！？；;!?])|(?<=\S\.)\s+|\n+", text)
    return [part.strip() for part in parts if part and _has(r"\w", part)]


def _clauses(sentence: str, zh: bool) -> list[str]:
    # Chinese lists use 、 so a comma starts a clause; English lists use commas, so only a comma
    # before a new subject or connective does.
    return [c for c in _split(r"[，,]" if zh else EN_CLAUSE, sentence) if c and c.strip()]


def _skip_reason(sentence: str) -> str | None:
    if len(sentence) <= 40 and _has(SMALL_TALK, sentence):
        return "small_talk"
    if _has(HYPOTHETICAL, sentence):
        return "hypothetical"
    if _has(QUOTED, sentence):
        return "quoted"
    if _has(QUESTION, sentence) and not _has(REMEMBER_REQUEST, sentence):
        return "question"
    if _has(THIRD_PARTY, sentence):
        return "third_party"
    return None


def _own_part(sentence: str) -> str:
    """The clauses that are the user's own: 我不吃葱，我老公倒是特别爱吃 says only the first
    of the user, and "remind me to call my mom" names her as the task's object."""
    clauses = _split(r"(?<=[,，;；])|(?=\bbut\b)|(?=但是|不过|可是)", sentence)
    # A clause without a subject of its own goes on about the one before it (我爸在控糖，甜的
    # 都不能吃), so only clauses that say 我 / I are the user's.
    kept = [c for c in clauses if (_has(FIRST_PERSON, c) and not _has(THIRD_PARTY, c))
            or _own_task(c)]
    return "".join(kept).strip(" ,，;；") if len(kept) < len(clauses) else (
        sentence if all(_own_task(c) for c in clauses) else "")


def _own_task(clause: str) -> bool:
    """A to-do or a report of the user's own whose words come before anyone else is named."""
    other = _search(THIRD_PARTY, clause)
    task = _first((*TASK_LOOSE, *TASK_OPEN, NOTE_PREFIX, *TASK_DONE), clause.strip())
    return bool(task and other and task.start() < other.start()
                and not _has(r"^(?:my|his|her|their)\b", clause.strip()))


def _present(sentence: str) -> str:
    """The sentence without its clauses about the past only: 以前不吃香菜 was true then, and
    "I used to hate olives but now I love them" says only the second half of now."""
    if not _has(PAST, sentence):
        return sentence
    clauses = _split(r"(?<=[,，;；])|(?=\bbut\b)|(?=但是|不过|可是)", sentence)
    kept = [c for c in clauses if not _has(PAST, c) or _has(NOW, c)]
    return "".join(kept).strip(" ,，;；") if len(kept) < len(clauses) else sentence


def _turn(message_id: str, sentences: list[str], zh: bool, end_of_day: str) -> _Turn:
    text = " ".join(sentences)
    health = next((c.strip(" ，,。.!！") for s in sentences for c in _clauses(s, zh)
                   if _has(HEALTH, c)), None)
    return _Turn(message_id, zh, _has(EXPLICIT, text), _has(REMEMBER, text), _has(CHANGE, text),
                 health is not None or _has(TEMPORARY, text), health, end_of_day,
                 _has(COOK_WORDS, text) or _has(FOOD_CONTEXT, text), _has(REPLACE_ALL, text))


def _from_sentence(sentence: str, turn: _Turn, facts: list[Fact]) -> list[Item]:
    technical = engineering_items(sentence, turn)
    if technical:
        # 必须先跑 `lint`，另外禁止推 main: a rule with no command beside the one that has it.
        rest = [c for c in _split(r"[，,；;]", sentence) if not engineering_items(c, turn)]
        return technical + [i for c in rest if (i := _project(c, turn)) is not None]
    for rule in (_correction, _project, _task, _note):
        found_items = rule(sentence, turn)
        if found_items:
            return found_items if isinstance(found_items, list) else [found_items]
    # 我怀孕了，别推荐生鱼片 says two things; the clause that states the diet says only one.
    health = health_items(sentence, turn) or []
    timed = _cooking_time(sentence, turn)
    if timed is not None:
        health.append(timed)
    # 控制在半小时以内，多用鸡胸肉: the clause with the limit says only that; the others may
    # still name food.
    clauses = [c for c in _clauses(sentence, turn.zh) if not (
        (health and health_items(c, turn)) or (timed and _cooking_time(c, turn)))]
    found = [f for clause in clauses for f in _food_facts(clause, sentence)]
    facts.extend(found)
    if found or health:
        return health
    habit = habit_item(sentence, turn)
    if habit is not None:
        return [habit]
    match = _first(TASK_LOOSE, sentence)
    text = _task_text(match.group("x")) if match else ""
    return [_task_item("open", text, turn)] if text else []


# --- cooking time ----------------------------------------------------------------------------

def _cooking_time(sentence: str, turn: _Turn) -> Item | None:
    """做饭别超过半小时 / keep cooking under 30 minutes: a cooking word, a bound, a duration."""
    if not ((turn.food or _has(COOK_WORDS, sentence)) and _has(TIME_BOUND, sentence)):
        return None
    match = _search(DURATION, sentence)
    minutes = _minutes(match) if match else None
    if not minutes:
        return None
    stance = _stance(turn, IMPORTANCE["time"])
    if turn.zh:
        wording = {"title": f"做饭不超过{minutes}分钟",
                   "content": f"推荐的菜做起来不超过{minutes}分钟。", "tags": ["做饭时间"]}
    else:
        wording = {"title": f"Cooking within {minutes} minutes",
                   "content": f"Recommend dishes that take at most {minutes} minutes.",
                   "tags": ["cooking time"]}
    node = _food_node("time", f"≤{minutes}min", [], stance, wording, turn)
    return {"operation": "create", "node": node, "reason": "a cooking time limit"}


def _minutes(match: re.Match) -> int | None:
    if match.group("half"):
        return 30
    if match.group("quarter"):
        return 15
    if match.group("hour1"):
        return 60
    count = match.group("n")
    number = int(count) if count.isdigit() else _zh_number(count)
    if not number:
        return None
    unit = match.group("unit").lower()
    return number * 60 if ("小时" in unit or unit.startswith("h")) else number


def _zh_number(text: str) -> int | None:
    """一 to 九十九 (十五, 二十, 四十五)."""
    if any(ch not in ZH_NUMBERS for ch in text):
        return None
    if "十" not in text:
        return ZH_NUMBERS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    return (ZH_NUMBERS[tens] if tens else 1) * 10 + (ZH_NUMBERS[ones] if ones else 0)


# --- food preferences ------------------------------------------------------------------------

def _food_facts(clause: str, sentence: str) -> list[Fact]:
    if _someone_else(clause):
        return []  # 小王不吃香菜 / Tom is avoiding gluten: not the user's own
    rest, fields, said = _scan_flavours(clause)
    facts: list[Fact] = [("flavour", fields, tuple(said))] if fields else []
    zh = _chinese(clause)
    for kind, patterns in (("avoid", AVOID_ZH if zh else AVOID_EN),
                           ("like", LIKE_ZH if zh else LIKE_EN)):
        match = _first(patterns, rest.strip())
        if match and _has(NEGATED_BEFORE, rest.strip()[: match.start()]):
            return facts  # "I don't avoid gluten", 我并不讨厌香菜: the opposite is said
        if match:
            return facts + _ingredient_facts(kind, match.group("x"), sentence, zh)
    return facts


def _someone_else(clause: str) -> bool:
    """Whether the clause's subject, the words before its first verb, is another person."""
    head = _search(r"^(?P<h>.*?)(?:不|别|没|爱|喜欢|讨厌|偏|吃|要|想|对|是|能|可以|会|怕|受不了|"
                   r"\b(?:hates?|likes?|loves?|eats?|avoid\w*|can't|doesn't|don't|"
                   r"won't|prefers?|enjoys?|wants?|needs?|only)\b)", clause.strip())
    return bool(head and head.group("h").strip() and _has(OTHER_SUBJECT, head.group("h")))


def _scan_flavours(clause: str) -> tuple[str, dict[str, str], list[str]]:
    """Take flavour phrases out of the clause, so 不要太辣 is never read as avoiding 太辣."""
    fields: dict[str, str] = {}
    said: list[str] = []

    def take(match: re.Match[str]) -> str:
        # A negation sits right before the word, a refusal right after it: bounded looks
        # keep long texts linear instead of rescanning the whole clause at every match.
        before = clause[max(0, match.start() - 40): match.start()]
        after = clause[match.end(): match.end() + 40]
        if _has(DESCRIBED, before) and not _has(OWN_TASTE, clause):
            return match.group(0)  # 粤菜比较清淡 describes the dish, not the person
        refused = _has(REFUSED_AFTER, after)
        # By folded spelling: the case-blind match also takes ſpicy or İ for spicy and i.
        for field, level in _flavour_table()[_fold(match.group(0))].items():
            negated = _has(r"[不别没][^，,]{0,2}$|\b(?:not|never|no|don't|can't|won't)\b"
                           r"(?:\s+\w+){0,2}\s*$", before)
            if refused:
                level = "none" if field == "spicy" else "low"
            fields[field] = "low" if level == "high" and negated else level
        said.append(match.group(0))
        return " "

    phrases = _flavours_in(clause)
    return (_flavour_rx(phrases).sub(take, clause) if phrases else clause), fields, said


@cache
def _flavour_table() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for field, level, phrases in FLAVOUR_SPEC:
        for phrase in phrases.split("|"):
            table.setdefault(phrase, {})[field] = level  # 清淡 sets both oil and salt
    return table


@cache
def _flavour_phrases() -> Spelt:
    return longest_first(_flavour_table())  # at one position 不吃辣 beats 吃辣


def _flavours_in(clause: str) -> tuple[str, ...]:
    # Compiling all ~150 phrases costs more than the rest of a message's rules: only those the
    # clause holds are compiled.
    return held_in(_flavour_phrases(), clause)


@cache
def _flavour_rx(phrases: tuple[str, ...]) -> re.Pattern[str]:
    # 辣椒 and 辣条 are foods, not levels.
    alternatives = []
    for phrase in phrases:
        text = rf"\b{re.escape(phrase)}\b" if phrase.isascii() else re.escape(phrase)
        alternatives.append(text + "(?![椒条酱子油])" if phrase.endswith("辣") else text)
    return re.compile("|".join(alternatives), re.IGNORECASE)


def _ingredient_facts(kind: str, raw: str, sentence: str, zh: bool) -> list[Fact]:
    facts: list[Fact] = []
    for item in _split_items(raw, zh):
        field = FLAVOUR_NOUNS.get(_sub(r"^(?:太|很|过于|too |very )", "", item))
        cuisine = _cuisine(item, zh)
        if field:
            level = "high" if kind == "like" else (
                "none" if field == "spicy" and _has(REFUSAL, sentence) else "low")
            facts.append(("flavour", {field: level}, (item,)))
        elif cuisine:
            if kind == "like":  # an avoided cuisine has no controlled key yet: dropped
                facts.append(("cuisine", cuisine, (item,)))
        elif _is_food(item, sentence, zh):
            facts.append((kind, item, (item,)))
    return facts


def _cuisine(item: str, zh: bool) -> str | None:
    if zh:
        return item if item in CUISINES_ZH else None
    word = _sub(r"\s+(?:food|cuisine|dishes|dish|cooking)$", "", item)
    if word not in CUISINES_EN:
        return None
    return "Sichuan" if word == "szechuan" else word.capitalize()


def _is_food(item: str, sentence: str, zh: bool) -> bool:
    """Known foods always count; any other word only when the sentence is about food."""
    if item in FOODS:
        return True
    if zh:
        shaped = _chinese_word(item) and not _has(NOT_FOOD_ZH, item)
    else:
        words = item.split()
        shaped = (_has(r"^[a-z][a-z -]{0,30}$", item) and len(words) <= 3
                  and not STOP_EN.intersection(words))
    return shaped and _has(FOOD_CONTEXT, sentence)


def _chinese_word(item: str) -> bool:
    """_has(rf"^{CJK}{{1,8}}$", item) without compiling the class ($ passes a final newline)."""
    word = item[:-1] if item.endswith("\n") else item
    return 0 < len(word) <= 8 and all("\u4e00" <= ch <= "\u9fff" for ch in word)


def _food_items(facts: list[Fact], turn: _Turn) -> list[Item]:
    """One node per ingredient; one flavor_profile per message, since the key holds one value."""
    flavour: dict[str, str] = {}
    said: list[str] = []
    out: list[Item | None] = []
    seen: set[tuple[str, str]] = set()
    for kind, value, words in facts:
        if isinstance(value, dict):  # a flavour: its fields join the message's one profile
            if not flavour:
                out.append(None)  # keeps its place among the message's nodes
            flavour.update(value)
            said += [w for w in words if w not in said]
        elif (kind, value) not in seen:
            seen.add((kind, value))
            out.append(_food_item(kind, value, list(words), turn))
    return [item or _food_item("flavour", flavour, said, turn) for item in out]


def _food_item(kind: str, value: str | dict[str, str], entities: list[str],
               turn: _Turn) -> Item:
    stance = _stance(turn, IMPORTANCE[kind])
    words = _value_words(value, turn.zh)
    wording = _wording(kind, words, turn.zh, turn.temporary, turn.health)
    node = _food_node(kind, value, entities, stance, wording, turn)
    item: Item = {"operation": "create", "node": node, "reason": _reason(turn)}
    if turn.replace:
        item["replace"] = True
    if kind == "flavour" and turn.change and turn.explicit and not turn.temporary:
        # 以后都不吃辣 after 喜欢吃辣: the new lasting profile replaces the old one. The
        # extractor cannot see stored values, so the selector names the slot, not a value; the
        # service finds nothing to replace when there is no profile yet, and creates instead.
        item.update(operation="supersede", reason="a change of a lasting flavour preference",
                    target={"type": "preference", "key": KEYS[kind],
                            "categoryPathPrefix": list(COOKING_PREFIX)})
    return item


def _food_node(kind: str, value: object, entities: list[str], stance: dict, wording: dict,
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
    # What the rule found, never where it is kept: the write decides that (policy/reasons.py).
    if turn.temporary:
        return "a passing state that ends today"
    return "a dietary preference stated as lasting" if turn.explicit else "a dietary preference"


def _value_words(value: str | dict[str, str], zh: bool) -> str:
    if isinstance(value, str):  # an ingredient or a cuisine
        return value
    words = [FLAVOUR_WORDS[(field, level)][0 if zh else 1] for field, level in value.items()]
    return "".join(words) if zh else ", ".join(words)


def _wording(kind: str, words: str, zh: bool, temporary: bool, health: str | None) -> dict:
    title, phrase, content, tag_words = TEXT[kind]["zh" if zh else "en"]
    title, phrase, content = (part.format(x=words) for part in (title, phrase, content))
    tags = list(tag_words)
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


def worded(key: str, value: object, zh: bool) -> dict | None:
    """The title and content the rules give a lasting value of `key`, so a value merged with
    the one before it is worded as a whole; None for keys the rules do not word."""
    if key != KEYS["flavour"] or not isinstance(value, dict) or any(
            (field, level) not in FLAVOUR_WORDS for field, level in value.items()
            if isinstance(level, str)) or not all(isinstance(v, str) for v in value.values()):
        return None  # a field or level the rules have no words for
    wording = _wording("flavour", _value_words(value, zh), zh, False, None)
    return {"title": wording["title"], "content": wording["content"]}


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
            "reason": "a passing health state that ends today"}


# --- corrections, project decisions, tasks ---------------------------------------------------

def _correction(sentence: str, turn: _Turn) -> Item | None:
    """香菜现在可以接受一点 / cilantro is fine now: replaces or lifts an earlier avoidance."""
    if turn.zh:
        candidates = [("limit", p) for p in LIMIT_ZH] + [("allow", p) for p in ALLOW_ZH]
    else:
        kind = "limit" if _has(AMOUNT, sentence) else "allow"
        candidates = [(kind, p) for p in OK_EN]
    for kind, pattern in candidates:
        match = _search(pattern, sentence)
        if not match:
            continue
        subject = _sub(LEAD_ZH if turn.zh else LEAD_EN, "", match.group("x").strip().lower())
        subject = _sub(r"(?:了|啦|的|吧|哦|呀)+$", "", subject) if turn.zh else _singular(subject)
        if kind == "limit" and subject in FLAVOUR_NOUNS:
            # 现在可以吃一点辣了: a little of a flavour is a level of it, not an ingredient.
            return _food_item("flavour", {FLAVOUR_NOUNS[subject]: "low"}, [subject], turn)
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
                "reason": "a correction of an earlier avoidance: small amounts are fine"}
    return {"operation": "expire", "node": node, "target": target,
            "reason": "an ingredient no longer avoided"}


def _project(sentence: str, turn: _Turn) -> Item | None:
    """我们决定用 SQLite / must not ...: a workspace decision or constraint, worded as said."""
    if _has(FOOD_CONTEXT, sentence) or _mentions_food(sentence, turn.zh):
        return None  # 必须少油 and "never use cilantro" are food preferences
    technical = _first(TECH_ZH if turn.zh else TECH_EN, sentence) is not None
    for kind, needs_technical, pattern in PROJECT_MARKERS:
        if _has(pattern, sentence) and (technical or not needs_technical):
            return _project_item(kind, sentence, turn)
    return None


def _mentions_food(sentence: str, zh: bool) -> bool:
    if zh:
        return any(food in sentence for food in FOODS if not food.isascii())
    return any(_singular(w) in FOODS for w in _rx(r"[a-z]+").findall(sentence.lower()))


def _project_item(kind: str, sentence: str, turn: _Turn) -> Item:
    text = without_request(sentence)
    domain = "工程" if turn.zh else "engineering"
    folder = {"decision": ("决策", "decisions"), "constraint": ("约束", "constraints")}[kind]
    node = {"scope": "workspace", "domain": domain,
            "categoryPath": [domain, folder[0 if turn.zh else 1]], "type": kind,
            "title": _clip(text, 60), "content": text + ("。" if turn.zh else "."),
            "confidence": 0.95, "importance": 0.85, "tags": [folder[0] if turn.zh else kind],
            "entities": _names(text, turn.zh), "sourceMessageIds": [turn.message_id],
            "explicit": True}
    return {"operation": "create", "node": node, "reason": f"a project {kind}"}


def _names(text: str, zh: bool) -> list[str]:
    """Tool names: Latin words inside Chinese; in English, words with inner capitals or digits
    (SQLite, FTS5) and capitalised words past the first."""
    words = _rx(r"[A-Za-z][A-Za-z0-9.+#_-]*[A-Za-z0-9+#]|[A-Za-z]").findall(text)
    if not zh:
        words = [w for i, w in enumerate(words) if w != "I" and (
            w[1:] != w[1:].lower() or _has(r"\d", w) or (i > 0 and w[0].isupper()))]
    return list(dict.fromkeys(words))


def _task(sentence: str, turn: _Turn) -> list[Item] | None:
    """A to-do or a report that one is done, a clause at a time: 房租交了，明天还得去银行 says
    both."""
    items = []
    for clause in _split(r"[，,；;]\s*|\s+and\s+(?=(?:tomorrow|then|i|still|now)\b)", sentence):
        for state, patterns in (("done", TASK_DONE), ("open", TASK_OPEN)):
            match = _first(patterns, clause.strip()) if clause.strip() else None
            text = _task_text(match.group("x")) if match else ""
            if text:
                items.append(_task_item(state, text, turn))
                break
    return items or None


def _note(sentence: str, turn: _Turn) -> Item | None:
    """Note to self: call the bank / 记一下：周五前交报告: a note that asks for a deed is a
    task, one that reports it done closes one, and one that states something (the gym closes
    at 9) is left to the other rules."""
    match = _search(NOTE_PREFIX, sentence)
    rest = match.group("x").strip() if match else ""
    done = _task(rest, turn) if rest else None
    if done:
        return done[0]
    if not rest or _has(STATES, rest) or _has(FOOD_CONTEXT, rest):
        return None
    text = _task_text(rest)
    return _task_item("open", text, turn) if text else None


def _task_text(raw: str) -> str:
    # 也投出去了 names nothing: a task is more than the adverbs before its verb.
    text = _sub(TRIM_END, "", _sub(r"^(?:了|我们|我|已经)+", "", raw.strip())).strip()
    return "" if _has(r"^(?:也|都|还|就|又|再|才)*$", text) else text


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
        return {"operation": "create", "node": node, "reason": "a task opened"}
    return {"operation": "update", "node": node, "target": {"type": "task", "text": text},
            "reason": "a task reported done"}


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
