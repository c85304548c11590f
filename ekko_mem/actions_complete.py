"""`ekko-mem __complete KIND [PREFIX]`: the values shell completion offers, one per line.

Hidden (in no help, page or completion list): the scripts in completions/ call it at a TAB
that wants a value, and the Typer app's completion asks `candidates` in-process. It runs
before Typer is imported, reads only, prints ids and names (never a memory's text), and
never fails loudly: on any error, outside a workspace with no user memory, or for a kind it
does not know, it prints nothing and exits 0.
"""
from __future__ import annotations

import sys

RECENT = 50  # ids of each kind, the most recent first
LOCK_WAIT_S = 0.5  # a TAB does not wait long for a writer


def candidates(kind: str, prefix: str = "") -> list[str]:
    """The values of `kind` that start with `prefix`, or [] when there are none to give."""
    source = KINDS.get(kind)
    if source is None:
        return []
    try:
        values = source()
    except Exception:  # completion must never fail loudly
        return []
    return [v for v in dict.fromkeys(values) if v.startswith(prefix)]


def do_complete(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        return 0
    for value in candidates(argv[0], argv[1] if len(argv) > 1 else ""):
        if "\n" not in value:
            sys.stdout.write(value + "\n")
    return 0


def _service():
    from .service import MemoryService
    return MemoryService(timeout=LOCK_WAIT_S)


def _events(svc) -> list[dict]:
    return svc.audit(limit=RECENT * 2)


def _nodes(svc) -> list[str]:
    """Memories changed lately: their audit events are the newest."""
    return [e["nodeId"] for e in _events(svc) if e.get("nodeId")][:RECENT]


def _events_ids(svc) -> list[str]:
    return [e["id"] for e in _events(svc)][:RECENT]


def _messages(svc) -> list[str]:
    """The latest messages of the sessions active most recently."""
    ids = [m["id"] for s in svc.sessions(limit=5)
           for m in svc.history(session=s["sessionId"], limit=RECENT)["messages"]]
    return sorted(ids, reverse=True)[:RECENT]  # ids sort by time


def _ids(svc) -> list[str]:
    return [*_nodes(svc), *_messages(svc), *_events_ids(svc)]


def _sessions(svc) -> list[str]:
    return [s["sessionId"] for s in svc.sessions(limit=RECENT)]


def _opened(read):
    """`read` given one service, opened for the call and closed after."""
    def source() -> list[str]:
        with _service() as svc:
            return read(svc)
    return source


def _known(column: str) -> list[str]:
    """What the dbs already hold in a node column."""
    with _service() as svc:
        return sorted({v for _, store in svc.stores.existing()
                       for v in store.nodes.known_values(column)})


def _builtin(field: str) -> list[str]:
    """Domains, category paths or keys the built-in schema names."""
    from .policy.schema import BUILTIN_RULES
    values = []
    for rule in BUILTIN_RULES:
        if field == "allowedKeys":
            values += rule["allowedKeys"]
        elif field == "categoryPathPrefix" and rule.get("categoryPathPrefix"):
            values.append("/".join(rule["categoryPathPrefix"]))
        elif field == "domain" and rule["domain"] != "*":
            values.append(rule["domain"])
    return values


def _with_builtin(field: str, column: str):
    def source() -> list[str]:
        try:
            known = _known(column)
        except Exception:  # outside a workspace the schema's own names still help
            known = []
        return sorted({*_builtin(field), *known})
    return source


KINDS = {
    "ids": _opened(_ids), "nodes": _opened(_nodes), "messages": _opened(_messages),
    "events": _opened(_events_ids), "sessions": _opened(_sessions),
    "keys": _with_builtin("allowedKeys", "key"),
    "categories": _with_builtin("categoryPathPrefix", "category_path_text"),
    "domains": _with_builtin("domain", "domain"),
}
