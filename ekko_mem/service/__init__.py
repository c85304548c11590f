"""MemoryService: the public entry to the use cases, each a plain class over one Stores.

Each use case is an attribute of the same name as its module (`service.context` is
`context.Context`), built on first use with the use cases it calls as constructor arguments,
so a command imports only what it runs. The public methods below pass straight through to
the use case that owns them.
"""
from __future__ import annotations

from functools import cached_property

from .stores import Stores

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Iterator
    from typing import Callable

    from ..config import Config
    from ..env import Env
    from ..errors import Step
    from ..policy.schema import Schema
    from ..store import SqliteMemoryStore
    from .audit_log import AuditLog
    from .checkup import Checkup
    from .config_files import ConfigFiles
    from .context import Context
    from .drafts import Drafts
    from .erasure import Erasure
    from .explanations import Explanations
    from .forgetting import Forgetting
    from .graph import Graph
    from .hooks import Hooks
    from .indexer import Indexer
    from .inspection import Inspection
    from .messages import Messages
    from .nodes import Nodes
    from .queries import Queries
    from .recall import Recall
    from .remembering import Remembering
    from .stores import Progress
    from .summaries import Summaries
    from .transfer import Transfer
    from .workspace import Workspace


class MemoryService:
    """Open with `MemoryService(workspace=path)`, or from the current folder."""

    def __init__(self, workspace: str | os.PathLike | None = None, *, env: Env | None = None,
                 session: str | None = None, timeout: float | None = None,
                 spell: Callable[[Step], str] | None = None) -> None:
        self.stores = Stores(workspace, env=env, session=session, timeout=timeout, spell=spell)

    def close(self) -> None:
        self.stores.close()

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the use cases, each built on first use ------------------------------------------------
    @cached_property
    def drafts(self) -> Drafts:
        from .drafts import Drafts
        return Drafts(self.stores)

    @cached_property
    def audit_log(self) -> AuditLog:
        from .audit_log import AuditLog
        return AuditLog(self.stores, drafts=self.drafts, graph=self.graph)

    @cached_property
    def recall(self) -> Recall:
        from .recall import Recall
        return Recall(self.stores)

    @cached_property
    def queries(self) -> Queries:
        from .queries import Queries
        return Queries(self.stores, drafts=self.drafts, recall=self.recall)

    @cached_property
    def nodes(self) -> Nodes:
        from .nodes import Nodes
        return Nodes(self.stores, drafts=self.drafts, queries=self.queries,
                     audit_log=self.audit_log, graph=self.graph)

    @cached_property
    def graph(self) -> Graph:
        from .graph import Graph
        return Graph(self.stores)

    @cached_property
    def messages(self) -> Messages:
        from .messages import Messages
        return Messages(self.stores)

    @cached_property
    def remembering(self) -> Remembering:
        from .remembering import Remembering
        return Remembering(self.stores, drafts=self.drafts, queries=self.queries,
                           nodes=self.nodes, messages=self.messages)

    @cached_property
    def summaries(self) -> Summaries:
        from .summaries import Summaries
        return Summaries(self.stores, drafts=self.drafts, queries=self.queries,
                         remembering=self.remembering)

    @cached_property
    def erasure(self) -> Erasure:
        from .erasure import Erasure
        return Erasure(self.stores, audit_log=self.audit_log, graph=self.graph)

    @cached_property
    def forgetting(self) -> Forgetting:
        from .forgetting import Forgetting
        return Forgetting(self.stores, drafts=self.drafts, queries=self.queries,
                          audit_log=self.audit_log, erasure=self.erasure, graph=self.graph)

    @cached_property
    def inspection(self) -> Inspection:
        from .inspection import Inspection
        return Inspection(self.stores, queries=self.queries, audit_log=self.audit_log)

    @cached_property
    def context(self) -> Context:
        from .context import Context
        return Context(self.stores, drafts=self.drafts, recall=self.recall, graph=self.graph)

    @cached_property
    def explanations(self) -> Explanations:
        from .explanations import Explanations
        return Explanations(self.stores, queries=self.queries, inspection=self.inspection)

    @cached_property
    def transfer(self) -> Transfer:
        from .transfer import Transfer
        return Transfer(self.stores, drafts=self.drafts, nodes=self.nodes,
                        audit_log=self.audit_log)

    @cached_property
    def checkup(self) -> Checkup:
        from .checkup import Checkup
        return Checkup(self.stores, nodes=self.nodes, audit_log=self.audit_log,
                       erasure=self.erasure)

    @cached_property
    def hooks(self) -> Hooks:
        from .hooks import Hooks
        return Hooks(self.stores, messages=self.messages, remembering=self.remembering)

    @cached_property
    def workspace(self) -> Workspace:
        from .workspace import Workspace
        return Workspace(self.stores)

    @cached_property
    def indexer(self) -> Indexer:
        from .indexer import Indexer
        return Indexer(self.stores)

    @cached_property
    def config_files(self) -> ConfigFiles:
        from .config_files import ConfigFiles
        return ConfigFiles(self.stores)

    # -- the public methods, by owner (tests/test_architecture.py holds each signature to its
    # owner's) ---------------------------------------------------------------------------------
    def propose_update(self, operation: str, node: dict | None = None, *, reason: str = "",
                       actor: str = "agent", target_id: str | None = None,
                       confirm: bool = False, session: str | None = None,
                       replace: bool = False) -> dict:
        return self.nodes.propose_update(operation, node, reason=reason, actor=actor,
                                         target_id=target_id, confirm=confirm,
                                         session=session, replace=replace)

    def expire_due(self) -> dict:
        return self.nodes.expire_due()

    def entity_graph(self, name: str, *, depth: int = 1, as_of: str | None = None,
                     progress: Progress | None = None) -> dict:
        return self.graph.entity_graph(name, depth=depth, as_of=as_of, progress=progress)

    def remember(self, text: str | None = None, *, fields: dict | None = None,
                 supersedes: str | None = None, reason: str = "", actor: str = "user",
                 confirm: bool = False, session: str | None = None,
                 dry_run: bool = False) -> list[dict]:
        return self.remembering.remember(text, fields=fields, supersedes=supersedes,
                                         reason=reason, actor=actor, confirm=confirm,
                                         session=session, dry_run=dry_run)

    def apply_items(self, items: list[dict], *, actor: str, confirm: bool = False,
                    session: str | None = None, reason: str = "") -> list[dict]:
        return self.remembering.apply_items(items, actor=actor, confirm=confirm,
                                            session=session, reason=reason)

    def log_message(self, content: str, *, session: str | None = None, role: str = "user",
                    parent: str | None = None, meta: list[str] | dict | None = None,
                    confirm: bool = False) -> dict:
        return self.messages.log_message(content, session=session, role=role, parent=parent,
                                         meta=meta, confirm=confirm)

    def log_jsonl(self, lines: Iterable[str], *, session: str | None = None,
                  confirm: bool = False, progress: Progress | None = None) -> list[dict]:
        return self.messages.log_jsonl(lines, session=session, confirm=confirm,
                                       progress=progress)

    def log_lines(self, lines: Iterable[str], *, session: str | None = None,
                  confirm: bool = False, progress: Progress | None = None) -> Iterator[dict]:
        return self.messages.log_lines(lines, session=session, confirm=confirm,
                                       progress=progress)

    def history(self, *, session: str | None = None, limit: int = 20) -> dict:
        return self.messages.history(session=session, limit=limit)

    def sessions(self, limit: int = 100) -> list[dict]:
        return self.messages.sessions(limit)

    def retrieve(self, query: dict, *, as_of: str | None = None) -> dict:
        return self.queries.retrieve(query, as_of=as_of)

    def search_messages(self, text: str, *, session: str | None = None,
                        since: str | None = None, limit: int = 20) -> dict:
        return self.queries.search_messages(text, session=session, since=since, limit=limit)

    def find_node(self, identifier: str) -> dict:
        return self.queries.find_node(identifier)

    def resolve_id(self, prefix: str,
                   kinds: tuple[str, ...] = ("node", "message", "summary", "event")) -> str:
        return self.queries.resolve_id(prefix, kinds)

    def memory_get(self, selector: dict) -> dict | None:
        return self.queries.memory_get(selector)

    def forget(self, selector: dict, *, mode: str = "soft", reason: str = "",
               confirm: bool = False, purge_sources: bool = False,
               actor: str = "user", verify: bool = False) -> dict:
        return self.forgetting.forget(selector, mode=mode, reason=reason, confirm=confirm,
                                      purge_sources=purge_sources, actor=actor, verify=verify)

    def forget_messages(self, message_ids: list[str], *, mode: str = "hard", reason: str = "",
                        confirm: bool = False, actor: str = "user",
                        verify: bool = False) -> dict:
        return self.forgetting.forget_messages(message_ids, mode=mode, reason=reason,
                                               confirm=confirm, actor=actor, verify=verify)

    def audit(self, *, node_id: str | None = None, since: str | None = None,
              limit: int = 50) -> list[dict]:
        return self.inspection.audit(node_id=node_id, since=since, limit=limit)

    def audit_trail(self, *, node_id: str | None = None, since: str | None = None,
                    limit: int = 50) -> dict:
        return self.inspection.audit_trail(node_id=node_id, since=since, limit=limit)

    def undo(self, event_id: str, *, reason: str = "", actor: str = "user") -> dict:
        return self.inspection.undo(event_id, reason=reason, actor=actor)

    def show(self, identifier: str) -> dict:
        return self.inspection.show(identifier)

    def build_context(self, text: str | None = None, *, session: str | None = None,
                      budget: int | None = None, counter: str | None = None,
                      strict: bool = False, with_input: bool = False,
                      markdown: bool = False, record: bool = True,
                      as_of: str | None = None) -> dict:
        return self.context.build_context(text, session=session, budget=budget,
                                          counter=counter, strict=strict,
                                          with_input=with_input, markdown=markdown,
                                          record=record, as_of=as_of)

    def explain(self, context_id: str | None = None) -> dict:
        return self.explanations.explain(context_id)

    def extract(self, *, session: str | None = None, llm_cmd: str | None = None) -> dict:
        return self.summaries.extract(session=session, llm_cmd=llm_cmd)

    def apply_extraction(self, extraction: dict, *, session: str) -> list[dict]:
        return self.summaries.apply_extraction(extraction, session=session)

    def jobs(self, status: str = "pending") -> list[dict]:
        return self.summaries.jobs(status)

    def retry_jobs(self, *, llm_cmd: str | None = None) -> list[dict]:
        return self.summaries.retry_jobs(llm_cmd=llm_cmd)

    def summarize(self, *, session: str | None = None, llm_cmd: str | None = None,
                  if_needed: bool = False, extract: bool = True) -> dict:
        return self.summaries.summarize(session=session, llm_cmd=llm_cmd, if_needed=if_needed,
                                        extract=extract)

    def summary_prompt(self, *, session: str | None = None) -> dict:
        return self.summaries.summary_prompt(session=session)

    def extraction_prompt_for(self, *, session: str | None = None) -> str:
        return self.summaries.extraction_prompt_for(session=session)

    def apply_answer(self, answer: dict, *, session: str | None = None) -> dict:
        return self.summaries.apply_answer(answer, session=session)

    def import_llm_log(self, path: str | None = None, *, since: str | None = None,
                       confirm: bool = False, allow_erased: bool = False,
                       progress: Progress | None = None) -> dict:
        return self.messages.import_llm_log(path, since=since, confirm=confirm,
                                            allow_erased=allow_erased, progress=progress)

    def read_answer(self, text: str, *, extraction: bool = False) -> dict:
        return self.summaries.read_answer(text, extraction=extraction)

    def summary_chain(self, *, session: str | None = None) -> list[dict]:
        return self.summaries.summary_chain(session=session)

    def export_lines(self, *, scopes: list[str] | None = None,
                     session: str | None = None) -> Iterator[dict]:
        return self.transfer.export_lines(scopes=scopes, session=session)

    def save_export(self, path: str, lines: Iterable[str]) -> None:
        self.transfer.save_export(path, lines)

    def import_lines(self, lines: Iterable[str], *, confirm: bool = False,
                     allow_erased: bool = False, progress: Progress | None = None) -> dict:
        return self.transfer.import_lines(lines, confirm=confirm, allow_erased=allow_erased,
                                          progress=progress)

    def doctor(self, *, repair: bool = False, scan: str | None = None,
               compact: bool = False) -> dict:
        return self.checkup.doctor(repair=repair, scan=scan, compact=compact)

    def index(self, *, user: bool = False, rebuild: bool = False,
              progress: Progress | None = None) -> dict:
        return self.indexer.index(user=user, rebuild=rebuild, progress=progress)

    def install_hooks(self, binary: str | None, flags: dict) -> dict:
        return self.hooks.install_hooks(binary, flags)

    def uninstall_hooks(self) -> dict:
        return self.hooks.uninstall_hooks()

    def record_commit(self, rev: str = "HEAD", branch: str | None = None) -> dict:
        return self.hooks.record_commit(rev, branch)

    def init_workspace(self, path: str | os.PathLike | None = None, *,
                       gitignore: bool = True) -> dict:
        return self.workspace.init_workspace(path, gitignore=gitignore)

    def migration_report(self, *, dry_run: bool = False, status: bool = False) -> dict:
        return self.workspace.migration_report(dry_run=dry_run, status=status)

    def prepare_node(self, draft: dict, *, actor: str, confirm: bool = False,
                     session: str | None = None) -> tuple[dict, list[str]]:
        return self.drafts.prepare_node(draft, actor=actor, confirm=confirm, session=session)

    @property
    def schema(self) -> Schema:
        return self.drafts.schema

    def schema_key(self, key: str) -> str:
        return self.drafts.schema_key(key)

    def value_from_text(self, text: str | None) -> object:
        return self.drafts.value_from_text(text)

    def check_choice(self, kind: str, value: str | None) -> str | None:
        return self.drafts.check_choice(kind, value)

    # -- where memory lives (Stores) ----------------------------------------------------------
    @property
    def env(self) -> Env:
        return self.stores.env

    @property
    def root(self) -> str:
        return self.stores.root

    @property
    def db_path(self) -> str:
        return self.stores.db_path

    def session(self, given: str | None = None) -> str:
        return self.stores.session(given)

    @property
    def config(self) -> Config:
        return self.stores.config

    @property
    def store(self) -> SqliteMemoryStore:
        return self.stores.store

    def user_store(self, *, create: bool = False) -> SqliteMemoryStore | None:
        return self.stores.user_store(create=create)

    def global_store(self) -> SqliteMemoryStore | None:
        return self.stores.global_store()

    @property
    def notes(self) -> list[str]:
        return self.stores.notes
