"""Text for people: rich tables at a terminal, tab-separated lines when piped, times in the
local zone. rich loads lazily.

Stored text (a title, a category, a session, a path) is a field, never layout: `field` writes
its newlines and tabs as `\\n` and `\\t`, so a row is one line and a stored line cannot pass
for a row, a heading or a column of its own. Only the renderers put line breaks in a cell."""
from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from ..policy.localtime import local_minute
from ..policy.printable import one_line, printable

# A column whose lines are all this narrow keeps its width and never wraps: an id (22 cells),
# a local time ("2026-11-30 23:59 +05:30"), a pair of words ("workspace preference").
KEEP_WHOLE = 24
# Ids and times inside a column that wraps: it is never made narrower than the widest of
# them, so a table at 80 columns breaks text between words, never an id or a time.
_TOKEN = re.compile(r"\b[a-z]{3}_[0-9a-z]{18}\b|\d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+"
                    r"|\d{4}-\d{2}-\d{2}T\S+")


def when(iso: str) -> str:
    """A stored time as people read it: local, to the minute, with the zone."""
    return local_minute(iso)


def piped() -> bool:
    return not sys.stdout.isatty()


def _console(color: bool):
    from rich.console import Console
    # No colour system at all, rather than rich's no_color, which still writes bold and italic.
    return Console(color_system="auto" if color else None, highlight=False, soft_wrap=False,
                   force_terminal=color or None)


def table(title: str, columns: list[str], rows: list[list[str]], *,
          no_color: bool = False, heading: bool = False) -> None:
    """A table: rich on a terminal, tab-separated lines (easy to cut/awk) otherwise, after
    the title on a line of its own when `heading`."""
    if piped():
        tsv(rows, title if heading else None)
    else:
        grid(title, columns, [[field(c) for c in row] for row in rows], no_color=no_color)


def tsv(rows: list[list[str]], heading: str | None = None) -> None:
    """One line per row, its fields parted by tabs: a tab or newline inside one is escaped."""
    if heading is not None:
        sys.stdout.write(field(heading) + "\n")
    for row in rows:
        sys.stdout.write("\t".join(field(c) for c in row) + "\n")


def grid(title: str, columns: list[str], rows: list[list[str]], *,
         no_color: bool = False) -> None:
    """A rich table; a cell may hold several lines. Narrow columns keep their width, wide ones
    wrap between words; a blank line parts the rows when any of them takes several lines.
    Colour unless `no_color`, which the command line sets from the flag and the environment
    (NO_COLOR, TERM=dumb)."""
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text
    console = _console(not no_color)
    cells = [[printable(str(c)) for c in row] for row in rows]
    # The title may hold a name from memory: plain text, never rich markup.
    layout = Table(title=Text(printable(title)), title_justify="left", box=box.SIMPLE_HEAD,
                   show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    widths = []
    for index, name in enumerate(columns):
        lines = [line for row in [columns, *cells] for line in row[index].split("\n")]
        widest = max(map(cell_len, lines))
        widths.append(widest)
        if widest <= KEEP_WHOLE:
            layout.add_column(name, width=widest, no_wrap=True)
        else:
            tokens = [cell_len(token) for line in lines for token in _TOKEN.findall(line)]
            layout.add_column(name, min_width=max(tokens, default=None), overflow="fold")
    layout.show_lines = any("\n" in c for row in cells for c in row) or \
        sum(widths) + 2 * (len(widths) - 1) > console.width
    for row in cells:
        layout.add_row(*map(Text, row))
    console.print(layout)


def field(value) -> str:
    """Stored text as one field of one line (`\\n`, `\\r`, `\\t` for its breaks and tabs)."""
    return one_line(str(value))


def hang(value, indent: str) -> str:
    """Stored text that may take several lines, each after the first indented by `indent`:
    a line of it cannot pass for a line of the view around it."""
    return f"\n{indent}".join(printable(str(value).replace("\r", "\\r")).split("\n"))


def lines(text_lines: Iterable[str]) -> None:
    """Lines for people; stored text in them cannot reach the terminal as control codes."""
    for line in text_lines:
        sys.stdout.write(printable(line) + "\n")


def note(message: str, *, quiet: bool = False) -> None:
    """A diagnostic for people: stderr, so stdout stays data. It may quote what was given (a
    warning, a refusal): a credential in it is masked."""
    if not quiet:
        from . import masked
        sys.stderr.write(printable(masked(message)) + "\n")


def short(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
