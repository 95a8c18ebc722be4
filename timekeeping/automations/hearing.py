"""The brand's rules hear each record as it is made (`hear`, a hearer of
`timekeeping.timers.records`, added by the wiring after the webhooks' own), in the
transaction that makes it (SPEC A7, issue 30). Steps:

1. Pass over every record that no rule can hear (by its kind: a row's move, a date's lapse,
   an ask's first expiry), at no cost.
2. Read the brand's current manifest's rules (once per firing batch inside one) and keep
   those that hear this change: the table and the state it entered, the clock, the ask,
   and the service when a rule names one.
3. Run each, in the rules' order, unless the chain of rules that led here is already
   `DEPTH_MAX` deep: then the run is recorded as stopped (`automation.stopped`).
4. Record each run (`automation.ran`: the rule's number, what it did in words, the record it
   heard, and the row when it heard a row), so the Why page and the history can say it.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache

from timekeeping.automations.acting import Heard, act
from timekeeping.models import Ask, Brand, Job, Manifest, TestClock
from timekeeping.specs.automations import DEPTH_MAX, Rule, compile_automations
from timekeeping.specs.current import current
from timekeeping.timers import in_progress, records
from timekeeping.timers.records import Entry

TRIGGER_OF = {"row.moved": "row", "clock.lapsed": "missed", "ask.expired": "ask_expired"}
# How many rules deep the change being heard was set off (0: by a person, the API, the
# clock). A context variable: rules run inside the hearer, so a rule's own change is heard
# one level deeper, and the level returns when it is done.
_depth: ContextVar[int] = ContextVar("keeping_time_automation_depth", default=0)


def hear(brand: Brand, test_clock: TestClock | None, instant: datetime, entry: Entry) -> None:
    trigger = TRIGGER_OF.get(entry.kind)
    if trigger is None:
        return
    rules = [rule for rule in _rules(brand) if rule.when.trigger == trigger]
    if not rules:
        return
    service = _service_of(brand, entry, rules)
    step = _ask_step(brand, entry) if trigger == "ask_expired" else ""
    matching = [rule for rule in rules if _hears(rule, entry, service, step)]
    heard = Heard(brand, test_clock, instant, entry)
    for rule in matching:
        _run(rule, heard)


def _run(rule: Rule, heard: Heard) -> None:
    depth = _depth.get()
    data = {"rule": rule.number, "action": rule.action, "heard": heard.entry.id,
            "heard_kind": heard.entry.kind, "depth": depth + 1, **_about(heard.entry)}
    if depth >= DEPTH_MAX:
        _record("automation.stopped", heard, {
            **data, "did": f"stopped: {DEPTH_MAX} rules in a row had set each other off"})
        return
    token = _depth.set(depth + 1)
    try:
        did = act(rule, heard)
    finally:
        _depth.reset(token)
    _record("automation.ran", heard, {**data, "did": did})


def _record(kind: str, heard: Heard, data: dict) -> None:
    entry = heard.entry
    records.write(kind, brand=heard.brand, instant=heard.instant, test_clock=heard.test_clock,
                  subject=entry.subject, job=entry.job, data=data)


def _about(entry: Entry) -> dict:
    """What the Why page looks a run up by: the row (table and id) a row's rule heard."""
    if entry.kind == "row.moved":
        return {"table": entry.data.get("table"), "row": entry.data.get("row")}
    return {}


def _hears(rule: Rule, entry: Entry, service: str, step: str) -> bool:
    when, data = rule.when, entry.data
    if when.service and when.service != service:
        return False
    if when.trigger == "row":
        return data.get("table") == when.name and data.get("to") == when.state
    if when.trigger == "missed":
        return data.get("name") == when.name
    return step == when.name


def _service_of(brand: Brand, entry: Entry, rules: list[Rule]) -> str:
    """The service of the job a date or an ask belongs to, read only when a rule names one."""
    if not entry.job or not any(rule.when.service for rule in rules):
        return ""
    return Job.objects.filter(brand=brand, pk=entry.job).values_list(
        "service", flat=True).first() or ""


def _ask_step(brand: Brand, entry: Entry) -> str:
    return Ask.objects.filter(brand=brand, pk=entry.data.get("ask")).values_list(
        "step", flat=True).first() or ""


def _rules(brand: Brand) -> tuple[Rule, ...]:
    """The brand's current rules; inside a firing of the brand, read once per batch."""
    return in_progress.read_once(brand.pk, "automations", lambda: current_rules(brand))


def current_rules(brand: Brand) -> tuple[Rule, ...]:
    """The rules of the brand's current manifest."""
    version = current(brand)
    return rules_of(version.bundle) if version is not None else ()


@lru_cache(maxsize=64)
def rules_of(bundle: str) -> tuple[Rule, ...]:
    """A kept version's rules (a bundle never changes meaning: cached by it)."""
    document = Manifest.objects.filter(bundle=bundle).values_list("document", flat=True).first()
    return compile_automations((document or {}).get("automations"))
