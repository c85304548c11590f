"""The entity graph: written with each memory from its own words, retired or erased with it,
and read back for `graph` and for context."""
from __future__ import annotations

from ..errors import NotFound
from .stores import UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..store import SqliteMemoryStore

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


SWEPT = "graph_read_to"   # meta key: the rowid of the last memory the graph was read from
BATCH = 500


class Graph(UseCase):
    # -- read from memories when asked, not while they are written ---------------------------
    def catch_up(self, store: SqliteMemoryStore) -> int:
        """Read the memories written since the last reading, oldest first, a batch a
        transaction: their edges are recorded when the memory was, and retired when it
        was replaced, forgotten or expired (its last change), so a graph read as of a day is the
        same as if each had been read while it was written. The reading is kept off the write path:
        the rules that find people and relationships cost a free-text `remember` more than
        the whole write. Returns how many memories were read."""
        done = 0
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
            if len(batch) < BATCH:
                return done

    def record(self, store: SqliteMemoryStore, node: dict) -> int:
        """Store the entities and edges `node`'s words give; returns how many edges."""
        from ..extract.entities import read_graph
        found = read_graph(node_text(node), self.env.now())
        if not found.edges:
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
        for edge in found.edges:
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

    def retire(self, store: SqliteMemoryStore, node_ids: list[str], now: str) -> int:
        """The memories were replaced, forgotten or expired: their edges hold no more."""
        return store.graph.retire_from(node_ids, now)

    def erase(self, store: SqliteMemoryStore, node_ids: list[str]) -> int:
        """A hard delete: the edges go, and each entity nothing else names."""
        return store.graph.erase_from(node_ids)

    # -- read back ---------------------------------------------------------------------------
    def entity_graph(self, name: str, *, depth: int = 1, as_of: str | None = None) -> dict:
        """The entity called `name` (or known by it) and its edges, retired ones included;
        with `as_of`, only those that held then. Depth 2 follows each object one more hop;
        MAX_EDGES bound the answer."""
        from ..values import check
        depth = check("depth", depth)
        until = self._moment(as_of) if as_of else None
        for scope, store in self.stores.existing():
            if not store.read_only_reason:
                self.catch_up(store)
            entity = store.graph.find_entity(name.strip())
            if entity is None:
                continue
            edges, truncated = self._walk(store, entity["id"], int(depth), until)
            return {"entity": {k: entity[k] for k in ("name", "kind", "aliases")},
                    "scope": scope, "depth": depth, "asOf": until, "edges": edges,
                    "truncated": truncated}
        raise NotFound(f"no entity named {name!r}",
                       "names come from remembered statements; check the spelling")

    def _walk(self, store: SqliteMemoryStore, start: str, depth: int,
              until: str | None) -> tuple[list[dict], bool]:
        edges: list[dict] = []
        seen, frontier = {start}, [start]
        for _ in range(depth):
            found: list[dict] = []
            taken = {e["id"] for e in edges}
            for entity_id in frontier:
                for edge in store.graph.edges_of(entity_id, MAX_EDGES + 1):
                    if edge["id"] not in taken and (until is None or held(edge, until)):
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

    def _moment(self, text: str) -> str:
        from ..env import format_time
        from ..policy.timeexpr import parse_when
        at = parse_when(text, self.env.now())
        # A day named on its own means all of it.
        if len(text.strip()) == 10 and at.hour == at.minute == 0:
            at = at.replace(hour=23, minute=59, second=59, microsecond=999000)
        return format_time(at)


MAX_EDGES = 50


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
