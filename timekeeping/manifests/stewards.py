"""Checking the steward services of a manifest (S16): every problem at once, each with a code,
a JSON path and a sentence, never an exception.

A service marked `"steward": true` keeps a subject's `lives_on: subject` dates between its
jobs (`timekeeping.clocks.stewards`). It is ordered once for a subject, as a job, and runs
until it ends: so it has no cycle (`price.every`) and no period. One subject kind has at most
one steward service, so a subject's steward is never in doubt. `keeper` (only beside
`steward`) is the email of the member who keeps the dates for it; without it, the brand's
owner keeps them.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

Add = Callable[[str, str, str], None]
EMAIL_MAX = 254  # the longest address a mail system carries (RFC 5321)


def _email_ok(value: object) -> bool:
    if not isinstance(value, str) or not 3 <= len(value) <= EMAIL_MAX or "\x00" in value:
        return False
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True


def _one(add: Add, service: dict, path: str) -> bool:
    """One service's `steward` and `keeper`: True when it is a steward service."""
    steward = service.get("steward", False)
    if not isinstance(steward, bool):
        add("service.steward_invalid", f"{path}.steward",
            "'steward' is true (this service keeps its subjects' dates between jobs) or false")
        return False
    if "keeper" in service:
        if not steward:
            add("service.keeper_without_steward", f"{path}.keeper",
                "'keeper' names who keeps a steward service's dates; add \"steward\": true "
                "or remove it")
        elif not _email_ok(service["keeper"]):
            add("service.keeper_invalid", f"{path}.keeper",
                f"'keeper' is the email of a member of the brand (at most {EMAIL_MAX} "
                "characters), such as \"ana@practice.example\"")
    if not steward:
        return False
    price = service.get("price")
    if isinstance(price, dict) and "every" in price:
        add("service.steward_plan", f"{path}.price.every",
            "a steward service is ordered once for a subject and runs until it ends: it has "
            "no 'price.every' (a one-off 'price.amount' is its price)")
    subject = service.get("subject")
    period = subject.get("period") if isinstance(subject, dict) else None
    if isinstance(period, dict) and period.get("of", "none") != "none":
        add("service.steward_period", f"{path}.subject.period",
            "a steward service keeps a subject's dates across periods: its period is none")
    return True


def check_stewards(add: Add, services: dict) -> None:
    """Every service's `steward` and `keeper`, and at most one steward service for each kind
    of subject."""
    first: dict[object, str] = {}
    for name, service in services.items():
        if not isinstance(service, dict) or not _one(add, service, f"$.services.{name}"):
            continue
        subject = service.get("subject")
        kind = subject.get("kind") if isinstance(subject, dict) else None
        kind = kind if isinstance(kind, str) else ""
        if kind in first:
            add("service.steward_twice", f"$.services.{name}.steward",
                f"a subject kind has one steward service; '{first[kind]}' keeps the dates of "
                f"each {kind or 'subject'} already")
        else:
            first[kind] = name
