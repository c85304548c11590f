"""A module by its dotted name, imported on first use.

importlib.import_module does this too, but importing importlib itself (and warnings with it)
costs every command about 0.8 ms; the import statement's own hook needs neither."""
from __future__ import annotations

import sys


def load(name: str):
    """The module `name` (absolute, dotted), imported if it is not yet."""
    module = sys.modules.get(name)
    if module is None:
        __import__(name)
        module = sys.modules[name]
    return module
