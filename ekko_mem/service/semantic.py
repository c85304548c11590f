"""Semantic recall: the vector candidate list for a question, and the vectors of a bulk write,
made after its commit. `ekko-mem index` (indexer.py) embeds in the same batches.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import EkkoError

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from ..retrieval.scoring import Candidate

VECTOR_POOL = 30    # nearest rows read per kind and db; the fused list keeps the best
EXACT_MAX = 20_000  # vectors of one kind compared one by one; past this, sign bits first
PREFILTER = 512     # rows a first, coarser pass keeps for the exact comparison
PLAIN_EXACT = 4_096  # in plain Python, past this many vectors of a kind the question's
                     # largest dimensions pick PREFILTER rows first (int8.prefilter)
PLAIN_MAX = 25_000  # plain Python's work on one question, in vectors compared in full: past
                    # it, importing numpy costs less (bench/README.md)
BATCH = 64          # rows embedded per transaction by `index`: an interrupted run keeps
                    # every finished batch, and the next run starts after it


def vector_hits(embedder, stores, text: str, *, kinds, pool: dict, skip: set, node_filter,
                session: str | None, since: str | None, limit: int,
                warnings: list | None) -> list:
    """(candidate, similarity) of those nearest to `text` in meaning across `stores`, best
    first. A candidate the lexical pool already holds is reused (so it keeps its lexical
    score); the others are read and filtered as the lexical search filters them."""
    kinds = [k for k in kinds if k != "node" or node_filter is not None]
    work = _work(stores, kinds, embedder.model)
    if not work:  # nothing to compare with: the question is not embedded either
        return []
    math, question = _arithmetic(work, embedder.question(text))
    found: list[tuple[float, int, Candidate]] = []
    for name, store in stores:
        try:
            for kind in kinds:
                near = _nearest(store, kind, embedder.model, question,
                                min(limit, VECTOR_POOL), math)
                wanted: list[tuple[float, str]] = []
                for (_, cosine), (ref, partner) in zip(near, store.vectors.refs_at(
                        [slot for slot, _ in near])):
                    # a pair row stands for the question, then the reply
                    wanted += [(cosine, i) for i in (partner, ref) if i]
                wanted = [(c, i) for c, i in wanted if i not in skip]
                cands = _records(kind, name, store, [i for _, i in wanted], pool,
                                 node_filter, session, since, text)
                found += [(cosine, -len(found) - n, cands[i])
                          for n, (cosine, i) in enumerate(wanted) if i in cands]
        except EkkoError as exc:
            if warnings is not None:
                warnings.append(f"{name} db vector search failed: {exc.message}")
    found.sort(key=lambda hit: (hit[0], hit[1]), reverse=True)
    seen: set[str] = set()
    out = []
    for cosine, _, cand in found:
        if cand.id not in seen:
            seen.add(cand.id)
            out.append((cand, cosine))
    return out[:2 * limit]


def _work(stores, kinds, model: str) -> int:
    """What comparing a question with the vectors of `stores` costs, in vectors compared in
    full (a comparison on some dimensions, or by sign bits, counting less)."""
    work = 0
    for _, store in stores:
        try:
            for kind in kinds:
                held = store.vectors.held(kind, model)
                work += (held if held <= PLAIN_EXACT else held // 3 + PREFILTER
                         if held <= EXACT_MAX else held * 2 // 5 + PREFILTER)
        except EkkoError:  # the search itself reports it
            continue
    return work


def _arithmetic(work: int, question) -> tuple:
    """What compares `question` with the stored vectors, and the question as it takes it:
    plain Python (`int8`, a list of floats) while that costs less than importing numpy,
    else numpy (`retrieval.fusion`, an array). Decided by the size of the dbs alone, so the
    same db answers the same way in every process."""
    if work <= PLAIN_MAX:
        from ..retrieval import int8
        return int8, question
    import numpy as np

    from ..retrieval import fusion
    return fusion, np.asarray(question, dtype=np.float32)


def _nearest(store, kind: str, model: str, question, limit: int, math) -> list:
    """((block id, slot), similarity) of the `limit` vectors closest to `question`. Up to
    EXACT_MAX vectors every one is compared (in plain Python, past PLAIN_EXACT, only the
    PREFILTER rows closest on the question's largest dimensions); past that, the sign bits
    (48 bytes a vector instead of 384) pick PREFILTER rows first and only those are
    compared exactly."""
    from ..retrieval import int8
    large = store.vectors.holds_more_than(kind, model, EXACT_MAX)
    blocks, sizes, data, scales = store.vectors.blocks(kind, model, bits=large)
    starts, at = [], 0
    for size in sizes:
        starts.append(at)
        at += size
    if large:
        kept = [_slot(row, blocks, starts)
                for row in math.by_signs(question, data, PREFILTER)]
        codes, scales = store.vectors.codes_at(kept, len(question))
    elif math is int8 and at > PLAIN_EXACT:
        rows = int8.prefilter(question, data, scales, PREFILTER)
        kept = [_slot(row, blocks, starts) for row in rows]
        codes, scales = int8.rows(data, rows, len(question)), int8.rows(scales, rows, 4)
    else:
        return [(_slot(row, blocks, starts), sim)
                for row, sim in math.nearest(question, data, scales, limit)]
    return [(kept[row], sim) for row, sim in math.nearest(question, codes, scales, limit)]


def _slot(row: int, blocks: list[int], starts: list[int]) -> tuple[int, int]:
    """(block id, slot in it) of row `row` of the blocks read end to end."""
    from bisect import bisect_right
    index = bisect_right(starts, row) - 1
    return blocks[index], row - starts[index]


def _records(kind, name, store, ids, pool, node_filter, session, since, text) -> dict:
    """{id: Candidate} for the ids that pass the same filters as lexical recall."""
    from .recall import _message, _node_candidate, repeats
    have = {i: pool[i] for i in ids if i in pool}
    missing = [i for i in ids if i not in have]
    if kind == "message" and missing:
        for msg in store.messages.get_messages(missing):
            if (session is None or msg["sessionId"] == session) and (
                    since is None or msg["createdAt"] >= since) and \
                    not repeats(msg["content"], text):
                have[msg["id"]] = pool.setdefault(msg["id"], _message(msg, name))
    elif kind == "node" and missing:
        for node in store.nodes.find_nodes({**node_filter, "ids": missing},
                                           limit=len(missing)):
            have[node["id"]] = pool.setdefault(node["id"], _node_candidate(node, name))
    return have  # summaries: only the current ones, which the lexical pool already holds


@contextmanager
def vectors_after(stores: dict, progress=None):
    """The rows a bulk write puts in `stores` (name: store) get their vectors after the
    block, BATCH rows a transaction, instead of inside its transaction: embedding takes
    far longer than writing a row, and a write lock held that long makes every other
    writer (a `log` from a git hook) give up after the busy timeout. A run cut short keeps
    its rows and its finished batches; `ekko-mem index` does the rest. `progress(done,
    total)` after each batch. A store added to `stores` inside the block is held once
    `hold` is called."""
    for store in stores.values():
        hold(store)
    try:
        yield
    except BaseException:
        for store in stores.values():
            store.db.embed_later = None
        raise
    noted = []
    for store in stores.values():
        noted += [(store, row) for row in store.db.embed_later or ()]
        store.db.embed_later = None
    for first in range(0, len(noted), BATCH):
        batch = noted[first:first + BATCH]
        for store in {id(s): s for s, _ in batch}.values():
            _embed_rows(store, [row for s, row in batch if s is store])
        if progress is not None:
            progress(first + len(batch), len(noted))


def hold(store) -> None:
    """Note the rows written to `store` for vectors_after rather than embed them now."""
    if store.db.embed_later is None:
        store.db.embed_later = []


def _embed_rows(store, rows: list[tuple[str, str]]) -> None:
    """Vectors for (kind, id) rows; rows gone meanwhile are skipped. A db another process
    keeps locked leaves them without vectors, and a note says so."""
    from ..store.vectors import node_text, summary_text
    ids = {kind: [i for k, i in rows if k == kind] for kind in ("message", "node", "summary")}
    units = store.vectors.message_units(store.messages.get_messages(ids["message"])
                                        if ids["message"] else [])
    units += [(i, "node", None, node_text(n)) for i, n in
              ((i, store.nodes.get_node(i)) for i in ids["node"]) if n]
    units += [(i, "summary", None, summary_text(m)) for i, m in
              ((i, store.summaries.get_summary(i)) for i in ids["summary"]) if m]
    try:
        embed_units(store, store.db.embedder, units)
    except EkkoError as exc:
        store.db.embedder.failed(exc.message)


def embed_units(store, embedder, units: list) -> None:
    """Vectors for (ref id, kind, partner id, text) units, made before the write transaction
    and stored in it: the lock is held for milliseconds, not for the model, so a writer
    waiting on the db gets in between two batches."""
    coded = embedder.passages([text for *_, text in units]) if units else None
    if coded is None:
        return
    with store.db.atomic():
        kept = store.vectors.present(units)
        store.vectors.put([u for u, keep in zip(units, kept) if keep],
                          [c for c, keep in zip(coded, kept) if keep])
