"""MemoryService: the use cases. Policy, normalisation, conflicts and transactions live here."""
from __future__ import annotations

from .base import ServiceBase
from .messages import MessageService
from .workspace import WorkspaceService

_MIXINS: list[type] = [WorkspaceService, MessageService]

try:  # later layers register themselves; the message path stays importable on its own
    from .nodes import NodeService
    _MIXINS.append(NodeService)
except ImportError:  # pragma: no cover
    pass


class MemoryService(*reversed(_MIXINS), ServiceBase):  # type: ignore[misc]
    """Open with `MemoryService(workspace=path)`, or from the current folder."""
