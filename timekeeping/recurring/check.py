"""Checking a plan's recurring keys (`price.every`, `price.amount`, `price.currency`,
`price.includes`, `on.schedule`) and a job paid by its outcome (`price.share`, `outcome`):
every problem at once with its path, never an exception."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from calendars import periods
from timekeeping.jobs.check import LATE, SPAN_RULE, deliver_steps
from timekeeping.specs.jobs import parse_span
from timekeeping.specs.plans import BEFORE_CLOCK, CATCH_UP, EACH
from timekeeping.specs.rules import is_whole, shown

Add = Callable[[str, str, str], None]
CURRENCY = re.compile(r"[A-Z]{3}")
AMOUNT_MAX = 10**12
INCLUDES_MAX = 100_000
SCHEDULE_KEYS = ("order", "each", "at", "catch_up", "when")
WHEN_VALUE_MAX = 200
DUNNING_MAX = 10
SPAN_MINUTES = {"m": 1, "h": 60, "d": 1440}
EVENT = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
OUTCOME_KEYS = ("due", "window", "collect", "tail", "pay")
METHOD = re.compile(r"[a-z][a-z0-9_]{0,31}")
METHODS_MAX = 10
GUARANTEE_KEYS = ("up_to", "covers", "after", "excludes")
COVERS_MAX, TEXT_MAX = 20, 200
EXCLUDES = ("held",)  # what a promise may leave out: time the job waited on the customer


def check_plan(add: Add, service: dict, services: dict, path: str) -> None:
    """`services`: every service of the document, by name (a schedule orders one of them)."""
    price = service.get("price")
    if isinstance(price, dict):
        _price(add, price, services, f"{path}.price")
    if "on" in service:
        _on(add, service["on"], services, "every" in (price or {}) if isinstance(price, dict)
            else False, f"{path}.on")
    if "outcome" in service or (isinstance(price, dict) and "share" in price):
        _outcome(add, service.get("outcome"), price if isinstance(price, dict) else {}, path)


def _outcome(add: Add, outcome: object, price: dict, path: str) -> None:
    """`price.share` and `outcome` come together: a share of what the outcome pays, held in
    its window per payment method, on a job with no fixed amount and no cycle."""
    if not (isinstance(price.get("share"), str) and LATE.fullmatch(price["share"])):
        add("price.share_invalid", f"{path}.price.share",
            f"{shown(price.get('share'))} is not a share; an outcome is charged a whole percent "
            "of each payment that matches it, from 1% to 100% (\"25%\")")
    if not (isinstance(price.get("currency"), str) and CURRENCY.fullmatch(price["currency"])):
        add("price.currency_invalid", f"{path}.price.currency",
            "a share needs its currency, three capital letters (\"USD\")")
    if "amount" in price or "every" in price:
        add("price.share_with_amount", f"{path}.price.share",
            "a job paid by its outcome has no fixed 'amount' and no cycle ('every')")
    if not isinstance(outcome, dict):
        add("outcome.invalid", f"{path}.outcome",
            "a share needs its outcome: {\"due\": \"180d\", \"window\": {\"bank\": \"60d\"}}")
        return
    here = f"{path}.outcome"
    for key in outcome:
        if key not in OUTCOME_KEYS:
            add("outcome.key_unknown", f"{here}.{key}",
                f"'{key}' is not a key here; the keys are: {', '.join(OUTCOME_KEYS)}")
    for key in ("due", "tail"):
        if (key == "due" or key in outcome) and parse_span(outcome.get(key)) is None:
            add(f"outcome.{key}_invalid", f"{here}.{key}",
                f"{shown(outcome.get(key))}: {SPAN_RULE}")
    window = outcome.get("window")
    if not isinstance(window, dict) or not 0 < len(window) <= METHODS_MAX:
        add("outcome.window_invalid", f"{here}.window",
            f"'window' maps each payment method to how long its payments may still be reversed, "
            f"1 to {METHODS_MAX} of them ({{\"bank\": \"60d\", \"card\": \"120d\"}})")
    else:
        for method, span in window.items():
            if not isinstance(method, str) or METHOD.fullmatch(method) is None:
                add("outcome.method_invalid", f"{here}.window",
                    "a payment method is 1 to 32 characters a-z, 0-9 and '_', starting with a "
                    "letter")
            elif parse_span(span) is None:
                add("outcome.window_invalid", f"{here}.window.{method}",
                    f"{shown(span)}: {SPAN_RULE}")
    if outcome.get("collect", "once") not in ("once", "each"):
        add("outcome.collect_invalid", f"{here}.collect",
            f"{shown(outcome.get('collect'))} is not one of: once (one payment wins it), each "
            "(a window per invoice)")
    if "pay" in outcome and not (isinstance(outcome["pay"], str)
                                 and LATE.fullmatch(outcome["pay"])):
        add("outcome.pay_invalid", f"{here}.pay",
            f"{shown(outcome['pay'])} is not share pay; write a whole percent of the brand's "
            "charge from 1% to 100% (\"40%\")")


def _price(add: Add, price: dict, services: dict, path: str) -> None:
    if "every" in price:
        try:
            if not isinstance(price["every"], str):  # an error message never quotes a tree
                raise ValueError("not text")
            periods.cycle_date(date(2027, 1, 31), price["every"], 1)
        except ValueError:
            add("price.every_invalid", f"{path}.every",
                f"{shown(price['every'])} is not a cycle; write a whole number and a unit, "
                "d, w, mo or y (\"1mo\", \"1y\")")
    if "amount" in price and not is_whole(price["amount"], 0, AMOUNT_MAX):
        add("price.amount_invalid", f"{path}.amount",
            f"{shown(price['amount'])} is not an amount; write whole minor units from 0 to "
            f"{AMOUNT_MAX} (cents: 240000 is $2,400.00)")
    if "amount" in price and not (isinstance(price.get("currency"), str)
                                  and CURRENCY.fullmatch(price["currency"])):
        add("price.currency_invalid", f"{path}.currency",
            "an amount needs its currency, three capital letters (\"USD\")")
    if "dunning" in price:
        _dunning(add, price, f"{path}.dunning")
    if "includes" in price:
        includes = price["includes"]
        if "every" not in price:
            add("price.includes_without_every", f"{path}.includes",
                "allowances come with a cycle: give 'every'")
        if not isinstance(includes, dict):
            add("price.includes_invalid", f"{path}.includes",
                "'includes' maps a service to how many of it each cycle brings")
            return
        for name, count in includes.items():
            if name not in services:
                add("price.includes_unknown", f"{path}.includes.{name}",
                    f"{shown(name)} is not a service of this manifest")
            if not is_whole(count, 0, INCLUDES_MAX):
                add("price.includes_invalid", f"{path}.includes.{name}",
                    f"{shown(count)} is not a count; write a whole number from 0 to "
                    f"{INCLUDES_MAX}")


def _dunning(add: Add, price: dict, path: str) -> None:
    retries = price["dunning"]
    if "every" not in price or not price.get("amount"):
        add("price.dunning_without_charge", path,
            "dunning retries a renewal's charge: give the plan 'every' and an 'amount'")
    spans = [parse_span(text) for text in retries] if isinstance(retries, list) else [None]
    if not 0 < len(spans) <= DUNNING_MAX or None in spans:
        add("price.dunning_invalid", path,
            f"dunning is a list of 1 to {DUNNING_MAX} retries after the renewal, each {SPAN_RULE}")
        return
    lengths = [span.n * SPAN_MINUTES[span.unit] for span in spans]
    if lengths != sorted(set(lengths)):
        add("price.dunning_invalid", path,
            "each retry comes after the one before it: write them in increasing order "
            "([\"3d\", \"7d\", \"14d\"])")


def _on(add: Add, on: object, services: dict, is_plan: bool, path: str) -> None:
    if not isinstance(on, dict) or set(on) - {"schedule", "event"}:
        add("on.invalid", path, "'on' is {\"schedule\": {name: schedule}, \"event\": {name: "
                                "{\"order\": service}}}")
        return
    if "event" in on:
        _events(add, on["event"], services, is_plan, f"{path}.event")
    if "schedule" not in on:
        return
    schedules = on.get("schedule")
    if not isinstance(schedules, dict):
        add("on.invalid", f"{path}.schedule", "'schedule' maps names to schedules")
        return
    if schedules and not is_plan:
        add("schedule.without_every", f"{path}.schedule",
            "schedules run on a plan a subject subscribes to: give the service 'price.every'")
    for name, spec in schedules.items():
        here = f"{path}.schedule.{name}"
        if not isinstance(name, str) or re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", name) is None:
            add("schedule.name_invalid", here, "a schedule's name is 1 to 64 characters a-z, "
                                               "0-9, '-' and '_', starting with a letter")
        if not isinstance(spec, dict):
            add("schedule.not_object", here, "a schedule is an object")
            continue
        for key in spec:
            if key not in SCHEDULE_KEYS:
                add("schedule.key_unknown", f"{here}.{key}",
                    f"'{key}' is not a key here; the keys are: {', '.join(SCHEDULE_KEYS)}")
        _schedule(add, spec, services, here)


def _events(add: Add, events: object, services: dict, is_plan: bool, path: str) -> None:
    if not isinstance(events, dict):
        add("on.invalid", path, "'event' maps an event's name to {\"order\": service}")
        return
    if events and not is_plan:
        add("event.without_every", path,
            "events mint on a plan a subject subscribes to: give the service 'price.every'")
    for name, spec in events.items():
        here = f"{path}.{name}"
        if not isinstance(name, str) or EVENT.fullmatch(name) is None:
            add("event.name_invalid", here, "an event's name is 1 to 64 characters a-z, 0-9, "
                                            "'.', '-' and '_', starting with a letter")
        if not isinstance(spec, dict) or set(spec) != {"order"}:
            add("event.invalid", here, "an event is {\"order\": service}")
        elif not isinstance(spec["order"], str) or spec["order"] not in services:
            add("event.order_unknown", f"{here}.order",
                f"{shown(spec['order'])} is not a service of this manifest")


def _schedule(add: Add, spec: dict, services: dict, path: str) -> None:
    if not isinstance(spec.get("order"), str) or spec["order"] not in services:
        add("schedule.order_unknown", f"{path}.order",
            f"{shown(spec.get('order'))} is not a service of this manifest")
    if spec.get("each") not in EACH:
        add("schedule.each_invalid", f"{path}.each",
            f"{shown(spec.get('each'))} is not a period; the periods are: {', '.join(EACH)}")
    elif isinstance(spec.get("at"), str) and BEFORE_CLOCK.fullmatch(spec["at"]):
        ordered = services.get(spec.get("order")) if isinstance(spec.get("order"), str) else None
        clocks = ordered.get("clocks") if isinstance(ordered, dict) else None
        name = BEFORE_CLOCK.fullmatch(spec["at"])["clock"]
        if not isinstance(clocks, dict) or name not in clocks:
            add("schedule.at_clock_unknown", f"{path}.at",
                f"'{name}' is not a clock of the service the schedule orders")
    elif not isinstance(spec.get("at"), str):
        add("schedule.at_invalid", f"{path}.at",
            f"{shown(spec.get('at'))} is not when; write a span from the period's start or "
            "end (\"1mo after end\"), or N days before a clock of the ordered service "
            "(\"10d before pay\")")
    else:
        try:
            periods.at(periods.period_of(date(2027, 6, 1), spec["each"]), spec["at"])
        except ValueError as error:
            add("schedule.at_invalid", f"{path}.at", str(error).removeprefix("at: ") +
                "; or N days before a clock of the ordered service (\"10d before pay\")")
    if spec.get("catch_up", "last") not in CATCH_UP:
        add("schedule.catch_up_invalid", f"{path}.catch_up",
            f"{shown(spec.get('catch_up'))} is not one of: {', '.join(CATCH_UP)}")
    when = spec.get("when", {})
    if not isinstance(when, dict) or not all(
            isinstance(key, str) and 0 < len(key) <= 64
            and (isinstance(value, bool | int) or (isinstance(value, str)
                                                    and len(value) <= WHEN_VALUE_MAX))
            for key, value in when.items()):
        add("schedule.when_invalid", f"{path}.when",
            "'when' maps a field of the subject's input to the value it must have "
            "({\"entity\": \"C corp\"})")


def check_guarantees(add: Add, service: dict, services: dict, path: str) -> None:
    """Each clock's `guarantee` (a date sold as a promise): `up_to` (required) caps the
    penalties credited for the date; `covers` says what it covers; `after` names a step of
    this service or a service of the manifest it starts once done; `excludes` is "held"."""
    clocks = service.get("clocks")
    if not isinstance(clocks, dict):
        return  # the service's own check says so
    steps = deliver_steps(service) | (service["steps"] if isinstance(service.get("steps"),
                                                                      dict) else {})
    for name, clock in clocks.items():
        if isinstance(clock, dict) and "guarantee" in clock:
            _guarantee(add, clock["guarantee"], steps, services,
                       f"{path}.clocks.{name}.guarantee")


def _guarantee(add: Add, guarantee: object, steps: dict, services: dict, path: str) -> None:
    if not isinstance(guarantee, dict) or set(guarantee) - set(GUARANTEE_KEYS):
        add("clock.guarantee_invalid", path,
            "'guarantee' is {\"up_to\": {\"amount\": minor units, \"currency\": \"USD\"}, "
            "\"covers\": [text], \"after\": a step or service, \"excludes\": \"held\"}")
        return
    cap = guarantee.get("up_to")
    if not (isinstance(cap, dict) and set(cap) == {"amount", "currency"}
            and is_whole(cap["amount"], 1, AMOUNT_MAX) and isinstance(cap["currency"], str)
            and CURRENCY.fullmatch(cap["currency"])):
        add("clock.guarantee_invalid", f"{path}.up_to",
            f"the cap is {{\"amount\": minor units from 1 to {AMOUNT_MAX:,}, "
            "\"currency\": \"USD\"}")
    covers = guarantee.get("covers", [])
    if not (isinstance(covers, list) and len(covers) <= COVERS_MAX
            and all(_text_ok(each) for each in covers)):
        add("clock.guarantee_invalid", f"{path}.covers",
            f"'covers' is a list of at most {COVERS_MAX} things the promise covers, each text "
            "of 1 to 200 characters")
    after = guarantee.get("after")
    if "after" in guarantee and not (_text_ok(after) and (after in steps or after in services)):
        add("clock.guarantee_after_unknown", f"{path}.after",
            f"{shown(after)} is neither a step of this service nor a service of the manifest; "
            "the promise starts once that step is recorded or that service's job has ended")
    if "excludes" in guarantee and guarantee["excludes"] not in EXCLUDES:
        add("clock.guarantee_excludes_invalid", f"{path}.excludes",
            f"{shown(guarantee['excludes'])} is not something a promise leaves out; the one "
            "value is \"held\" (time the work waited on the customer)")


def _text_ok(value: object) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= TEXT_MAX and "\x00" not in value
