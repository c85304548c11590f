"""Size limits on what is written: one oversized paste must not slow every later context and
summary, nor fill the disk. The limits are settings ([limits] in config.toml)."""
from __future__ import annotations

from ..errors import Rejected


def check_size(what: str, text: str, limit: int, setting: str, *, unit: str = "characters",
               size: int | None = None, instead: str = "shorten it") -> None:
    """Rejected (exit 4) naming the size, the limit and the setting that raises it."""
    size = len(text) if size is None else size
    if size > limit:
        section, key = setting.split(".", 1)
        raise Rejected(f"{what} is {size:,} {unit}, over the limit of {limit:,}",
                       f"{instead}, or raise '{key}' under [{section}] in config.toml;"
                       " nothing was written")


def line_bytes(line: str, limit: int) -> int:
    """The UTF-8 size of a line, counted only when it could be over the limit."""
    return len(line) if len(line) * 4 <= limit else len(line.encode("utf-8", "surrogatepass"))
