"""MemoryService: the public entry to the use cases, each a plain class over one Stores.

Each use case is built on first use (so a command imports only what it runs) and given the
others it calls. The public methods are the use cases' own, listed in PUBLIC by owner.
"""
from __future__ import annotations

from functools import cached_property

from .stores import Stores

# use case -> its public methods, reachable as MemoryService.<method>
PUBLIC = {
    "nodes": ("propose_update", "expire_due"),
    "remembering": ("remember", "apply_items"),
    "messages": ("log_message", "log_jsonl", "history", "sessions"),
    "queries": ("retrieve", "search_messages", "find_node", "resolve_id", "memory_get"),
    "forgetting": ("forget", "forget_messages"),
    "inspection": ("audit", "undo", "show"),
    "context": ("build_context", "explain"),
    "summaries": ("extract", "apply_extraction", "jobs", "retry_jobs", "summarize",
                  "summary_prompt", "extraction_prompt_for", "apply_answer", "summary_chain"),
    "transfer": ("export_lines", "save_export", "import_lines"),
    "checkup": ("doctor",),
    "hooks": ("install_hooks", "uninstall_hooks", "record_commit"),
    "workspace": ("init_workspace", "migration_report"),
    "drafts": ("prepare_node", "schema", "schema_key", "value_from_text", "check_choice"),
    "stores": ("env", "root", "db_path", "session", "config", "store", "user_store",
               "global_store", "notes"),
}
_OWNER = {name: owner for owner, names in PUBLIC.items() for name in names}


class MemoryService:
    """Open with `MemoryService(workspace=path)`, or from the current folder."""

    def __init__(self, workspace=None, *, env=None, session: str | None = None,
                 timeout: float | None = None, spell=None) -> None:
        self.stores = Stores(workspace, env=env, session=session, timeout=timeout, spell=spell)

    def __getattr__(self, name: str):
        owner = _OWNER.get(name)
        if owner is None:
            raise AttributeError(f"MemoryService has no {name!r}")
        return getattr(getattr(self, owner), name)

    # -- the use cases, wired ------------------------------------------------------------
    @cached_property
    def drafts(self):
        from .drafts import Drafts
        return Drafts(self.stores)

    @cached_property
    def audit_log(self):
        from .audit import AuditLog
        return AuditLog(self.stores)

    @cached_property
    def recaller(self):
        from .recall import Recall
        return Recall(self.stores)

    @cached_property
    def queries(self):
        from .query import Queries
        return Queries(self.stores, self.drafts, self.recaller)

    @cached_property
    def nodes(self):
        from .nodes import Nodes
        return Nodes(self.stores, self.drafts, self.queries, self.audit_log)

    @cached_property
    def messages(self):
        from .messages import Messages
        return Messages(self.stores)

    @cached_property
    def remembering(self):
        from .remember import Remember
        return Remember(self.stores, self.drafts, self.queries, self.nodes, self.messages)

    @cached_property
    def summaries(self):
        from .summarize import Summaries
        return Summaries(self.stores, self.drafts, self.queries, self.remembering)

    @cached_property
    def erasure(self):
        from .erasure import Erasure
        return Erasure(self.stores, self.audit_log)

    @cached_property
    def forgetting(self):
        from .forget import Forget
        return Forget(self.stores, self.drafts, self.queries, self.audit_log, self.erasure)

    @cached_property
    def inspection(self):
        from .inspect import Inspect
        return Inspect(self.stores, self.queries, self.audit_log)

    @cached_property
    def context(self):
        from .context import Context
        return Context(self.stores, self.drafts, self.queries, self.recaller, self.inspection)

    @cached_property
    def transfer(self):
        from .transfer import Transfer
        return Transfer(self.stores, self.drafts, self.nodes, self.audit_log)

    @cached_property
    def checkup(self):
        from .doctor import Doctor
        return Doctor(self.stores, self.nodes)

    @cached_property
    def hooks(self):
        from .hooks import Hooks
        return Hooks(self.stores, self.messages, self.nodes)

    @cached_property
    def workspace(self):
        from .workspace import Workspace
        return Workspace(self.stores)

    def close(self) -> None:
        self.stores.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
