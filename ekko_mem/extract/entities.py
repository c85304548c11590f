"""People, pets, places and projects in everyday statements, and how they relate: rules only.

Pure: no I/O, SQL or clock; the caller passes `now`. `read_graph(text, now)` gives a `Graph`:

- `entities`: `Entity(kind, name, aliases, spans)`; kind is person, pet, place, organisation,
  project or thing; spans are the (start, end) of each mention of the name or an alias.
- `edges`: `Edge(subject, relation, object, value, valid_from, valid_to, span)`, read "the
  subject's <relation> is the object": `user sibling Anna` (value "sister", the word said),
  `Anna works_as nurse` (a value, no object), `project uses Postgres`. A subject is an entity's
  name, "user", or "project" (the workspace's project when it goes unnamed). Someone named only
  by a role gets the role as a name (我老婆, my sister's husband). A birthday is "--MM-DD", or a
  whole date when the year is said.
- Times are ISO dates as precise as said (2019, 2019-05, 2019-05-03, 2026-W10), "past" (before
  the statement, when not said), "now" (as of the statement: a state said to hold now began by
  then, one said to hold no longer ended by then), or None when not said.

As conservative as the other rules: a sentence that asks, supposes, wishes, or passes on what
someone else said gives nothing, nor does a negated clause; a word becomes an entity only when
an edge or a naming needs it. The user's own tastes stay with the preference rules.
"""
from __future__ import annotations

import re
from collections import namedtuple
from datetime import date, datetime

from . import entity_vocab as V
from . import entity_words as W
from .entity_times import moment, when_said
from .text import chinese, rx
from .vocab import HYPOTHETICAL, QUESTION, QUOTED

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TypeAlias

    from .entity_times import When

    Span: TypeAlias = tuple[int, int]
    # (owner, relation, the one it names, their kind, the role word said): 我姐姐 is
    # ("user", "sibling", "我姐姐", "person", "姐姐")
    Link: TypeAlias = tuple[str, str, str, str, str | None]

__all__ = ["Edge", "Entity", "Graph", "RELATIONS", "joins", "read_graph"]
USER, PROJECT = "user", "project"
ATTRIBUTES = ("works_as", "works_at", "lives_in", "hometown", "birthday", "works_on", "uses",
              "likes", "contributor")
RELATIONS = (*sorted(V.PEOPLE_RELATIONS), "pet", *ATTRIBUTES)


class Entity(namedtuple("Entity", "kind name aliases spans")):
    __slots__ = ()

    def as_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "aliases": list(self.aliases),
                "spans": [list(s) for s in self.spans]}


class Edge(namedtuple("Edge", "subject relation object value valid_from valid_to span")):
    __slots__ = ()

    def as_dict(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "object": self.object,
                "value": self.value, "validFrom": self.valid_from, "validTo": self.valid_to,
                "span": list(self.span)}


class Graph(namedtuple("Graph", "entities edges")):
    __slots__ = ()

    def as_dict(self) -> dict:
        return {"entities": [e.as_dict() for e in self.entities],
                "edges": [e.as_dict() for e in self.edges]}


def read_graph(text: str, now: datetime | date) -> Graph:
    """The entities `text` names and the edges between them, with the times it gives."""
    today = now.date() if isinstance(now, datetime) else now
    reader = _Reader(text.replace("\u2019", "'").replace("\u2018", "'"), today)
    rest = reader.trailers()
    for sentence, at in W.pieces(rest, V.SENTENCE_END, 0):
        reader.sentence(sentence, at)
    return reader.graph()


def joins(question: str) -> list[tuple[str, ...]]:
    """The relation paths from the user a question follows: "what does my sister's husband
    do?" -> [("sibling", "spouse", "works_as")], 我姐姐的老公 -> [("sibling", "spouse")]."""
    zh = chinese(question)
    # "my current manager", 我现在的老板: the one who holds the role now, which is what
    # the live edges say anyway.
    question = re.sub(r"(?i)\b(my|our)\s+(?:current|present|new)\s+", r"\1 ", question)
    question = re.sub(r"(我们|我|咱们)(?:现在|目前|如今|新)的?", r"\1的", question)
    paths = []
    for match in W.pattern("chain_zh" if zh else "chain_en").finditer(question):
        roles = W.pattern("role_zh" if zh else "role_en").findall(match.group(0))
        path = tuple(W.role(r, zh)[0] for r in roles)
        # What is asked of them, with the chain out of the way: "what does X do?"
        rest = question[:match.start()] + " X " + question[match.end():]
        asked = next((rel for rel, pattern in V.ASKED if rx(pattern).search(rest)), None)
        paths.append(path + ((asked,) if asked else ()))
    return paths


class _Subject:
    """Who a clause is about, and the links that name them, kept until the clause says
    something of them: 我老婆今天加班 says nothing worth keeping."""

    __slots__ = ("key", "kind", "rest", "links", "aliases", "named", "renameable")

    def __init__(self, key: str, kind: str | None, rest: str, links: Iterable[Link] = (),
                 named: bool = False, renameable: bool = False) -> None:
        self.key, self.kind, self.rest = key, kind, rest
        self.links = list(links)
        self.aliases: list[tuple[str, str]] = []
        self.named, self.renameable = named, renameable

    def again(self, rest: str) -> _Subject:
        return _Subject(self.key, self.kind, rest, (), False, self.renameable)


class _Reader:
    def __init__(self, text: str, today: date) -> None:
        self.text, self.today = text, today
        self.kinds: dict[str, str] = {}
        self.aliases: dict[str, list[str]] = {}
        self.edges: list[Edge] = []
        self.people: list[str] = []
        self.last: _Subject | None = None
        self.next: _Subject | None = None  # 我养了一条狗，叫旺财: the next clause is the dog's
        self.female: dict[str, bool] = {}  # as the role word says: sister, 老公
        self.at = 0

    # --- the text ---------------------------------------------------------------------------
    def trailers(self) -> str:
        """Read commit trailers (Co-authored-by: Name <mail>); the text without them. The
        address is left out: a name is what later questions use."""
        def take(m: re.Match[str]) -> str:
            name = m.group("n").strip()
            if "[bot]" not in name and W.pattern("trailer_name").match(name):
                self.add(name, "person")
                role = V.TRAILERS[m.group("t").lower()]
                self.edge(PROJECT, "contributor", name, role, (None, None), m.span())
            return " " * len(m.group(0))
        return rx(V.TRAILER).sub(take, self.text)

    def sentence(self, sentence: str, at: int) -> None:
        if any(rx(p).search(sentence) for p in (QUESTION, HYPOTHETICAL, QUOTED, V.HEARSAY)):
            return
        self.last = None
        zh = chinese(sentence)
        pieces = W.pieces(sentence, V.CLAUSE_ZH if zh else V.CLAUSE_EN, at)
        for i, (clause, start) in enumerate(pieces):
            if i + 1 < len(pieces) and W.only_time(clause):  # 去年，我搬到了上海
                pieces[i + 1] = (clause + " " + pieces[i + 1][0], start)
                continue
            self.clause(clause, start, zh)

    def clause(self, clause: str, at: int, zh: bool) -> None:
        self.at = at
        body = rx(V.LEAD_ZH if zh else V.LEAD_EN).sub("", clause).strip()
        if rx(V.UNSURE).search(body):
            return
        # 现在我住在上海, "In 2019 I moved to Berlin": the time before the subject
        head = rx(V.ADVERBS_ZH if zh else V.LEAD_TIME_EN).sub("", body).lstrip(" ,，")
        subject = self.subject(head, zh)
        if subject is None:
            if self.last is None or not rx(V.GOES_ON_ZH if zh else V.GOES_ON_EN).search(head):
                return
            subject = self.last.again(head)
        ended = bool(rx(V.ENDED).search(subject.rest))
        rest = W.without_ended(subject.rest, zh) if ended else subject.rest
        rest = rx(V.ADVERBS_ZH if zh else V.ADVERBS_EN).sub("", rest.strip()).strip()
        if rx(V.NEGATION).search(rest) and not ended:
            return
        when = when_said(body, self.today, ended)
        if when is None:
            return  # a time to come that the clause does not name
        span = (at, at + len(clause))
        # 我老公12月25号生日: a date is no adverb to a birthday
        found = self.predicates(subject, rest, zh, when, span)
        if found is None:
            found = self.predicates(subject, subject.rest.strip(), zh, when, span) or []
        if found or subject.named:
            self.commit(subject, span)
            self.edges.extend(found)
        self.last, self.next = self.next or subject, None

    # --- subjects ---------------------------------------------------------------------------
    def subject(self, body: str, zh: bool) -> _Subject | None:
        m = rx(V.PROJECT_ZH if zh else V.PROJECT_EN).search(body)
        if m and not (m.group(0).lower() == "we" and not W.pattern("tool").search(body)):
            name = m.groupdict().get("n") or m.groupdict().get("n2")
            if name and W.latin_name(name):
                return _Subject(name, "project", body[m.end():],
                                [(USER, "works_on", name, "project", None)], named=True)
            return _Subject(PROJECT, None, body[m.end():])
        m = rx(V.USER_ZH if zh else V.USER_EN).search(body)
        role = W.pattern("role_zh" if zh else "role_en")
        if m and not role.match(W.after_owner(body[m.end():])):
            return _Subject(USER, None, body[m.end():])
        return self.chain(body, zh)

    def chain(self, body: str, zh: bool) -> _Subject | None:
        """我姐姐的老公, my sister Anna, 小王的老婆, Anna's husband Tom, her husband."""
        m = rx(V.OWNER_ZH if zh else V.OWNER_EN).search(body)
        if m and W.pattern("role_zh" if zh else "role_en").match(body, m.end()):
            owner, owner_name, pos = USER, ("我" if zh else "my"), m.end()
        elif (m := rx(V.PRONOUN_ZH if zh else V.PRONOUN_EN).search(body)):
            meant = self.pronoun(m.group(0).strip())
            if meant is None:
                return None
            owner = owner_name = meant
            pos = m.end()
        elif (m := W.pattern("name_zh" if zh else "name_en").match(body)) and W.named(
                m.group(0), zh):
            owner = owner_name = m.group(0)
            pos = m.end()
        else:
            return None
        aliases, pos = W.aliases_after(body, pos, owner, zh)
        # 我老婆是护士。她叫李娜: a pronoun for someone known by a role may be named now
        subject = _Subject(owner, None, "", renameable=W.by_role(owner))
        subject.aliases = aliases
        role_at = W.pattern("role_zh" if zh else "role_en").match
        joiner = rx(r"的" if zh else r"'s\s+")  # 我爸妈 is two people, not 我爸's 妈
        while True:
            nxt = joiner.match(body, pos) if subject.key != USER else None
            role = role_at(body, nxt.end() if nxt else pos)
            if role is None or subject.links and not nxt:
                break
            relation, word = W.role(role.group(0), zh)
            owner_said = owner_name if subject.key == owner else subject.key
            said = W.unnamed(owner_said, role.group(0), zh, relation, subject.links)
            subject.kind = "pet" if relation == "pet" else "person"
            subject.links.append((subject.key, relation, said, subject.kind, word))
            subject.key, subject.renameable, pos = said, True, role.end()
            given = W.pattern("given_zh" if zh else "name_en").match(
                body, pos if zh else _past(r",?\s*", body, pos))
            if given and W.named(given.group(0), zh):  # 我同事小王, my sister Anna
                self.rename_link(subject, given.group(0), body[:given.end()].strip())
                more, pos = W.aliases_after(body, given.end(), given.group(0), zh)
                subject.aliases += more
                pos = pos if zh else _past(r"\s*,?", body, pos)
        if owner == USER and not subject.links:
            return None
        subject.named = subject.named or bool(aliases) and not subject.links
        subject.rest = body[pos:].lstrip()
        return subject

    def pronoun(self, word: str) -> str | None:
        """她 / he is the one person named before, when they may be of that sex and the text
        so far names nobody else (My brother Ken met Anna. She …: nobody)."""
        female = word.lower().rstrip("的 ") in ("她", "she", "her")
        people = [p for p in dict.fromkeys(self.people)
                  if p in self.kinds and self.female.get(p, female) == female]
        known = {n for p in self.kinds for n in (p, *self.aliases.get(p, ()))}
        before = self.text[:self.at]
        zh = chinese(before)
        named = [m.group(0) for m in W.pattern("name_zh" if zh else "name_en").finditer(before)
                 if W.named(m.group(0), zh)]
        roles = [m.group(0) for m in W.pattern("chain_zh" if zh else "chain_en").finditer(before)
                 if not before[m.end():].lstrip(" ,，").startswith(tuple(known))]
        others = [n for n in named + roles if n not in known and n.lower() not in known]
        return people[0] if len(people) == 1 and not others else None

    def rename_link(self, subject: _Subject, name: str, said: str | None = None) -> None:
        """The subject known by a role is `name` from now on; the role stays an alias where
        it names one person (my wife, 我家的猫), as does the mention `said`."""
        old = subject.key
        if subject.links:
            owner, relation, _, kind, word = subject.links[-1]
            subject.links[-1] = (owner, relation, name, kind, word)
            if word in V.ONE_HOLDER or kind == "pet":
                subject.aliases.append((name, old))
        subject.key, subject.named, subject.renameable = name, True, False
        if said:
            subject.aliases.append((name, said))
        if old in self.kinds:  # named after it was kept: 我老婆是护士。她叫李娜。
            self.kinds[name] = self.kinds.pop(old)
            self.aliases[name] = self.aliases.pop(old, []) + [old] * any(
                e.object == old and (e.relation == "pet" or e.value in V.ONE_HOLDER)
                for e in self.edges)
            self.edges = [e._replace(subject=name if e.subject == old else e.subject,
                                     object=name if e.object == old else e.object)
                          for e in self.edges]
            self.people = [name if p == old else p for p in self.people]

    # --- what is said of them -------------------------------------------------------------
    def predicates(self, subject: _Subject, rest: str, zh: bool, when: When,
                   span: Span) -> list[Edge] | None:
        """What the first predicate that fits says; None when none fits."""
        for kind, pattern in W.predicates(zh):
            m = pattern.search(rest)
            found = _said(self, kind, subject, m, zh, when, span) if m else None
            if found is not None:
                return found
        return None

    def commit(self, subject: _Subject, span: Span) -> None:
        for owner, relation, target, kind, word in subject.links:
            if owner not in (USER, PROJECT) and owner not in self.kinds:
                self.add(owner, "person")
            self.add(target, kind)
            if word in V.FEMALE or word in V.MALE:
                self.female[target] = word in V.FEMALE
            self.edges.append(Edge(owner, relation, target, word, None, None, span))
        for name, alias in subject.aliases:
            if alias != name and alias not in self.aliases.setdefault(name, []):
                self.aliases[name].append(alias)
        if subject.key not in (USER, PROJECT):
            self.add(subject.key, subject.kind or "person")

    def add(self, name: str, kind: str) -> None:
        # A name first kept as a person may turn out a pet or a project, never back.
        if self.kinds.get(name) in (None, "person") or kind == "project":
            self.kinds[name] = kind
        self.aliases.setdefault(name, [])
        if kind == "person":
            self.people.append(name)

    def edge(self, subject: str, relation: str, obj: str | None, value: str | None, when: When,
             span: Span) -> Edge:
        edge = Edge(subject, relation, obj, value, when[0], when[1], span)
        self.edges.append(edge)
        return edge

    def graph(self) -> Graph:
        edges = list(dict.fromkeys(self.edges))
        entities = tuple(Entity(kind, name, tuple(self.aliases.get(name, ())),
                                W.spans(self.text, (name, *self.aliases.get(name, ()))))
                         for name, kind in self.kinds.items())
        return Graph(entities, tuple(edges))


def _said(reader: _Reader, kind: str, subject: _Subject, m: re.Match[str], zh: bool, when: When,
          span: Span) -> list[Edge] | None:
    """The edges one predicate gives; None when the subject or the words are not what it
    needs, so the next predicate is tried."""
    key, g = subject.key, {k: v for k, v in m.groupdict().items() if v}
    person, tool = key not in (USER, PROJECT), kind in ("switch", "switched", "uses")
    if person and not tool and subject.kind == "project" or key == PROJECT and not tool:
        return None

    def edge(relation: str, obj: str | None, value: str | None = None,
             times: When = when) -> Edge:
        return Edge(key, relation, obj, value, *times, span)

    name = g.get("n") or g.get("n2")
    if kind == "role_of" and person:
        relation, word = W.role(g["r"], zh)
        subject.kind = "pet" if relation == "pet" else "person"
        return [Edge(USER, relation, key, word, *when, span)]
    if kind == "role_of_other" and person and name and W.named(name, zh) and name != key:
        relation, word = W.role(g["r"], zh)
        subject.kind = "pet" if relation == "pet" else "person"
        reader.add(name, "person")
        return [Edge(name, relation, key, word, *when, span)]
    # Every naming and alias pattern holds a name; testing it tells the type checker so.
    if kind in ("naming", "alias") and name and (person and W.named(name, zh) or (
            kind == "naming" and subject.kind == "pet" and "叫" in m.group(0))):
        if subject.renameable and kind == "naming":
            reader.rename_link(subject, name)
        elif not subject.links and name != key:
            subject.aliases.append((key, name))
        subject.named = True
        return []
    if kind == "have" and key != PROJECT:
        relation, word = W.role(g["r"], zh)
        if name and not (W.named(name, zh) or relation == "pet"):
            return None
        owner = key if person else "我" if zh else "my"
        target = name or W.unnamed(owner, g["r"], zh, relation, [])
        kind = "pet" if relation == "pet" else "person"
        reader.add(target, kind)
        if not name:
            reader.next = _Subject(target, kind, "", renameable=True)
        return [Edge(key, relation, target, word, None, None, span)]
    if kind == "job" and g["j"].strip() not in V.NOT_WORK_ZH:
        out = [edge("works_as", None, g["j"].strip())]
        if W.place_like(g.get("o"), zh, work=True):
            reader.add(g["o"], "organisation")
            out.append(edge("works_at", g["o"]))
        return out
    if kind in ("works_at", "lives", "hometown"):
        where = (g.get("o") or g.get("p") or g.get("p2") or "").rstrip(".")
        if not W.place_like(where, zh, work=kind == "works_at"):
            return None
        reader.add(where, "organisation" if kind == "works_at" else "place")
        relation = {"lives": "lives_in"}.get(kind, kind)
        return [edge(relation, where, None, (None, None) if kind == "hometown" else when)]
    if kind == "birthday":
        day = moment(g["d"], reader.today, birthday=True)
        return [edge("birthday", None, day, (None, None))] if day else None
    if tool and (key == PROJECT or subject.kind in (None, "project")):
        subject.kind = "project"
        old, new = g.get("a"), g.get("b") or g["t"]
        for thing in (old, new):
            if thing:
                reader.add(thing, "thing")
        if kind == "uses":
            return [edge("uses", new)]
        since = when[0] or "past"
        return [edge("uses", old, None, (None, since))] * bool(old) + [
            edge("uses", new, None, (since, None))]
    if kind == "likes" and person and not V.NOT_LIKED.intersection(g["v"].lower().split()[:1]):
        return [edge("likes", None, g["v"].strip())]
    if kind == "works_on" and key == USER and name:
        reader.add(name, "project")
        return [edge("works_on", name)]
    return None


def _past(pattern: str, text: str, pos: int) -> int:
    """Where `text` goes on after the optional words `pattern` matches at `pos`."""
    m = rx(pattern).match(text, pos)
    return m.end() if m else pos
