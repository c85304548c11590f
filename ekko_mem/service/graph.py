"""The entity graph: written with each memory from its own words, retired or erased with it,
and read back for `graph` and for context."""
from __future__ import annotations

from ..errors import NotFound
from .stores import UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..store import SqliteMemoryStore
    from .stores import Progress

OWNERS = ("user", "project")  # subjects that are no entity


def _id(prefix: str) -> str:
    # Sortable like every other id; the prefix tells an entity from the words "user" and
    # "project", which share its column.
    from ..ids import new_id
    return prefix + new_id("node")[3:]


def node_text(node: dict) -> str:
    """What the graph is read from: the title and content, once when one repeats the other."""
    title, content = node.get("title") or "", node.get("content") or ""
    if title.strip() and title.strip() in content:
        return content
    if content.strip() and content.strip() in title:
        return title
    return f"{title}\n{content}"


def split_kinds(draft: dict | None) -> tuple[dict | None, dict[str, str]]:
    """The draft with each entity "NAME:KIND" (小王:person) as NAME, and
    the kinds said; a colon before anything that is no kind stays part of the name."""
    if not draft or not draft.get("entities"):
        return draft, {}
    from ..values import VALUES
    kinds_known = VALUES["entity_kind"].choices
    names, kinds = [], {}
    for given in draft["entities"]:
        name, colon, kind = str(given).rpartition(":")
        if colon and name.strip() and kind.strip().lower() in kinds_known:
            names.append(name.strip())
            kinds[name.strip()] = kind.strip().lower()
        else:
            names.append(given)
    return {**draft, "entities": names}, kinds


def said_as_named(names: list[str], question: str) -> bool:
    """Whether the question says one of these names as a name: a capitalised single word
    (Anna, Bill, Rose) only with its capital ("split the bill" names nobody called Bill),
    and never a role (my wife, 我老婆: who that is now is read along the live edges)."""
    return any(not n.lower().startswith(ROLE_ALIAS) and (
        " " in n or not n[:1].isupper() or not n.isascii() or _named_in(n, question))
        for n in names)


def _named_in(name: str, question: str) -> bool:
    """A capitalised word said as a name: with its capital, and where a sentence begins with
    it only when a name's words follow ("Mark the task as done" is an order, "Mark is?" not)."""
    import re
    for m in re.finditer(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", question):
        opens = not question[:m.start()].strip() or question[:m.start()].rstrip()[-1:] in ".!?"
        if not opens or re.match(_AFTER_A_NAME, question[m.end():]):
            return True
    return False


# What follows a name that opens a sentence: "Anna's", "Anna is", "Anna, …", "Anna?".
_AFTER_A_NAME = (r"(?:'s\b|\s*[,?!:]|\s+(?:is|was|does|did|has|had|and|or|lives|works|"
                 r"likes|said|says|will|can)\b|\s*$)")


ROLE_ALIAS = ("my ", "our ", "我", "咱")


SWEPT = "graph_read_to"   # meta key: the rowid of the last memory the graph was read from
BATCH = 500


class Graph(UseCase):
    # -- read from memories when asked, not while they are written ---------------------------
    def catch_up(self, store: SqliteMemoryStore, progress: Progress | None = None) -> int:
        """Read the memories written since the last reading, oldest first, a batch a
        transaction: their edges are recorded when the memory was, and retired when it
        was replaced, forgotten or expired (its last change), so a graph read as of a day is the
        same as if each had been read while it was written. The reading is kept off the write path:
        the rules that find people and relationships cost a free-text `remember` more than
        the whole write. Returns how many memories were read."""
        done = 0
        total = store.graph.read_to()[1] - int(store.meta(SWEPT) or 0) if progress else 0
        while True:
            with store.db.atomic():
                start = int(store.meta(SWEPT) or 0)
                batch = store.graph.nodes_after(start, BATCH)
                for _, node in batch:
                    if self.record(store, node) and node["status"] != "active":
                        self.retire(store, [node["id"]], node["updatedAt"])
                if batch:
                    store.set_meta(SWEPT, str(batch[-1][0]))
            done += len(batch)
            if progress and total > 0:
                progress(min(done, total), total)
            if len(batch) < BATCH:
                return done

    def record(self, store: SqliteMemoryStore, node: dict) -> int:
        """Store the entities and edges `node`'s words give; returns how many edges."""
        from ..extract.entities import read_graph
        from ..env import parse_time
        # "last year" is the year before the memory was written, however late it is read.
        found = read_graph(node_text(node), parse_time(node["createdAt"]))
        named = [n for n in node.get("entities") or [] if str(n).strip()]
        if not found.edges and not named:
            return 0
        kinds = {e.name: e for e in found.entities}
        now, ids = node["createdAt"], {}

        def entity(name: str) -> str:
            if name in OWNERS:
                return name
            if name not in ids:
                known = kinds.get(name)
                ids[name] = store.graph.entity_id(
                    name, known.kind if known else "thing",
                    list(known.aliases) if known else [], now, _id("ent"))
            return ids[name]

        sources = node.get("sourceMessageIds") or []
        seen = set()
        # A name the memory was given outright is mentioned by it, whatever
        # its words say of it.
        mentions = [_Mention(name) for name in named]
        for edge in [*found.edges, *mentions]:
            key = (edge.subject, edge.relation, edge.object, edge.value)
            if key in seen:
                continue
            seen.add(key)
            store.graph.add_edge({
                "id": _id("edg"), "subject": entity(edge.subject), "relation": edge.relation,
                "objectId": entity(edge.object) if edge.object else None, "value": edge.value,
                "validFrom": edge.valid_from, "validTo": edge.valid_to, "recordedAt": now,
                "sourceNodeId": node["id"], "sourceMessageId": sources[0] if sources else None})
        return len(seen)

    def name_kinds(self, store: SqliteMemoryStore, kinds: dict[str, str], now: str,
                   node: dict, actor: str, record) -> None:
        """Entities `node` names outright with their kind: made now if new, the kind set if
        not (what someone says an entity is beats the rules' guess). Each change is an
        `entity` event on the memory that named it, written by `record` (the audit log's)."""
        with store.db.atomic():
            for name, kind in kinds.items():
                known = store.graph.find_entity(name)
                was = known["kind"] if known and known["name"] == name else None
                if was == kind:
                    continue
                entity_id = store.graph.entity_id(name, kind, [], now, _id("ent"))
                store.graph.set_kind(entity_id, kind)
                record(store, "entity", node, actor, f"{name} is a {kind}",
                       before={"name": name, "kind": was} if was else None,
                       after={"name": name, "kind": kind})

    def reread(self, store: SqliteMemoryStore, node: dict, now: str) -> None:
        """A memory's words were edited in place: the edges its old words gave are retired
        and its new words read, if the graph had read it; if not, it reads the new words
        when it comes to it."""
        if store.graph.was_read(node["id"]):
            store.graph.retire_from([node["id"]], now)
            self.record(store, {**node, "createdAt": now})

    def retire(self, store: SqliteMemoryStore, node_ids: list[str], now: str) -> int:
        """The memories were replaced, forgotten or expired: their edges hold no more."""
        return store.graph.retire_from(node_ids, now)

    def erase(self, store: SqliteMemoryStore, node_ids: list[str]) -> int:
        """A hard delete: the edges go, and each entity nothing else names."""
        return store.graph.erase_from(node_ids)

    # -- read back ---------------------------------------------------------------------------
    def entity_graph(self, name: str, *, depth: int = 1, as_of: str | None = None,
                     progress: Progress | None = None) -> dict:
        """The entity called `name` (or known by it) and its edges, retired ones included;
        with `as_of`, only those that held then. Depth 2 follows each object one more hop;
        MAX_EDGES bound the answer."""
        from ..values import check
        depth = check("depth", depth)
        until = self.as_of(as_of)
        for scope, store in self.stores.existing():
            if not store.read_only_reason:
                self.catch_up(store, progress)
            entity = store.graph.find_entity(name.strip())
            if entity is None:
                continue
            edges, truncated = self._walk(store, entity["id"], int(depth), until,
                                          self._not_others(store))
            return {"entity": {k: entity[k] for k in ("name", "kind", "aliases")},
                    "scope": scope, "depth": depth, "asOf": until, "edges": edges,
                    "truncated": truncated,
                    "messages": self._messages_saying(
                        store, [entity["name"], *entity["aliases"]], until)}
        raise NotFound(f"no entity named {name!r}",
                       "names come from remembered statements; check the spelling")

    def _messages_saying(self, store: SqliteMemoryStore, names: list[str],
                         until: str | None) -> list[dict]:
        """The newest MAX_MESSAGES logged messages that say one of `names` (by the full-text
        index, then the name itself, case aside), by id: the log's side of who mentions it."""
        from ..retrieval import analyse
        found: dict[str, dict] = {}
        for name in names[:MAX_NAMES_SEARCHED]:
            terms = analyse(name, self.env.now()).terms
            counts = store.recall.term_counts("message", terms)
            for msg in store.recall.message_hits(terms, counts, limit=SEARCHED):
                if _says(msg["content"], name) and (
                        until is None or msg["createdAt"] <= until):
                    found[msg["id"]] = {k: msg[k] for k in ("id", "sessionId", "createdAt")}
        return sorted(found.values(), key=lambda m: m["createdAt"],
                      reverse=True)[:MAX_MESSAGES]

    def _not_others(self, store: SqliteMemoryStore):
        """Whether an edge's memory is not another session's scratch memory (which `query`
        does not show either)."""
        sid, seen = self.session(), {}

        def mine(edge: dict) -> bool:
            node_id = edge["sourceNodeId"]
            if node_id not in seen:
                node = store.nodes.get_node(node_id)
                seen[node_id] = node is None or node["scope"] != "session" or \
                    node.get("sessionId") == sid
            return seen[node_id]
        return mine

    def _walk(self, store: SqliteMemoryStore, start: str, depth: int,
              until: str | None, mine=lambda edge: True) -> tuple[list[dict], bool]:
        edges: list[dict] = []
        seen, frontier = {start}, [start]
        for _ in range(depth):
            found: list[dict] = []
            taken = {e["id"] for e in edges}
            for entity_id in frontier:
                for edge in store.graph.edges_of(entity_id, MAX_EDGES + 1):
                    if edge["id"] not in taken and (until is None or held(edge, until)) \
                            and mine(edge):
                        taken.add(edge["id"])
                        found.append(edge)
            edges += found
            if len(edges) > MAX_EDGES:
                return [_shown(e) for e in edges[:MAX_EDGES]], True
            frontier = [e["objectId"] for e in found
                        if e["objectId"] and e["objectId"] not in OWNERS
                        and e["objectId"] not in seen]
            seen.update(frontier)
        return [_shown(e) for e in edges], False

    # -- for a context --------------------------------------------------------------------
    def about(self, stores, question: str, *, until: str, visible) -> list[dict]:
        """The entities `question` names, or reaches through a chain of roles from the user
        ("my sister's husband"), each as {"id", "name", "kind", "facts", "sourceNodeIds"}: the
        edges that held at `until` and whose memory `visible(store, node_id)` lets in. Memories
        the graph has not read are read first only when they could name someone the question
        does, and only a few; each db's entities are its own."""
        from ..policy.graph_lines import name_words, newest_facts, says_a_role
        from ..policy.topics import is_chinese
        chinese, out = is_chinese(question), []
        words, roles = name_words(question), says_a_role(question)

        def holds(store, edge: dict) -> bool:
            return held(edge, until) and visible(store, edge["sourceNodeId"])

        for _, store in stores:
            self._keep_up_for(store, question)
            entities = self._by_roles(store, question, holds) if roles else []
            reached = {e["id"] for e in entities}
            entities += [e for e in store.graph.named(words)
                         if e["id"] not in reached and said_as_named(e["said"], question)]
            for entity in entities:
                edges = [e for e in store.graph.said_of(entity["id"], MAX_EDGES)
                         if holds(store, e)]
                said, used = newest_facts(entity["id"], edges, chinese)
                if said:
                    out.append({"id": entity["id"], "name": entity["name"],
                                "kind": entity["kind"], "facts": said,
                                "sourceNodeIds": list(dict.fromkeys(
                                    e["sourceNodeId"] for e in used))})
                if len(out) >= MAX_LINES:
                    return out
        return out

    def _keep_up_for(self, store, question: str) -> None:
        if store.read_only_reason:
            return
        done, last = store.graph.read_to()
        if done >= last or last - done > CATCH_UP_IN_CONTEXT:
            return
        from ..policy.graph_lines import may_name_someone
        if may_name_someone(question, store.graph.texts_after(done, CATCH_UP_IN_CONTEXT)):
            self.catch_up(store)

    @staticmethod
    def _by_roles(store, question: str, holds) -> list[dict]:
        """The people at the end of each chain of roles the question follows from the user,
        and the ones met on the way ("my sister's husband": the sister, then her husband),
        along edges that `holds(store, edge)` lets through."""
        from ..extract.entities import ATTRIBUTES, RELATIONS, joins
        found: list[dict] = []
        known: set[str] = set()
        # A chain is a few words: the head of a long question is enough, and a pasted page
        # of roles would otherwise cost time for nothing.
        for path in list(dict.fromkeys(joins(question[:CHAIN_TEXT])))[:MAX_CHAINS]:
            frontier = ["user"]
            for relation in path:
                if relation not in RELATIONS or relation in ATTRIBUTES:
                    break
                # Read past the ones that do not hold (another session's, say) to the few
                # that do.
                edges = [e for f in frontier for e in [
                    e for e in store.graph.live_edges(f, (relation,), MAX_EDGES, retired=True)
                    if holds(store, e)][:5]]
                frontier = list(dict.fromkeys(e["objectId"] for e in edges
                                              if e["objectId"]))[:5]
                found = [e for e in found if e["id"] not in frontier] + [
                    {"id": e["objectId"], "name": e["objectName"], "kind": e["objectKind"]}
                    for e in edges if e["objectId"] and e["objectId"] not in known]
                known.update(frontier)
        return list({e["id"]: e for e in found[::-1]}.values())  # the end of the chain first


def _says(text: str, name: str) -> bool:
    """The name as a word of its own (Anna, not Annabel; 小王 anywhere in Chinese)."""
    if not name.isascii():
        return name in text
    import re
    # Letters and digits only: a Chinese character beside a Latin name is a boundary.
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text,
                     re.IGNORECASE) is not None


MAX_EDGES = 50
MAX_MESSAGES = 10       # messages listed as saying an entity's name
MAX_NAMES_SEARCHED = 5  # its name and first aliases
SEARCHED = 50           # message hits read a name
MENTIONED = "mentioned"


class _Mention:
    """The edge a name given to a memory makes: the memory mentions the entity."""
    relation, object, value, valid_from, valid_to = MENTIONED, None, None, None, None

    def __init__(self, name: str) -> None:
        self.subject = name
MAX_LINES = 3        # entities a context says something about
MAX_CHAINS = 3       # chains of roles a question is followed along
CHAIN_TEXT = 300     # characters of a question read for them
CATCH_UP_IN_CONTEXT = 200  # unread memories a context reads first; past that, `graph` does


def held(edge: dict, until: str) -> bool:
    """Whether the edge was known and true at `until` (an ISO time): recorded by then, not
    retired by then, and within its own times where the statement gave them."""
    if edge["recordedAt"] > until or (edge["retiredAt"] and edge["retiredAt"] <= until):
        return False
    start, end = edge["validFrom"], edge["validTo"]
    if start and start[:1].isdigit() and _day(start) > until[:len(_day(start))]:
        return False
    if end in ("past", "now"):
        return False  # said to hold no longer when it was recorded
    return not (end and end[:1].isdigit() and _day(end) < until[:len(_day(end))])


def _day(when: str) -> str:
    return when.split("-W")[0]  # a week is read as its year


def _shown(edge: dict) -> dict:
    return {"subject": edge["subjectName"], "relation": edge["relation"],
            "object": edge["objectName"], "value": edge["value"],
            "validFrom": edge["validFrom"], "validTo": edge["validTo"],
            "recordedAt": edge["recordedAt"], "retiredAt": edge["retiredAt"],
            "sourceNodeId": edge["sourceNodeId"]}
