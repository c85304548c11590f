"""Semantic search's int8 arithmetic in plain Python: the products and the ranking of
`retrieval.fusion.nearest` and `by_signs`, without numpy.

Importing numpy costs a process more than comparing a question with some tens of thousands
of stored vectors this way (fewer dimensions, or sign bits, cost less still), so up to there
a search is cheaper without it (service/semantic.py chooses; figures in bench/README.md).
Pure: no I/O.

The products are taken a dimension at a time over every row together: column i of the codes
(every row's i-th byte, one strided slice), each code offset to 0..255 and spread one to a
4-byte digit of one big integer, multiplied by the question's i-th code and summed. No digit
can overflow into the next (384 x 127 x 255 < 2**32), so digit j of the sum is row j's
product, offset by 128 x the sum of the question's codes.
"""
from __future__ import annotations

import sys
from array import array
from heapq import nlargest, nsmallest

_OFFSET = bytes((b + 128) & 0xFF for b in range(256))   # an int8 code's byte, plus 128
_DIGIT = next(t for t in "IL" if array(t).itemsize == 4)
# The question's largest dimensions that `prefilter` compares. On 6,226 LoCoMo and
# MemoryBank turns and their 350 questions, the 512 rows closest on the question's 128
# largest of 384 dimensions held 99.9% of the exact 30 nearest (96: 99.8%); the sign bits
# held 61%.
PARTIAL_DIMS = 128


def coded(question) -> tuple[list[int], float]:
    """The question as int8 codes (its largest value at 127) and that largest value."""
    peak = float(max(map(abs, question))) or 1.0
    return [max(-127, min(127, round(v * (127.0 / peak)))) for v in question], peak


def products(codes_of_question: list[int], codes: bytes) -> list[int]:
    """The integer product of the question's codes with each row of `codes` (int8 rows of
    the question's length, end to end)."""
    dim = len(codes_of_question)
    count = len(codes) // dim
    shifted = codes.translate(_OFFSET)
    spread = bytearray(4 * count)
    plus = minus = 0
    for i, weight in enumerate(codes_of_question):
        if not weight:
            continue
        spread[0::4] = shifted[i::dim]
        column = int.from_bytes(spread, "little")
        if weight > 0:
            plus += weight * column
        else:
            minus -= weight * column
    offset = 128 * sum(codes_of_question)
    return [p - m - offset for p, m in zip(_digits(plus, count), _digits(minus, count))]


def _digits(number: int, count: int) -> array:
    out = array(_DIGIT, number.to_bytes(4 * count, "little"))
    if sys.byteorder == "big":
        out.byteswap()
    return out


def nearest(question, codes: bytes, scales: bytes, limit: int) -> list[tuple[int, float]]:
    """(row, similarity) of the `limit` rows closest to `question`, best first; ties keep
    the earlier row first."""
    dim = len(question)
    count = len(codes) // dim if dim else 0
    if not count or limit <= 0:
        return []
    weights, peak = coded(question)
    factors = _scales(scales, count)
    unit = peak / 127.0
    sims = [dot * factor * unit for dot, factor in zip(products(weights, codes), factors)]
    return [(row, sims[row]) for row in nlargest(limit, range(count), key=sims.__getitem__)]


def prefilter(question, codes: bytes, scales: bytes, keep: int) -> list[int]:
    """The `keep` rows closest to `question` on its PARTIAL_DIMS largest dimensions, in row
    order: the rows worth comparing exactly."""
    dim = len(question)
    count = len(codes) // dim if dim else 0
    weights, _ = coded(question)
    chosen = set(nlargest(PARTIAL_DIMS, range(dim), key=lambda i: abs(weights[i])))
    partial = [w if i in chosen else 0 for i, w in enumerate(weights)]
    factors = _scales(scales, count)
    near = [dot * factor for dot, factor in zip(products(partial, codes), factors)]
    return sorted(nlargest(keep, range(count), key=near.__getitem__))


def rows(blob: bytes, kept: list[int], size: int) -> bytes:
    """The `size`-byte rows `kept` of `blob`, end to end."""
    return b"".join(blob[row * size:(row + 1) * size] for row in kept)


def _scales(scales: bytes, count: int) -> array:
    factors = array("f", scales[:4 * count])
    if sys.byteorder == "big":
        factors.byteswap()
    return factors


def by_signs(question, bits: bytes, limit: int) -> list[int]:
    """The `limit` rows whose sign bits agree most with the question's, best first; ties
    keep the earlier row first."""
    width = (len(question) + 7) // 8
    count = len(bits) // width if width else 0
    if not count or limit <= 0:
        return []
    mine = int.from_bytes(sign_bits(question), "big")
    view = memoryview(bits)
    apart = [(int.from_bytes(view[at:at + width], "big") ^ mine).bit_count()
             for at in range(0, count * width, width)]
    return nsmallest(limit, range(count), key=apart.__getitem__)


def sign_bits(vector) -> bytes:
    """One bit a dimension, set where the value is above 0, packed eight to a byte from the
    highest bit (as numpy.packbits packs them)."""
    bits = 0
    for value in vector:
        bits = (bits << 1) | (value > 0)
    pad = -len(vector) % 8
    return (bits << pad).to_bytes((len(vector) + pad) // 8, "big")
