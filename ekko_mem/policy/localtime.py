"""Stored times as people read them: in the local zone, to the minute, with the zone named.

What is stored and every JSON output stay UTC ISO-8601; only text for people (tables,
`show`, `explain`, a context's "until" and day lines) is local. The zone is the process's, which
Python reads from TZ as it starts, as `date` does; "today" in policy/timeexpr.py is local to
the same zone, so a memory kept "until the end of today" reads as 23:59 where its person lives.
"""
from __future__ import annotations

from datetime import datetime

from ..env import parse_time


def _local(iso: str) -> datetime | None:
    try:
        return parse_time(iso).astimezone()
    except (ValueError, OverflowError, TypeError, AttributeError):
        return None


def local_minute(iso: str) -> str:
    """'2026-12-01 07:59 CST' for '2026-11-30T23:59:59.999Z'; text that is not a time is
    returned as it is."""
    moment = _local(iso)
    if moment is None:
        return iso
    return f"{moment:%Y-%m-%d %H:%M} {zone_name(moment)}"


def local_date(iso: str) -> str:
    """The local day of a stored time, '2026-12-01' (or the text as it is)."""
    moment = _local(iso)
    return iso if moment is None else f"{moment:%Y-%m-%d}"


def zone_name(moment: datetime) -> str:
    """The zone's abbreviation (CST, UTC, EDT), or its offset (+05:30) where the zone has
    only a number for a name."""
    name = moment.tzname() or ""
    if name[:1].isalpha():
        return name
    delta = moment.utcoffset()
    offset = int(delta.total_seconds()) // 60 if delta is not None else 0
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset), 60)
    return f"{sign}{hours:02d}:{minutes:02d}"
