"""A plan's recurring time, as its manifest writes it (S18, S19, T2):

    "price": {"every": "1y", "amount": 240000, "currency": "USD",
              "includes": {"annual-return": 1, "question": 12},
              "dunning": ["3d", "7d", "14d"]}
    "on": {"schedule": {"annual": {"order": "annual-return", "each": "tax_year",
                                   "at": "1mo after end", "catch_up": "last",
                                   "when": {"entity": "C corp"}}},
           "event": {"notice.received": {"order": "notice-response"}}}

A service with `price.every` is a plan a subject subscribes to: it renews on its cycle dates,
counted from the anchor (`calendars.periods.cycle_date`), and each cycle brings its allowances
(`includes`). Its schedules mint a job of another service for each period, on a day relative to
the period (`calendars.periods.at`), at the calendar's `rings_at`. An event a subject
receives (`on.event`, through the API) mints a job of its `order` with the event's input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# What a gap mints: `open` (the seed's word) opens every period owed, oldest first; `all` is
# its older name; `last` only the latest; `none` nothing more than a day late.
CATCH_UP = ("none", "last", "open", "all")
OPENS_EVERY = ("open", "all")  # the values that open every period a gap owes
# A mint day N days before a clock of the minted service: "10d before pay".
BEFORE_CLOCK = re.compile(r"(?P<days>\d{1,4})d before (?P<clock>[a-z][a-z0-9_-]{0,63})")
EACH = ("tax_year", "year", "quarter", "month", "week")


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    order: str
    each: str
    at: str
    catch_up: str = "last"
    when: dict = field(default_factory=dict)


@dataclass(frozen=True)
class OutcomeSpec:
    """A job paid by its outcome (S21): `price.share` of each payment that matches it.

        "outcome": {"due": "180d", "window": {"bank": "60d", "card": "120d"},
                    "collect": "each", "tail": "90d", "pay": "40%"}
    """

    due: str  # no matching payment this long after the job opens: the outcome lapses
    window: dict[str, str]  # a payment method -> how long its collection may still reverse
    collect: str = "once"  # "once": one payment wins it; "each": one window per invoice
    tail: str | None = None  # after a lost end, how long a matching payment still wins it
    pay: int = 0  # the member's share pay, a percent of the brand's charge


@dataclass(frozen=True)
class PlanSpec:
    every: str | None = None
    amount: int = 0
    currency: str = ""
    includes: dict[str, int] = field(default_factory=dict)
    schedules: dict[str, ScheduleSpec] = field(default_factory=dict)
    events: dict[str, str] = field(default_factory=dict)  # an event's name -> the service
    final_after: str | None = None  # the acceptance window after delivery ("7d")
    dunning: tuple[str, ...] = ()  # retries of an unpaid renewal, after it ("3d", "7d", …)
    release: str | None = None  # the step whose commit releases the job's charge ("file")
    acts: dict[str, int] = field(default_factory=dict)  # paid acts: a step -> its price
    share: int = 0  # a percent of the outcome's payments, charged as they are collected
    outcome: OutcomeSpec | None = None

    @property
    def is_plan(self) -> bool:
        return self.every is not None


def compile_plan(raw: dict) -> PlanSpec:
    price = raw.get("price") or {}
    schedules = {
        name: ScheduleSpec(name=name, order=spec["order"], each=spec["each"], at=spec["at"],
                           catch_up=spec.get("catch_up", "last"),
                           when=dict(spec.get("when") or {}))
        for name, spec in ((raw.get("on") or {}).get("schedule") or {}).items()}
    events = {name: spec["order"]
              for name, spec in ((raw.get("on") or {}).get("event") or {}).items()}
    outcome = raw.get("outcome")
    if outcome is not None:
        outcome = OutcomeSpec(due=outcome["due"], window=dict(outcome["window"]),
                              collect=outcome.get("collect", "once"), tail=outcome.get("tail"),
                              pay=_percent(outcome.get("pay", "0%")))
    return PlanSpec(every=price.get("every"), amount=int(price.get("amount", 0)),
                    currency=price.get("currency", ""),
                    includes=dict(price.get("includes") or {}), schedules=schedules,
                    events=events, final_after=price.get("final_after"),
                    dunning=tuple(price.get("dunning") or ()), release=price.get("release"),
                    acts=dict(price.get("acts") or {}),
                    share=_percent(price.get("share", "0%")), outcome=outcome)


def _percent(text: str) -> int:
    return int(text.rstrip("%"))
