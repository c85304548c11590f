"""MemoryService: the public entry to the use cases, each a plain class over one Stores.

Each use case is built on first use (so a command imports only what it runs) and given the
others it `needs`. The public methods are the use cases' own, listed in PUBLIC by owner.
"""
from __future__ import annotations

from .stores import Stores

# use case -> "module:Class"; each is built on first use, so a command imports only its own
USE_CASES = {
    "drafts": "drafts:Drafts", "audit_log": "audit:AuditLog", "recaller": "recall:Recall",
    "queries": "query:Queries", "nodes": "nodes:Nodes", "messages": "messages:Messages",
    "remembering": "remember:Remember", "summaries": "summarize:Summaries",
    "erasure": "erasure:Erasure", "forgetting": "forget:Forget",
    "inspection": "inspect:Inspect", "context": "context:Context",
    "transfer": "transfer:Transfer", "checkup": "doctor:Doctor", "hooks": "hooks:Hooks",
    "workspace": "workspace:Workspace", "indexer": "semantic:Indexer",
}

# use case -> its public methods, reachable as MemoryService.<method>
PUBLIC = {
    "nodes": ("propose_update", "expire_due"),
    "remembering": ("remember", "apply_items"),
    "messages": ("log_message", "log_jsonl", "log_lines", "history", "sessions"),
    "queries": ("retrieve", "search_messages", "find_node", "resolve_id", "memory_get"),
    "forgetting": ("forget", "forget_messages"),
    "inspection": ("audit", "audit_trail", "undo", "show"),
    "context": ("build_context", "explain"),
    "summaries": ("extract", "apply_extraction", "jobs", "retry_jobs", "summarize",
                  "summary_prompt", "extraction_prompt_for", "apply_answer", "summary_chain"),
    "transfer": ("export_lines", "save_export", "import_lines"),
    "checkup": ("doctor",),
    "indexer": ("index",),
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
        """A use case (built on first use, with the ones it needs), or a public method."""
        if name in USE_CASES:
            module, _, cls = USE_CASES[name].partition(":")
            from ..lazy import load
            kind = getattr(load(f"{__name__}.{module}"), cls)
            built = kind(self.stores, **{need: getattr(self, need) for need in kind.needs})
            self.__dict__[name] = built  # later lookups find it without __getattr__
            return built
        owner = _OWNER.get(name)
        if owner is None:
            raise AttributeError(f"MemoryService has no {name!r}")
        return getattr(getattr(self, owner), name)

    def close(self) -> None:
        self.stores.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
