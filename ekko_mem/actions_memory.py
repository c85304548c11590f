"""Command bodies for structured memory: remember, query, forget, audit, show, edit."""
from __future__ import annotations

import sys

from .actions import read_text, service, unless_revealed
from .errors import (EkkoError, Rejected, UsageError)
from .render import human, machine
from .render.nodes import node_rows, print_show

def refused_error(results: list[dict]) -> EkkoError | None:
    """The typed error of the first refusal among service answers (errors.Answer)."""
    return next((r.error for r in results if getattr(r, "error", None) is not None), None)


def _finish(results: list[dict], *, as_json: bool, quiet: bool, describe) -> None:
    """Print results; the first refusal becomes the error line and the exit code."""
    if as_json:
        machine.emit_jsonl(results)
    elif not quiet:
        for result in results:
            if result.get("accepted") or result.get("deletedIds"):
                human.lines([describe(result)])
    error = refused_error(results)
    if error is not None:
        raise error


def _describe_write(result: dict) -> str:
    text = f"{result['operation']} {result['nodeId']} ({result['scope']})"
    if result.get("supersededId"):
        text += f", superseding {result['supersededId']}"
    for note in result.get("notes", []):
        text += f"\n  note: {note}"
    return text


def do_remember(text, *, fields, session=None, supersedes=None, reason="", actor="user",
                yes=False, as_json=False, quiet=False, workspace=None):
    """fields: the design's names (categoryPath, valueJson, ...), as options.py maps them."""
    fields = {k: v for k, v in fields.items() if v not in (None, [], "")}
    if text == "-" or (text is None and not fields and not supersedes):
        text = read_text(text)
    svc = service(workspace, session)
    _decode_value(svc, fields)
    with svc:
        results = svc.remember(text, fields=fields, supersedes=supersedes, reason=reason,
                               actor=actor, confirm=yes, session=session)
    _finish(results, as_json=as_json, quiet=quiet, describe=_describe_write)


def _decode_value(svc, fields: dict) -> None:
    """A value typed on the command line: JSON, or plain text taken as a string."""
    if fields.get("valueJson") is not None:
        fields["valueJson"] = svc.value_from_text(fields["valueJson"])


def do_query(text, *, query, session=None, messages=False, since=None, reveal=False,
             as_json=False, no_color=False, workspace=None):
    """query: a MemoryQuery's fields (scopes, categoryPathPrefix, ...), as options.py maps them."""
    if text == "-":
        text = read_text("-")
    if messages:
        return _query_messages(text, session=session, since=since, limit=query["limit"],
                               as_json=as_json, no_color=no_color, workspace=workspace,
                               reveal=reveal)
    if since is not None:
        from .options import flag
        raise UsageError(f"{flag('since')} goes with {flag('messages')}",
                         f"add {flag('messages')} to search the log")
    svc = service(workspace, session)
    query = dict(query)
    _decode_value(svc, query)
    with svc:
        result = unless_revealed(svc.retrieve({**query, "queryText": text,
                                               "sessionId": session}), reveal)
    if as_json:
        return machine.emit_json(result)
    for title, nodes in (("exact", result["exact"]), ("relevant", result["relevant"])):
        if nodes:
            human.table(title, ["id", "scope", "type", "memory", "status", "conf"],
                        node_rows(nodes), no_color=no_color)
    if result["omitted"]:
        human.table("omitted", ["id", "reason"],
                    [[o["nodeId"], o["reason"]] for o in result["omitted"]], no_color=no_color)
    if not (result["exact"] or result["relevant"]):
        human.note("no memory matches")


def _query_messages(text, *, session, since, limit, as_json, no_color, workspace, reveal):
    with service(workspace) as svc:
        result = unless_revealed(svc.search_messages(text or "", session=session, since=since,
                                                     limit=limit), reveal)
    if as_json:
        return machine.emit_json(result)
    rows = [[hit["message"]["id"], hit["message"]["sessionId"],
             hit["message"]["createdAt"][:16].replace("T", " "), hit["message"]["role"],
             " ".join(hit["message"]["content"].split()), f"{hit['score']:.2f}"]
            for hit in result["messages"]]
    if rows:
        human.table("messages", ["id", "session", "at", "role", "message", "score"], rows,
                    no_color=no_color)
    else:
        human.note("no message matches")


def do_forget(node_id, *, selector, hard=False, purge_sources=False, message=None,
              verify=False, yes=False, reason="", as_json=False, quiet=False, workspace=None):
    """selector: a ForgetRequest's fields (categoryPathPrefix, valueJson, ...), as options.py
    maps them; message: ids of logged messages to erase instead."""
    svc = service(workspace)
    selector = dict(selector)
    _decode_value(svc, selector)
    if message and (node_id or purge_sources or any(selector.values())):
        from .options import flag
        raise UsageError(f"{flag('message')} erases logged messages; it takes no memory id or"
                         " selector", "run it as its own command")
    with svc:
        if message:
            result = svc.forget_messages(list(message), mode="hard" if hard else "soft",
                                         reason=reason, confirm=yes, verify=verify)
        else:
            result = svc.forget({"id": node_id, **selector}, mode="hard" if hard else "soft",
                                reason=reason, confirm=yes, purge_sources=purge_sources,
                                verify=verify)
    error = refused_error([result])
    result = unless_revealed(result, False)  # candidate titles are printed
    if as_json:
        machine.emit_json(result)
    elif result.get("candidates"):
        human.lines([f"{c['id']}\t{c['scope']}\t{c['status']}\t{c['title']}"
                     for c in result["candidates"]])
    elif not quiet:
        human.lines(_forget_lines(result))
    if error is not None:
        raise error


def _forget_lines(result: dict) -> list[str]:
    out = [f"{result['mode']}-deleted {i}" for i in result["deletedIds"]]
    out += [f"already erased {i} (finished what was left)" for i in
            result.get("alreadyErased", [])]
    out += [f"purged message {i}" for i in result.get("purgedMessageIds", [])]
    out += [f"dropped summary {i} (the next 'ekko-mem summarize' rebuilds it)"
            for i in result.get("summariesDropped", [])]
    check = result.get("verify")
    if check and check["clean"]:
        out.append(f"verified: none of {check['textsChecked']} erased texts is left in"
                   f" {', '.join(check['filesChecked'])} or the full-text index")
    elif check and check["clean"] is None:
        from .options import command_line
        out.append("not verified: no erased text was long enough to scan for (16 bytes);"
                   f" '{command_line('doctor', 'scan')} TEXT' checks any text")
    return out


def do_audit(*, node=None, since=None, limit=50, reveal=False, as_json=False, no_color=False,
             workspace=None):
    with service(workspace) as svc:
        events = unless_revealed(svc.audit(node_id=node, since=since, limit=limit), reveal)
    if as_json:
        return machine.emit_jsonl(events)
    human.table("audit", ["time", "event", "type", "node", "actor", "reason"],
                [[e["createdAt"], e["id"], e["eventType"], e.get("nodeId") or "-", e["actor"],
                  human.short(e["reason"], 50)] for e in events], no_color=no_color)


def do_undo(event_id, *, reason="", as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        result = svc.undo(event_id, reason=reason)
    if as_json:
        return machine.emit_json(result)
    if not quiet:
        human.lines([f"undid {result['undoneEventId']} as {result['eventId']}: "
                     + ", ".join(result["changedIds"])])


def do_show(identifier, *, reveal=False, as_json=False, no_color=False, workspace=None):
    with service(workspace) as svc:
        record = unless_revealed(svc.show(identifier), reveal)
    if as_json:
        return machine.emit_json(record)
    print_show(record, no_color=no_color)


def do_expire(*, as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        result = svc.expire_due()
    if as_json:
        return machine.emit_json(result)
    if not quiet:
        human.lines([f"expired {i}" for i in result["expiredIds"]] or ["nothing to expire"])


# A NodeDraft's fields but its status, links and provenance, which other commands change.
NOT_EDITABLE = {"status", "sourceMessageIds", "sessionId", "supersedesId", "parentId", "explicit"}


def editable_fields() -> list[str]:
    from .models import NodeDraft
    return [name for name in NodeDraft.model_fields if name not in NOT_EDITABLE]


def do_edit(identifier, *, reason="", yes=False, as_json=False, quiet=False, workspace=None):
    import json
    import os
    import shlex
    import subprocess
    import tempfile
    with service(workspace) as svc:
        node = svc.find_node(identifier)
        if node["scope"] == "global":
            raise Rejected("global memory is read-only", "remember your own version instead")
        before = {k: node.get(k) for k in editable_fields()}
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.NamedTemporaryFile("w+", suffix=".json", prefix=f"{node['id']}-",
                                         encoding="utf-8", delete=False) as handle:
            json.dump(before, handle, ensure_ascii=False, indent=2)
            path = handle.name
        try:
            code = subprocess.call([*shlex.split(editor), path])
            if code != 0:
                raise Rejected(f"the editor exited with {code}", "nothing was changed")
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        finally:
            os.unlink(path)
        try:
            after = json.loads(text)
        except ValueError as exc:
            raise Rejected(f"the edited node is not valid JSON ({exc.msg} at line"
                           f" {exc.lineno})", "nothing was changed; run edit again") from None
        if not isinstance(after, dict):
            raise Rejected("the edited node must be a JSON object", "nothing was changed")
        changes = {k: v for k, v in after.items() if before.get(k) != v}
        if not changes:
            if not quiet:
                human.note("no changes")
            return None
        result = svc.propose_update("update", changes, target_id=node["id"],
                                    reason=reason or "edited by hand", actor="user",
                                    confirm=yes)
    _finish([result], as_json=as_json, quiet=quiet, describe=_describe_write)


def do_export(*, scope=None, session=None, output=None, workspace=None):
    with service(workspace) as svc:
        lines = (machine.dump(record) + "\n" for record in
                 svc.export_lines(scopes=scope, session=session))
        if output in (None, "-"):
            for line in lines:
                sys.stdout.write(line)
            return
        svc.save_export(output, lines)


def do_import(source, *, yes=False, as_json=False, quiet=False, workspace=None):
    from .actions import _read_lines
    lines = _read_lines(source)
    with service(workspace) as svc:
        result = svc.import_lines(lines, confirm=yes)
    if as_json:
        return machine.emit_json(result)
    if not quiet:
        counts = result["imported"]
        human.lines([f"imported {counts['message']} messages, {counts['summary']} summaries,"
                     f" {counts['node']} memories, {counts['event']} audit events;"
                     f" {result['skipped']} already present"])
