"""Read the times people type for expiry and due dates: ISO-8601, +2h, tomorrow, 本周.

Day and week ends are local to the machine (the process TZ), because "today" means the user's
day, not UTC's; every result is returned as an aware UTC datetime.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from ..env import parse_time
from ..errors import UsageError

ACCEPTED = ("an ISO-8601 time like 2026-03-01T12:00:00Z or a date like 2026-03-01, "
            "+30m, +2h, +3d, +1w (or 'in 2 hours', 3天后), "
            "today/end of day/今天, tomorrow/明天, this week/本周")

# "m" is minutes, as in +30m. Bare 日 and 分 are left out: 3日 is the 3rd of the month.
_UNITS = {
    "m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes",
    "minutes": "minutes", "分钟": "minutes",
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "小时": "hours", "个小时": "hours", "钟头": "hours", "个钟头": "hours",
    "d": "days", "day": "days", "days": "days", "天": "days",
    "w": "weeks", "wk": "weeks", "wks": "weeks", "week": "weeks", "weeks": "weeks",
    "周": "weeks", "星期": "weeks", "个星期": "weeks",
}
# Days after today whose end is meant; "this week" is worked out from the weekday.
_DAY_WORDS = {
    "today": 0, "end of day": 0, "eod": 0, "今天": 0, "今日": 0,
    "tomorrow": 1, "明天": 1, "明日": 1,
}
_WEEK_WORDS = {"this week", "end of week", "eow", "本周", "这周", "本星期", "这个星期"}
_relative: re.Pattern[str] | None = None  # compiled on first use: keeps import cheap


def _relative_pattern() -> re.Pattern[str]:
    global _relative
    if _relative is None:
        units = "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True))
        _relative = re.compile(rf"(?:\+|in\s+)?(\d{{1,9}})\s*({units})(?:\s*后|\s*以后|\s*之后)?")
    return _relative


def parse_when(text: str, now: datetime) -> datetime:
    """The moment text names, as an aware UTC datetime; now anchors relative forms.

    ISO-8601 times without a zone and bare dates are UTC (a date is its midnight). Relative
    forms add to now. today/tomorrow/this week mean the last millisecond of that local day, or
    of the local week's Sunday. Anything else raises UsageError listing the accepted forms.
    """
    now = _as_utc(now)
    phrase = " ".join(text.strip().lower().split())
    try:
        if phrase in _DAY_WORDS:
            return _end_of_local_day(now, _DAY_WORDS[phrase])
        if phrase in _WEEK_WORDS:
            return _end_of_local_day(now, 6 - now.astimezone().weekday())
    except OverflowError:  # tomorrow, when now is the last day a calendar holds
        raise UsageError(f"{text.strip()!r} falls after the last date that can be stored",
                         "give an earlier time, or check EKKO_NOW") from None
    match = _relative_pattern().fullmatch(phrase)
    if match:
        amount, unit = int(match.group(1)), _UNITS[match.group(2)]
        try:
            return now + timedelta(**{unit: amount})
        except OverflowError:
            raise UsageError(f"{text.strip()!r} is too far in the future",
                             f"use {ACCEPTED}") from None
    try:
        return parse_time(text)
    except (ValueError, OverflowError):
        raise UsageError(f"cannot read {text.strip()!r} as a time", f"use {ACCEPTED}") from None


def as_of(text: str, now: datetime) -> datetime:
    """The moment "as of TEXT" means: a day named on its own is all of that day, so a memory
    made at noon on 2026-03-01 holds as of 2026-03-01. Raises UsageError like parse_when."""
    if re.fullmatch(r"\d{4}(?:-\d{2}|-W\d{2})?", text.strip()):
        end = _period_end(text.strip())  # 2025, 2025-05, 2026-W02: all of it
        if end is not None:
            return end
    at = parse_when(text, now)
    if len(text.strip()) == 10 and at.hour == at.minute == at.second == 0:
        at = at.replace(hour=23, minute=59, second=59, microsecond=999000)
    return at


SINCE_ACCEPTED = ("an ISO date or time like 2026-05-01, -2d or -3h (that long ago), or words"
                  " like yesterday, 昨天, today, 今天, 'last week', 上周, '3 days ago'")


def parse_since(text: str, now: datetime) -> datetime:
    """Where a listing or search "since" text starts: -2d and -3h count back from now, an
    ISO time or date is itself, and time words (yesterday, 昨天, last week, today) start at
    the local midnight of the first day they name. Anything else raises UsageError."""
    now = _as_utc(now)
    phrase = " ".join(text.strip().lower().split())
    if phrase.startswith("-"):
        match = _relative_pattern().fullmatch(phrase[1:].strip())
        if match:
            amount, unit = int(match.group(1)), _UNITS[match.group(2)]
            try:
                return now - timedelta(**{unit: amount})
            except OverflowError:
                raise UsageError(f"{text.strip()!r} is too far back",
                                 f"give {SINCE_ACCEPTED}") from None
    try:
        return parse_time(text)
    except (ValueError, OverflowError):
        pass
    from ..retrieval.timewords import find_window
    found = find_window(phrase, now) if phrase else None
    if found is None:
        raise UsageError(f"cannot read {text.strip()!r} as a time to start from",
                         f"give {SINCE_ACCEPTED}")
    return parse_time(found[0][0])


def is_past(moment: datetime, now: datetime) -> bool:
    """An expiry at or before now has passed: queries treat expiresAt <= now as expired."""
    return _as_utc(moment) <= _as_utc(now)


def end_of_local_day(now: datetime) -> datetime:
    """23:59:59.999 local time on now's local day, as an aware UTC datetime."""
    return _end_of_local_day(_as_utc(now), 0)


def _end_of_local_day(now: datetime, days_ahead: int) -> datetime:
    day: date = now.astimezone().date() + timedelta(days=days_ahead)
    # A naive local time converted by astimezone() gets the UTC offset in force on that day,
    # so a day that starts in winter time and ends in summer time still ends at local 23:59.
    local_end = datetime.combine(day, time(23, 59, 59, 999000))
    return local_end.astimezone(timezone.utc)


def _as_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:  # the house rule: a time without a zone is UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


# Words without which a question names no time a memory could be read as of.
_TIME_HINTS = ("年", "月", "周", "星期", "礼拜", "昨天", "前天", "year", "month", "week",
               "yesterday", "day", *("january february march april may june july august "
                                     "september october november december").split())


# A question about the past says so: a past tense, or a time word that only looks back.
_PAST_EN = (r"\b(?:did|was|were|had|used to|back in|ago|last (?:year|month|week)|yesterday|"
            r"previously|earlier)\b")
_PAST_ZH = ("去年", "前年", "上个月", "上月", "上周", "上星期", "上礼拜", "昨天", "前天", "那时",
            "当时", "那年", "那个月", "以前", "曾经", "了")
# A question about now, whatever else it says ("Last year I moved; what does Anna do now?").
_NOW = r"\b(?:now|currently|these days|nowadays|at the moment|today)\b|现在|目前|如今|当前"
# A bound, not a period asked about: "since 2024", "before 2025" (a before-question is read
# by asks_before_change), 2024年以来, 从去年起, 到三月为止.
_BOUND = (r"\b(?:since|after|before|until|till|from)\b|以来|之后|以后|之前|以前的?\d|"
          r"从\S{0,10}?(?:开始|起)|到\S{0,10}?为止")
# Words that place a period in a year already over; without one, a month or day named on its
# own is this year's ("did we agree to ship in July?" in June asks about this July).
_YEAR_BACK = r"\b(?:last year|years? ago|back in)\b|去年|前年|那年"
_WEEKDAY = (r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|(?:周|星期|礼拜)[一二三四五六日天]")


def asked_as_of(question: str, now: datetime) -> str | None:
    """The end of the past period a question asks about ("去年五月我住在哪？", "where did I
    live in 2024?", "what did I prefer in May?"), in createdAt's form; None unless the
    question looks back (a past tense or a word like 去年/yesterday), and never for a bound
    (since 2024), a weekday, or a period not yet over."""
    lowered = question.lower()
    if not any(h in lowered for h in _TIME_HINTS) and not any(c.isdigit() for c in question):
        return None
    years = [int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", question)]
    if not (re.search(_PAST_EN, lowered) or any(w in question for w in _PAST_ZH)
            or any(y < now.year for y in years)):
        return None
    if re.search(_BOUND, lowered) or re.search(_WEEKDAY, lowered) or re.search(_NOW, lowered):
        return None
    from ..extract.entity_times import moment
    # "May I ask what Anna did?": a capital May that opens a question is the verb.
    text = re.sub(r"^\s*May\b", "may", question)
    said = moment(text, now.date(), past=True)
    end = _period_end(said) if said else None
    if end is None or end >= now:
        return None
    if end.year < now.year and not years and not re.search(_YEAR_BACK, lowered):
        return None  # this year's July, still to come, not last year's
    return end.strftime("%Y-%m-%dT%H:%M:%S.") + f"{end.microsecond // 1000:03d}Z"


def _period_end(period: str) -> datetime | None:
    """The last millisecond (UTC) of 2024, 2024-05, 2024-05-03 or 2024-W10."""
    from datetime import date, timezone
    try:
        if "-W" in period:
            year, week = period.split("-W")
            last = date.fromisocalendar(int(year), int(week), 7)
        else:
            parts = [int(p) for p in period.split("-")]
            if len(parts) == 1:
                last = date(parts[0], 12, 31)
            elif len(parts) == 2:
                if not 1 <= parts[1] <= 12:
                    return None
                last = date(parts[0], 12, 31) if parts[1] == 12 else (
                    date(parts[0], parts[1] + 1, 1) - timedelta(days=1))
            else:
                last = date(*parts)
    except ValueError:
        return None
    return datetime(last.year, last.month, last.day, 23, 59, 59, 999000, tzinfo=timezone.utc)


# "before the switch": a question about the version a change replaced, not about a date.
_BEFORE_CHANGE = (
    r"\bbefore (?:the |that |this |our |we |you |i )?(?:switch|switched|switching|change|changed|"
    r"changing|move|moved|moving|migration|migrated|migrating|replacement|replaced|upgrade|"
    r"upgraded)\b|(?:换|切换|迁移|改|搬家|搬|升级|替换)(?:了|成\S{0,12})?之前|(?:换|改)掉?以前")


def asks_before_change(question: str) -> bool:
    """Whether a question asks what held before a change ("before the switch", 换之前)."""
    lowered = question.lower()
    if "before" not in lowered and "前" not in lowered:
        return False
    return bool(re.search(_BEFORE_CHANGE, lowered))
