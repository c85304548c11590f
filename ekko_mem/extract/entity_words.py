"""How the entity reader tells words apart: names, roles, places, tools and clauses.

Pure. Patterns are compiled on first use; `pattern(name)` and `predicates(zh)` fill the
templates in entity_vocab.py with the word tables there.
"""
from __future__ import annotations

import re
from functools import cache

from . import entity_vocab as V
from .text import rx
from .vocab import STACK

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


def pieces(text: str, pattern: str, base: int) -> list[tuple[str, int]]:
    """`text` split where `pattern` matches, each piece stripped, with where it starts."""
    out, at = [], 0
    for m in [*rx(pattern).finditer(text), None]:
        end = m.start() if m else len(text)
        piece = text[at:end]
        if piece.strip():
            out.append((piece.strip(), base + at + len(piece) - len(piece.lstrip())))
        if m:
            at = m.end()
    return out


def only_time(clause: str) -> bool:
    """A clause that only says when (去年, "In 2019"): it belongs to the next one."""
    rest = rx(V.ADVERBS_ZH).sub("", clause.strip())
    return not rest.strip() or (clause.isascii() and rx(r"^(?:in|on|last|this|next)?\s*" +
                                                        r"(?:\d{4}|year|month|week)\s*$")
                                .search(rest) is not None)


def without_ended(rest: str, zh: bool) -> str:
    """不再住在杭州 -> 住在杭州, "isn't my manager anymore" -> "is my manager": the state
    that ended, for the predicates to read."""
    if zh:
        return rx(r"不再|已经不|早就不|早已不").sub("", rest, count=1)
    return rx(r"\b(?:no longer|not)\s+|n't\b|\s*\b(?:anymore|any more)\b").sub("", rest)


@cache
def pattern(name: str) -> re.Pattern[str]:
    """A compiled pattern by name. Those over Chinese words are compiled case-sensitive:
    folding the case of a hundred CJK characters costs more than all the matching they do,
    and their Latin parts (names) keep their case anyway."""
    roles_zh = alternatives({**V.ROLES_ZH, **V.PETS_ZH})
    roles_en = alternatives({**V.ROLES_EN, **V.PETS_EN})
    names_zh = (rf"[小老][{V.SURNAMES}]|阿[^\W\d_姨婆公爸妈里拉]|(?P<dup>{V.CJK})(?P=dup)|"
                rf"[{V.SURNAMES}]{V.CJK}{{1,2}}?(?=(?:{V.ZH_AFTER})|$)|{_LATIN}")
    as_written = {
        "role_zh": roles_zh,
        "name_zh": names_zh,
        "chain_zh": rf"(?:我们|我|咱们)(?:家)?的?(?:{roles_zh})(?:的(?:{roles_zh}))*",
        "alias_zh": V.ALIAS_AFTER_ZH.replace("%NAME%", names_zh),
    }
    # Right after a role, 小美 and 阿杰 are names too: 我闺蜜小美, 我男朋友阿杰.
    as_written["given_zh"] = (rf"(?:小(?![{V.NOT_NICK}])|阿)[^\W\d_](?=(?:{V.ZH_AFTER})|$)|"
                           + names_zh)
    as_written["by_role"] = rf"(?:^我|^我的|的|^my |'s )(?:{roles_zh}|{roles_en})$"
    if name in as_written:
        return re.compile(as_written[name])
    return rx({
        "role_en": rf"(?:{roles_en})\b",
        "name_en": _LATIN,
        "chain_en": rf"\b(?:my|our)\s+(?:{roles_en})\b(?:'s\s+(?:{roles_en})\b)*",
        "trailer_name": r"^[^\W\d_][\w .'-]{0,60}$",
        "alias_en": V.ALIAS_AFTER_EN.replace("%NAME%", _LATIN),
        "tool": rf"(?<![A-Za-z])(?:{alternatives({*STACK, *V.MORE_TOOLS})})(?![A-Za-z])",
    }[name])


_WORD = r"(?:[A-Z]'[A-Z][a-z]+|[A-Z][a-zA-Z-]*[a-z][a-zA-Z-]*)"
_LATIN = rf"(?-i:{_WORD}(?:\s{_WORD}){{0,2}})(?![A-Za-z0-9])"


def alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@cache
def predicates(zh: bool) -> tuple[tuple[str, re.Pattern[str]], ...]:
    fill = {"%ROLE%": alternatives({**V.ROLES_ZH, **V.PETS_ZH} if zh
                                    else {**V.ROLES_EN, **V.PETS_EN}),
            "%NAME%": pattern("name_zh" if zh else "name_en").pattern,
            "%PETNAME%": rf"{_LATIN}|(?![我你他她它咱])(?:{V.CJK}){{1,4}}" if zh else _LATIN,
            "%JOB%": alternatives(V.JOBS_ZH if zh else V.JOBS_EN),
            "%ORG%": (r"[\u4e00-\u9fffA-Za-z0-9&]{2,12}?" if zh else
                      r"(?-i:[A-Z][\w&.'-]*(?:\s+(?:[A-Z][\w&.'-]*|of|&))*)"),
            "%PLACE%": (r"(?:(?![了的过着呢啊吧哦啦])[\u4e00-\u9fffA-Za-z]){2,8}?" if zh else
                        r"(?-i:[A-Z][a-zA-Z.'-]*(?:\s+[A-Z][a-zA-Z.'-]*){0,2})"),
            "%TOOL%": f"(?i:{pattern('tool').pattern})",
            "%CITY%": rf"{alternatives(V.CITIES_ZH)}|{V.CJK}{{1,4}}[省市县州]",
            "%MOD%": V.JOB_MODIFIERS, "%CJK%": V.CJK, "%END%": V.END_ZH if zh else V.END_EN}
    out = []
    for kind, template in V.PREDICATES_ZH if zh else V.PREDICATES_EN:
        for token, value in fill.items():
            template = template.replace(token, f"(?:{value})" if token not in ("%END%", "%CJK%")
                                        else value)
        out.append((kind, re.compile(template) if zh else rx(template)))
    return tuple(out)


def aliases_after(body: str, pos: int, name: str,
                  zh: bool) -> tuple[list[tuple[str, str]], int]:
    """小王（王伟）, "Bob (Robert Smith)", "Bob, aka Robert,": the other name, and where the
    clause goes on."""
    m = pattern("alias_zh" if zh else "alias_en").match(body, pos)
    if m is None:
        return [], pos
    other = m.group("n") or m.groupdict().get("n2")
    return ([(name, other)], m.end()) if other and named(other, zh) else ([], pos)


def role(word: str, zh: bool) -> tuple[str, str]:
    table = {**V.ROLES_ZH, **V.PETS_ZH} if zh else {**V.ROLES_EN, **V.PETS_EN}
    return table[word if zh else " ".join(word.lower().split())]


def unnamed(owner: str, word: str, zh: bool, relation: str, links: Sequence[object]) -> str:
    """The name of someone known only by their role: 我老婆, 我的猫, my sister's husband."""
    if zh:
        joiner = "的" if links or owner != "我" or relation == "pet" else ""
        return f"{owner}{joiner}{word}"
    return f"{owner} {word.lower()}" if owner == "my" else f"{owner}'s {word.lower()}"


def by_role(name: str) -> bool:
    """Whether the name is a role someone was known by: 我老婆, 小王的老婆, my sister's husband."""
    return bool(name) and pattern("by_role").search(name) is not None


def named(name: str, zh: bool) -> bool:
    """Whether the words are a name: 小王, 王伟, 朵朵, Anna; not 我帮忙, 老师 or "The"."""
    if name.isascii():
        return latin_name(name)
    whole = pattern("name_zh").fullmatch(name) or pattern("given_zh").fullmatch(name)
    return bool(whole) and name not in V.NOT_NAMES_ZH and name not in {**V.ROLES_ZH,
                                                                       **V.PETS_ZH}


def latin_name(name: str) -> bool:
    return bool(name) and name.split()[0] not in V.NOT_NAMES_EN and name.lower() not in STACK


def after_owner(text: str) -> str:
    return rx(r"^(?:家)?的?").sub("", text)


def place_like(where: str | None, zh: bool, work: bool = False) -> bool:
    """A named place or workplace, not a kind of one (家, 一家医院, home, the office); a
    workplace is not a city (在北京工作)."""
    if not where:
        return False
    if where.isascii():
        return latin_name(where) and where.split()[0] not in V.PLACE_STOP_EN
    city = where in V.CITIES_ZH or rx(r"[市省区县]$").search(where) is not None
    return (where not in V.GENERIC_ZH and not rx(V.GENERIC_LEAD_ZH).search(where)
            and not (work and city))


def spans(text: str, names: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """Where the names occur in the text, the longest first where they overlap."""
    found: list[tuple[int, int]] = []
    for name in sorted(set(names), key=len, reverse=True):
        for m in re.finditer(re.escape(name), text):
            if all(m.end() <= s or m.start() >= e for s, e in found):
                found.append(m.span())
    return tuple(sorted(found))

