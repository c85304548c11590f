"""Turning a proposed (partial) node into a complete, normalised, policy-checked node."""
from __future__ import annotations

import json

from ..env import format_time
from ..errors import NeedsConfirmation, Rejected, Step
from ..ids import new_id
from ..policy import scope as scope_policy
from ..policy.schema import Schema
from ..values import READ_CONFIDENCE, STATED_CONFIDENCE, USUAL_IMPORTANCE, check
from .stores import UseCase

TITLE_MAX = 120  # characters of a title cut from the content, "…" included


def _clean_list(values, field: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise Rejected(f"{field} must be a list of strings", f"fix {field}")
    return list(dict.fromkeys(v.strip() for v in values if v and v.strip()))


class Drafts(UseCase):
    _schema = None

    @property
    def schema(self) -> Schema:
        if self._schema is None:
            rules = self.config.get("schema.rules") or []
            if rules:
                from pydantic import ValidationError

                from ..models import MemorySchemaRule, validation_message
                try:
                    rules = [MemorySchemaRule(**r).model_dump(exclude_none=True) for r in rules]
                except (ValidationError, TypeError) as exc:
                    raise Rejected(f"config schema.rules: {validation_message(exc)}"
                                   if isinstance(exc, ValidationError) else str(exc),
                                   "fix [[schema.rules]] in config.toml") from None
            self._schema = Schema(rules, self.config.get("schema.synonyms"),
                                  self.config.get("schema.singleValued"))
        return self._schema

    def prepare_node(self, draft: dict, *, actor: str, confirm: bool = False,
                     session: str | None = None) -> tuple[dict, list[str]]:
        notes: list[str] = []
        node = self._fill(draft, actor, session)
        rule = self.schema.rule_for(node["domain"], node["categoryPath"], node["type"])
        problem = self.check_key(node, rule)
        if problem:
            if actor == "user" or node["scope"] == "global":
                raise Rejected(*problem)
            notes.append(f"{problem[0]}: demoted to session scope")
            node["scope"] = "session"
        if node["scope"] is None:
            node["scope"] = scope_policy.default_scope(node, rule, actor)
        verdict, why = scope_policy.check_write(node["scope"], actor, node)
        if verdict == "reject":
            raise Rejected(why, "use session, workspace or user scope")
        if verdict == "demote":
            notes.append(why)
            node["scope"] = "session"
            if node.get("expiresAt") is None and scope_policy.looks_temporary(node):
                node["expiresAt"] = self.end_of_day()
        if verdict == "confirm" and not confirm:
            raise NeedsConfirmation(why, "if the user said so", step=Step("confirm"))
        self.check_sensitive(node, confirm)
        self._bind_owner(node)
        return node, notes

    def _fill(self, draft: dict, actor: str, session: str | None) -> dict:
        allowed = {"scope", "domain", "categoryPath", "type", "key", "valueJson", "title",
                   "content", "status", "confidence", "importance", "tags", "entities",
                   "sourceMessageIds", "sessionId", "expiresAt", "supersedesId", "parentId",
                   "explicit"}
        unknown = set(draft) - allowed
        if unknown:
            raise Rejected(f"unknown node field(s): {', '.join(sorted(unknown))}",
                           f"a node takes: {', '.join(sorted(allowed))}")
        from ..policy.nul import refuse_nul
        refuse_nul(draft, "memory")
        scope = check("scope", draft.get("scope") or None)
        if draft.get("status") not in (None, "active"):
            raise Rejected("a new node is always active", "drop status, or use forget")
        path = draft.get("categoryPath")
        if isinstance(path, str):
            path = [p for p in path.split("/") if p.strip()]
        path = _clean_list(path, "categoryPath")
        home = self._home(draft) if not path and not draft.get("domain") else None
        if home is not None:  # a built-in key says where it belongs
            path = home[1]
        domain = (draft.get("domain") or (path[0] if path else "general")).strip()
        path = path or [domain]
        kind = check("type", draft.get("type") or (home[2] if home else None)
                     or self._type_for_key(draft.get("key"), domain, path) or "fact")
        title = (draft.get("title") or "").strip()
        content = (draft.get("content") or "").strip()
        if not title and not content and draft.get("key") is not None:
            value = draft.get("valueJson")
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            title = f"{draft['key']}: {shown}"  # a key and value say enough on their own
        if not title and not content:
            raise Rejected("a memory needs a title or content", "give text, a title or content")
        from ..policy.limits import check_size
        check_size("the title", title, self.config.get("limits.title"), "limits.title")
        check_size("the content", content, self.config.get("limits.content"), "limits.content")
        extra = [*(draft.get("tags") or []), *(draft.get("entities") or []),
                 json.dumps(draft.get("valueJson"), ensure_ascii=False)]
        check_size("the tags, entities and value together", "".join(map(str, extra)),
                   self.config.get("limits.content"), "limits.content")
        if not title:
            title = title_from(content)
        now = self.env.now_iso()
        node = {
            "id": new_id("node"), "scope": scope, "domain": domain, "categoryPath": path,
            "type": kind, "title": title, "content": content or title, "status": "active",
            "confidence": _or(check("confidence", draft.get("confidence")),
                              STATED_CONFIDENCE if actor == "user" else READ_CONFIDENCE),
            "importance": _or(check("importance", draft.get("importance")), USUAL_IMPORTANCE),
            "tags": _clean_list(draft.get("tags"), "tags"),
            "entities": _clean_list(draft.get("entities"), "entities"),
            "sourceMessageIds": _clean_list(draft.get("sourceMessageIds"), "sourceMessageIds"),
            "explicit": bool(draft.get("explicit")) or actor == "user", "actor": actor,
            "createdAt": now, "updatedAt": now,
        }
        if draft.get("key") is not None:
            node["key"] = self.schema_key(draft["key"])
            node["valueJson"] = draft.get("valueJson")
        elif draft.get("valueJson") is not None:
            raise Rejected("valueJson needs a key", "give the key too")
        if draft.get("parentId"):
            node["parentId"] = draft["parentId"]
        if draft.get("expiresAt"):
            node["expiresAt"] = self._normalise_time(draft["expiresAt"])
        # Provenance: the session a memory was stated in, whichever way it was chosen
        # (flag, EKKO_SESSION or config); session scope also uses it to keep sessions apart.
        node["sessionId"] = draft.get("sessionId") or self.session(session)
        return node

    def _home(self, draft: dict) -> tuple[str, list[str], str] | None:
        key = draft.get("key")
        if not isinstance(key, str) or not key.strip():
            return None
        text = f"{draft.get('title') or ''}{draft.get('content') or ''}{draft.get('valueJson')}"
        return self.schema.home_of(self.schema_key(key), _has_cjk(text + key))

    def _type_for_key(self, key, domain: str, path: list[str]) -> str | None:
        """With a key but no type, the type whose rule allows that key here."""
        if not isinstance(key, str) or not key.strip():
            return None
        canonical = self.schema_key(key)
        for kind in ("preference", "constraint", "fact", "decision", "task"):
            rule = self.schema.rule_for(domain, path, kind)
            if rule and canonical in rule["allowedKeys"]:
                return kind
        return None

    def schema_key(self, key: str) -> str:
        from ..policy.schema import canonical_key
        if not isinstance(key, str) or not key.strip():
            raise Rejected("key must be a non-empty string", "give a key like avoid_ingredient")
        canonical = canonical_key(key, self.schema.synonyms)
        assert canonical is not None  # None only for no key
        return canonical

    def check_key(self, node: dict, rule: dict | None) -> tuple[str, str] | None:
        key = node.get("key")
        if key is None:
            return None
        where = f"{node['domain']}/{'/'.join(node['categoryPath'][1:])} {node['type']}"
        if rule is None or key not in rule["allowedKeys"]:
            return (f"key '{key}' is not allowed for {where}", self._key_hint(key, rule))
        shape = self.schema.key_shape(key, rule)
        value = self.schema.normalise_value(key, node.get("valueJson"), shape)
        if value is None:
            return (f"value {node.get('valueJson')!r} does not fit key '{key}' ({shape})",
                    f"give a {shape} value")
        node["valueJson"] = value
        return None

    def _key_hint(self, key: str, rule: dict | None) -> str:
        """Where the key is allowed, or the allowed key it is closest to, then the rules."""
        home = self.schema.home_of(key, False)
        nearest = self.schema.nearest_key(key, rule["allowedKeys"]) if rule else None
        if home is not None:
            lead = f"'{key}' belongs to {'/'.join(home[1])} ({home[2]}): give that category;"
        elif nearest is not None:
            lead = f"did you mean '{nearest}'?"
        else:
            lead = ""
        allowed = ", ".join(rule["allowedKeys"]) if rule else "none (no rule covers it)"
        rest = f"allowed keys here: {allowed}; add a [[schema.rules]] entry in config.toml"
        return f"{lead} {rest}" if lead else rest

    def check_sensitive(self, node: dict, confirm: bool) -> None:
        """Credentials need confirmation in any scope; other personal data only in the
        lasting scopes. Every field counts, the category and domain included."""
        policy = self.config.get("sensitive.policy")
        if policy == "allow":
            return
        from ..canonical import canonical_json
        from ..policy.sensitive import SECRET_KINDS, describe, find_sensitive
        text = "\n".join([node["title"], node["content"], canonical_json(node.get("valueJson")),
                          node["domain"], "/".join(node["categoryPath"]), *node["tags"],
                          *node["entities"]])
        findings = find_sensitive(text)
        if node["scope"] not in ("user", "workspace"):
            findings = [f for f in findings if f["kind"] in SECRET_KINDS]
        if not findings:
            return
        what = describe(findings)
        if policy == "refuse":
            raise Rejected(f"this memory contains {what}; sensitive.policy is 'refuse'",
                           "keep secrets out of memory")
        if not confirm:
            raise NeedsConfirmation(f"this memory contains {what}",
                                    f"to store it in {node['scope']} scope",
                                    step=Step("confirm"))

    def _bind_owner(self, node: dict) -> None:
        if node["scope"] == "user":
            node["userId"] = self.env.user_id()
        elif node["scope"] in ("workspace", "session"):
            node["workspaceId"] = self.store.store_id()
        if node["scope"] == "session" and not node.get("sessionId"):
            node["sessionId"] = self.session()
        if node["sourceMessageIds"]:
            node["sourceMessageIds"] = self._bind_sources(node["scope"],
                                                          node["sourceMessageIds"])

    def _bind_sources(self, scope: str, refs: list[str]) -> list[str]:
        """Each cited message named as the node's db will find it again (store/refs.py): a
        user memory names a workspace message with the workspace's id, so that every other
        workspace knows it is elsewhere. Another workspace's log cannot be read from here:
        a reference into it stands only when a user memory already cites it (a supersede
        or an edit carries it over), never on an agent's word."""
        from ..store.refs import source_ref, split_ref
        user = scope == "user"
        workspace = self.stores.workspace_or_none() if user else self.store
        here = workspace.store_id() if workspace is not None else None
        parts = [(ref, *split_ref(ref)) for ref in refs]
        logged = workspace.messages.message_ids_exist(
            [mid for _, where, mid in parts if where in (None, here)]) if workspace else set()
        rest = [(ref, where, mid) for ref, where, mid in parts
                if where not in (None, here) or mid not in logged]
        owner = self.stores.user_store() if user and rest else None
        own = owner.messages.message_ids_exist(
            [mid for _, where, mid in rest if where is None]) if owner else set()
        carried = owner.nodes.cited_sources([ref for ref, _, _ in rest]) if owner else set()
        bound = []
        for ref, where, mid in parts:
            if where in (None, here) and mid in logged:
                # logged holds ids only where there is a workspace, so `here` is its id
                bound.append(source_ref(here, mid) if user and here is not None else mid)
            elif (where is None and mid in own) or ref in carried:
                bound.append(ref)
            elif where not in (None, here):
                raise Rejected(f"source message {ref} is in another workspace's log",
                               "cite it from that workspace, or leave that source out")
            else:
                raise Rejected(f"source message {ref} does not exist",
                               "log the message first, or leave that source out")
        return list(dict.fromkeys(bound))

    def _normalise_time(self, text) -> str:
        from ..policy.timeexpr import parse_when
        return format_time(parse_when(str(text), self.env.now()))

    def end_of_day(self) -> str:
        from ..policy.timeexpr import end_of_local_day
        return format_time(end_of_local_day(self.env.now()))

    @staticmethod
    def value_from_text(text: str | None) -> object:
        """A value given as text: JSON, or else the text itself as a string."""
        if text is None:
            return None
        import json
        try:
            return json.loads(text)
        except ValueError:
            return text

    @staticmethod
    def check_choice(kind: str, value: str | None) -> str | None:
        """A scope, type or status in its canonical spelling (None stays None)."""
        assert kind in ("scope", "type", "status"), kind
        return check(kind, value)


def _or(given, default):
    return default if given is None else given


def title_from(content: str) -> str:
    """The content on one line, cut to TITLE_MAX characters where a reader expects a break:
    after a whole word in spaced text (half a word reads as a typo), after any character
    in CJK text, which has no spaces to break at."""
    flat = " ".join(content.split())
    if len(flat) <= TITLE_MAX:
        return flat
    head = flat[:TITLE_MAX - 1]
    if flat[TITLE_MAX - 1] != " " and not _has_cjk(head[-1]):
        breaks = [i for i, ch in enumerate(head) if ch == " " or _has_cjk(ch)]
        if breaks and breaks[-1] >= TITLE_MAX // 2:  # else one long word: cut it
            head = head[:breaks[-1] + (head[breaks[-1]] != " ")]
    return head.rstrip(" ,;:、，；：") + "…"


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
