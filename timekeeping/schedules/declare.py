"""Declaring schedules (SPEC J1): actions, `@schedule` in code, and a manifest's `schedules`.

    from timekeeping.schedules import action, schedule

    @schedule(every="15m")
    @action("planning.queue_chore_census")      # in an `actions` module of an installed app
    def queue_chore_census():                   # no parameters: a schedule passes nothing
        ...

A manifest declares a brand's schedules by domain; `run` names an action of that domain:

    "schedules": {"planning": {"chore_census": {"every": "15m", "run": "queue_chore_census"}}}
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

from timekeeping.manifest_rules import shown

Action = Callable[[], object]
_actions: dict[str, Action] = {}
_code_schedules: dict[str, tuple[str, int]] = {}  # name -> (action, every_s)
# Digits are bounded: int() refuses more than 4,300 of them, and every_s is a 32-bit column.
EVERY = re.compile(r"^(?P<n>[1-9]\d{0,9})(?P<unit>[smhd])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
EVERY_MAX_S = 366 * 86400  # at least once a year
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
NAME_MAX = 63  # "<domain>.<name>" is kept in 200 characters, with its brand and clock in 300


def action(name: str) -> Callable[[Action], Action]:
    """Register an action under `<domain>.<action>`."""
    if "." not in name or not all(NAME.match(part) for part in name.split(".")):
        raise ValueError(f"action: {name!r} is not a dotted name such as 'planning.census'")

    def decorator(function: Action) -> Action:
        _actions[name] = function
        return function

    return decorator


def get_action(name: str) -> Action:
    try:
        return _actions[name]
    except KeyError:
        raise LookupError(f"run: no action named {name!r} is registered") from None


def takes_no_arguments(function: Action) -> bool:
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in inspect.signature(function).parameters.values())


def parse_every(text: object) -> int | None:
    """Seconds in a whole number of s, m, h or d above zero, at most 366 days ('30s', '15m');
    else None."""
    # fullmatch: `$` alone also matches before a final newline ("1m\n").
    match = EVERY.fullmatch(text) if isinstance(text, str) else None
    seconds = int(match["n"]) * UNIT_SECONDS[match["unit"]] if match else None
    return seconds if seconds is not None and seconds <= EVERY_MAX_S else None


def schedule(*, every: str, name: str | None = None) -> Callable[[Action], Action]:
    """Run the decorated action on an interval, in every deployment (no brand)."""
    seconds = parse_every(every)
    if seconds is None:
        raise ValueError(f"schedule.every_invalid: {every!r} is not a whole number above zero "
                         "of s, m, h or d (30s, 15m, 1h, 1d), at most 366 days")

    def decorator(function: Action) -> Action:
        action_name = next((key for key, fn in _actions.items() if fn is function), None)
        if action_name is None:
            raise ValueError("schedule: put @schedule above @action, on a registered action")
        _code_schedules[name or action_name] = (action_name, seconds)
        return function

    return decorator


@dataclass(frozen=True)
class Declared:
    name: str
    action: str
    every_s: int
    declared_in: str  # "code", "manifest", "purge"


def code_schedules() -> list[Declared]:
    return [Declared(name, action_name, every, "code")
            for name, (action_name, every) in _code_schedules.items()]


def manifest_schedules(document: dict) -> list[Declared]:
    found = []
    for domain, items in (document.get("schedules") or {}).items():
        for name, spec in items.items():
            found.append(Declared(f"{domain}.{name}", f"{domain}.{spec['run']}",
                                  parse_every(spec["every"]), "manifest"))
    return found


def check_section(section: object, add: Callable[[str, str, str], None]) -> None:
    """The manifest check for `schedules`: each problem names the schedule and the rule."""
    path = "$.schedules"
    if not isinstance(section, dict):
        add("schedule.item_invalid", path, "'schedules' maps a domain to its schedules")
        return
    for domain, items in section.items():
        if not isinstance(items, dict) or not _name_ok(domain):
            add("schedule.item_invalid", f"{path}.{domain}",
                f"'{domain}' is a domain (a lowercase name of a-z, 0-9 and _, at most "
                f"{NAME_MAX} characters) mapping names to schedules")
            continue
        for name, spec in items.items():
            _check_item(domain, name, spec, f"{path}.{domain}.{name}", add)


def _name_ok(name: object) -> bool:
    # fullmatch: NAME's `$` alone also matches before a final newline.
    return isinstance(name, str) and len(name) <= NAME_MAX and NAME.fullmatch(name) is not None


def _check_item(domain: str, name: str, spec: object, path: str,
                add: Callable[[str, str, str], None]) -> None:
    label = f"schedule {domain}.{name}"
    if not _name_ok(name):
        add("schedule.item_invalid", path, f"{label}: a schedule's name is a lowercase name of "
                                           f"a-z, 0-9 and _, at most {NAME_MAX} characters")
    if not isinstance(spec, dict):
        add("schedule.item_invalid", path, f"{label} is an object with 'every' and 'run'")
        return
    for key in spec:
        if key not in ("every", "run"):
            add("schedule.item_invalid", f"{path}.{key}",
                f"{label} holds nothing but 'every' and 'run'; '{key}' is not allowed")
    if parse_every(spec.get("every")) is None:
        add("schedule.every_invalid", f"{path}.every",
            f"{label}: every is a whole number above zero of s, m, h or d (30s, 15m, 1h, 1d), "
            f"at most 366 days, not {shown(spec.get('every'))}")
    run = spec.get("run")
    target = _actions.get(f"{domain}.{run}") if isinstance(run, str) else None
    if target is None:
        add("schedule.run_invalid", f"{path}.run",
            f"{label}: run names an action of the domain '{domain}'; {shown(run)} is not one")
    elif not takes_no_arguments(target):
        add("schedule.run_invalid", f"{path}.run",
            f"{label}: the action {domain}.{run} takes arguments; a schedule passes none")
