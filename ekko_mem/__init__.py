"""ekko-mem: long-term, auditable memory for LLM agents over SQLite."""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["MemoryService", "__version__"]

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from .service import MemoryService


def __getattr__(name: str) -> type[MemoryService]:
    # Every command imports this package; importing the service here would cost each one,
    # `--version` and help included (ARCHITECTURE.md, Start-up).
    if name == "MemoryService":
        from .service import MemoryService
        return MemoryService
    raise AttributeError(name)
