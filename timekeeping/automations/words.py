"""Automations in words (../shared/WORDS.md): what a run did, for the Why page and the
history ("Heard by rule 2: emailed the guest."), and what a rule would do, for a preview of
the timed moves ("heard by rule 2: would email the guest")."""

from __future__ import annotations

from timekeeping.automations.hearing import current_rules
from timekeeping.clocks import history
from timekeeping.models import Brand, Record
from timekeeping.specs.automations import Rule


def ran(record: Record) -> str:
    """A run on the record as one sentence, as the subject's history says it."""
    return history.say(record) or ""


def would(rule: Rule) -> str:
    """What a rule does, as a preview says it."""
    spec = rule.spec
    if rule.action == "email":
        to = spec["to"]
        whom = spec.get("who") or (f"the address in {to['column']}" if isinstance(to, dict)
                                   else "the brand's owner" if to == "owner" else "the customer")
        return f"heard by rule {rule.number}: would email {whom}"
    if rule.action == "webhook":
        return f"heard by rule {rule.number}: would send the event to {spec['endpoint']}"
    if rule.action == "task":
        return f"heard by rule {rule.number}: would open the task {spec['step']}"
    if "via" in spec:
        return (f"heard by rule {rule.number}: would move the row its {spec['via']} links to, "
                f"to {spec['to']}")
    return (f"heard by rule {rule.number}: would move its rows of {spec['table']} to "
            f"{spec['to']}")


def previewed(brand: Brand, table: str, state: str) -> list[str]:
    """What the brand's rules would do when a row of `table` enters `state` (a teller of
    `timekeeping.moves.operate.preview`, added by the wiring)."""
    return [would(rule) for rule in current_rules(brand)
            if rule.when.trigger == "row" and (rule.when.name, rule.when.state) == (table, state)]
