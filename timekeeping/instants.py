"""Reading instants people and programs write (API bodies, command arguments)."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_instant(text: object, *, field: str) -> datetime:
    """An ISO 8601 instant with an offset or Z, as aware UTC; else a ValueError naming `field`."""
    if isinstance(text, datetime):
        parsed = text
    else:
        try:
            parsed = datetime.fromisoformat(str(text).strip())
        except ValueError:
            raise ValueError(
                f"{field}: {text!r} is not an ISO 8601 instant such as 2028-02-01T20:00:00Z"
            ) from None
    if parsed.tzinfo is None:
        raise ValueError(f"{field}: {text!r} has no offset; write Z for UTC or +HH:MM")
    return parsed.astimezone(UTC)
