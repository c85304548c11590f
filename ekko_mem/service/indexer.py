"""`ekko-mem index`: embed what a db holds without vectors of the current model (rows written
before semantic recall was switched on, or under another model)."""
from __future__ import annotations

from ..errors import Rejected
from . import semantic
from .semantic import embed_units
from .stores import UseCase

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .stores import Progress


class Indexer(UseCase):
    def index(self, *, user: bool = False, rebuild: bool = False,
              progress: Progress | None = None) -> dict:
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
        done, batch_size = 0, semantic.BATCH

        def report(count: int) -> None:
            nonlocal done
            done += count
            if progress:
                progress(done, total)

        def embed(kind, read, text) -> int:
            ids = vectors.unembedded(kind, embedder.model, batch_size)
            embed_units(store, embedder, [(i, kind, None, text(row)) for i, row in
                                          ((i, read(i)) for i in ids) if row])
            return len(ids)

        def embed_messages() -> int:
            batch = vectors.unembedded_messages(embedder.model, batch_size)
            embed_units(store, embedder, vectors.message_units(batch))
            return len(batch)

        steps = [embed_messages, lambda: embed("node", store.nodes.get_node, node_text),
                 lambda: embed("summary", store.summaries.get_summary, summary_text)]
        report(0)
        for step in steps:  # each batch its own transaction: an interrupted run resumes
            while True:
                count = step()
                report(count)
                if count < batch_size:
                    break
        if not self.stores.semantic_on():
            self.stores.notes.append("retrieval.semantic is off, so recall does not use these"
                                     " vectors yet; 'ekko-mem config set retrieval.semantic"
                                     " true' turns it on")
        after = vectors.counts(embedder.model)
        return {"db": store.path, "model": embedder.model, "embedded": done,
                "replaced": dropped, "rows": {k: v["rows"] for k, v in after.items()},
                "withVectors": {k: v["embedded"] for k, v in after.items()}}
