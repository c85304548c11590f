"""Command bodies for structured memory: remember, query, forget, audit, show, edit."""
from __future__ import annotations

import sys

from . import results
from .actions import (EMBEDDING_QUIET_S, ended, progress_line, read_text, service,
                      unless_revealed)
from .errors import EkkoError, NeedsConfirmation, Rejected, UsageError
from .render import emit


def _finish(written: results.Writes | results.Rehearsed, *, as_json: bool,
            quiet: bool) -> None:
    """Print the writes; the first refusal then becomes the error line and the exit code."""
    emit(written, as_json=as_json, quiet=quiet)
    _raise(written.error)


def _raise(error: EkkoError | None) -> None:
    if error is not None:
        raise error


def do_remember(text, *, fields, session=None, supersedes=None, reason="", actor="user",
                dry_run=False, yes=False, as_json=False, quiet=False, workspace=None):
    """fields: the design's names (categoryPath, valueJson, ...), as options.py maps them."""
    fields = {k: v for k, v in fields.items() if v not in (None, [], "")}
    if text == "-" or (text is None and not fields and not supersedes):
        text = read_text(text)
    svc = service(workspace, session)
    _decode_value(svc, fields)
    with svc:
        answers = svc.remember(text, fields=fields, supersedes=supersedes, reason=reason,
                               actor=actor, confirm=yes, session=session, dry_run=dry_run)
    # A dry run ends as the real command would (its refusal's line and exit code).
    _finish(results.Rehearsed(answers) if dry_run else results.Writes(answers),
            as_json=as_json, quiet=quiet)


def _decode_value(svc, fields: dict) -> None:
    """A value typed on the command line: JSON, or plain text taken as a string."""
    if fields.get("valueJson") is not None:
        fields["valueJson"] = svc.value_from_text(fields["valueJson"])


def do_query(text, *, query, session=None, messages=False, since=None, as_of=None,
             reveal=False, as_json=False, quiet=False, no_color=False, workspace=None):
    """query: a MemoryQuery's fields (scopes, categoryPathPrefix, ...), as options.py maps them."""
    if text == "-" or (text is None and not _filters(query)):
        # As remember reads it: '-', or piped in when nothing else says what to find.
        text = read_text(text) if text == "-" or not sys.stdin.isatty() else None
        text = text if text and text.strip() else None
    if messages and as_of is not None:
        from .options import flag
        raise UsageError(f"{flag('as_of')} reads memories as they were, not the log",
                         f"leave out {flag('messages')}, or use {flag('since')} with it")
    if messages:
        return _query_messages(text, session=session, since=since, limit=query["limit"],
                               as_json=as_json, quiet=quiet, no_color=no_color,
                               workspace=workspace,
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
                                               "sessionId": session}, as_of=as_of), reveal)
    emit(results.QueryResult(result), as_json=as_json, quiet=quiet, no_color=no_color)


def _filters(query: dict) -> bool:
    """Whether a query names what to find by fields (limit and what to include do not)."""
    return any(query.get(name) not in (None, [], "", False) for name in query
               if name not in ("limit", "includeExpired", "includeSuperseded"))


def _query_messages(text, *, session, since, limit, as_json, quiet, no_color, workspace,
                    reveal):
    with service(workspace) as svc:
        result = unless_revealed(svc.search_messages(text or "", session=session, since=since,
                                                     limit=limit), reveal)
    emit(results.MessageHits(result), as_json=as_json, quiet=quiet, no_color=no_color)


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
    # ID|TEXT: an id or id prefix (mem_01k), else words that find the memories.
    by_text = node_id is not None and not _looks_like_id(node_id)
    target = {"text": node_id.strip()} if by_text else {"id": node_id}
    mode = "hard" if hard else "soft"
    with svc:
        if message:
            result = svc.forget_messages(list(message), mode=mode,
                                         reason=reason, confirm=yes, verify=verify)
        else:
            result = svc.forget({**target, **selector}, mode=mode, reason=reason,
                                confirm=yes, purge_sources=purge_sources, verify=verify)
            if by_text and result.get("requiresConfirmation") and _at_terminal():
                from .render.memory import confirm_forget
                candidates = unless_revealed(result["candidates"], False)
                if not confirm_forget(candidates, hard=hard):
                    raise NeedsConfirmation("nothing was forgotten: the answer was no")
                # Exactly what the person saw and said yes to, not a new search.
                result = svc.forget({"ids": [c["id"] for c in candidates]}, mode=mode,
                                    reason=reason, confirm=True,
                                    purge_sources=purge_sources, verify=verify)
    from .options import command_line
    error = results.first_refusal([result])  # masking copies the answer, without its error
    # Candidate titles are printed, so they are masked.
    emit(results.ForgetOutcome(unless_revealed(result, False), command_line("doctor", "scan")),
         as_json=as_json, quiet=quiet)
    _raise(error)


def _looks_like_id(text: str) -> bool:
    from .ids import kind_of
    return kind_of(text) is not None and not any(ch.isspace() for ch in text)


def _at_terminal() -> bool:
    """A person who can answer a question: stdin and stderr are both a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def do_audit(*, node=None, since=None, limit=50, reveal=False, as_json=False, quiet=False,
             no_color=False, workspace=None):
    with service(workspace) as svc:
        trail = unless_revealed(svc.audit_trail(node_id=node, since=since, limit=limit), reveal)
    emit(results.AuditTrail(trail["events"], trail["titles"]), as_json=as_json, quiet=quiet,
         no_color=no_color)


def do_undo(event_id, *, reason="", as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        result = svc.undo(event_id, reason=reason)
    emit(results.Undone(result), as_json=as_json, quiet=quiet)


def do_show(identifier, *, reveal=False, as_json=False, quiet=False, no_color=False,
            workspace=None):
    with service(workspace) as svc:
        record = unless_revealed(svc.show(identifier), reveal)
    emit(results.Shown(record), as_json=as_json, quiet=quiet, no_color=no_color)


def do_graph(name, *, depth=1, as_of=None, as_json=False, quiet=False, no_color=False,
             workspace=None):
    # The first `graph` on a large db reads every memory once: a line shows it going.
    shown = progress_line("reading memories for the graph", quiet=quiet,
                          delay=EMBEDDING_QUIET_S)
    with ended(shown), service(workspace) as svc:
        result = svc.entity_graph(name, depth=depth, as_of=as_of, progress=shown)
    emit(results.EntityGraph(result), as_json=as_json, quiet=quiet, no_color=no_color)


def do_expire(*, as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        result = svc.expire_due()
    emit(results.Expired(result), as_json=as_json, quiet=quiet)


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
        command = shlex.split(editor)
        import shutil
        if not command or shutil.which(command[0]) is None:
            raise UsageError(f"no editor found: {editor!r}",
                             "set VISUAL or EDITOR to an editor on your PATH (EDITOR=nano)")
        with tempfile.NamedTemporaryFile("w+", suffix=".json", prefix=f"{node['id']}-",
                                         encoding="utf-8", delete=False) as handle:
            json.dump(before, handle, ensure_ascii=False, indent=2)
            path = handle.name
        kept = False
        try:
            code = subprocess.call([*command, path])
            if code != 0:
                raise Rejected(f"the editor exited with {code}", "nothing was changed")
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            result = _apply_edit(svc, node, before, text, reason, yes)
            error = getattr(result, "error", None)
            if error is not None:  # refused: the answer's error becomes the error line
                kept = True
                error.hint = _join(error.hint, f"your text is kept in {path}")
        except Rejected as exc:
            kept = True  # what the person typed is never lost to a validation error
            raise Rejected(exc.message, _join(exc.hint, f"your text is kept in {path}")) \
                from None
        finally:
            if not kept:
                os.unlink(path)
        if result is None:
            return emit(results.Writes([], notes=("no changes",)), as_json=as_json, quiet=quiet)
    _finish(results.Writes([result]), as_json=as_json, quiet=quiet)


def _join(hint: str, more: str) -> str:
    return f"{hint}; {more}" if hint else more


def _apply_edit(svc, node: dict, before: dict, text: str, reason: str, yes: bool):
    import json
    try:
        after = json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = f" ({exc.msg} at line {exc.lineno})" \
            if isinstance(exc, json.JSONDecodeError) else ""
        raise Rejected(f"the edited node is not valid JSON{where}", "nothing was changed") \
            from None
    if not isinstance(after, dict):
        raise Rejected("the edited node must be a JSON object", "nothing was changed")
    changes = {k: v for k, v in after.items() if before.get(k) != v}
    if not changes:
        return None
    return svc.propose_update("update", changes, target_id=node["id"],
                              reason=reason or "edited by hand", actor="user", confirm=yes)


def do_export(*, scope=None, session=None, output=None, quiet=False, workspace=None):
    with service(workspace) as svc:
        records = svc.export_lines(scopes=scope, session=session)
        if output in (None, "-"):
            return emit(results.Exported(records), quiet=quiet)
        from .render.machine import jsonl_lines
        svc.save_export(output, jsonl_lines(records))


def do_import(source=None, *, origin="export", since=None, yes=False, allow_erased=False,
              as_json=False, quiet=False, workspace=None):
    from .options import flag
    if origin.strip().lower() == "llm-logs":
        return _import_llm_logs(source, since=since, yes=yes, allow_erased=allow_erased,
                                as_json=as_json, quiet=quiet, workspace=workspace)
    if since is not None:
        raise UsageError(f"{flag('since')} goes with {flag('origin')} llm-logs",
                         f"drop {flag('since')}: an export is imported whole")
    if source is None:
        raise UsageError("no export file given", "give the file export wrote, or - for stdin")
    from .service.transfer_files import open_import
    stdin = getattr(sys.stdin, "buffer", None) if source == "-" else None
    shown = progress_line("embedding", quiet=quiet, delay=EMBEDDING_QUIET_S)
    with open_import(source, stdin) as lines, service(workspace) as svc, ended(shown):
        result = svc.import_lines(lines, confirm=yes, allow_erased=allow_erased,
                                  progress=shown)
    emit(results.ImportReport(result), as_json=as_json, quiet=quiet)


def _import_llm_logs(path, *, since, yes, allow_erased, as_json, quiet, workspace):
    shown = progress_line("embedding", quiet=quiet, delay=EMBEDDING_QUIET_S)
    with service(workspace) as svc, ended(shown):
        result = svc.import_llm_log(path, since=since, confirm=yes,
                                             allow_erased=allow_erased, progress=shown)
        notes = tuple(svc.notes)
    if notes:  # what `log` says of the credentials it masked, on stderr
        emit(results.Logged([], notes), quiet=quiet)
    emit(results.ImportReport(result), as_json=as_json, quiet=quiet)
