"""How the pages and emails say dates, times, zones, spans and money (issue 27, WORDS.md):
one format for each, the same on every page, in every email and for every reader.

    day(date)                    "Tue 18 Apr 2028"
    day_of(iso_text)             the same, from a day or an instant a record kept as text
    clock_time(instant, zone)    "09:00 EDT"
    moment(instant, zone)        "Tue 18 Apr 2028, 09:00 EDT"
    relative(instant, now)       "in 8 days", "3 hours ago", "now"
    span(gap)                    "3 years", "5 months", "9 days", "4 hours", "1 minute"
    zone_name(zone)              "New York time", "London time", "UTC"
    money(amount, currency)      "$2,400.00": Babel's currency format in the settings' locale
    money(…, short=True)         "$324", "$15.50": whole amounts without the cents, for a
                                 figure people read in a sentence ("about $324 a month late")
    digits(currency)             the currency's minor digits (2 for USD, 0 for JPY)
    person(user)                 "Grace Okafor": a full name, else the sign-in name
    kind(name, count)            "reminder", "tasks": a kind of scheduled work

Money is integer minor units on the way in; Babel is handed an exact Decimal, never a float.
The locale is LANGUAGE_CODE's (en-us: "$2,400.00"; en-gb: "US$2,400.00").
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cache, lru_cache
from zoneinfo import ZoneInfo, available_timezones

from babel import Locale
from babel.dates import get_timezone_location
from babel.numbers import format_currency, get_currency_precision
from django.conf import settings

from calendars.moments import zone_of


@lru_cache(maxsize=8)
def _locale(code: str) -> Locale:
    return Locale.parse(code, sep="-")


def locale() -> Locale:
    return _locale(settings.LANGUAGE_CODE)


def day(value: date) -> str:
    return f"{value:%a} {value.day} {value:%b %Y}"


def day_of(value: object) -> str:
    """A day or an instant kept as ISO text (as records keep them), as `day` says it; "" for
    nothing, and the text as it is when it is no date."""
    if not value:
        return ""
    try:
        return day(date.fromisoformat(str(value)[:10]))
    except ValueError:
        return str(value)


def _zone(zone: ZoneInfo | str) -> ZoneInfo:
    return zone if isinstance(zone, ZoneInfo) else zone_of(zone)


def clock_time(instant: datetime, zone: ZoneInfo | str) -> str:
    return f"{instant.astimezone(_zone(zone)):%H:%M %Z}"


def moment(instant: datetime, zone: ZoneInfo | str) -> str:
    seen = instant.astimezone(_zone(zone))
    return f"{day(seen.date())}, {seen:%H:%M %Z}"


def span(gap: timedelta) -> str:
    """A span as people say it, rounded down: "3 years", "5 months", "9 days", "4 hours"."""
    days, seconds = gap.days, gap.seconds
    for size, unit, at_least in ((365, "year", 730), (30, "month", 60), (1, "day", 2)):
        if days >= at_least:
            return f"{days // size} {unit}s"
    hours = days * 24 + seconds // 3600
    if hours >= 2:
        return f"{hours} hours"
    minutes = max(1, (days * 86400 + seconds) // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def relative(instant: datetime, now: datetime) -> str:
    gap = instant - now
    if abs(gap) < timedelta(minutes=1):
        return "now"
    return f"in {span(gap)}" if gap > timedelta(0) else f"{span(-gap)} ago"


def zone_name(zone: ZoneInfo | str) -> str:
    """The zone as people name it: its city's time ("New York time"), or UTC."""
    key = _zone(zone).key
    if key in {"UTC", "Etc/UTC", "Z"}:
        return "UTC"
    return f"{get_timezone_location(key, locale=locale(), return_city=True)} time"


def digits(currency: str) -> int:
    return get_currency_precision(currency)


def money(amount: int, currency: str, *, short: bool = False) -> str:
    """Integer minor units of `currency` as people read them, in the settings' locale; with
    `short`, a whole amount drops its zero cents. Always exact: nothing is rounded."""
    exact = Decimal(amount).scaleb(-digits(currency))
    if short and exact == exact.to_integral_value():
        return format_currency(exact, currency, locale=locale(), format="¤#,##0",
                               currency_digits=False)
    return format_currency(exact, currency, locale=locale())


def moneys(totals: dict[str, int]) -> str:
    """Amounts in several currencies side by side, in the order of their codes, each on its
    own ("€300 · $1,200"): never added together, never ranked by each other's amounts."""
    return " · ".join(money(amount, currency, short=True)
                      for currency, amount in sorted(totals.items()))


# What each kind of scheduled work is to an owner (WORDS.md: a timer is "scheduled" work, a
# rung a reminder, a hard date a fixed date).
KINDS = {"hard date": "fixed date", "date": "date", "rung": "reminder", "delay": "task",
         "cycle": "renewal", "schedule": "start of work", "deadline": "deadline check",
         "ask": "link expiry", "task": "task check", "window": "window close",
         "money": "payment check", "signal": "check", "move": "row move"}


def kind(name: str, count: int = 1) -> str:
    """A kind of scheduled work as people say it, singular or plural: "reminder", "3 tasks"
    (`count` only picks the form)."""
    said = KINDS.get(name, name.replace("_", " "))
    return said if count == 1 else f"{said}s"


def person(user) -> str:
    """A person as the pages name them: their full name, else their sign-in name."""
    return user.get_full_name() or user.get_username()


def service(name: str) -> str:
    """A service as people read it: its manifest key with words for dashes ("annual-return"
    reads "annual return"; a manifest names services by key, not by title)."""
    return " ".join(name.replace("_", "-").split("-"))


def plan(name: str) -> str:
    """A subscription's plan by its service: "the tax plan", not "the tax-plan plan"."""
    said = service(name)
    return said if said.split()[-1:] == ["plan"] else f"{said} plan"


ZONE_KEY = "shown_zone"  # the zone a person chose to read times in, in their session
ZONE_LONGEST = 64


def zone_named(name: object) -> ZoneInfo | None:
    """A zone people may read times in: an IANA name ("Europe/Paris", "UTC"); else None."""
    if not isinstance(name, str) or not name or len(name) > ZONE_LONGEST:
        return None
    if name not in _known():
        return None
    return ZoneInfo(name)


def reading_zone(request) -> str | None:
    """The zone the person chose to read every page's times in (`pages.zone_switch`), or None
    for each page's own (the brand's, a subject's)."""
    chosen = zone_named(request.session.get(ZONE_KEY, "")) if request is not None else None
    return chosen.key if chosen else None


@cache
def _known() -> frozenset[str]:
    return frozenset(available_timezones()) | {"UTC"}
