"""Embeddings of messages, memory nodes and summaries, in the same db as their rows.

A row is written in the transaction that writes its message, node or summary (when the db
has an embedder), and goes with it on a hard delete. A reply and the question it answers are
embedded together, as one row keyed by the reply that also stands for the question
(`partner_id`): the pair says more than either half, and one vector serves both.
"""
from __future__ import annotations

import json

from .connection import Part

BLOCK = 128   # vectors per block: a write rewrites at most ~56 KB; a search of 100,000
              # vectors reads ~800 rows


def node_text(node: dict) -> str:
    return "\n".join(p for p in (node.get("title"), node.get("content"),
                                 " ".join(node.get("tags") or [])) if p)


def summary_text(summary: dict) -> str:
    return "\n".join(p for p in (summary.get("summary"), summary.get("currentGoal")) if p)


class VectorStore(Part):
    # -- writes (callers hold the transaction) -----------------------------------------------
    def index_messages(self, messages: list[dict]) -> int:
        """Embed newly appended messages: a reply with the question just before it in its
        session, anything else on its own. Returns the rows written."""
        embedder = self.db.embedder
        if embedder is None or not messages or not embedder.on():
            return 0
        if self.db.embed_later is not None:
            self.db.embed_later += [("message", msg["id"]) for msg in messages]
            return 0
        units = self.message_units(messages)
        return len(units) if self.put(units) else 0

    def message_units(self, messages: list[dict]) -> list[tuple[str, str, str | None, str]]:
        """The rows that stand for `messages` (in the order written): a reply and the
        question just before it in its session as one, anything else on its own."""
        units: dict[str, tuple[str | None, str]] = {}   # ref id -> (partner id, text)
        last: dict[str, dict | None] = {}
        for msg in messages:
            sid = msg["sessionId"]
            before = last[sid] if sid in last else self._before(msg["id"])
            if msg["role"] == "assistant" and before and before["role"] == "user":
                units.pop(before["id"], None)
                units[msg["id"]] = (before["id"], before["content"] + "\n" + msg["content"])
            else:
                units[msg["id"]] = (None, msg["content"])
            last[sid] = msg
        return [(ref, "message", partner, text) for ref, (partner, text) in units.items()]

    def enabled(self) -> bool:
        return self.db.embedder is not None and self.db.embedder.on()

    def index_node(self, node: dict) -> None:
        if self.db.embedder is not None and self.db.embedder.on():
            self.put([(node["id"], "node", None, node_text(node))])

    def index_summary(self, summary: dict) -> None:
        if self.db.embedder is not None and self.db.embedder.on():
            self.put([(summary["id"], "summary", None, summary_text(summary))])

    def put(self, units: list[tuple[str, str, str | None, str]], coded=None) -> bool:
        """(ref id, kind, partner id, text) rows, embedded with the db's embedder (or given
        as `coded`, made before the transaction) and appended to the open block of their
        kind; a pair's question loses the vector it had alone. False when the model could
        not run (the rows then stand without vectors) or a bulk write noted them for later
        (`db.embed_later`)."""
        embedder = self.db.embedder
        if not units:
            return True
        assert embedder is not None  # the service gives every db it writes one
        if coded is None:
            if self.db.embed_later is not None:
                self.db.embed_later += [(kind, ref) for ref, kind, *_ in units]
                return False
            coded = embedder.passages([text for *_, text in units])
            if coded is None:
                return False
        # a question embedded alone before its reply came
        self.drop([ref for ref, *_ in units] + [p for _, _, p, _ in units if p],
                  partners=False)
        by_kind: dict[str, list] = {}
        for (ref, kind, partner, _), (scale, codes, bits) in zip(units, coded):
            by_kind.setdefault(kind, []).append((ref, partner, scale, codes, bits))
        for kind, rows in by_kind.items():
            self._append(kind, embedder.model, rows)
        return True

    def present(self, units: list[tuple[str, str, str | None, str]]) -> list[bool]:
        """Whether each unit's row (and its partner) is still there: vectors made outside
        a transaction are written only for rows no one erased meanwhile."""
        tables = {"message": "memory_messages", "node": "memory_nodes",
                  "summary": "memory_summaries"}
        held: set[str] = set()
        for kind, table in tables.items():
            ids = sorted({i for ref, k, partner, _ in units if k == kind
                          for i in (ref, partner) if i})
            for first in range(0, len(ids), 500):
                chunk = ids[first:first + 500]
                marks = ",".join("?" * len(chunk))
                held |= {r[0] for r in self.db.all(
                    f"select id from {table} where id in ({marks})", chunk)}
        return [ref in held and (partner is None or partner in held)
                for ref, _, partner, _ in units]

    def _append(self, kind: str, model: str, rows: list) -> None:
        import struct
        last = self.db.one("select id, refs_json, bits, scales, codes from memory_vector_blocks"
                           " where kind = ? and model = ? order by id desc limit 1",
                           (kind, model))
        while rows:
            if last is not None and len(json.loads(last[1])) < BLOCK:
                block_id, refs = last[0], json.loads(last[1])
                bits, scales, codes = last[2], last[3], last[4]
            else:
                block_id, refs, bits, scales, codes = None, [], b"", b"", b""
            room = BLOCK - len(refs)
            taken, rows = rows[:room], rows[room:]
            refs += [row[0] for row in taken]
            scales += struct.pack(f"<{len(taken)}f", *(row[2] for row in taken))
            codes += b"".join(row[3] for row in taken)
            bits += b"".join(row[4] for row in taken)
            values = (json.dumps(refs), bits, scales, codes)
            if block_id is None:
                block_id = self.db.execute(
                    "insert into memory_vector_blocks (refs_json, bits, scales, codes, kind,"
                    " model) values (?, ?, ?, ?, ?, ?)", (*values, kind, model)).lastrowid
            else:
                self.db.execute("update memory_vector_blocks set refs_json = ?, bits = ?,"
                                " scales = ?, codes = ? where id = ?", (*values, block_id))
            self.db.executemany("insert into memory_vectors (ref_id, kind, partner_id, model,"
                                " block_id) values (?, ?, ?, ?, ?)",
                                [(row[0], kind, row[1], model, block_id) for row in taken])
            last = None

    def drop(self, ids: list[str], *, partners: bool = True) -> int:
        """Remove the vectors of `ids` (and, with `partners`, any pair vector they are half
        of): their slots are cut out of their blocks, which are rewritten (or deleted when
        empty), so no byte of them is left in a live row."""
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        where = f"ref_id in ({marks})" + (f" or partner_id in ({marks})" if partners else "")
        rows = self.db.all(f"select ref_id, block_id from memory_vectors where {where}",
                           (*ids, *ids) if partners else ids)
        if not rows:
            return 0
        gone: dict[int, set[str]] = {}
        for ref, block in rows:
            gone.setdefault(block, set()).add(ref)
        for block, refs in gone.items():
            self._cut(block, refs)
        self.db.executemany("delete from memory_vectors where ref_id = ?",
                            [(ref,) for ref, _ in rows])
        return len(rows)

    def _cut(self, block_id: int, refs: set[str]) -> None:
        row = self.db.one("select refs_json, bits, scales, codes from memory_vector_blocks"
                          " where id = ?", (block_id,))
        if row is None:
            return
        held = json.loads(row[0])
        keep = [i for i, ref in enumerate(held) if ref not in refs]
        if not keep:
            self.db.execute("delete from memory_vector_blocks where id = ?", (block_id,))
            return

        def kept(blob: bytes) -> bytes:
            size = len(blob) // len(held)
            return b"".join(blob[i * size:(i + 1) * size] for i in keep)
        self.db.execute("update memory_vector_blocks set refs_json = ?, bits = ?, scales = ?,"
                        " codes = ? where id = ?", (json.dumps([held[i] for i in keep]),
                                                    kept(row[1]), kept(row[2]), kept(row[3]),
                                                    block_id))

    def _before(self, message_id: str) -> dict | None:
        row = self.db.one(
            "select p.id, p.role, p.content from memory_messages m join memory_messages p"
            " on p.session_id = m.session_id and (p.created_at, p.rowid) < (m.created_at,"
            " m.rowid) where m.id = ? order by p.created_at desc, p.rowid desc limit 1",
            (message_id,))
        return {"id": row[0], "role": row[1], "content": row[2]} if row else None

    # -- reads -------------------------------------------------------------------------------
    def holds_more_than(self, kind: str, model: str, count: int) -> bool:
        """Whether there are more than `count` vectors of `kind` (counted in whole blocks:
        the block index answers without reading a block)."""
        return self.held(kind, model) > count

    def held(self, kind: str, model: str) -> int:
        """At most how many vectors of `kind` made by `model` there are (whole blocks)."""
        return self.db.one("select count(*) from memory_vector_blocks where kind = ? and"
                           " model = ?", (kind, model))[0] * BLOCK

    def blocks(self, kind: str, model: str, *, bits: bool = False
               ) -> tuple[list[int], list[int], bytes, bytes]:
        """Every vector of `kind` made by `model`, block by block: the block ids, how many
        vectors each holds, and all codes (or, with `bits`, sign bits) and all scales end to
        end, so the caller reads them as arrays."""
        rows = self.db.all(("select id, json_array_length(refs_json), bits, scales from"
                            if bits else
                            "select id, json_array_length(refs_json), codes, scales from")
                           + " memory_vector_blocks where kind = ? and model = ? order by id",
                           (kind, model))
        return ([r[0] for r in rows], [r[1] for r in rows], b"".join(r[2] for r in rows),
                b"".join(r[3] for r in rows))

    def codes_at(self, slots: list[tuple[int, int]], dim: int) -> tuple[bytes, bytes]:
        """The int8 codes and scales of each (block id, slot), end to end, in one statement
        (substr reads only the bytes of each slot)."""
        if not slots:
            return b"", b""
        rows = self.db.all(
            "select substr(b.scales, 4 * json_extract(s.value, '$[1]') + 1, 4),"
            " substr(b.codes, ? * json_extract(s.value, '$[1]') + 1, ?) from json_each(?) s"
            " join memory_vector_blocks b on b.id = json_extract(s.value, '$[0]')"
            " order by s.key",
            (dim, dim, json.dumps(slots)))
        return b"".join(r[1] for r in rows), b"".join(r[0] for r in rows)

    def refs_at(self, slots: list[tuple[int, int]]) -> list[tuple[str, str | None]]:
        """(ref id, partner id) of each (block id, slot in it)."""
        wanted = sorted({block for block, _ in slots})
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        refs = {r[0]: json.loads(r[1]) for r in self.db.all(
            f"select id, refs_json from memory_vector_blocks where id in ({marks})", wanted)}
        ids = [refs[block][slot] for block, slot in slots]
        marks = ",".join("?" * len(ids))
        partners = dict(self.db.all(f"select ref_id, partner_id from memory_vectors"
                                    f" where ref_id in ({marks})", ids))
        return [(ref, partners.get(ref)) for ref in ids]

    def counts(self, model: str) -> dict[str, dict[str, int]]:
        """Per kind: rows there are to embed, and vectors this model made."""
        tables = {"message": "memory_messages", "node": "memory_nodes",
                  "summary": "memory_summaries"}
        out = {}
        for kind, table in tables.items():
            total = self.db.one(f"select count(*) from {table}")[0]
            have = self.db.one(
                f"select count(*) from {table} t where exists (select 1 from memory_vectors v"
                " where v.model = ? and (v.ref_id = t.id or v.partner_id = t.id))",
                (model,))[0]
            out[kind] = {"rows": total, "embedded": have}
        return out

    def unembedded_messages(self, model: str, limit: int) -> list[dict]:
        """Messages no vector of `model` stands for, oldest first (index_messages pairs a
        reply with its question)."""
        rows = self.db.all(
            "select m.id, m.session_id, m.role, m.content from memory_messages m where not"
            " exists (select 1 from memory_vectors v where v.model = ? and (v.ref_id = m.id or"
            " v.partner_id = m.id)) order by m.created_at, m.rowid limit ?", (model, limit))
        return [{"id": r[0], "sessionId": r[1], "role": r[2], "content": r[3]} for r in rows]

    def unembedded(self, kind: str, model: str, limit: int) -> list[str]:
        """Ids of nodes or summaries without a vector of `model`."""
        table = {"node": "memory_nodes", "summary": "memory_summaries"}[kind]
        rows = self.db.all(f"select t.id from {table} t where not exists (select 1 from"
                           " memory_vectors v where v.ref_id = t.id and v.model = ?)"
                           " order by t.rowid limit ?", (model, limit))
        return [r[0] for r in rows]

    def drop_other_models(self, model: str) -> int:
        self.db.execute("delete from memory_vector_blocks where model != ?", (model,))
        return self.db.execute("delete from memory_vectors where model != ?",
                               (model,)).rowcount

    def drop_all(self) -> int:
        self.db.execute("delete from memory_vector_blocks")
        return self.db.execute("delete from memory_vectors").rowcount
