"""The design's types as pydantic v2 models, with the design's camelCase JSON names.

Inside ekko-mem records travel as plain dicts of exactly this shape (importing pydantic costs
more than a whole `ekko-mem log`); these models validate what comes from outside
(LLM answers, imports, agent tool calls), define the JSON Schemas that `ekko-mem schema`
prints, and a contract test checks that what the store returns validates against them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from .policy.vocab import EXTRACT_OPERATIONS, OMIT_REASONS
from .values import VALUES, describe

# The closed vocabularies and the bounds are the value table's (values.py), as the options,
# the settings and the service read them.
_ROLES, _SCOPES, _TYPES, _STATUSES, _ACTORS, _OPERATIONS, _MODES = (
    VALUES[name].choices for name in ("role", "scope", "type", "status", "actor", "operation",
                                      "mode"))
Role = Literal[_ROLES]  # type: ignore[valid-type]
Scope = Literal[_SCOPES]  # type: ignore[valid-type]
NodeType = Literal[_TYPES]  # type: ignore[valid-type]
Status = Literal[_STATUSES]  # type: ignore[valid-type]
Actor = Literal[_ACTORS]  # type: ignore[valid-type]
Operation = Literal[_OPERATIONS]  # type: ignore[valid-type]
Mode = Literal[_MODES]  # type: ignore[valid-type]


def low(name: str):
    """A number's lowest value in the table (Field's ge)."""
    return VALUES[name].range[0]


def high(name: str):
    """A number's highest value in the table (Field's le; None: no top)."""
    return VALUES[name].range[1]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MemoryMessage(Model):
    id: str
    sessionId: str
    parentId: Optional[str] = None
    role: Role
    content: str
    metadata: Optional[Dict[str, Any]] = None
    createdAt: str


class MemorySummary(Model):
    id: str
    sessionId: str
    parentSummaryId: Optional[str] = None
    fromMessageId: str
    toMessageId: str
    summary: str
    currentGoal: Optional[str] = None
    constraints: List[str] = Field(default_factory=list)
    preferences: List[str] = Field(default_factory=list)
    decisions: List[str] = Field(default_factory=list)
    completedWork: List[str] = Field(default_factory=list)
    pendingWork: List[str] = Field(default_factory=list)
    knownIssues: List[str] = Field(default_factory=list)
    needsRegeneration: bool = False
    createdAt: str


class SummaryDraft(Model):
    """What a summariser (rules or an LLM) answers: a summary without ids or times."""
    summary: str = Field(description="A short text of what the new messages add.")
    currentGoal: Optional[str] = None
    constraints: List[str] = Field(default_factory=list)
    preferences: List[str] = Field(default_factory=list)
    decisions: List[str] = Field(default_factory=list)
    completedWork: List[str] = Field(default_factory=list)
    pendingWork: List[str] = Field(default_factory=list)
    knownIssues: List[str] = Field(default_factory=list)


class MemoryNode(Model):
    id: str
    parentId: Optional[str] = None
    supersedesId: Optional[str] = None
    sessionId: Optional[str] = None
    workspaceId: Optional[str] = None
    userId: Optional[str] = None
    scope: Scope
    domain: str
    categoryPath: List[str]
    type: NodeType
    key: Optional[str] = None
    valueJson: Any = None
    title: str
    content: str
    status: Status
    confidence: float = Field(ge=low("confidence"), le=high("confidence"))
    importance: float = Field(ge=low("importance"), le=high("importance"))
    tags: List[str] = Field(default_factory=list)
    entities: List[str] = Field(default_factory=list)
    sourceMessageIds: List[str] = Field(default_factory=list)
    explicit: bool = False
    actor: Actor = VALUES["actor"].default
    createdAt: str
    updatedAt: str
    expiresAt: Optional[str] = None


class NodeDraft(Model):
    """Partial<MemoryNode>: what a caller proposes; the service fills in the rest."""
    scope: Optional[Scope] = None
    domain: Optional[str] = None
    categoryPath: Optional[List[str]] = None
    type: Optional[NodeType] = None
    key: Optional[str] = None
    valueJson: Any = None
    title: Optional[str] = None
    content: Optional[str] = None
    status: Optional[Status] = None
    confidence: Optional[float] = Field(default=None, ge=low("confidence"),
                                        le=high("confidence"))
    importance: Optional[float] = Field(default=None, ge=low("importance"),
                                        le=high("importance"))
    tags: Optional[List[str]] = None
    entities: Optional[List[str]] = None
    sourceMessageIds: Optional[List[str]] = None
    sessionId: Optional[str] = None
    expiresAt: Optional[str] = None
    supersedesId: Optional[str] = None
    parentId: Optional[str] = None
    explicit: Optional[bool] = Field(
        default=None, description="True when the user explicitly asked to remember it.")


class TargetSelector(Model):
    """Which existing memory an update, supersede or expire is about, when its id is unknown."""
    type: Optional[NodeType] = None
    key: Optional[str] = None
    valueJson: Any = None
    categoryPathPrefix: Optional[List[str]] = None
    text: Optional[str] = None
    domain: Optional[str] = None


class MemoryQuery(Model):
    userId: Optional[str] = Field(default=None, description="Usually left out.")
    workspaceId: Optional[str] = Field(default=None, description="Usually left out.")
    sessionId: Optional[str] = Field(
        default=None, description="Whose session memory to see; defaults to the caller's session.")
    scopes: Optional[List[Scope]] = Field(
        default=None, description=describe(VALUES["scope"], "only these scopes"))
    domain: Optional[str] = Field(default=None, description="e.g. 生活技能 or engineering.")
    categoryPathPrefix: Optional[List[str]] = Field(
        default=None, description='e.g. ["生活技能", "做饭"].')
    types: Optional[List[NodeType]] = Field(default=None, description="Only these types.")
    key: Optional[str] = Field(default=None,
                               description="A controlled key, e.g. avoid_ingredient.")
    valueJson: Any = Field(default=None, description='The key\'s value, e.g. "香菜".')
    tags: Optional[List[str]] = Field(default=None, description="Has all these tags.")
    entities: Optional[List[str]] = Field(default=None,
                                          description="Mentions all these entities.")
    queryText: Optional[str] = Field(default=None,
                                     description="Words to search for (full text).")
    includeExpired: bool = Field(default=False, description="Also expired memories.")
    includeSuperseded: bool = Field(default=False,
                                    description="Also older, superseded versions.")
    limit: int = Field(default=VALUES["limit"].default, ge=low("limit"), le=high("limit"),
                       description=describe(VALUES["limit"], bounds=False))


class MemorySelector(Model):
    """memory_get input: one memory by id, or the current one for a type, key, value..."""
    id: Optional[str] = Field(default=None, description="A memory id (or a unique prefix).")
    type: Optional[NodeType] = Field(default=None, description="Memory type.")
    key: Optional[str] = Field(default=None, description="A controlled key.")
    valueJson: Any = Field(default=None, description="The key's value.")
    scope: Optional[Scope] = Field(default=None, description="Only this scope.")
    domain: Optional[str] = Field(default=None, description="Only this domain.")


class OmittedNode(Model):
    nodeId: str
    reason: Literal[OMIT_REASONS]  # type: ignore[valid-type]


class MemoryQueryResult(Model):
    exact: List[MemoryNode]
    relevant: List[MemoryNode]
    omitted: List[OmittedNode]
    scores: Dict[str, float] = Field(default_factory=dict)  # relevant node id -> rank score
    asOf: Optional[str] = None  # the moment asked about, when it was not now


class ExtractionItem(Model):
    operation: Literal[EXTRACT_OPERATIONS]  # type: ignore[valid-type]
    targetId: Optional[str] = None
    target: Optional[TargetSelector] = None
    node: NodeDraft
    reason: str


class IgnoredMessage(Model):
    messageId: str
    reason: str


class MemoryExtraction(Model):
    summaryPatch: Optional[str] = None
    nodes: List[ExtractionItem] = Field(default_factory=list)
    ignored: List[IgnoredMessage] = Field(default_factory=list)


class ProposeUpdate(Model):
    """memory_propose_update input."""
    operation: Operation = Field(description=describe(VALUES["operation"], bounds=False))
    targetId: Optional[str] = Field(
        default=None, description="The memory to update, supersede, expire or delete.")
    node: NodeDraft = Field(
        default_factory=NodeDraft,
        description="Partial<MemoryNode>: the fields to write; the service fills the rest.")
    reason: str = Field(description="Why, in a few words.")


class ProposeResult(Model):
    accepted: bool
    nodeId: Optional[str] = None
    reason: Optional[str] = None
    operation: Optional[str] = None
    scope: Optional[Scope] = None
    supersededId: Optional[str] = None
    sourceMessageId: Optional[str] = None
    notes: List[str] = Field(default_factory=list)
    requiresConfirmation: Optional[bool] = None
    hint: Optional[str] = None
    code: Optional[int] = None
    targetId: Optional[str] = None


class ForgetRequest(Model):
    """memory_forget input."""
    id: Optional[str] = Field(default=None, description="One memory's id.")
    scope: Optional[Scope] = Field(default=None, description="Only this scope.")
    domain: Optional[str] = Field(default=None, description="Only this domain.")
    categoryPathPrefix: Optional[List[str]] = Field(
        default=None, description='e.g. ["生活技能", "做饭", "饮食偏好"].')
    type: Optional[NodeType] = Field(default=None, description="Only this type.")
    key: Optional[str] = Field(default=None, description="Only this controlled key.")
    valueJson: Any = Field(default=None, description="Only this value of the key.")
    mode: Mode = Field(default=VALUES["mode"].default, description=describe(VALUES["mode"]))
    reason: str = Field(description="Why, in a few words.")


class ForgetCandidate(Model):
    id: str
    title: str
    scope: Scope
    status: Status


class ForgetResult(Model):
    deletedIds: List[str]
    mode: Mode
    requiresConfirmation: Optional[bool] = None
    reason: Optional[str] = None
    candidates: List[ForgetCandidate] = Field(default_factory=list)
    hint: Optional[str] = None
    code: Optional[int] = None


class MemorySchemaRule(Model):
    domain: str
    categoryPathPrefix: Optional[List[str]] = None
    type: NodeType
    allowedKeys: List[str]
    valueShape: Literal["string", "number", "boolean", "string[]", "object"]
    defaultScope: Scope
    requiresExplicitUserIntent: bool


class MemoryAuditEvent(Model):
    id: str
    eventType: Literal["create", "update", "supersede", "expire", "delete", "undo",
                       "refresh", "purge", "import", "entity"]
    nodeId: Optional[str] = None
    sessionId: Optional[str] = None
    workspaceId: Optional[str] = None
    userId: Optional[str] = None
    actor: Actor
    reason: str
    payload: Any = None
    createdAt: str


class MemoryContextDiagnostics(Model):
    enabled: bool
    storeStatus: Literal["ok", "disabled", "degraded"]
    warnings: List[str]
    retrievedNodeCount: int
    omittedNodeCount: int
    budget: Optional[int] = None
    usedTokens: Optional[int] = None
    tokenCounter: Optional[str] = None
    omitted: List[Dict[str, Any]] = Field(default_factory=list)
    truncated: List[str] = Field(default_factory=list)
    candidatesConsidered: int = 0
    belowRelevanceFloor: int = 0
    ranked: int = 0
    packed: int = 0
    cutForBudget: List[str] = Field(default_factory=list)
    asOf: Optional[str] = None  # the moment the memories and edges held, when not now


class RankedItem(Model):
    """Why a ranked item is in the context: its score, and which signals brought it."""
    id: str
    kind: Literal["node", "message", "summary"]
    score: float
    via: List[Literal["lexical", "time", "pair"]]
    matched: List[str]


class EntityLine(Model):
    """A person, pet, place or thing the question named, with what its edges say."""
    id: str
    name: str
    kind: str
    facts: List[str]
    sourceNodeIds: List[str]


class MemoryContext(Model):
    contextId: Optional[str] = None
    queryText: Optional[str] = None
    latestSummary: Optional[MemorySummary] = None
    recentMessages: List[MemoryMessage]
    activeTasks: List[MemoryNode]
    relevantNodes: List[MemoryNode]
    constraints: List[MemoryNode]
    preferences: List[MemoryNode]
    relevantMessages: List[MemoryMessage] = Field(default_factory=list)
    relevantSummaries: List[MemorySummary] = Field(default_factory=list)
    entities: List[EntityLine] = Field(default_factory=list)
    usedMemoryIds: List[str]
    ranking: List[RankedItem] = Field(default_factory=list)
    diagnostics: MemoryContextDiagnostics
    text: Optional[str] = None


SCHEMAS = {
    "message": MemoryMessage, "summary": SummaryDraft, "extraction": MemoryExtraction,
    "node": MemoryNode, "context": MemoryContext, "query": MemoryQuery,
    "query-result": MemoryQueryResult, "rule": MemorySchemaRule, "audit-event": MemoryAuditEvent,
    "propose-update": ProposeUpdate, "forget": ForgetRequest,
}


def validation_message(exc) -> str:
    """One line from a pydantic ValidationError: where, and what was wrong."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "input"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first.get('msg')}{more}"


class MemoryEntity(Model):
    """An entity of the graph as export writes it: what reading the memories again cannot
    give back (a kind or an alias said outright). Its edges are read again from the memories."""
    id: str
    name: str
    kind: Literal[VALUES["entity_kind"].choices]  # type: ignore[valid-type]
    aliases: List[str] = Field(default_factory=list)
    scope: Literal["workspace", "user"] = "workspace"  # the db whose graph holds it
    createdAt: str
