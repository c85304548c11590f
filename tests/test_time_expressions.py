"""Expiry and due times: ISO-8601, relative offsets, and local day and week ends."""
from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ekko_mem.errors import ExitCode, UsageError
from ekko_mem.policy.timeexpr import end_of_local_day, parse_when

UTC = timezone.utc
NOW = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)  # a Sunday
# POSIX TZ strings need no zoneinfo files on the test machine.
SHANGHAI = "CST-8"
NEW_YORK = "EST5EDT,M3.2.0,M11.1.0"


@pytest.fixture
def local_tz(monkeypatch):
    """Set the process time zone; restored (and re-read by libc) after the test."""
    saved = os.environ.get("TZ")

    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    use("UTC")
    yield use
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-03-05T10:00:00Z", at("2026-03-05T10:00:00")),
    ("2026-03-05T10:00:00+08:00", at("2026-03-05T02:00:00")),
    ("2026-03-05T10:00:00-05:00", at("2026-03-05T15:00:00")),
    ("2026-03-05T10:00:00", at("2026-03-05T10:00:00")),  # naive is UTC
    ("2026-03-05T10:00:00.250Z", at("2026-03-05T10:00:00.250")),
    ("2026-03-05", at("2026-03-05T00:00:00")),
    ("  2026-03-05T10:00:00Z  ", at("2026-03-05T10:00:00")),
])
def test_iso_8601(local_tz, text, expected):
    local_tz(SHANGHAI)  # an ISO time names one instant whatever the local zone
    result = parse_when(text, NOW)
    assert result == expected
    assert result.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("text", "delta"), [
    ("+30m", timedelta(minutes=30)),
    ("30m", timedelta(minutes=30)),
    ("+2h", timedelta(hours=2)),
    ("2h", timedelta(hours=2)),
    ("+3d", timedelta(days=3)),
    ("+1w", timedelta(weeks=1)),
    ("+0m", timedelta(0)),
    ("+90 min", timedelta(minutes=90)),
    ("in 2 hours", timedelta(hours=2)),
    ("In 1 Week", timedelta(weeks=1)),
    ("30分钟后", timedelta(minutes=30)),
    ("2小时后", timedelta(hours=2)),
    ("3天后", timedelta(days=3)),
    ("1周以后", timedelta(weeks=1)),
])
def test_relative(local_tz, text, delta):
    result = parse_when(text, NOW)
    assert result == NOW + delta
    assert result.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("text", "expected"), [
    ("today", "2026-03-01T23:59:59.999"),
    ("end of day", "2026-03-01T23:59:59.999"),
    ("今天", "2026-03-01T23:59:59.999"),
    ("tomorrow", "2026-03-02T23:59:59.999"),
    ("Tomorrow", "2026-03-02T23:59:59.999"),
    ("明天", "2026-03-02T23:59:59.999"),
    ("this week", "2026-03-01T23:59:59.999"),  # NOW is a Sunday: the week ends today
    ("本周", "2026-03-01T23:59:59.999"),
])
def test_day_words_in_utc(local_tz, text, expected):
    assert parse_when(text, NOW) == at(expected)


def test_this_week_ends_on_sunday(local_tz):
    monday = at("2026-03-02T09:00:00")
    assert parse_when("this week", monday) == at("2026-03-08T23:59:59.999")
    saturday = at("2026-03-07T23:00:00")
    assert parse_when("本周", saturday) == at("2026-03-08T23:59:59.999")


def test_day_words_follow_the_local_zone(local_tz):
    local_tz(SHANGHAI)
    # 20:00 UTC on Sunday is 04:00 on Monday in Shanghai.
    assert parse_when("today", NOW) == at("2026-03-02T15:59:59.999")
    assert parse_when("明天", NOW) == at("2026-03-03T15:59:59.999")
    assert parse_when("this week", NOW) == at("2026-03-08T15:59:59.999")


def test_end_of_day_uses_that_days_offset_across_dst(local_tz):
    local_tz(NEW_YORK)
    # 01:00 EST on the morning clocks go forward; the day ends at 23:59:59.999 EDT (UTC-4).
    early = at("2026-03-08T06:00:00")
    assert end_of_local_day(early) == at("2026-03-09T03:59:59.999")
    assert parse_when("today", early) == at("2026-03-09T03:59:59.999")


def test_end_of_local_day(local_tz):
    assert end_of_local_day(NOW) == at("2026-03-01T23:59:59.999")
    assert end_of_local_day(at("2026-03-01T00:00:00")) == at("2026-03-01T23:59:59.999")
    local_tz(SHANGHAI)
    assert end_of_local_day(at("2026-03-01T15:59:59")) == at("2026-03-01T15:59:59.999")
    assert end_of_local_day(at("2026-03-01T16:00:00")) == at("2026-03-02T15:59:59.999")


def test_naive_now_is_utc(local_tz):
    naive = datetime(2026, 3, 1, 20, 0)
    assert parse_when("+2h", naive) == at("2026-03-01T22:00:00")
    assert end_of_local_day(naive) == at("2026-03-01T23:59:59.999")


@pytest.mark.parametrize("text", [
    "", "   ", "soon", "next tuesday", "-3d", "+3y", "3日", "+d", "2026-13-01",
    "2026-02-30", "+99999999d", "+99999999999999d", "yesterday",
])
def test_invalid_text_is_a_usage_error_listing_the_forms(local_tz, text):
    with pytest.raises(UsageError) as caught:
        parse_when(text, NOW)
    error = caught.value
    assert error.code == ExitCode.USAGE
    assert repr(text.strip()) in error.message
    for form in ("ISO-8601", "+30m", "+2h", "+3d", "+1w", "today", "tomorrow", "this week"):
        assert form in error.hint


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(now=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1),
                        timezones=st.just(UTC)),
       zone=st.sampled_from(["UTC", SHANGHAI, NEW_YORK, "NPT-5:45", "HST10"]))
def test_day_and_week_ends_are_ahead_of_now_and_at_local_midnight(local_tz, now, zone):
    local_tz(zone)
    today = parse_when("today", now)
    tomorrow = parse_when("tomorrow", now)
    week = parse_when("this week", now)
    assert now <= today < now + timedelta(days=1)
    assert today < tomorrow <= week + timedelta(days=1)
    assert today <= week < now + timedelta(days=7)
    for moment in (today, tomorrow, week):
        local = moment.astimezone()
        assert (local.hour, local.minute, local.second, local.microsecond) == (23, 59, 59, 999000)
    assert week.astimezone().weekday() == 6


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(amount=st.integers(0, 10_000), unit=st.sampled_from(["m", "h", "d", "w"]),
       plus=st.booleans())
def test_relative_offsets_add_exactly(local_tz, amount, unit, plus):
    delta = timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: amount})
    assert parse_when(f"{'+' if plus else ''}{amount}{unit}", NOW) == NOW + delta
