"""How a node names the messages it came from.

A workspace memory cites its own workspace's log by plain message id. A user memory is read
from every workspace, so a message logged in a workspace is named with that workspace's id
too, `ws_<id>:msg_<id>`: from any other workspace it is then known to be elsewhere (and
where), not missing. A plain id in the user db names a message in the user db's own log.
"""
from __future__ import annotations

SEP = ":"


def source_ref(workspace_id: str, message_id: str) -> str:
    return f"{workspace_id}{SEP}{message_id}"


def split_ref(ref: str) -> tuple[str | None, str]:
    """(workspace id, message id); the workspace id is None for a plain message id."""
    head, sep, tail = ref.partition(SEP)
    if sep and head.startswith("ws_") and tail:
        return head, tail
    return None, ref


def local_ids(refs, store_id: str | None) -> list[str]:
    """The message ids among `refs` that name a message in the db whose id is `store_id`:
    plain ids, and those qualified with that id."""
    out = []
    for ref in refs:
        where, message_id = split_ref(ref)
        if where is None or where == store_id:
            out.append(message_id)
    return out


def citing_forms(ref: str, workspace_id: str | None) -> list[str]:
    """Every way a node may spell a citation of `ref` as seen from the workspace
    `workspace_id`: plain in the workspace's own nodes, qualified in the user db's."""
    where, message_id = split_ref(ref)
    if workspace_id is None or where not in (None, workspace_id):
        return [ref]
    return [message_id, source_ref(workspace_id, message_id)]
