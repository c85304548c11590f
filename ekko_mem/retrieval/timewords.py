"""Time words in a question, read as a window of local days: yesterday, last week, in May
2023, May 4th, 5月4号, 上周, 去年, three days ago, 前几天.

A date without a year is the latest one not after today; a month alone is the latest such
month. Windows are [start, end) in UTC ISO text, the form createdAt is stored in, and each
comes with the span of the question it was read from, so the caller can drop those words
from the lexical terms (the date of a message is its createdAt, not its text), and with
whether it points at a past moment precisely: "on May 4th" or "yesterday" does, while "today",
"this month" or a bare "Monday" ("Monday blues") only hint at one.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
_WEEKDAYS = {name: number for number, names in enumerate((
    ("monday", "mon", "一"), ("tuesday", "tue", "二"), ("wednesday", "wed", "三"),
    ("thursday", "thu", "四"), ("friday", "fri", "五"), ("saturday", "sat", "六"),
    ("sunday", "sun", "日", "天")), start=0) for name in names}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3,
            "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_FEW = 7  # "a few days ago", 前几天: up to a week back

_table: list | None = None       # (triggers, source, reader), built on first use
_compiled: dict[int, re.Pattern] = {}  # a pattern is compiled only when its trigger shows up


def _rules() -> list:
    """(trigger substrings, pattern source, reader). A pattern is tried, and compiled (which
    would add up before every model call), only when the lower-cased question holds one of
    its triggers."""
    global _table
    if _table is None:
        month = "|".join(sorted(_MONTHS, key=len, reverse=True))
        wday = "|".join(w for w in sorted(_WEEKDAYS, key=len, reverse=True) if w.isascii())
        num = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|several)"
        cn_num = r"(\d{1,3}|[一两二三四五六七八九十]|几)"
        n = r"(\d{1,2}|[一二三四五六七八九十]{1,3})"  # 5 or 五, 27 or 二十七
        digits = tuple("0123456789")
        months = tuple(_MONTHS)
        weekdays = tuple(w for w in _WEEKDAYS if w.isascii())
        _table = [
            (digits, r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", _ymd),
            (("年",), rf"(\d{{4}})\s*年\s*{n}\s*月\s*{n}\s*[日号]?", _ymd),
            (("年",), rf"(\d{{4}})\s*年\s*{n}\s*月份?", _ym),
            (("月",), rf"{n}\s*月\s*{n}\s*[日号]", _md),
            (("月",), r"(\d{1,2})\s*月\s*(\d{1,2})", _md),
            (("月",), rf"{n}\s*月(?!\s*\d)", _m),
            (("年",), r"(\d{4})\s*年", _y),
            (months, rf"\b({month})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b",
             _month_day),
            (months, rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({month})\b"
             rf"(?:,?\s+(\d{{4}}))?", _day_month),
            (months, rf"\b(?:in|during|of)\s+({month})(?:\s+(\d{{4}}))?\b", _month_year),
            (("in ", "during "), r"\b(?:in|during)\s+(\d{4})\b", _y),
            (("ago",), rf"\b{num}\s+(day|week|month|year)s?\s+ago\b", _ago),
            (("前",), rf"{cn_num}\s*(?:个)?\s*(天|日|周|星期|礼拜|月|年)\s*(?:以前|之前|前)",
             _ago_cn),
            (("天", "other day", "recent", "lately", "最近"),
             r"前几天|几天前|这几天|前些天|the other day|a few days ago|recently|lately|最近",
             _few_days),
            (weekdays, rf"\b(last|this|on|past)\s+({wday})\b|\b({wday})\b", _weekday),
            (("周", "星期", "礼拜"), r"(上|这|本)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])",
             _weekday_cn),
            (("周", "星期", "礼拜"), r"(?:周|星期|礼拜)([一二三四五六日天])", _weekday_cn_bare),
            (("yesterday", "today", "tonight", "this ", "last night", "前天", "昨", "今"),
             r"\b(yesterday|today|tonight|this morning|this afternoon|this evening|last night|"
             r"day before yesterday)\b|大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日", _day_word),
            (("weekend", "周末"), r"\b(last|this|past|previous)\s+weekend\b|(上|这|本)(?:个)?周末",
             _weekend),
            (("week", "month", "year", "周", "星期", "礼拜", "月", "年"),
             r"\b(last|this|past|previous)\s+(week|month|year)\b|上上周|上周|上个?星期|上个?礼拜|"
             r"这周|本周|这个?星期|上个?月|这个?月|本月|去年|今年|前年", _period_word),
        ]
    return _table


def _pattern(index: int, source: str) -> re.Pattern:
    if index not in _compiled:
        _compiled[index] = re.compile(source, re.IGNORECASE)
    return _compiled[index]


def find_window(text: str, now: datetime
                ) -> tuple[tuple[str, str], list[tuple[int, int]], bool] | None:
    """The first time expression in `text` as ((start, end), spans of the text it used,
    whether it names a past moment precisely)."""
    found = read_window(text, now)
    return None if found is None else found[:3]


def read_window(text: str, now: datetime
                ) -> tuple[tuple[str, str], list[tuple[int, int]], bool, bool] | None:
    """find_window's answer, and whether the expression leaves the year out ("May 4th",
    5月4号, "in April"): then an earlier year's such day may be the one meant."""
    today = now.astimezone().date()
    lowered = text.lower()
    for index, (triggers, source, reader) in enumerate(_rules()):
        if not any(trigger in lowered for trigger in triggers):
            continue
        for match in _pattern(index, source).finditer(text):
            days = reader(match, today)
            if days is not None:
                start, end, *notes = days
                return ((_iso(start), _iso(end)), [match.span()], "hint" not in notes,
                        YEARLESS in notes)
    return None


# A reader's answer is (start, end), then "hint" when it only hints at a moment, or
# YEARLESS when the words named a day or month but no year.
YEARLESS = "yearless"


def years_back(window: tuple[str, str], years: int) -> tuple[str, str]:
    """The same window `years` earlier, in createdAt's form. Compared as text, a 29 February
    moved to a common year still bounds the right range."""
    start, end = window
    return (f"{int(start[:4]) - years:04d}{start[4:]}", f"{int(end[:4]) - years:04d}{end[4:]}")


def _yearless(days):
    return None if days is None else (*days, YEARLESS)


def _iso(day: date) -> str:
    moment = datetime.combine(day, time(0, 0)).astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _one_day(day: date | None):
    return None if day is None else (day, day + timedelta(days=1))


def _latest(month: int, day: int, today: date) -> date | None:
    found = _safe(today.year, month, day)
    if found is not None and found > today:
        found = _safe(today.year - 1, month, day)
    return found


def _month_span(year: int, month: int):
    if not 1 <= month <= 12:
        return None
    end = date(year + (month == 12), month % 12 + 1, 1)
    return date(year, month, 1), end


_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _int(text: str) -> int:
    """27 or 二十七 (up to 九十九)."""
    if text.isdigit():
        return int(text)
    tens, _, ones = text.rpartition("十")
    if "十" not in text:
        return _DIGITS.get(text, 0)
    return (_DIGITS.get(tens, 0) if tens else 1) * 10 + _DIGITS.get(ones, 0)


def _ymd(m, today):
    return _one_day(_safe(int(m.group(1)), _int(m.group(2)), _int(m.group(3))))


def _ym(m, today):
    return _month_span(int(m.group(1)), _int(m.group(2)))


def _md(m, today):
    return _yearless(_one_day(_latest(_int(m.group(1)), _int(m.group(2)), today)))


def _m(m, today):
    return _yearless(_month_of(_int(m.group(1)), None, today))


def _y(m, today):
    year = int(m.group(1))
    return (date(year, 1, 1), date(year + 1, 1, 1)) if 1900 < year < 3000 else None


def _month_of(month: int, year: int | None, today: date):
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month)


def _month_day(m, today):
    month, day = _MONTHS[m.group(1).lower()], int(m.group(2))
    if m.group(3):
        return _one_day(_safe(int(m.group(3)), month, day))
    return _yearless(_one_day(_latest(month, day, today)))


def _day_month(m, today):
    day, month = int(m.group(1)), _MONTHS[m.group(2).lower()]
    if m.group(3):
        return _one_day(_safe(int(m.group(3)), month, day))
    return _yearless(_one_day(_latest(month, day, today)))


def _month_year(m, today):
    if m.group(1).lower() == "may" and not m.group(2):
        return None  # "in may" is too often the verb
    span = _month_of(_MONTHS[m.group(1).lower()], int(m.group(2)) if m.group(2) else None,
                     today)
    return span if m.group(2) else _yearless(span)


def _count(word: str) -> int:
    word = word.lower()
    if word in ("几", "a few", "few", "several"):
        return _FEW // 2
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _back(unit: str, amount: int, today: date):
    """A window around `amount` units before today, as wide as the unit is vague."""
    span = {"day": 1, "天": 1, "日": 1, "week": 7, "周": 7, "星期": 7, "礼拜": 7,
            "month": 30, "月": 30, "year": 365, "年": 365}[unit.lower()]
    centre = today - timedelta(days=span * amount)
    slack = 1 if span == 1 else span // 2
    return centre - timedelta(days=slack), centre + timedelta(days=slack + 1)


def _ago(m, today):
    return _back(m.group(2), _count(m.group(1)), today)


def _ago_cn(m, today):
    return _back(m.group(2), _count(m.group(1)), today)


def _few_days(m, today):
    return today - timedelta(days=_FEW), today + timedelta(days=1), "hint"


def _weekday(m, today):
    which = (m.group(1) or "").lower()
    name = (m.group(2) or m.group(3)).lower()
    if m.group(3) and len(name) == 3:
        return None  # a bare "mon", "wed" or "sun" is too often another word
    back = (today.weekday() - _WEEKDAYS[name]) % 7
    if which == "last" and back == 0:
        back = 7
    day = today - timedelta(days=back)
    return (day, day + timedelta(days=1)) if which else (day, day + timedelta(days=1), "hint")


def _weekend(m, today):
    """The latest Saturday and Sunday that have begun; 'last weekend', 上周末: the one before,
    when today is itself in a weekend."""
    saturday = today - timedelta(days=(today.weekday() - 5) % 7)
    which = (m.group(1) or m.group(2) or "").lower()
    if which in ("last", "previous", "上") and today.weekday() >= 5:
        saturday -= timedelta(days=7)
    return saturday, saturday + timedelta(days=2)


def _weekday_cn(m, today):
    monday = today - timedelta(days=today.weekday())
    if m.group(1) == "上":
        monday -= timedelta(days=7)
    return _one_day(monday + timedelta(days=_WEEKDAYS[m.group(2)]))


def _weekday_cn_bare(m, today):
    back = (today.weekday() - _WEEKDAYS[m.group(1)]) % 7
    return _one_day(today - timedelta(days=back))


def _day_word(m, today):
    word = m.group(0).lower()
    back = {"day before yesterday": 2, "大前天": 3, "前天": 2, "yesterday": 1, "last night": 1,
            "昨天": 1, "昨晚": 1, "昨日": 1}.get(word, 0)
    if back == 0:  # today is the present, not a memory to narrow to
        return today, today + timedelta(days=1), "hint"
    return _one_day(today - timedelta(days=back))


def _period_word(m, today):
    word = m.group(0).lower()
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    if word in ("上上周",):
        return monday - timedelta(days=14), monday - timedelta(days=7)
    if word.endswith("week") or word[:1] in "上这本" and word[-1] in "周期拜":
        if word.startswith(("last", "past", "previous", "上")):
            return monday - timedelta(days=7), monday
        return monday, today + timedelta(days=1), "hint"
    if word.endswith("month") or word.endswith("月"):
        if word.startswith(("last", "past", "previous", "上")):
            prev = first - timedelta(days=1)
            return prev.replace(day=1), first
        return first, today + timedelta(days=1), "hint"
    years = {"去年": 1, "前年": 2, "今年": 0}
    if word in years:
        year = today.year - years[word]
        return date(year, 1, 1), date(year + 1, 1, 1)
    if word.startswith(("last", "past", "previous")):
        return date(today.year - 1, 1, 1), date(today.year, 1, 1)
    return date(today.year, 1, 1), today + timedelta(days=1), "hint"
