"""Rich tables for people at a terminal; plain aligned text when piped. rich loads lazily."""
from __future__ import annotations

import sys

from ..policy.printable import printable


def _console(color: bool):
    from rich.console import Console
    return Console(no_color=not color, highlight=False, soft_wrap=False,
                   force_terminal=color or None)


def table(title: str, columns: list[str], rows: list[list[str]], *,
          no_color: bool = False) -> None:
    """A table: rich on a terminal, tab-separated lines (easy to cut/awk) otherwise."""
    if not sys.stdout.isatty():
        for row in rows:
            sys.stdout.write("\t".join(_one_line(c) for c in row) + "\n")
        return
    from rich.markup import escape
    from rich.table import Table
    grid = Table(title=title, title_justify="left", show_lines=False)
    for name in columns:
        grid.add_column(name, overflow="fold")
    for row in rows:
        grid.add_row(*(escape(printable(str(c))) for c in row))
    from ..env import Env
    _console(not no_color and Env().color()).print(grid)


def _one_line(value) -> str:
    return printable(str(value)).replace("\t", " ").replace("\n", " ")


def lines(text_lines: list[str]) -> None:
    """Lines for people; stored text in them cannot reach the terminal as control codes."""
    for line in text_lines:
        sys.stdout.write(printable(line) + "\n")


def note(message: str, *, quiet: bool = False) -> None:
    """A diagnostic for people: stderr, so stdout stays data."""
    if not quiet:
        sys.stderr.write(printable(message) + "\n")


def short(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
