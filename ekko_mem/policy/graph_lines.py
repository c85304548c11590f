"""What a context says about the people, pets, places and things a question names: the words
looked up as names, and one compact line an entity ("小王：同事；前端；生日 3月5日").

Pure: the caller reads the edges; nothing here touches a db or compiles the statement rules,
so a question that names nobody costs a few string operations.
"""
from __future__ import annotations

import re

# Words looked up as names, at most: a pasted page is not a question about someone.
MAX_WORDS = 600
MAX_FACTS = 8
_LATIN = r"[A-Za-z][A-Za-z0-9'.\-]*"
_CJK_RUN = r"[\u4e00-\u9fff]+"


def name_words(question: str) -> list[str]:
    """Every run of one to three words (two to six characters in Chinese) that could be a
    name or an alias, in order; the name index says which are."""
    tokens = [t.removesuffix("'s").rstrip(".'") for t in re.findall(_LATIN, question[:2000])][:80]
    out = [" ".join(tokens[i:i + n]) for n in (1, 2, 3) for i in range(len(tokens) - n + 1)]
    for run in re.findall(_CJK_RUN, question[:2000]):
        out += [run[i:i + n] for n in range(2, 7) for i in range(len(run) - n + 1)]
    return [w for w in dict.fromkeys(out) if w][:MAX_WORDS]


def may_name_someone(question: str, texts: list[str]) -> bool:
    """Whether memories the graph has not read yet could answer a question about someone: the
    question says a role (my sister, 我同事) or a word that looks like a name, and one of the
    texts says it too. Decides whether a context reads them first."""
    from ..extract import entity_vocab as V
    roles = [w for w in (*V.ROLES_ZH, *V.PETS_ZH) if w in question]
    lowered = question.lower()
    roles += [w for w in (*V.ROLES_EN, *V.PETS_EN) if _says_word(w, lowered)]
    names = [t.removesuffix("'s") for t in re.findall(_LATIN, question)
             if t[:1].isupper() and t.removesuffix("'s") not in V.NOT_NAMES_EN]
    for run in re.findall(_CJK_RUN, question):
        names += [run[i:i + n] for n in (2, 3) for i in range(len(run) - n + 1)
                  if run[i] in "小老" + V.SURNAMES]
    if not roles and not names:
        return False
    body = "\n".join(texts)
    low = body.lower()
    return any(r.lower() in low for r in roles) or any(n in body for n in names)


def _zh_words() -> dict[str, str]:
    from ..extract import entity_vocab as V
    out: dict[str, str] = {}
    for word, (_, english) in (*V.ROLES_ZH.items(), *V.PETS_ZH.items()):
        out.setdefault(english, word)
    return out


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _day(when: str, chinese: bool) -> str:
    """"--03-05" or "2019-03-05" as people write it."""
    parts = when.lstrip("-").split("-")
    year = when[:4] if not when.startswith("-") and len(parts) == 3 else ""
    month, day = (int(parts[-2]), int(parts[-1])) if len(parts) >= 2 else (0, 0)
    if not 1 <= month <= 12:
        return when
    if chinese:
        return f"{year + '年' if year else ''}{month}月{day}日"
    return f"{_MONTHS[month - 1]} {day}" + (f", {year}" if year else "")


# An attribute of the entity: (Chinese, English), {o} the object or value.
ATTRIBUTES = {
    "works_at": ("在{o}工作", "works at {o}"), "lives_in": ("住在{o}", "lives in {o}"),
    "hometown": ("老家{o}", "from {o}"), "works_on": ("做{o}", "works on {o}"),
    "uses": ("用{o}", "uses {o}"), "likes": ("喜欢{o}", "likes {o}"),
}
# The entity as the object of someone's attribute: a place the user lives in.
OBJECT_OF = {
    "works_at": ("{s}在这里工作", "{s} works here"), "lives_in": ("{s}住在这里", "{s} lives here"),
    "hometown": ("{s}的老家", "{s}'s hometown"), "works_on": ("{s}在做", "{s} works on it"),
    "uses": ("{s}在用", "used by {s}"), "likes": ("{s}喜欢", "{s} likes it"),
}
OWNERS = {"user": ("用户", "the user"), "project": ("项目", "the project")}


def newest_facts(entity_id: str, newest_first: list[dict], chinese: bool
                 ) -> tuple[list[str], list[dict]]:
    """The MAX_FACTS newest facts the edges say of the entity, printed oldest first, and the
    edges they were read from (only those: a fact left out used no memory)."""
    zh = _zh_words() if chinese else {}
    kept: dict[str, dict] = {}
    for edge in newest_first:
        fact = _fact(entity_id, edge, chinese, zh)
        if fact:
            kept.setdefault(fact + _times(edge, chinese), edge)
        if len(kept) >= MAX_FACTS:
            break
    said = list(kept.items())[::-1]
    return [fact for fact, _ in said], [edge for _, edge in said]


def _fact(entity_id: str, edge: dict, chinese: bool, zh: dict[str, str]) -> str:
    relation, value = edge["relation"], edge.get("value") or ""
    if relation == "mentioned":  # a memory that names it, saying nothing of it
        return ""
    word = zh.get(value, value) if chinese else value
    subject, obj = edge["subject"], edge.get("objectId")
    other_name = edge.get("objectName") if subject == entity_id else edge.get("subjectName")
    if subject in OWNERS:
        other_name = OWNERS[subject][0 if chinese else 1]
    if subject == entity_id and obj is None:          # an attribute with a value
        if relation == "birthday":
            return ("生日 " if chinese else "birthday ") + _day(value, chinese)
        if relation in ATTRIBUTES:
            return ATTRIBUTES[relation][0 if chinese else 1].format(o=value)
        return word
    if subject == entity_id:                          # the entity's relation to another
        if relation in ATTRIBUTES:
            return ATTRIBUTES[relation][0 if chinese else 1].format(o=other_name)
        return f"{word} {other_name}" if word else str(other_name)
    if relation in OBJECT_OF:                         # someone's attribute is the entity
        return OBJECT_OF[relation][0 if chinese else 1].format(s=other_name)
    if subject == "user":                             # the user's sister, colleague, cat
        return word
    return f"{other_name}的{word}" if chinese else f"{other_name}'s {word}"


def _times(edge: dict, chinese: bool) -> str:
    start, end = edge.get("validFrom"), edge.get("validTo")
    start = start if start and start[:1].isdigit() else None
    end = end if end and end[:1].isdigit() else None
    if start and end:
        return f"（{start}到{end}）" if chinese else f" ({start} to {end})"
    if start:
        return f"（{start}起）" if chinese else f" (since {start})"
    if end:
        return f"（到{end}）" if chinese else f" (until {end})"
    return ""


def line(name: str, found: list[str], chinese: bool) -> str:
    return f"- {name}：{'；'.join(found)}" if chinese else f"- {name}: {'; '.join(found)}"


def says_a_role(question: str) -> bool:
    """A role word (my sister, 我姐姐的老公): only then are chains of roles looked for."""
    lowered = question.lower()
    if "我" not in question and "咱" not in question and not re.search(r"\b(?:my|our)\b",
                                                                     lowered):
        return False  # every chain starts from the one asking
    from ..extract import entity_vocab as V
    if any(w in question for w in V.ROLES_ZH):
        return True
    return any(_says_word(w, lowered) for w in V.ROLES_EN)


def _says_word(word: str, lowered: str) -> bool:
    # The plain test first: a pattern is compiled only for a word the text holds.
    return word in lowered and re.search(rf"\b{re.escape(word)}\b", lowered) is not None
