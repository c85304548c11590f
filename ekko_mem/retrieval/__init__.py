"""Retrieval: query analysis and scoring, shared by `context` and `query`.

Pure (no SQL, no I/O): the store executes the candidate reads this module asks for, and the
service ties the two together (service/recall.py).
"""
from __future__ import annotations

from .analysis import Query, analyse
from .scoring import Candidate, asks, by_meaning, rank, score, with_partners

__all__ = ["Query", "analyse", "Candidate", "asks", "by_meaning", "rank", "score",
           "with_partners"]
