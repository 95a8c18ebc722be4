"""A Service's own time, as its manifest writes it, read into values (S6-S11).

    "price":   {"within": "30d" | "5d before file", "late": "20%"}
    "deliver": {"<step>": {"title", "then", "after", "ask", "expires", "task", "hold",
                           "within", "needs_grant"}}
    "scope":   {"for": "365d", "expires": "30d"}
    "signals": {"<name>": {"silent": "14d", "goto": "<step>"}}

A span is written `<n>d`, `<n>h` or `<n>m`: days are calendar days at the same wall time in
the subject's zone, hours and minutes elapsed time (DESIGN decision 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from calendars.moments import shift

SPAN = re.compile(r"(?P<n>[1-9]\d{0,4})(?P<unit>d|h|m)")
SPAN_DAYS = 3_650  # ten years, in any unit
BEFORE = re.compile(r"(?P<span>[1-9]\d{0,4}[dhm]) before (?P<clock>[a-z][a-z0-9_-]{0,63})")
LATE = re.compile(r"(?P<percent>[1-9]\d?|100)%")
DEFAULT_HOLD = "2d"
DEFAULT_GRANT_ASK = "30d"


@dataclass(frozen=True)
class Span:
    """A length of time as written: '30d', '48h', '90m'."""

    text: str
    n: int
    unit: str

    def after(self, instant: datetime, zone: str) -> datetime:
        return self._move(instant, zone, 1)

    def length(self) -> timedelta:
        """As elapsed time: a day is 24 hours (where a wall clock's day is not wanted)."""
        return timedelta(**{{"d": "days", "h": "hours", "m": "minutes"}[self.unit]: self.n})

    def before(self, instant: datetime, zone: str) -> datetime:
        return self._move(instant, zone, -1)

    def _move(self, instant: datetime, zone: str, sign: int) -> datetime:
        if self.unit == "d":
            return shift(instant, zone, days=sign * self.n)
        if self.unit == "h":
            return shift(instant, zone, hours=sign * self.n)
        return shift(instant, zone, minutes=sign * self.n)


def parse_span(text: object) -> Span | None:
    if not isinstance(text, str):
        return None
    match = SPAN.fullmatch(text)
    if match is None:
        return None
    n, unit = int(match["n"]), match["unit"]
    if n > SPAN_DAYS * {"d": 1, "h": 24, "m": 24 * 60}[unit]:
        return None
    return Span(text, n, unit)


@dataclass(frozen=True)
class Within:
    """A deadline's rule: a span from when the work starts, or a span before a clock's date."""

    text: str
    span: Span
    clock: str = ""  # "5d before file": the clock whose date it follows


def parse_within(text: object) -> Within | None:
    if not isinstance(text, str):
        return None
    match = BEFORE.fullmatch(text)
    if match is not None:
        span = parse_span(match["span"])
        return Within(text, span, match["clock"]) if span else None
    span = parse_span(text)
    return Within(text, span) if span else None


@dataclass(frozen=True)
class DeliverSpec:
    """One step of `deliver`: what it needs and the time it keeps."""

    name: str
    title: str
    after: tuple[str, ...] = ()
    ask: str | dict | None = None  # "owner" (the subject's contact) or {"input": field}
    expires: Span | None = None
    task: bool = False
    hold: Span | None = None
    within: Within | None = None
    needs_grant: bool = False
    perfect: Span | None = None  # a repair window: a rejected filing resubmitted inside it


@dataclass(frozen=True)
class SignalSpec:
    name: str
    silent: Span
    goto: str


@dataclass(frozen=True)
class WorkSpec:
    """A Service's own time: its deadline, the steps it delivers, its grant, its signals."""

    within: Within | None = None
    late: str = ""
    deliver: dict[str, DeliverSpec] = field(default_factory=dict)
    grant: Span | None = None
    grant_ask: Span | None = None
    signals: dict[str, SignalSpec] = field(default_factory=dict)

    def needs_grant(self, step: str) -> bool:
        spec = self.deliver.get(step)
        return bool(spec and spec.needs_grant)


def compile_work(raw: dict) -> WorkSpec:
    """The work values of one Service of a document that passed the check."""
    price = raw.get("price") or {}
    deliver = {}
    for name, spec in (raw.get("deliver") or {}).items():
        spec = spec or {}
        deliver[name] = DeliverSpec(
            name=name, title=spec.get("title") or name, after=tuple(spec.get("after", ())),
            ask=spec.get("ask"), expires=parse_span(spec.get("expires")),
            task=bool(spec.get("task")),
            hold=parse_span(spec.get("hold", DEFAULT_HOLD)) if spec.get("task") else None,
            within=parse_within(spec.get("within")), needs_grant=bool(spec.get("needs_grant")),
            perfect=parse_span(spec.get("perfect")))
    scope = raw.get("scope") or {}
    signals = {name: SignalSpec(name, parse_span(spec["silent"]), spec["goto"])
               for name, spec in (raw.get("signals") or {}).items()}
    return WorkSpec(
        within=parse_within(price.get("within")), late=str(price.get("late", "")),
        deliver=deliver, grant=parse_span(scope.get("for")),
        grant_ask=parse_span(scope.get("expires", DEFAULT_GRANT_ASK)) if scope else None,
        signals=signals)
