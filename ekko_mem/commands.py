"""What each command runs: a function per command that imports its action on first call.

The option table (options.py) names these, so an editor goes from a command to its body;
each imports its action module only when called, so listing the commands (help,
completion) or running one loads no other command's code.
"""
from __future__ import annotations


def do_init(*args, **params) -> None:
    from .actions import do_init as action
    action(*args, **params)


def do_log(*args, **params) -> None:
    from .actions import do_log as action
    action(*args, **params)


def do_history(*args, **params) -> None:
    from .actions import do_history as action
    action(*args, **params)


def do_migrate(*args, **params) -> None:
    from .actions import do_migrate as action
    action(*args, **params)


def do_remember(*args, **params) -> None:
    from .actions_memory import do_remember as action
    action(*args, **params)


def do_query(*args, **params) -> None:
    from .actions_memory import do_query as action
    action(*args, **params)


def do_forget(*args, **params) -> None:
    from .actions_memory import do_forget as action
    action(*args, **params)


def do_audit(*args, **params) -> None:
    from .actions_memory import do_audit as action
    action(*args, **params)


def do_undo(*args, **params) -> None:
    from .actions_memory import do_undo as action
    action(*args, **params)


def do_show(*args, **params) -> None:
    from .actions_memory import do_show as action
    action(*args, **params)


def do_graph(*args, **params) -> None:
    from .actions_memory import do_graph as action
    action(*args, **params)


def do_edit(*args, **params) -> None:
    from .actions_memory import do_edit as action
    action(*args, **params)


def do_expire(*args, **params) -> None:
    from .actions_memory import do_expire as action
    action(*args, **params)


def do_context(*args, **params) -> None:
    from .actions import do_context as action
    action(*args, **params)


def do_explain(*args, **params) -> None:
    from .actions import do_explain as action
    action(*args, **params)


def do_schema(*args, **params) -> None:
    from .actions import do_schema as action
    action(*args, **params)


def do_summarize(*args, **params) -> None:
    from .actions_summary import do_summarize as action
    action(*args, **params)


def do_extract(*args, **params) -> None:
    from .actions_summary import do_extract as action
    action(*args, **params)


def do_export(*args, **params) -> None:
    from .actions_memory import do_export as action
    action(*args, **params)


def do_import(*args, **params) -> None:
    from .actions_memory import do_import as action
    action(*args, **params)


def do_hooks_install(*args, **params) -> None:
    from .actions import do_hooks_install as action
    action(*args, **params)


def do_hooks_uninstall(*args, **params) -> None:
    from .actions import do_hooks_uninstall as action
    action(*args, **params)


def do_hooks_run(*args, **params) -> None:
    from .actions import do_hooks_run as action
    action(*args, **params)


def do_index(*args, **params) -> None:
    from .actions import do_index as action
    action(*args, **params)


def do_doctor(*args, **params) -> None:
    from .actions import do_doctor as action
    action(*args, **params)


def do_config(*args, **params) -> None:
    from .actions_config import do_config as action
    action(*args, **params)


def do_config_get(*args, **params) -> None:
    from .actions_config import do_config_get as action
    action(*args, **params)


def do_config_set(*args, **params) -> None:
    from .actions_config import do_config_set as action
    action(*args, **params)


def do_config_unset(*args, **params) -> None:
    from .actions_config import do_config_unset as action
    action(*args, **params)


def do_mcp(*args, **params) -> None:
    from .actions import do_mcp as action
    action(*args, **params)
