"""Renderer of `context`: text, markdown or JSON, written as the service packed it.

Printed before every model call, so it loads nothing it does not print: the people's view
(`human`, with its tables and local times) only for a warning.
"""
from __future__ import annotations

import sys

from . import Renderer, machine, masked


class ContextView(Renderer):
    """The text is meant for an LLM: written as the service packed it, never through rich."""

    def diagnose(self, result) -> None:
        warnings = result.data["diagnostics"]["warnings"]
        if warnings:
            from .human import note
            for warning in warnings:
                note(f"ekko-mem: warning: {warning}", quiet=self.quiet)

    def json(self, result) -> None:
        data, seen = result.data, result.data["diagnostics"]
        if seen["warnings"]:  # a warning may quote a setting's value: masked, as on stderr
            data = {**data, "diagnostics": {**seen, "warnings": list(map(masked,
                                                                          seen["warnings"]))}}
        machine.emit_json(data)

    def human(self, result) -> None:
        if result.data["text"]:
            sys.stdout.write(result.data["text"] + "\n")

    # The service packs markdown itself (headings count against the budget).
    markdown = human
