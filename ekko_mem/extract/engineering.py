"""Developer memory from chat: the stack (we use Python 3.12 / 我们用 PostgreSQL), the commands
(the test command is pytest -q) and standing rules (from now on, always run …), each under its
engineering key, so "what's the test command again?" is an exact lookup, not a guess.
"""
from __future__ import annotations

import re
from functools import cache

from .text import (
    Item,
    Spelt,
    Turn,
    chinese,
    clip,
    has,
    held_in,
    longest_first,
    rx,
    search,
    split,
    sub,
    without_request,
    worth_trying_in_parts,
)
from .vocab import (
    COMMAND_END,
    COMMAND_LEAD,
    COMMAND_TOOLS,
    COMMANDS,
    ENGINEERING_WORDS,
    PROJECT_MARKERS,
    STACK,
    STACK_MARKERS,
    STANDING,
    TOOL_NOT,
    TOOL_NOT_AFTER,
    TOOL_YES,
    CONTRAST_SPLIT,
)

# Everyday words that are also tool names: only their capitalised spelling names the tool.
_AMBIGUOUS = {"go", "spring", "express", "click", "bun", "node", "swift", "dart", "oracle",
              "rust", "react", "java"}


def engineering_items(sentence: str, turn: Turn) -> list[Item] | None:
    items = []
    kind = _kind(sentence)
    for key, value in _commands(sentence):
        items.append(_item(kind, key, value, sentence, turn))
    if has(STACK_MARKERS, sentence):
        found: dict[str, list[str]] = {}
        for key, value in _stack(sentence):
            found.setdefault(key, []).append(value)
        # One value per key: "Python and TypeScript" is one answer to "which language", not
        # two rivals of which the second would supersede the first.
        items += [_item("fact", key, ", ".join(values), sentence, turn)
                  for key, values in found.items()]
    return items or None


def _kind(sentence: str) -> str:
    """A command said as a rule (from now on, always, 必须) is a constraint; else a fact."""
    rules = [pattern for kind, _, pattern in PROJECT_MARKERS if kind == "constraint"]
    return "constraint" if any(has(p, sentence) for p in (STANDING, *rules)) else "fact"


def _commands(sentence: str) -> list[tuple[str, str]]:
    """Each clause names at most one command: "tests run with X, builds with Y" names two."""
    # A clause is a piece of the sentence: a pattern that cannot match in any piece of it is
    # not tried on each clause, and with none left (and no `quote`) there is nothing to split.
    possible = [(key, pattern) for key, patterns in COMMANDS for pattern in patterns
                if worth_trying_in_parts(pattern, sentence)]
    if not possible and "`" not in sentence:
        return []
    found: dict[str, str] = {}
    for clause in split(r"[，,；;]\s*|\s+and\s+(?=(?:the\s+)?\w+\s+(?:builds?|tests?|lints?|"
                        r"runs?)\b)", sentence):
        command = _command(clause, possible)
        if command and command[0] not in found:
            found[command[0]] = command[1]
    return list(found.items())


def _command(clause: str, possible: list[tuple[str, str]]) -> tuple[str, str] | None:
    for key, pattern in possible:
        match = search(pattern, clause)
        value = _command_text(match.group("x")) if match else ""
        if value:
            return key, value
    # A quoted command of a known tool: `golangci-lint run`, `ruff check .`.
    quoted = search(r"`(?P<c>[^`]+)`", clause)
    if quoted:
        value = _command_text(quoted.group(0))
        for tool, key in sorted(COMMAND_TOOLS.items(), key=lambda kv: -len(kv[0])):
            if value and (value.lower() == tool or value.lower().startswith(tool + " ")):
                return key, value
    return None


def _command_text(raw: str) -> str:
    quoted = search(r"[`'\"“‘](?P<c>[^`'\"”’]+)[`'\"”’]", raw)
    if quoted:  # quoted, the command is exactly what is inside (go test ./...)
        text = quoted.group("c").strip()
        return text if rx(r"^[A-Za-z./~$]").match(text) and len(text) <= 80 else ""
    text = sub(COMMAND_END, "", sub(COMMAND_LEAD, "", raw.strip()))
    # A final "." after a space is an argument (ruff check .); after a word it ends the sentence.
    text = sub(r"(?<=[^\s.])\.$", "", sub(r"[\s。！？；;!?，,]+$", "", text.strip()))
    text = text.strip(" `'\"")
    # A command is code: it starts like one, has no Chinese in it and fits on a line.
    if not rx(r"^[A-Za-z./~$]").match(text) or chinese(text) or len(text) > 80:
        return ""
    return text


def _stack(sentence: str) -> list[tuple[str, str]]:
    """The tools the sentence says are used. A tool it says is not (or no longer) used is left
    out, and when one tool is said to stand where another was (bun now, not pnpm; 把 npm 换成
    pnpm), the one used takes the other's role."""
    used: list[tuple[str, str]] = []
    dropped: list[str] = []
    # A tool named inside a quoted command (`npm run build`) is the command's, not the stack's.
    bare = sub(r"`[^`]*`", " ", sentence)
    for clause in split(CONTRAST_SPLIT, bare):
        names = _named(clause) if clause else ()
        for match in _stack_rx(names).finditer(clause) if names else ():
            name = match.group("name")
            before = clause[: match.start()]
            if name.lower() in _AMBIGUOUS and not name[0].isupper() and not has(
                    r"(?:\b(?:use|using|uses|to|on|with)|用|改用|换成)\s*$", before):
                continue
            key = STACK[name.lower()]
            if _denied(before) or has(TOOL_NOT_AFTER, clause[match.end():]):
                dropped.append(key)
                continue
            if any(k == key and v.split()[0].lower() == name.lower() for k, v in used):
                continue  # Deno 2 … deno: one tool, named twice
            version = match.group("version")
            used.append((key, f"{name} {version}" if version else name))
    roles = [k for k in dict.fromkeys(dropped) if k not in {k for k, _ in used}]
    if len(used) == 1 and len(roles) == 1:
        return [(roles[0], used[0][1])]
    return used


def _denied(before: str) -> bool:
    """Whether the last word before a tool's name that says yes or no about it says no."""
    said = [m.lastgroup for m in rx(f"(?P<no>{TOOL_NOT})|(?P<yes>{TOOL_YES})").finditer(before)]
    return bool(said) and said[-1] == "no"


@cache
def _stack_names() -> Spelt:
    return longest_first(STACK)


def _named(text: str) -> tuple[str, ...]:
    return held_in(_stack_names(), text)


@cache
def _stack_rx(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![\w.#+])(?P<name>{alternatives})(?![\w#+])"
                      rf"(?:\s*v?(?P<version>\d+(?:\.\d+)*))?", re.IGNORECASE)


def _item(kind: str, key: str, value: str, sentence: str, turn: Turn) -> Item:
    zh = turn.zh
    domain = "工程" if zh else "engineering"
    label = ENGINEERING_WORDS[key][0 if zh else 1]
    folder = {"fact": ("技术栈", "stack"), "constraint": ("约束", "constraints")}[kind]
    if key.endswith("_command"):
        folder = ("命令", "commands") if kind == "fact" else folder
    said = without_request(sentence)
    if kind == "constraint" or key.endswith("_command"):
        content = said + ("。" if zh else ".")
    else:
        content = f"项目的{label}是 {value}。" if zh else f"The project's {label} is {value}."
    title = f"{label}：{value}" if zh else f"{label[:1].upper()}{label[1:]}: {value}"
    node = {"scope": "workspace", "domain": domain, "categoryPath": [domain, folder[0 if zh
                                                                                  else 1]],
            "type": kind, "key": key, "valueJson": value, "title": clip(title, 60),
            "content": content, "confidence": 0.95, "importance": 0.85,
            "tags": [label], "entities": [value], "sourceMessageIds": [turn.message_id],
            "explicit": True}
    why = "a project rule" if kind == "constraint" else "a project fact"
    return {"operation": "create", "node": node, "reason": f"{why} ({key})"}
