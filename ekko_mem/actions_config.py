"""Command bodies of `config`: show every setting, or get, set or unset one."""
from __future__ import annotations

from . import results
from .actions import service
from .render import emit


def do_config(*, as_json=False, quiet=False, no_color=False, workspace=None):
    with service(workspace) as svc:
        config = svc.config_files.show()
    rows = config.effective()
    if not as_json:  # people see a problem beside its setting; scripts read its own field
        rows = [{**row, "source": f"{row['source']} ({row['problem']})"} if "problem" in row
                else row for row in rows]
    if as_json or not quiet:
        emit(results.Settings(rows), as_json=as_json, no_color=no_color)
    config.check(optional=True, listed=True)  # shown first, then its problems: exit 4


def do_config_get(key, *, as_json=False, quiet=False, workspace=None):
    with service(workspace) as svc:
        found = svc.config_files.get_setting(key)
    _say(_json(found["value"]) if as_json else _plain(found["value"]), as_json, quiet)


def do_config_set(words, *, user=False, workspace=None, as_json=False, quiet=False):
    key, value = _key_and_value(words)
    _one_file(user, workspace)
    with service(workspace) as svc:
        outcome = svc.config_files.set_setting(key, value, user=user)
    _say(_json(outcome) if as_json else _set_line(outcome), as_json, quiet)


def do_config_unset(key, *, user=False, workspace=None, as_json=False, quiet=False):
    _one_file(user, workspace)
    with service(workspace) as svc:
        outcome = svc.config_files.unset_setting(key, user=user)
    _say(_json(outcome) if as_json else _unset_line(outcome), as_json, quiet)


def _key_and_value(words) -> tuple[str, str]:
    count = len(words or ())
    if count != 2:
        from .errors import UsageError
        raise UsageError(f"config set takes a KEY and a VALUE, not {count} word"
                         + "s" * (count != 1), "quote a value with spaces: ekko-mem config"
                         " set extractor.command \"llm -m gpt-4o-mini\"")
    return words[0], words[1]


def _one_file(user, workspace) -> None:
    if user and workspace:
        from .errors import UsageError
        from .options import flag
        raise UsageError(f"{flag('user')} and {flag('workspace')} name different files",
                         "pass one of them")


def _say(text: str, as_json: bool, quiet: bool) -> None:
    """A value or a one-line report, as is (a Prompt result is written unchanged)."""
    if as_json or not quiet:
        emit(results.Prompt(text + "\n"), as_json=as_json)


def _json(value) -> str:
    import json

    from .policy.printable import json_safe
    return json_safe(json.dumps(value, ensure_ascii=False, indent=2))


def _plain(value) -> str:
    """A value as a shell reads it: text as it is, the rest as JSON (true, 1200, [...])."""
    from .policy.printable import printable
    from .render.machine import dump
    return printable(value) if isinstance(value, str) else dump(value)


def _set_line(outcome: dict) -> str:
    from .config_edit import toml_value
    from .policy.printable import printable
    said = f"{outcome['key']} = {toml_value(outcome['value'])}"
    line = (f"{said} in {outcome['file']}" if outcome["changed"]
            else f"{said} already in {outcome['file']} (unchanged)")
    if outcome["note"]:
        line += f"; it {outcome['note']} (until then context counts with the estimate)"
    if outcome["shadowedBy"]:
        line += f"; {outcome['shadowedBy']} sets it too, and wins here"
    return printable(line)


def _unset_line(outcome: dict) -> str:
    from .policy.printable import printable
    key, path = outcome["key"], outcome["file"]
    if not outcome["changed"]:
        return printable(f"{key} is not set in {path} (unchanged)")
    now = {"default": "its default applies", None: "it is unset"}.get(
        outcome["source"], f"{outcome['source']} still sets it")
    return printable(f"removed {key} from {path}; {now}")
