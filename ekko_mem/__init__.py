"""ekko-mem: long-term, auditable memory for LLM agents over SQLite."""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["MemoryService", "__version__"]


def __getattr__(name: str):
    # Imported lazily so that `import ekko_mem` stays cheap for the command-line fast path.
    if name == "MemoryService":
        from .service import MemoryService
        return MemoryService
    raise AttributeError(name)
