"""What a missed date costs (SPEC S12 `exposure`), in integer minor units.

A clock's `exposure` in the manifest prices a miss, in one of three forms:

    {"per_month_late": {"amount": 32400, "currency": "USD"}}   so much for each month late
    {"per_day_late": {"amount": 1500, "currency": "USD"}}      so much for each day late
    {"once": {"amount": 50000, "currency": "USD"}}             so much once, when it is missed

`price(spec)` reads it; `Price.monthly` makes the forms comparable (what thirty days late
cost), which is how the console sorts dates at risk; `Price.text` says it as people do:
"about $324 a month late". A date already late also says what it has cost so far.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from timekeeping.basics import shown

FORMS = {"per_month_late": "a month late", "per_day_late": "a day late", "once": "if missed"}


@dataclass(frozen=True)
class Price:
    form: str  # one of FORMS
    amount: int  # minor units
    currency: str

    @property
    def monthly(self) -> int:
        """What thirty days late cost, in minor units: the key dates at risk sort by."""
        return {"per_month_late": self.amount, "per_day_late": self.amount * 30,
                "once": self.amount}[self.form]

    @property
    def text(self) -> str:
        return f"about {shown.money(self.amount, self.currency, short=True)} " \
            f"{FORMS[self.form]}"

    def so_far(self, late_from: datetime, now: datetime) -> int:
        """What the miss has cost by `now` (minor units): whole days or started months."""
        if now < late_from:
            return 0
        days = (now - late_from).days + 1
        if self.form == "per_day_late":
            return self.amount * days
        if self.form == "per_month_late":
            return self.amount * -(-days // 30)  # a started month counts
        return self.amount


RULES = {"per_month_late": "for each month it is late (a month once started counts in full)",
         "per_day_late": "for each day it is late", "once": "once, when it is missed"}


def rule_text(price: Price, title: str) -> str:
    """The rule behind a price, for the breakdown a page opens (issue 27)."""
    return (f"Your manifest prices a miss of \u201c{title}\u201d at "
            f"{shown.money(price.amount, price.currency, short=True)} {RULES[price.form]}; "
            f"a month late is {shown.money(price.monthly, price.currency, short=True)}, "
            "the figure dates are sorted and added up by.")


def guarantee_text(spec: dict | None) -> str:
    """A date sold as a promise, in words: "You promised to cover penalties on it, up to
    $5,000, once the notice response work is done, except while the work waited on the
    customer: …" ("" for none)."""
    cap = spec.get("up_to") if isinstance(spec, dict) else None
    if not (isinstance(cap, dict) and type(cap.get("amount")) is int
            and isinstance(cap.get("currency"), str)):
        return ""
    covers = [each for each in spec.get("covers", []) if isinstance(each, str)][:5] \
        if isinstance(spec.get("covers"), list) else []
    what = " and ".join(covers) if covers else "penalties"
    after = spec.get("after")
    when = f", once {shown.service(after)} is done" if isinstance(after, str) and after else ""
    held = ", except for the time the work waited on the customer" \
        if spec.get("excludes") == "held" else ""
    return (f"You promised to cover {what} on it, up to "
            f"{shown.money(cap['amount'], cap['currency'], short=True)}{when}{held}: a notice "
            "you record is paid from your side, not the customer's.")


def price(spec: dict | None) -> Price | None:
    """The price of a miss from a clock's `exposure`, or None when it gives none."""
    if not isinstance(spec, dict):
        return None
    for form in FORMS:
        rule = spec.get(form)
        if isinstance(rule, dict) and type(rule.get("amount")) is int \
                and isinstance(rule.get("currency"), str):
            return Price(form, rule["amount"], rule["currency"])
    return None


_TYPED = re.compile(r"(?P<whole>\d{1,12})(?:\.(?P<part>\d{1,2}))?")


def minor_units(text: object, currency: str) -> int | None:
    """Money as a person types it ("198", "198.5", "1,198.00") in minor units, exactly: no
    float on the way. None for anything else, or for cents in a currency that has none."""
    if not isinstance(text, str):
        return None
    match = _TYPED.fullmatch(text.strip().replace(",", ""))
    places = shown.digits(currency)
    if match is None or len(match["part"] or "") > places:
        return None
    return int(match["whole"]) * 10 ** places + int((match["part"] or "0").ljust(places, "0"))


def about_text(field: str | None, found: dict) -> str:
    """The sum a date is about (a clock's `about`, naming an input field): the field's
    {"amount": minor units, "currency", "what"} as people read it, "$13,800 of US credit from
    2026"; "" for no field or any other value."""
    value = found.get(field) if field else None
    if not (isinstance(value, dict) and type(value.get("amount")) is int
            and isinstance(value.get("currency"), str) and len(value["currency"]) == 3):
        return ""
    what = value.get("what")
    return shown.money(value["amount"], value["currency"], short=True) + (
        f" {what[:200]}" if isinstance(what, str) and what else "")

