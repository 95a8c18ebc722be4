"""A manifest's `automations` section, compiled: rules that hear a change and do one thing
(SPEC A7, issue 30; docs/timed-moves.md, "Automations").

    "automations": [
      {"when": {"row": "orders", "enters": "cancelled"},
       "do": {"email": {"to": {"column": "email"}, "who": "the guest",
                        "subject": "Sorry, {customer}", "body": "…"}}},
      {"when": {"row": "orders", "enters": "cancelled"},
       "do": {"move": {"table": "order_lines", "link": "order_id", "to": "void"}}},
      {"when": {"row": "order_lines", "enters": "served"},
       "do": {"move": {"via": "order_id", "to": "ready"}}},
      {"when": {"missed": "file", "service": "annual-return"}, "do": {"task": "prepare"}},
      {"when": {"ask_expired": "organizer"}, "do": {"webhook": "Accounts system"}}
    ]

A rule's number is its place in the list, from 1 ("rule 2"). `compile_automations` reads a
section that passed its check (timekeeping.automations.check) and trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass

TRIGGERS = ("row", "missed", "ask_expired")
ACTIONS = ("email", "webhook", "move", "task")
RULES_MAX = 50
# A chain of rules each set off by the one before it stops at this depth (the run is
# recorded as stopped): the check refuses every loop it can see, this bounds the rest.
DEPTH_MAX = 3


@dataclass(frozen=True)
class When:
    """What a rule hears: `trigger` is row, missed or ask_expired; `name` the table, the
    clock or the ask's step; `state` the state a row enters; `service`, optionally, the one
    service whose clock or ask it is (any service's, when empty)."""

    trigger: str
    name: str
    state: str = ""
    service: str = ""


@dataclass(frozen=True)
class Rule:
    number: int
    when: When
    action: str  # email, webhook, move or task
    spec: dict  # the action's own object (for a task or webhook: {"step"} or {"endpoint"})


def compile_automations(section: object) -> tuple[Rule, ...]:
    rules = []
    for number, raw in enumerate(section or [], start=1):
        when, do = raw["when"], raw["do"]
        trigger = next(key for key in TRIGGERS if key in when)
        action = next(key for key in ACTIONS if key in do)
        spec = do[action]
        if action == "task":
            spec = {"step": spec}
        elif action == "webhook":
            spec = {"endpoint": spec}
        rules.append(Rule(number, When(trigger, when[trigger], when.get("enters", ""),
                                       when.get("service", "")), action, dict(spec)))
    return tuple(rules)
