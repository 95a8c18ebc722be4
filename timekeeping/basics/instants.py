"""Reading instants and dates people and programs write (API bodies, command arguments,
manifests, table rows).

Every date the product accepts lies in one stated span, 1900-01-01 to 2200-12-31: far enough
for a credit that lives forty years and a founding date long past, and far from the edges
of Python's and the databases' calendars, where a shift of a few days overflows.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

EARLIEST = date(1900, 1, 1)
LATEST = date(2200, 12, 31)
SPAN = f"{EARLIEST.isoformat()} to {LATEST.isoformat()}"


class OutOfSpan(ValueError):
    """A date or instant outside the span the product keeps; the message names the field."""


def in_span(value: date | datetime) -> bool:
    day = value.date() if isinstance(value, datetime) else value
    return EARLIEST <= day <= LATEST


def check_span(value: date | datetime, *, field: str) -> date | datetime:
    """`value` unchanged, or OutOfSpan naming `field` and the rule."""
    if not in_span(value):
        raise OutOfSpan(f"{field}: {value.isoformat()} is outside the dates kept here "
                        f"({SPAN})")
    return value


def parse_date(text: object, *, field: str) -> date:
    """A civil date written YYYY-MM-DD inside the span; else a ValueError naming `field`."""
    if isinstance(text, date) and not isinstance(text, datetime):
        return check_span(text, field=field)
    try:
        parsed = date.fromisoformat(str(text).strip()) if isinstance(text, str) else None
    except ValueError:
        parsed = None
    if parsed is None or len(str(text).strip()) != 10:
        raise ValueError(f"{field}: {text!r} is not a date written YYYY-MM-DD")
    return check_span(parsed, field=field)


def parse_instant(text: object, *, field: str) -> datetime:
    """An ISO 8601 instant with an offset or Z, as aware UTC, inside the span; else a
    ValueError naming `field`."""
    if isinstance(text, datetime):
        parsed = text
    elif isinstance(text, str) and "\x00" not in text:
        try:
            parsed = datetime.fromisoformat(text.strip())
        except ValueError:
            parsed = None
    else:
        parsed = None
    if parsed is None:
        raise ValueError(
            f"{field}: {text!r} is not an ISO 8601 instant such as 2028-02-01T20:00:00Z"
        )
    if parsed.tzinfo is None:
        raise ValueError(f"{field}: {text!r} has no offset; write Z for UTC or +HH:MM")
    if not EARLIEST <= parsed.date() <= LATEST:
        # Checked before the conversion to UTC, which overflows at the calendar's edges.
        raise OutOfSpan(f"{field}: {text!s} is outside the dates kept here ({SPAN})")
    return parsed.astimezone(UTC)


def z(instant: datetime) -> str:
    """An instant as logs and machine answers write it: UTC, whole seconds, with Z."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def share(start: datetime, to: datetime, reached: datetime) -> float:
    """The part of the span from `start` to `to` behind `reached`, 0 to 1 (an empty span is
    all behind)."""
    span = (to - start).total_seconds()
    if span <= 0:
        return 1.0
    return min(1.0, max(0.0, (reached - start).total_seconds() / span))
