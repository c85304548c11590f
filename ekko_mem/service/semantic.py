"""Semantic recall: the vector candidate list for a question, and `ekko-mem index`, which
embeds what a db holds without vectors (rows written before it was switched on, imports).
"""
from __future__ import annotations

from ..errors import EkkoError, Rejected
from .stores import UseCase

VECTOR_POOL = 30    # nearest rows read per kind and db; the fused list keeps the best
EXACT_MAX = 20_000  # vectors of one kind compared one by one; past this, sign bits first
PREFILTER = 512     # rows the sign bits keep for the exact comparison
BATCH = 64          # rows embedded per transaction by `index`: an interrupted run keeps
                    # every finished batch, and the next run starts after it


def vector_hits(embedder, stores, text: str, *, kinds, pool: dict, skip: set, node_filter,
                session: str | None, since: str | None, limit: int,
                warnings: list | None) -> list:
    """Candidates nearest to `text` in meaning across `stores`, best first. A candidate
    the lexical pool already holds is reused (so it keeps its lexical score); the others
    are read and filtered as the lexical search filters them."""
    question = embedder.question(text)
    found: list[tuple[float, int, object]] = []
    for name, store in stores:
        try:
            for kind in kinds:
                if kind == "node" and node_filter is None:
                    continue
                near = _nearest(store, kind, embedder.model, question,
                                min(limit, VECTOR_POOL))
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
    for _, _, cand in found:
        if cand.id not in seen:
            seen.add(cand.id)
            out.append(cand)
    return out[:2 * limit]


def _nearest(store, kind: str, model: str, question, limit: int) -> list:
    """((block id, slot), similarity) of the `limit` vectors closest to `question`. Up to
    EXACT_MAX vectors every one is compared; past that, the sign bits (48 bytes a vector
    instead of 384) pick PREFILTER rows first and only those are compared exactly."""
    from ..retrieval.fusion import by_signs, nearest
    large = store.vectors.holds_more_than(kind, model, EXACT_MAX)
    blocks, sizes, data, scales = store.vectors.blocks(kind, model, bits=large)
    starts, at = [], 0
    for size in sizes:
        starts.append(at)
        at += size
    if not large:
        return [(_slot(row, blocks, starts), sim)
                for row, sim in nearest(question, data, scales, limit)]
    kept = [_slot(row, blocks, starts) for row in by_signs(question, data, PREFILTER)]
    codes, scales = store.vectors.codes_at(kept, len(question))
    return [(kept[row], sim) for row, sim in nearest(question, codes, scales, limit)]


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


class Indexer(UseCase):
    def index(self, *, user: bool = False, rebuild: bool = False, progress=None) -> dict:
        """Embed every message, node and summary of the workspace db (or the user db) that
        has no vector of the current model. `progress(done, total)` is called per batch."""
        from ..embedding import load
        try:
            embedder = load()
        except RuntimeError as exc:
            raise Rejected(f"cannot build the vector index: {exc}",
                           "install the extra, then run 'ekko-mem index' again") from None
        store = self.stores.user_store() if user else self.store
        if store is None:
            raise Rejected("there is no user memory to index yet",
                           "the first user-scope memory makes it")
        store.db.embedder = embedder
        vectors = store.vectors
        with store.db.atomic():
            dropped = vectors.drop_all() if rebuild else \
                vectors.drop_other_models(embedder.model)
        before = vectors.counts(embedder.model)
        total = sum(c["rows"] - c["embedded"] for c in before.values())
        from ..store.vectors import node_text, summary_text
        done = 0

        def report(count: int) -> None:
            nonlocal done
            done += count
            if progress:
                progress(done, total)

        def embed(kind, read, text) -> int:
            ids = vectors.unembedded(kind, embedder.model, BATCH)
            vectors.put([(i, kind, None, text(read(i))) for i in ids])
            return len(ids)

        def embed_messages() -> int:
            batch = vectors.unembedded_messages(embedder.model, BATCH)
            vectors.index_messages(batch)
            return len(batch)

        steps = [embed_messages, lambda: embed("node", store.nodes.get_node, node_text),
                 lambda: embed("summary", store.summaries.get_summary, summary_text)]
        report(0)
        for step in steps:  # each batch its own transaction: an interrupted run resumes
            while True:
                with store.db.atomic():
                    count = step()
                report(count)
                if count < BATCH:
                    break
        if not self.stores.semantic_on():
            self.stores.notes.append("retrieval.semantic is off, so recall does not use these"
                                     " vectors yet; 'ekko-mem config set retrieval.semantic"
                                     " true' turns it on")
        after = vectors.counts(embedder.model)
        return {"db": store.path, "model": embedder.model, "embedded": done,
                "replaced": dropped, "rows": {k: v["rows"] for k, v in after.items()},
                "withVectors": {k: v["embedded"] for k, v in after.items()}}
