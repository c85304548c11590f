"""Append-only schema migrations, applied in order when a store opens.

Each migration runs in its own transaction together with its record, so a failure leaves the
db at its previous version. Never edit a released migration: add the next one.
"""
from __future__ import annotations

from collections.abc import Callable

MIGRATIONS: list[tuple[int, str, Callable]] = []


def migration(fn: Callable) -> Callable:
    number = int(fn.__name__[1:4])
    MIGRATIONS.append((number, fn.__name__, fn))
    return fn


def latest_version() -> int:
    return MIGRATIONS[-1][0]


@migration
def m001_create_tables(db) -> None:
    statements = [
        """create table ekko_meta (key text primary key, value text not null)""",
        """create table memory_messages (
            id text primary key,
            session_id text not null,
            parent_id text,
            role text not null,
            content text not null,
            metadata_json text,
            created_at text not null)""",
        """create table memory_summaries (
            id text primary key,
            session_id text not null,
            parent_summary_id text,
            from_message_id text not null,
            to_message_id text not null,
            summary text not null,
            current_goal text,
            constraints_json text not null default '[]',
            preferences_json text not null default '[]',
            decisions_json text not null default '[]',
            completed_work_json text not null default '[]',
            pending_work_json text not null default '[]',
            known_issues_json text not null default '[]',
            needs_regeneration integer not null default 0,
            created_at text not null)""",
        """create table memory_nodes (
            id text primary key,
            parent_id text,
            supersedes_id text,
            session_id text,
            workspace_id text,
            user_id text,
            scope text not null,
            domain text not null,
            category_path_json text not null,
            category_path_text text not null,
            type text not null,
            key text,
            value_json text,
            title text not null,
            content text not null,
            status text not null,
            confidence real not null,
            importance real not null,
            tags_json text not null default '[]',
            entities_json text not null default '[]',
            source_message_ids_json text not null default '[]',
            explicit integer not null default 0,
            actor text not null default 'user',
            created_at text not null,
            updated_at text not null,
            expires_at text)""",
        """create table memory_audit_events (
            id text primary key,
            event_type text not null,
            node_id text,
            session_id text,
            workspace_id text,
            user_id text,
            actor text not null,
            reason text not null,
            payload_json text,
            created_at text not null)""",
        "create index idx_memory_messages_session_created"
        " on memory_messages (session_id, created_at)",
        "create index idx_memory_summaries_session_created"
        " on memory_summaries (session_id, created_at)",
        "create index idx_memory_nodes_lookup"
        " on memory_nodes (scope, status, domain, type, importance, updated_at)",
        "create index idx_memory_nodes_key"
        " on memory_nodes (scope, status, domain, type, key, updated_at)",
        "create index idx_memory_nodes_key_only on memory_nodes (key, status)",
        "create index idx_memory_nodes_category on memory_nodes (category_path_text)",
        "create index idx_memory_nodes_session on memory_nodes (session_id, status, updated_at)",
        "create index idx_memory_nodes_workspace"
        " on memory_nodes (workspace_id, status, updated_at)",
        "create index idx_memory_nodes_user on memory_nodes (user_id, status, updated_at)",
        "create index idx_memory_nodes_status_type on memory_nodes (status, type, updated_at)",
        "create index idx_memory_nodes_supersedes on memory_nodes (supersedes_id)",
        "create index idx_memory_nodes_expires on memory_nodes (expires_at)"
        " where expires_at is not null",
        "create index idx_memory_audit_events_node on memory_audit_events (node_id, created_at)",
        "create index idx_memory_audit_events_created on memory_audit_events (created_at)",
        # Contentless: the pre-tokenised text is not stored twice; deletes pass the same tokens.
        "create virtual table memory_nodes_fts using fts5("
        "title, content, tags, entities, content='')",
        "create virtual table memory_messages_fts using fts5(content, content='')",
    ]
    for sql in statements:
        db.execute(sql)


@migration
def m002_create_context_runs(db) -> None:
    """What each `context` run used, so `explain` can answer from it later."""
    db.execute("""create table memory_context_runs (
        id text primary key,
        session_id text,
        query_text text,
        budget integer not null,
        used_tokens integer not null,
        used_memory_ids_json text not null default '[]',
        created_at text not null)""")
    db.execute("create index idx_memory_context_runs_created on memory_context_runs (created_at)")


@migration
def m003_create_extraction_state(db) -> None:
    """Extraction watermark per session and the retry queue for failed extractor runs."""
    db.execute("""create table memory_extraction_marks (
        session_id text primary key,
        last_message_id text not null,
        updated_at text not null)""")
    db.execute("""create table memory_extraction_jobs (
        id text primary key,
        session_id text not null,
        kind text not null,
        message_ids_json text not null,
        command text,
        error text not null,
        attempts integer not null default 1,
        status text not null default 'pending',
        created_at text not null,
        updated_at text not null)""")
    db.execute("create index idx_memory_extraction_jobs_status"
               " on memory_extraction_jobs (status, created_at)")


@migration
def m004_index_ranked_lookups(db) -> None:
    """Indexes that let listings stop early instead of sorting every match: active nodes by
    type in rank order, exact key+value lookups, and the few nodes that can expire."""
    db.execute("create index idx_memory_nodes_rank on memory_nodes"
               " (status, type, importance desc, confidence desc, updated_at desc)")
    db.execute("create index idx_memory_nodes_key_value on memory_nodes"
               " (key, value_json, status)")
    db.execute("drop index if exists idx_memory_nodes_key_only")
    db.execute("create index idx_memory_nodes_status_expires on memory_nodes"
               " (status, expires_at) where expires_at is not null")


@migration
def m005_reindex_stemmed_unigrams(db) -> None:
    """Full-text tokens gain English stems and single CJK characters (ekko_mem/tokens.py), so
    both indexes are rebuilt; messages gain a time index for time-bounded recall."""
    from .nodes import reindex_fts
    reindex_fts(db)
    db.execute("create index idx_memory_messages_created on memory_messages (created_at)")


@migration
def m006_add_context_run_ranking(db) -> None:
    """Context runs keep how their ranked list was built (counts and signals), for `explain`."""
    db.execute("alter table memory_context_runs add column ranking_json text")


@migration
def m007_create_erasure_bookkeeping(db) -> None:
    """Source messages a hard delete could not purge in the same db (a user memory's sources
    live in a workspace db), kept as ids until a rerun finishes them; and the workspaces whose
    messages user memories cite, so that rerun knows where to look."""
    db.execute("""create table memory_pending_purges (
        message_id text not null,
        node_id text not null,
        created_at text not null,
        primary key (message_id, node_id))""")
    db.execute("create index idx_memory_pending_purges_node on memory_pending_purges (node_id)")
    db.execute("""create table memory_workspaces (
        workspace_id text primary key,
        root text not null,
        seen_at text not null)""")


@migration
def m008_create_vectors(db) -> None:
    """Embeddings for semantic recall (store/vectors.py). Vectors are kept in blocks of up to
    128 (sign bits, float32 scales and int8 codes, each end to end), so a search reads a few
    hundred rows, not one per message; `memory_vectors` says which block holds each embedded
    row. Both stay empty unless semantic recall is switched on."""
    # Column order is read order: a scan of the sign bits stops before the codes.
    db.execute("""create table memory_vector_blocks (
        id integer primary key,
        kind text not null,
        model text not null,
        bits blob not null,
        scales blob not null,
        refs_json text not null,
        codes blob not null)""")
    db.execute("create index idx_memory_vector_blocks_kind on memory_vector_blocks"
               " (kind, model)")
    db.execute("""create table memory_vectors (
        ref_id text primary key,
        kind text not null,
        partner_id text,
        model text not null,
        block_id integer not null)""")
    db.execute("create index idx_memory_vectors_partner on memory_vectors (partner_id)"
               " where partner_id is not null")


@migration
def m009_slim_node_indexes(db) -> None:
    """Only the indexes a real query uses (tests/test_query_plans.py lists the queries), and
    those only over the rows that can match: they were more than half of a node's bytes.
    Listings by scope, type, status or owner walk idx_memory_nodes_rank in rank order and stop
    at their limit; a key, a predecessor or a session is looked up only where it is set."""
    for statement in ("drop index if exists idx_memory_nodes_lookup",
                      "drop index if exists idx_memory_nodes_key",
                      "drop index if exists idx_memory_nodes_workspace",
                      "drop index if exists idx_memory_nodes_user",
                      "drop index if exists idx_memory_nodes_status_type",
                      "drop index if exists idx_memory_nodes_expires",
                      "drop index if exists idx_memory_nodes_key_value",
                      "drop index if exists idx_memory_nodes_supersedes",
                      "drop index if exists idx_memory_nodes_session"):
        db.execute(statement)
    db.execute("create index idx_memory_nodes_key_value on memory_nodes (key, value_json, status)"
               " where key is not null")
    db.execute("create index idx_memory_nodes_supersedes on memory_nodes (supersedes_id)"
               " where supersedes_id is not null")
    # `scope = 'session'` is written as a constant by store/nodes.py's filters, which is what
    # lets SQLite use an index that holds session nodes only.
    db.execute("create index idx_memory_nodes_session on memory_nodes"
               " (session_id, status, updated_at) where scope = 'session'")


@migration
def m010_slim_audit_node_index(db) -> None:
    """A node's events are found by its id alone: it has a handful, sorted in no time, so the
    index no longer repeats each event's timestamp (24 bytes an event), and events about no
    node are left out of it."""
    db.execute("drop index if exists idx_memory_audit_events_node")
    db.execute("create index idx_memory_audit_events_node on memory_audit_events (node_id)"
               " where node_id is not null")


@migration
def m011_index_audit_copies_by_reference(db) -> None:
    """A node's events also say, in the index, whether one reads the node's row as its
    `after`. Before a row changes, those are found without reading the payload of every
    event the node has: a memory restated on every turn has thousands."""
    db.execute("drop index if exists idx_memory_audit_events_node")
    db.execute("create index idx_memory_audit_events_node on memory_audit_events"
               """ (node_id, instr(payload_json, '"after":"=node"')) where node_id is not null""")


@migration
def m012_mark_audit_differences(db) -> None:
    """Events may store their `before` as a difference from their `after` (store/copies.py).
    No table changes: the version number is what keeps an older ekko-mem, which would read a
    difference as the memory itself and undo into it, from opening a db that holds one."""


@migration
def m013_create_tombstones(db) -> None:
    """What a hard delete erased, by id and a keyed digest of its text, never the text: an
    import then knows not to bring it back, and a workspace that recorded a context using an
    erased user memory learns of the erasure from the user db. `seq` orders them, so each
    workspace keeps how far it has read (ekko_meta) and reads only what is new."""
    db.execute("""create table memory_tombstones (
        seq integer primary key,
        id text not null unique,
        digest blob not null,
        erased_at text not null)""")


@migration
def m014_rank_index_holds_category(db) -> None:
    """The rank index also holds each node's category and expiry. Context's topic hints walk
    a type's best nodes in rank order for those under a category: they now read the index
    alone, not a row for every node walked (on a large db, hundreds of pages a question).
    About 25 bytes a node."""
    db.execute("drop index if exists idx_memory_nodes_rank")
    db.execute("create index idx_memory_nodes_rank on memory_nodes (status, type,"
               " importance desc, confidence desc, updated_at desc, category_path_text,"
               " expires_at)")


@migration
def m015_create_graph(db) -> None:
    """The people, pets, places and things memories name, and how they relate. An edge keeps
    two times: when it held (valid_from, valid_to, as the statement said them) and when this
    db learnt and unlearnt it (recorded_at, retired_at), so a graph can be read as of a day.
    `subject` is an entity's id, or 'user' or 'project'. The db is the scope: a workspace's
    graph is its own, the user's is the user db's."""
    db.execute("""create table memory_entities (
        id text primary key,
        kind text not null,
        name text not null,
        aliases_json text not null default '[]',
        created_at text not null)""")
    db.execute("create unique index idx_memory_entities_name on memory_entities (name)")
    db.execute("""create table memory_edges (
        id text primary key,
        subject text not null,
        relation text not null,
        object_entity_id text,
        value text,
        valid_from text,
        valid_to text,
        recorded_at text not null,
        retired_at text,
        source_node_id text not null,
        source_message_id text)""")
    db.execute("create index idx_memory_edges_subject on memory_edges (subject, retired_at)")
    db.execute("create index idx_memory_edges_object on memory_edges (object_entity_id)"
               " where object_entity_id is not null")
    db.execute("create index idx_memory_edges_source on memory_edges (source_node_id)")


@migration
def m016_index_entity_names(db) -> None:
    """Every name and alias of an entity, case-blind, under an index: a question's words are
    looked up here, so naming someone costs a few index reads however many entities there
    are (an alias inside a JSON list can only be found by reading every entity)."""
    db.execute("""create table memory_entity_names (
        name text not null collate nocase,
        entity_id text not null,
        primary key (name, entity_id)) without rowid""")
    db.execute("create index idx_memory_entity_names_entity on memory_entity_names (entity_id)")
    # What a context says of an entity is read by subject and relation, without the
    # `mentioned` edges, of which a much-named entity has thousands.
    db.execute("create index idx_memory_edges_relation on memory_edges"
               " (subject, relation, recorded_at)")
    db.execute("insert or ignore into memory_entity_names select name, id from memory_entities")
    db.execute("insert or ignore into memory_entity_names select a.value, e.id"
               " from memory_entities e, json_each(e.aliases_json) a")
