"""Byte scans of a db's files, so an erasure can be proven rather than claimed.

SQLite keeps text in the main file, in -wal frames until a checkpoint, and in free pages
unless secure_delete zeroed them; a scan reads all three files (and -shm) as raw bytes. A text
that spans an overflow page is split on disk, so a long text is also looked for in 48-byte
pieces: any piece found means some of it is still there.
"""
from __future__ import annotations

import json
import os

PIECE = 48
CHUNK = 1 << 22
SUFFIXES = ("", "-wal", "-shm")


def needles(text: str) -> list[bytes]:
    """The text's bytes as stored in a column and inside JSON, whole or in pieces."""
    forms = {text.encode("utf-8"), json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")}
    out: list[bytes] = []
    for raw in forms:
        if len(raw) <= PIECE * 2:
            out.append(raw)
        else:
            out += [raw[i:i + PIECE] for i in range(0, len(raw) - PIECE + 1, PIECE)]
    return list(dict.fromkeys(out))


def scan_files(db_path: str, texts: list[str]) -> dict[str, list[int]]:
    """{file: indexes of `texts` with bytes still in it}, for the db, -wal and -shm files."""
    wanted = [(i, n) for i, text in enumerate(texts) for n in needles(text)]
    found: dict[str, list[int]] = {}
    longest = max((len(n) for _, n in wanted), default=0)
    for suffix in SUFFIXES:
        path = db_path + suffix
        if not os.path.isfile(path):
            continue
        hits: set[int] = set()
        tail = b""
        with open(path, "rb") as handle:
            while True:
                block = handle.read(CHUNK)
                if not block:
                    break
                window = tail + block
                hits |= {i for i, n in wanted if i not in hits and n in window}
                tail = window[-longest:] if longest else b""
        if hits:
            found[path] = sorted(hits)
    return found
