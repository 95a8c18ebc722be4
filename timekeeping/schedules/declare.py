"""Declaring schedules (SPEC J1): actions, `@schedule` in code, and a manifest's `schedules`.

    from timekeeping.schedules import action, schedule

    @schedule(every="15m")
    @action("planning.queue_chore_census")      # in an `actions` module of an installed app
    def queue_chore_census():                   # no parameters: a schedule passes nothing
        ...

A manifest declares a brand's schedules by domain; `run` names an action of that domain:

    "schedules": {"planning": {"chore_census": {"every": "15m", "run": "queue_chore_census"}}}

A schedule at a wall time (T8) gives `at` instead of `every`: days and a time in a zone (the
manifest calendar's zone when it gives none). It runs late rather than never, and its run is
told the moment it was due (`context().due`):

    "weekly_report": {"at": "mon 09:00", "zone": "Europe/London", "run": "send_report"}
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from calendars.moments import day_in_zone, is_zone, wall_time
from timekeeping.specs.rules import shown

Action = Callable[[], object]
_actions: dict[str, Action] = {}
_code_schedules: dict[str, tuple[str, int, str]] = {}  # name -> (action, every_s, at)
# Digits are bounded: int() refuses more than 4,300 of them, and every_s is a 32-bit column.
EVERY = re.compile(r"^(?P<n>[1-9]\d{0,9})(?P<unit>[smhd])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
EVERY_MAX_S = 366 * 86400  # at least once a year
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY = "(?:" + "|".join(DAYS) + ")"
AT = re.compile(rf"(?P<days>daily|weekdays|{_DAY}(?:,{_DAY}){{0,6}}) "
                r"(?P<time>(?:[01]\d|2[0-3]):[0-5]\d)")
AT_RULE = ("days and a time: \"daily 09:00\", \"weekdays 17:30\", \"mon 09:00\" or "
           "\"mon,thu 08:15\"")
ZONE_MAX = 64  # "<days> <time> <zone>" is kept in 120 characters
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


def parse_at(text: object, zone: object = "UTC") -> str | None:
    """A wall-time schedule in its canonical form, "mon,thu 09:00 Europe/London", or None."""
    match = AT.fullmatch(text) if isinstance(text, str) else None
    if match is None or not _zone_ok(zone):
        return None
    days = match["days"]
    if days not in ("daily", "weekdays"):
        listed = days.split(",")
        if len(set(listed)) != len(listed):
            return None
        days = ",".join(day for day in DAYS if day in listed)
    return f"{days} {match['time']} {zone}"


def _zone_ok(zone: object) -> bool:
    return isinstance(zone, str) and len(zone) <= ZONE_MAX and is_zone(zone)


def next_wall(at: str, after: datetime) -> datetime:
    """The first instant strictly after `after` when the wall clock of `at`'s zone shows its
    time on one of its days. A time that daylight saving skips runs at the next minute that
    exists; in a repeated hour, the first time."""
    days, time, zone = at.split(" ")
    allowed = (set(range(7)) if days == "daily" else set(range(5)) if days == "weekdays"
               else {DAYS.index(day) for day in days.split(",")})
    first = day_in_zone(after, zone)
    for n in range(9):
        day = first + timedelta(days=n)
        if day.weekday() in allowed:
            instant = wall_time(day, time, zone, gap="next")
            if instant > after:
                return instant
    raise AssertionError(f"no day of {at!r} in nine days")  # 7 days hold every weekday


def next_grid_after(due: datetime, every_s: int, now: datetime) -> datetime:
    """The first time on the grid (due + k·every) strictly after `now`."""
    step = timedelta(seconds=every_s)
    if now < due:
        return due
    return due + step * (int((now - due) / step) + 1)


def next_due_after(*, at: str, every_s: int, due: datetime, after: datetime) -> datetime:
    """A schedule's first due time strictly after `after`: its next wall time, or the next
    time on its grid of `due` + k·every."""
    return next_wall(at, after) if at else next_grid_after(due, every_s, after)


def schedule(*, every: str | None = None, at: str | None = None, zone: str = "UTC",
             name: str | None = None) -> Callable[[Action], Action]:
    """Run the decorated action on an interval (`every`) or at a wall time (`at`, in `zone`),
    in every deployment (no brand)."""
    if (every is None) == (at is None):
        raise ValueError("schedule: give 'every' or 'at', one of them")
    seconds = parse_every(every) if every is not None else 0
    wall = parse_at(at, zone) if at is not None else ""
    if seconds is None:
        raise ValueError(f"schedule.every_invalid: {every!r} is not a whole number above zero "
                         "of s, m, h or d (30s, 15m, 1h, 1d), at most 366 days")
    if wall is None:
        raise ValueError(f"schedule.at_invalid: {at!r} in {zone!r}: {AT_RULE}, in a known zone")

    def decorator(function: Action) -> Action:
        action_name = next((key for key, fn in _actions.items() if fn is function), None)
        if action_name is None:
            raise ValueError("schedule: put @schedule above @action, on a registered action")
        _code_schedules[name or action_name] = (action_name, seconds, wall)
        return function

    return decorator


@dataclass(frozen=True)
class Declared:
    name: str
    action: str
    every_s: int  # 0 for a schedule at a wall time
    declared_in: str  # "code", "manifest", "purge"
    at: str = ""  # "mon 09:00 Europe/London": a schedule at a wall time (T8)


def code_schedules() -> list[Declared]:
    return [Declared(name, action_name, every, "code", at)
            for name, (action_name, every, at) in _code_schedules.items()]


def calendar_zone(document: dict) -> str:
    """The zone a manifest's calendar names, else UTC: a wall-time schedule's default."""
    calendar = document.get("calendar")
    zone = calendar.get("zone") if isinstance(calendar, dict) else None
    return zone if isinstance(zone, str) and zone else "UTC"


def manifest_schedules(document: dict) -> list[Declared]:
    found = []
    for domain, items in (document.get("schedules") or {}).items():
        for name, spec in items.items():
            at = (parse_at(spec["at"], spec.get("zone", calendar_zone(document)))
                  if "at" in spec else "")
            found.append(Declared(f"{domain}.{name}", f"{domain}.{spec['run']}",
                                  0 if at else parse_every(spec["every"]), "manifest", at))
    return found


def check_section(section: object, add: Callable[[str, str, str], None],
                  zone: str = "UTC") -> None:
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
            _check_item(domain, name, spec, f"{path}.{domain}.{name}", add, zone)


def _name_ok(name: object) -> bool:
    # fullmatch: NAME's `$` alone also matches before a final newline.
    return isinstance(name, str) and len(name) <= NAME_MAX and NAME.fullmatch(name) is not None


def _check_item(domain: str, name: str, spec: object, path: str,
                add: Callable[[str, str, str], None], zone: str) -> None:
    label = f"schedule {domain}.{name}"
    if not _name_ok(name):
        add("schedule.item_invalid", path, f"{label}: a schedule's name is a lowercase name of "
                                           f"a-z, 0-9 and _, at most {NAME_MAX} characters")
    if not isinstance(spec, dict):
        add("schedule.item_invalid", path, f"{label} is an object with 'every' and 'run'")
        return
    for key in spec:
        if key not in ("every", "at", "zone", "run"):
            add("schedule.item_invalid", f"{path}.{key}",
                f"{label} holds nothing but 'every' or 'at' (with 'zone'), and 'run'; "
                f"'{key}' is not allowed")
    if "at" in spec or "zone" in spec:
        _check_at(label, spec, path, add, zone)
    elif parse_every(spec.get("every")) is None:
        add("schedule.every_invalid", f"{path}.every",
            f"{label}: every is a whole number above zero of s, m, h or d (30s, 15m, 1h, 1d), "
            f"at most 366 days, not {shown(spec.get('every'))}")
    _check_run(domain, label, spec, path, add)


def _check_at(label: str, spec: dict, path: str, add: Callable[[str, str, str], None],
              zone: str) -> None:
    if "every" in spec:
        add("schedule.item_invalid", f"{path}.every",
            f"{label} runs on an interval ('every') or at a wall time ('at'), not both")
    if "zone" in spec and not _zone_ok(spec["zone"]):
        add("schedule.zone_invalid", f"{path}.zone",
            f"{label}: zone is an IANA zone such as \"Europe/London\", not "
            f"{shown(spec['zone'])}")
    elif "at" not in spec:
        add("schedule.at_invalid", f"{path}.at", f"{label}: a zone comes with 'at': {AT_RULE}")
    elif parse_at(spec["at"], spec.get("zone", zone)) is None:
        add("schedule.at_invalid", f"{path}.at", f"{label}: at is {AT_RULE}, not "
                                                 f"{shown(spec['at'])}")


def _check_run(domain: str, label: str, spec: dict, path: str,
               add: Callable[[str, str, str], None]) -> None:
    run = spec.get("run")
    target = _actions.get(f"{domain}.{run}") if isinstance(run, str) else None
    if target is None:
        add("schedule.run_invalid", f"{path}.run",
            f"{label}: run names an action of the domain '{domain}'; {shown(run)} is not one")
    elif not takes_no_arguments(target):
        add("schedule.run_invalid", f"{path}.run",
            f"{label}: the action {domain}.{run} takes arguments; a schedule passes none")
