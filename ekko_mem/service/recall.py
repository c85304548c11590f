"""Ranked recall across dbs: the store reads candidates, retrieval/ scores them.

One list for memory nodes, earlier messages and summaries, so `context` fills its budget
from the best of all three and a message search ranks exactly as `context` does.
"""
from __future__ import annotations

from ..errors import EkkoError
from ..ids import _ALPHABET, _encode
from .stores import UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..retrieval.scoring import Candidate

POOL = 60           # message hits read per db, at least (more for a larger budget or limit)
MAX_POOL = 200
YEARS_BACK = 10     # earlier years tried for a date named without one
NODE_POOL = 20      # memory nodes read per db
SUMMARY_POOL = 30   # newest summaries scored per db
BEFORE = 5          # best message hits without a partner by role that bring the line before
PAIRED = 20         # hits whose other half is fetched (more for a larger budget or limit)
KINDS = ("node", "message", "summary")


class Recall(UseCase):
    def recall(self, stores, text: str, *, kinds=KINDS, skip_ids=(), node_filter=None,
               session: str | None = None, since: str | None = None,
               warnings: list | None = None, room: int = POOL,
               retired: list | None = None) -> dict:
        """{"query", "ranked" (Candidates, best first), "considered", "belowFloor"}.

        `room` is about how many messages the caller could use; each db is read for that
        many hits (between POOL and MAX_POOL), which bounds the cost of a call. `retired`,
        when given, gets the nodes the words match that are no longer active (their ids,
        statuses and sources), so that their source messages can be told apart."""
        pool_size = max(POOL, min(MAX_POOL, room))
        from ..retrieval import analyse, by_meaning, rank, score, with_partners
        query = analyse(text, self.env.now())
        out = {"query": query, "ranked": [], "considered": 0, "belowFloor": 0}
        embedder = self.stores.embedder(warnings) if stores and text.strip() else None
        if (query.empty and embedder is None) or not stores:
            return out
        if query.yearless and query.window is not None and session is None:
            query.window = _latest_said(query.window, stores)
        skip = set(skip_ids)
        pool: dict[str, Candidate] = {}
        df: dict[str, int] = {}
        total = 0
        for name, store in stores:
            try:
                total += self._collect(name, store, query, kinds, pool, df, node_filter,
                                       session, since, pool_size, retired)
            except EkkoError as exc:
                if warnings is not None:
                    warnings.append(f"{name} db search failed: {exc.message}")
        candidates = [c for c in pool.values() if c.id not in skip
                      and not (c.kind == "message" and repeats(c.text, text))]
        near = None
        if embedder is not None:
            from .semantic import vector_hits
            left_out = pool.keys() - {c.id for c in candidates}
            held = {c.id for c in candidates}
            hits = vector_hits(embedder, stores, text, kinds=kinds, pool=pool,
                               skip=skip | left_out,
                               node_filter=node_filter, session=session, since=since,
                               limit=pool_size, warnings=warnings)
            near = [c for c in by_meaning(hits, held)
                    if not (c.kind == "message" and repeats(c.text, text))]
            candidates += [c for c in near if c.id not in held]
        score(query, candidates, df, total, near)
        ranked, below = rank(candidates)
        if "message" in kinds:
            partners = self._partners(stores, ranked[:max(PAIRED, pool_size // 2)], skip,
                                      since)
            ranked = with_partners(ranked, partners)
        out.update(ranked=ranked, considered=len(candidates), belowFloor=below)
        return out

    def _collect(self, name, store, query, kinds, pool, df, node_filter, session, since,
                 size, retired=None) -> int:
        """Add this db's candidates to `pool` and its term counts to `df`; its row count."""
        from ..retrieval import Candidate
        counts = store.recall.term_counts("message", query.terms) if query.terms else {}
        node_counts = store.recall.term_counts("node", query.terms) \
            if query.terms and "node" in kinds else {}
        for term in query.terms:
            df[term] = df.get(term, 0) + counts.get(term, 0) + node_counts.get(term, 0)
        if "message" in kinds:
            # Candidates come from the strong terms; single characters still count in scoring.
            found = store.recall.message_hits(query.strong_terms, counts, limit=size,
                                       session=session, since=since) if query.terms else []
            if query.window and session is None:
                start = max(query.window[0], since or "")
                found += store.recall.messages_between(start, query.window[1], limit=size)
            for msg in found:
                pool.setdefault(msg["id"], _message(msg, name))
        if "node" in kinds and query.terms and node_filter is not None:
            for node in store.recall.node_hits(query.strong_terms, node_counts, node_filter,
                                               limit=NODE_POOL, retired=retired):
                pool.setdefault(node["id"], _node_candidate(node, name))
        if "summary" in kinds:
            for summary in store.recall.recent_summaries(limit=SUMMARY_POOL):
                pool.setdefault(summary["id"], Candidate(
                    "summary", summary["id"], _summary_text(summary), summary["createdAt"],
                    summary, origin=name))
        return store.recall.row_estimate("message") + (
            store.recall.row_estimate("node") if "node" in kinds else 0)

    def _partners(self, stores, ranked, skip, since) -> dict:
        """The lines that come along with each message hit, by hit id, in the order they are
        placed after it. The other half of its question/answer pair, where the roles pair.
        Where they do not (people talking to each other, every line logged as the user's),
        the BEFORE best hits bring the line before them, which is what they answer or go on
        about, and a hit that asks something brings the next line, its answer."""
        from ..retrieval import asks
        best = [c.id for c in ranked if c.kind == "message"][:BEFORE]
        partners: dict[str, list] = {}
        for name, store in stores:
            hits = [c for c in ranked if c.kind == "message" and c.origin == name]
            try:
                found = store.recall.message_partners([c.id for c in hits])
                before = store.recall.previous_messages(
                    [c.id for c in hits if c.id in best and c.id not in found])
                found.update(store.recall.next_messages(
                    [c.id for c in hits if c.id not in found and asks(c.text)]))
            except EkkoError:
                continue
            for hit_id, other in [*before.items(), *found.items()]:
                if other["id"] in skip or (since is not None and other["createdAt"] < since):
                    continue
                partners.setdefault(hit_id, []).append(_message(other, name))
        return partners

    # -- messages whose memory is gone -----------------------------------------------------
    def retired_sources(self, stores, recent: list[str], earlier: list[str],
                        known: list[dict], lost: set[str], now: str,
                        warnings: list | None = None) -> dict[str, list[str]]:
        """{message id: the memories it is a source of} for the messages among `recent` and
        `earlier` that only memory no longer active (forgotten, erased, replaced, expired, or
        `lost` to a conflict in this context) was taken from: said once, since taken back.

        Nodes citing a message are found among those made soon after it was logged (and,
        for the recent ones, the newest made since), besides `known` (the nodes the context
        read, and the retired ones its words matched): bounded reads along the ids. A memory
        taken from an old message long after, whose words the question does not share, is
        not seen: the message then stays, as it did before."""
        windows, since = _windows(recent, earlier)
        if not windows:
            return {}
        nodes = list(known)
        for name, store in stores:
            if name == "global":  # shipped memory cites no message
                continue
            try:
                nodes += store.recall.sources_of(windows, since, [*recent, *earlier])
                nodes += store.recall.erased_sources(windows)
            except EkkoError as exc:
                if warnings is not None:
                    warnings.append(f"{name} db read failed: {exc.message}; used what was read")
        wanted = set(recent) | set(earlier)
        taken_back: dict[str, set[str]] = {}
        standing: set[str] = set()
        for node in nodes:
            refs = {ref.rpartition(":")[2] for ref in node.get("sourceMessageIds") or []}
            if not refs & wanted:
                continue
            if node["id"] not in lost and node["status"] == "active" and not (
                    node.get("expiresAt") and node["expiresAt"] <= now):
                standing |= refs
            else:
                for ref in refs & wanted:
                    taken_back.setdefault(ref, set()).add(node["id"])
        return {mid: sorted(ids) for mid, ids in taken_back.items() if mid not in standing}


def _latest_said(window: tuple[str, str], stores) -> tuple[str, str]:
    """A day or month named without a year is the latest such one on which something was
    said: "on May 4th" asked long after the conversation means that conversation's May 4th,
    not this year's, when nothing was logged on this year's. One bounded read a year,
    back to the first year with a message in the window."""
    from ..retrieval.timewords import years_back
    for years in range(YEARS_BACK + 1):
        shifted = years_back(window, years)
        for _, store in stores:
            try:
                if store.recall.messages_between(*shifted, limit=1):
                    return shifted
            except EkkoError:
                continue
    return window


SOON_MS = 600_000   # a memory taken from a message is mostly made in the same few minutes


def _windows(recent: list[str], earlier: list[str]) -> tuple[list[tuple[str, str]], str | None]:
    """Node id ranges [low, high): the minutes after each message was logged (messages logged
    in the same second share one); and the id from which on every node is newer than the
    oldest recent message."""
    seconds = sorted({ms // 1000 for ms in map(_millis, [*recent, *earlier]) if ms is not None})
    first = min(filter(None, map(_millis, recent)), default=None)
    last = 32 ** 10 - 1  # the largest ten-digit stamp
    return ([(f"mem_{_encode(second * 1000, 10)}",
              f"mem_{_encode(min(last, second * 1000 + SOON_MS), 10)}") for second in seconds],
            None if first is None else f"mem_{_encode(first, 10)}")


def _millis(identifier: str) -> int | None:
    """When an id was made (ids.py: a prefix, then ten base-32 digits of milliseconds)."""
    stamp = identifier.partition("_")[2][:10]
    digits = stamp.translate(_AS_INT_DIGITS)
    if len(stamp) < 10 or digits.strip(_INT_DIGITS):
        return None
    return int(digits, 32)


# ids.py's Crockford digits as the digits int() reads in base 32; "i", "l", "o" and "u" are
# none of them, and become "!" so that the stamp is refused.
_INT_DIGITS = "0123456789abcdefghijklmnopqrstuv"
_AS_INT_DIGITS = str.maketrans(_ALPHABET + "ilou", _INT_DIGITS + "!!!!")


def repeats(message: str, question: str) -> bool:
    """The message is the question itself (as just logged): never an answer to it."""
    return " ".join(message.split()) == " ".join(question.split())


def _message(msg: dict, origin: str):
    from ..retrieval import Candidate
    return Candidate("message", msg["id"], msg["content"], msg["createdAt"], msg,
                     origin=origin)


def _node_candidate(node: dict, origin: str):
    """A node as a ranked candidate: its parts weighted as its full-text index weighs them
    (the store says how), its text those parts on lines of their own."""
    from ..retrieval import Candidate
    from ..store.nodes import weighted_fields
    fields = weighted_fields(node)
    return Candidate("node", node["id"], "\n".join(text for text, _ in fields),
                     node["updatedAt"], node, weight=0.8 + 0.4 * node["confidence"],
                     origin=origin, fields=fields)


def _summary_text(summary: dict) -> str:
    parts = [summary["summary"], summary.get("currentGoal") or ""]
    for field in ("decisions", "preferences", "constraints", "pendingWork", "knownIssues"):
        parts.extend(summary.get(field) or [])
    return "\n".join(p for p in parts if p)
