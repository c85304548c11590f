"""When a statement says its state held: validFrom and validTo, and the dates it names.

Pure; `today` is the caller's. Times are ISO dates as precise as said (2019, 2019-05,
2019-05-03, 2026-W10), "past" (before the statement, when not said), "now" (as of the
statement), or None when not said.
"""
from __future__ import annotations

import re
from datetime import date, timedelta

from . import entity_vocab as V
from .text import rx

TYPE_CHECKING = False  # `typing` itself is not loaded at run time
if TYPE_CHECKING:
    from typing import TypeAlias

    # (valid_from, valid_to): a time as above, "past", "now" or None
    When: TypeAlias = tuple[str | None, str | None]


def when_said(clause: str, today: date, ended: bool) -> When | None:
    """(valid_from, valid_to) a clause gives its state; None for a time to come it leaves
    unnamed (小王要搬去北京)."""
    past = bool(rx(V.PAST_TENSE).search(clause))
    said = moment(clause, today, past=past)
    start: str | None = None
    end: str | None = None
    span = rx(V.SPAN).search(clause)
    if span:  # 从2015年到2020年, from 2015 to 2018: both ends must be times
        g = {k[0]: v for k, v in span.groupdict().items() if v}
        if moment(g["a"], today, True) and moment(g["b"], today, True):
            start, end = moment(g["a"], today, True), moment(g["b"], today, True)
    since, until = rx(V.SINCE).search(clause), rx(V.UNTIL).search(clause)
    if since and not start:
        start = moment(_group(since), today, past=True) or (
            "now" if rx(r"现在|\bnow\b").search(_group(since)) else None)
    if until and not end:
        end = moment(_group(until), today, past=past)
    if rx(V.FUTURE).search(clause):
        return (start or said, end) if start or said else None
    stopped = rx(V.STOPPED).search(clause)
    if ended or stopped:
        return start, end or (said if stopped else None) or ("now" if ended else "past")
    if start or end:
        return start, end
    if rx(V.STARTED).search(clause):
        return said or ("past" if past else "now"), None
    if rx(V.PAST).search(clause) and not rx(V.NOW).search(clause) or rx(
            r"\b(?:lived|worked|was|were)\b").search(clause):
        return None, "past"
    return ("now" if rx(V.NOW).search(clause) else None), None


def _group(m: re.Match[str]) -> str:
    return next(v for v in m.groups() if v)


def moment(text: str, today: date, past: bool = False, birthday: bool = False) -> str | None:
    """The first date `text` names, ISO and as precise as said; a birthday is a month-day
    (--03-05) unless the year is said. A month without a year is this year's, or last
    year's when `past` and it is still to come."""
    for pattern in V.DATES:
        m = rx(pattern).search(text)
        if m:
            return _resolved({k: v for k, v in m.groupdict().items() if v}, today, past,
                             birthday)
    return None


def _resolved(g: dict[str, str], today: date, past: bool, birthday: bool) -> str | None:
    if "iso" in g:
        return g["iso"]
    if "wd" in g or "rd" in g:
        if "rd" in g:
            named = today + timedelta(days=_OFFSETS[g["rd"].lower()])
        else:
            weekday = _weekday(g["wd"])
            week = _OFFSETS.get((g.get("wk") or "").lower(), 0)
            named = today + timedelta(days=weekday - today.weekday() + 7 * week)
        return f"--{named:%m-%d}" if birthday else named.isoformat()
    if "rw" in g:
        iso_year, iso_week, _ = (today + timedelta(weeks=_OFFSETS[g["rw"].lower()])).isocalendar()
        return None if birthday else f"{iso_year}-W{iso_week:02d}"
    year: int | None = None
    if "y" in g:
        year = int(g["y"])
    elif "ry" in g:
        year = today.year + _OFFSETS[g["ry"].lower()]
    month = _number(g["m"]) if "m" in g else (_month(g["mon"]) if "mon" in g else None)
    if "rm" in g:
        shifted = today.month - 1 + _OFFSETS[g["rm"].lower()]
        year, month = today.year + shifted // 12, shifted % 12 + 1
    day = _number(g["d"]) if "d" in g else None
    if not _exists(year, month, day):
        return None  # 2月30号, 13月: no such day
    if birthday:
        if month and day:
            return f"{year}-{month:02d}-{day:02d}" if "y" in g else f"--{month:02d}-{day:02d}"
        return None
    if year is None:
        year = today.year - 1 if past and month and month > today.month else today.year
    if not _exists(year, month, day):
        return None
    parts = [f"{year:04d}"] + [f"{n:02d}" for n in (month, day) if n]
    return "-".join(parts if month else parts[:1])


_OFFSETS = {"上": -1, "last": -1, "这": 0, "本": 0, "this": 0, "on": 0, "下": 1, "next": 1,
            "上个月": -1, "上月": -1, "这个月": 0, "这月": 0, "本月": 0, "下个月": 1, "下月": 1,
            "去年": -1, "今年": 0, "明年": 1, "前年": -2, "前天": -2, "昨天": -1, "今天": 0,
            "明天": 1, "后天": 2, "yesterday": -1, "today": 0, "tomorrow": 1,
            # two back or ahead: the longer words are tried first, so 上上周 is not 上周
            "上上": -2, "下下": 2, "上上个月": -2, "上上月": -2, "下下个月": 2, "下下月": 2,
            "大前年": -3, "后年": 2, "大前天": -3, "大后天": 3}


def _exists(year: int | None, month: int | None, day: int | None) -> bool:
    if month is None:
        return day is None
    try:  # a leap year when none is said, so a birthday on 2月29号 is one
        date(year or 2000, month, day or 1)
    except ValueError:
        return False
    return True


def _number(text: str) -> int:
    """12 or 十二; 0 for what is no number (二二)."""
    if text.isdigit():
        return int(text)
    digits = "一二三四五六七八九"
    tens, ten, ones = text.partition("十")
    if not ten:
        return digits.index(text) + 1 if len(text) == 1 else 0
    if len(tens) > 1 or len(ones) > 1:
        return 0
    return (digits.index(tens) + 1 if tens else 1) * 10 + (digits.index(ones) + 1 if ones else 0)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(V.MONTHS, 1) if m.startswith(name.lower().rstrip(".")))


def _weekday(name: str) -> int:
    name = name.lower()
    return 6 if name in "日天" else (V.WEEKDAYS_ZH.index(name) if len(name) == 1
                                     else V.WEEKDAYS_EN.index(name))
