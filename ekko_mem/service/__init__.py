"""MemoryService: the use cases. Policy, normalisation, conflicts and transactions live here."""
from __future__ import annotations

from .base import ServiceBase
from .messages import MessageService
from .nodes import NodeService
from .workspace import WorkspaceService


class MemoryService(NodeService, MessageService, WorkspaceService, ServiceBase):
    """Open with `MemoryService(workspace=path)`, or from the current folder."""
