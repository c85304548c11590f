"""Health and diet: allergies, intolerances, vegetarian or vegan, halal or kosher, medical diets,
pregnancy. What the body cannot take is a constraint in user scope that goes wherever food goes,
never a mere dislike: recommending peanuts to someone allergic does harm, not disappointment.
"""
from __future__ import annotations

from .text import Item, Turn, clip, first, has, search, singular, split, split_items, sub
from .vocab import (
    AIRBORNE,
    ALLERGEN_END,
    ALLERGEN_TAIL,
    ALLERGY_EN,
    ALLERGY_ZH,
    COOKING,
    DIET_DENIED,
    DIET_PATH,
    DIETS,
    DOCTOR,
    HEALTH_PATH,
    MEDICINES,
    OTHER_SUBJECT,
    STOP_EN,
)

# Not allergens: what is left when 我有点过敏 loses its 我 and 过敏.
_NOT_ALLERGEN = r"^(?:有?点|一点|有些|些|很|太|特别|比较|经常|容易|好像|可能|也)+$"


def health_items(sentence: str, turn: Turn) -> list[Item] | None:
    """Allergies first, then diets; None when the sentence says neither (or denies one)."""
    if has(DIET_DENIED, sentence):
        return None  # 我不是素食主义者 and "not allergic" state nothing to obey
    items = [_item("allergy", allergen, turn) for allergen in _allergens(sentence, turn.zh)]
    items += [_item("dietary_restriction", diet, turn) for diet in _diets(sentence, turn.zh)]
    return items or None


def _allergens(sentence: str, zh: bool) -> list[str]:
    match = first(ALLERGY_ZH if zh else ALLERGY_EN, sentence)
    if not match:
        return []
    found = []
    raw = match.group("x") if zh else sub(ALLERGEN_END, "", match.group("x"))
    for item in split_items(raw, zh):
        item = sub(ALLERGEN_TAIL, "", item) if zh else _singular(item)
        if zh and search(_NOT_ALLERGEN, item):
            continue
        if not zh and (STOP_EN.intersection(item.split()) or len(item.split()) > 3):
            continue
        if item and len(item) <= 20 and item not in found:
            found.append(item)
    return found


def _singular(word: str) -> str:
    """walnuts -> walnut, berries -> berry, tomatoes -> tomato; shellfish stays."""
    known = singular(word)
    if known != word or len(word) < 4:
        return known
    for plural, one in (("ies", "y"), ("oes", "o"), ("s", "")):
        if word.endswith(plural) and not word.endswith(("ss", "us", "is")):
            return word[: -len(plural)] + one
    return word


def _diets(sentence: str, zh: bool) -> list[str]:
    found = []
    for chinese, english, pattern in DIETS:
        match = search(pattern, sentence)
        if match and has(OTHER_SUBJECT, split(r"[，,。；;]", sentence[: match.start()])[-1]):
            continue  # 小王乳糖不耐受: someone else's diet
        if match:
            # 纯素 already says 素食: one restriction, the stricter one.
            if english == "vegetarian" and ("纯素" in found or "vegan" in found):
                continue
            found.append(chinese if zh else english)
    orders = first(DOCTOR, sentence)
    if orders:
        said = clip(sub(r"[\s。！？；;!?.，,]+$", "", orders.group("x").strip()), 40)
        if said:
            found.append(f"医嘱：{said}" if zh else f"doctor's orders: {said}")
    return found


def _item(key: str, value: str, turn: Turn) -> Item:
    allergy = key == "allergy"
    # A medicine or pollen is no recipe's ingredient: its allergy is health, not diet.
    kind = ("medicine" if value.lower() in MEDICINES else "airborne" if value.lower() in AIRBORNE
            else "food") if allergy else "diet"
    if turn.zh:
        title = f"对{value}过敏" if allergy else f"饮食限制：{value}"
        content = {"food": f"对{value}过敏：推荐菜谱时绝对不能含{value}。",
                   "medicine": f"对{value}过敏（药物）：用药时必须避开{value}。",
                   "airborne": f"对{value}过敏。",
                   "diet": f"饮食限制：{value}，推荐菜谱时必须遵守。"}[kind]
        tags = ["健康", "过敏" if allergy else "饮食限制"]
    else:
        title = f"Allergic to {value}" if allergy else f"Diet: {value}"
        content = {"food": f"Allergic to {value}: never include {value} in recipes.",
                   "medicine": f"Allergic to {value} (a medicine): never take or suggest it.",
                   "airborne": f"Allergic to {value}.",
                   "diet": f"Dietary restriction: {value}; every recipe must respect it."}[kind]
        tags = ["health", "allergy" if allergy else "diet"]
    path = DIET_PATH if kind in ("food", "diet") else HEALTH_PATH
    node = {"scope": "user", "domain": COOKING, "categoryPath": list(path),
            "type": "constraint", "key": key, "valueJson": value, "title": title,
            "content": content, "confidence": 0.95, "importance": 0.95, "tags": tags,
            "entities": [value], "sourceMessageIds": [turn.message_id], "explicit": True}
    # A passing diet (今天吃素) ends tonight; an allergy is never a passing state.
    if turn.temporary and not allergy:
        node.update(scope="session", expiresAt=turn.end_of_day)
        return {"operation": "create", "node": node,
                "reason": "a diet for today"}
    return {"operation": "create", "node": node,
            "reason": "an allergy" if allergy else "a dietary restriction"}
