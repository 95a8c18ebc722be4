"""How the product writes a length of time for people: `2d 4h 30m`, `45s`, `0s`."""

from datetime import timedelta


def span_text(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = ((days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s"))
    return " ".join(f"{n}{unit}" for n, unit in parts if n) or "0s"
