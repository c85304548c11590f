"""The controlled schema: which keys a domain/category/type may use, their shapes, synonyms.

Exact lookups only work if one meaning has one key, so keys are folded to their canonical
name and checked against the rule for the node's domain, category and type.
"""
from __future__ import annotations

COOKING = ["生活技能", "做饭"]
ENGINEERING_DOMAINS = ("工程", "engineering", "project", "项目", "开发", "dev", "software")
ENGINEERING_KEYS = ["language", "framework", "database", "test_command", "build_command",
                    "package_manager", "style_guide", "deploy_target", "branch_policy",
                    "python_version", "runtime", "license", "ci", "lint_command"]

BUILTIN_RULES: list[dict] = [
    {"domain": "生活技能", "categoryPathPrefix": COOKING, "type": "preference",
     "allowedKeys": ["avoid_ingredient", "preferred_ingredient", "flavor_profile",
                     "dietary_restriction", "cooking_time_preference", "limit_ingredient",
                     "preferred_cuisine"],
     "valueShape": "object", "defaultScope": "user", "requiresExplicitUserIntent": True},
    {"domain": "生活技能", "categoryPathPrefix": COOKING, "type": "constraint",
     "allowedKeys": ["avoid_ingredient", "flavor_profile", "dietary_restriction", "allergy",
                     "limit_ingredient", "preferred_ingredient", "preferred_cuisine",
                     "cooking_time_preference"],
     "valueShape": "object", "defaultScope": "session", "requiresExplicitUserIntent": False},
    # An allergy to a medicine or to pollen is health, not diet.
    {"domain": "生活技能", "categoryPathPrefix": ["生活技能", "健康"], "type": "constraint",
     "allowedKeys": ["allergy"], "valueShape": "string", "defaultScope": "user",
     "requiresExplicitUserIntent": False},
    *({"domain": domain, "type": kind, "allowedKeys": ENGINEERING_KEYS,
       "valueShape": "string", "defaultScope": "workspace",
       "requiresExplicitUserIntent": False}
      for domain in ENGINEERING_DOMAINS for kind in ("fact", "constraint", "decision")),
    {"domain": "*", "type": "task", "allowedKeys": ["task_state"], "valueShape": "object",
     "defaultScope": "workspace", "requiresExplicitUserIntent": False},
]

# The shape of each key's valueJson; keys not listed take their rule's valueShape.
KEY_SHAPES = {
    "avoid_ingredient": "string", "preferred_ingredient": "string", "preferred_cuisine": "string",
    "dietary_restriction": "string", "cooking_time_preference": "string", "allergy": "string",
    "flavor_profile": "object", "limit_ingredient": "object", "task_state": "object",
}

# Keys that hold one value each per person/project: a new value supersedes the old one.
# Every other key is multi-valued (香菜 and 葱 can both be avoided).
SINGLE_VALUED = {"flavor_profile", "cooking_time_preference", "language", "framework",
                 "database", "test_command", "build_command", "package_manager", "style_guide",
                 "deploy_target", "branch_policy", "python_version", "runtime", "license", "ci",
                 "lint_command"}

# Health and diet: what the body cannot take, not what the person prefers. They are user-scope
# constraints that go wherever food goes, and the last thing a tight budget drops.
HEALTH_KEYS = {"allergy", "dietary_restriction"}

# Keys whose value is the state of the thing the node names (a task is open or done), not what
# tells one node from another: two open tasks are two memories, told apart by what they say.
STATE_KEYS = {"task_state"}

SYNONYMS = {
    "disliked_ingredient": "avoid_ingredient", "avoid_food": "avoid_ingredient",
    "excluded_ingredient": "avoid_ingredient", "avoided_ingredient": "avoid_ingredient",
    "dislike_ingredient": "avoid_ingredient", "no_ingredient": "avoid_ingredient",
    "liked_ingredient": "preferred_ingredient", "favorite_ingredient": "preferred_ingredient",
    "favourite_ingredient": "preferred_ingredient", "like_ingredient": "preferred_ingredient",
    "flavour_profile": "flavor_profile", "taste": "flavor_profile", "flavor": "flavor_profile",
    "taste_preference": "flavor_profile", "diet": "dietary_restriction",
    "cuisine": "preferred_cuisine", "favorite_cuisine": "preferred_cuisine",
    "test_cmd": "test_command", "build_cmd": "build_command", "lint_cmd": "lint_command",
    "db": "database",
    "lang": "language", "programming_language": "language",
    # The same keys as people name them in Chinese.
    "忌口": "avoid_ingredient", "不吃": "avoid_ingredient", "忌食": "avoid_ingredient",
    "喜欢吃": "preferred_ingredient", "爱吃": "preferred_ingredient",
    "口味": "flavor_profile", "菜系": "preferred_cuisine", "饮食限制": "dietary_restriction",
    "饮食禁忌": "dietary_restriction", "过敏": "allergy", "过敏源": "allergy",
    "allergen": "allergy", "allergies": "allergy", "food_allergy": "allergy",
    "intolerance": "dietary_restriction", "做饭时间": "cooking_time_preference",
    "限量食材": "limit_ingredient", "编程语言": "language", "语言": "language",
    "框架": "framework", "数据库": "database", "测试命令": "test_command",
    "代码检查命令": "lint_command",
    "构建命令": "build_command", "包管理器": "package_manager", "代码规范": "style_guide",
    "部署目标": "deploy_target", "分支策略": "branch_policy", "运行时": "runtime",
    "许可证": "license", "持续集成": "ci",
}

# Flavour words -> (field, level). Longer phrases first so 不要太辣 is not read as 辣.
FLAVOR_WORDS: list[tuple[str, str, str]] = [
    ("不要太辣", "spicy", "low"), ("not too spicy", "spicy", "low"), ("少辣", "spicy", "low"),
    ("微辣", "spicy", "low"), ("不辣", "spicy", "none"), ("no spice", "spicy", "none"),
    ("mild", "spicy", "low"), ("less spicy", "spicy", "low"), ("重辣", "spicy", "high"),
    ("很辣", "spicy", "high"), ("spicy", "spicy", "high"), ("少油", "oil", "low"),
    ("less oil", "oil", "low"), ("low oil", "oil", "low"), ("not oily", "oil", "low"),
    ("清淡", "oil", "low"), ("少盐", "salt", "low"), ("low salt", "salt", "low"),
    ("less salt", "salt", "low"), ("少糖", "sugar", "low"), ("low sugar", "sugar", "low"),
    ("less sugar", "sugar", "low"),
]


def canonical_key(key: str | None, synonyms: dict[str, str]) -> str | None:
    if key is None:
        return None
    folded = key.strip().lower().replace("-", "_").replace(" ", "_")
    return synonyms.get(folded, folded)


def normalise_flavor(value):
    """少油少辣 -> {"oil": "low", "spicy": "low"}; objects pass through; None if unknown."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    text = value.lower()
    found: dict[str, str] = {}
    for word, field, level in FLAVOR_WORDS:
        if word in text and field not in found:
            found[field] = level
            text = text.replace(word, " ")
    return found or None


def shape_of(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "string[]"
    if isinstance(value, dict):
        return "object"
    return "other"


class Schema:
    """Built-in rules, extended or overridden by config.toml ([[schema.rules]], synonyms)."""

    def __init__(self, extra_rules: list[dict] | None = None,
                 synonyms: dict[str, str] | None = None,
                 single_valued: list[str] | None = None) -> None:
        self.rules = [*(extra_rules or []), *BUILTIN_RULES]  # configured rules match first
        self.synonyms = {**SYNONYMS, **{k.lower(): v for k, v in (synonyms or {}).items()}}
        self.single_valued = SINGLE_VALUED | set(single_valued or [])

    def rule_for(self, domain: str, path: list[str], kind: str) -> dict | None:
        for rule in self.rules:
            if rule["type"] != kind or rule["domain"] not in ("*", domain):
                continue
            prefix = rule.get("categoryPathPrefix") or []
            if path[: len(prefix)] == prefix:
                return rule
        return None

    def key_shape(self, key: str, rule: dict) -> str:
        return (rule.get("keyShapes") or {}).get(key) or KEY_SHAPES.get(key) or rule["valueShape"]

    def is_single_valued(self, key: str | None) -> bool:
        return key in self.single_valued

    def home_of(self, key: str, chinese: bool) -> tuple[str, list[str], str] | None:
        """(domain, category path, type) of the first rule that allows `key`, for a key given
        without a domain or category; engineering keys take the domain in the text's language."""
        for rule in self.rules:
            if key in rule["allowedKeys"] and rule["domain"] != "*":
                domain = rule["domain"]
                if domain in ENGINEERING_DOMAINS:
                    domain = "工程" if chinese else "engineering"
                return domain, list(rule.get("categoryPathPrefix") or [domain]), rule["type"]
        return None

    def nearest_key(self, key: str, allowed: list[str]) -> str | None:
        """The allowed key closest in spelling to `key`, if any is close."""
        from difflib import get_close_matches  # only on the way to a refusal
        found = get_close_matches(key, allowed, n=1, cutoff=0.6)
        return found[0] if found else None

    @staticmethod
    def is_state(key: str | None) -> bool:
        """Whether `key`'s value is a state rather than what the memory is (see STATE_KEYS)."""
        return key in STATE_KEYS

    def normalise_value(self, key: str, value, shape: str):
        """Fold values to the key's shape; None means it could not be."""
        if key == "flavor_profile":
            return normalise_flavor(value)
        if shape == "string" and isinstance(value, str):
            return value.strip() or None
        if shape == "string[]" and isinstance(value, str):
            return [value]
        if shape == "number" and isinstance(value, str):
            try:
                return float(value) if "." in value else int(value)
            except ValueError:
                return None
        if shape == "boolean" and isinstance(value, str):
            return {"true": True, "yes": True, "false": False, "no": False}.get(value.lower())
        return value if shape_of(value) == shape else None
