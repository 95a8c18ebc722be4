"""Checking a manifest: every problem at once, each with a code, a JSON path and a sentence
naming the rule (DESIGN decision 7). A manifest with any problem is never used.

Sections: `calendar` and `services` (this module), `schedules` (timekeeping.schedules),
`tables` (timekeeping.moves.spec); `settings` is accepted and not yet read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from calendars import rules
from calendars.moments import parse_time_of_day, zone_of
from timekeeping import dues
from timekeeping.manifests.spec import OWNERS, PERIODS, parse_every, parse_rung

SECTIONS = ("calendar", "services", "tables", "schedules", "settings")
CALENDAR_KEYS = ("zone", "weekends", "holidays", "closed", "closes", "rings_at", "roll",
                 "postpone")
SERVICE_KEYS = ("subject", "steps", "clocks")
SUBJECT_KEYS = ("kind", "key", "period")
CLOCK_KEYS = ("title", "due", "each", "owner", "rungs", "moves", "hard", "bars",
              "satisfied_by", "choices", "every", "lives_on", "exposure", "guarantee")
NAME = "a name of lowercase letters a-z, digits, '-' and '_', starting with a letter"
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class Problem:
    code: str
    path: str
    message: str

    def as_dict(self) -> dict:
        return {"code": self.code, "path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.code} at {self.path}: {self.message}"


class Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str) -> None:
        self.problems.append(Problem(code, path, message))

    def keys(self, value: dict, allowed: tuple[str, ...], path: str, code: str) -> None:
        for key in value:
            if key not in allowed:
                self.add(code, f"{path}.{key}",
                         f"'{key}' is not a key here; the keys are: {', '.join(allowed)}")


def check(document: object) -> list[Problem]:
    """Every problem in the document, or [] when it may be used."""
    checker = Checker()
    if not isinstance(document, dict):
        checker.add("manifest.not_object", "$", "a manifest is a JSON object of sections")
        return checker.problems
    checker.keys(document, SECTIONS, "$", "manifest.section_unknown")
    calendar = document.get("calendar")
    if calendar is not None:
        _calendar(checker, calendar, "$.calendar")
    if "tables" in document:
        from timekeeping.moves.spec import check_section as check_tables

        check_tables(document["tables"], checker.add)
    if "schedules" in document:
        from timekeeping.schedules.declare import check_section

        check_section(document["schedules"], checker.add)
    services = document.get("services", {})
    if not isinstance(services, dict):
        checker.add("services.not_object", "$.services", "'services' maps names to services")
    else:
        for name, service in services.items():
            _service(checker, name, service, f"$.services.{name}")
    return checker.problems


def _name_ok(name: object) -> bool:
    return isinstance(name, str) and NAME_PATTERN.match(name) is not None


# -- calendar ---------------------------------------------------------------------------------

def _calendar(checker: Checker, calendar: object, path: str) -> None:
    if not isinstance(calendar, dict):
        checker.add("calendar.not_object", path, "'calendar' is an object")
        return
    checker.keys(calendar, CALENDAR_KEYS, path, "calendar.key_unknown")
    if "zone" in calendar:
        try:
            zone_of(calendar["zone"])
        except ValueError:
            checker.add("calendar.zone_invalid", f"{path}.zone",
                        f"{calendar['zone']!r} is not an IANA time zone "
                        "(for example America/New_York)")
    for key in ("closes", "rings_at"):
        if key in calendar and parse_time_of_day(calendar[key]) is None:
            checker.add("calendar.time_invalid", f"{path}.{key}",
                        f"{calendar[key]!r} is not a time of day; write HH:MM (00:00 to 23:59)")
    if "roll" in calendar and calendar["roll"] not in rules.ROLLS:
        checker.add("calendar.roll_invalid", f"{path}.roll",
                    f"{calendar['roll']!r} is not one of: {', '.join(rules.ROLLS)}")
    for key, build in (("weekends", lambda v: rules.Calendar(weekends=v)),
                       ("holidays", lambda v: rules.Calendar(holidays=tuple(v))),
                       ("closed", lambda v: rules.Calendar(closed=tuple(v)))):
        if key in calendar:
            try:
                if not isinstance(calendar[key], list):
                    raise ValueError(f"{key}: write a list")
                build(calendar[key])
            except (ValueError, TypeError) as error:
                checker.add(f"calendar.{key}_invalid", f"{path}.{key}",
                            str(error).split(": ", 1)[-1])
    for index, notice in enumerate(calendar.get("postpone") or []):
        _postponement(checker, notice, f"{path}.postpone[{index}]")


def _postponement(checker: Checker, notice: object, path: str) -> None:
    if not isinstance(notice, dict):
        checker.add("calendar.postpone_invalid", path, "a postponement is an object with "
                    "from, through, to, notice and an optional where")
        return
    checker.keys(notice, ("from", "through", "to", "where", "notice"), path,
                 "calendar.postpone_invalid")
    dates = {}
    for key in ("from", "through", "to"):
        try:
            dates[key] = date.fromisoformat(str(notice.get(key)))
        except ValueError:
            checker.add("calendar.postpone_invalid", f"{path}.{key}",
                        f"'{key}' is a date written YYYY-MM-DD")
    if len(dates) == 3 and dates["through"] < dates["from"]:
        checker.add("calendar.postpone_invalid", f"{path}.through",
                    "'through' is on or after 'from'")
    if not notice.get("notice"):
        checker.add("calendar.postpone_invalid", f"{path}.notice",
                    "a postponement cites the notice that moved the dates")
    if not isinstance(notice.get("where", {}), dict):
        checker.add("calendar.postpone_invalid", f"{path}.where",
                    "'where' is an object of subject field: value pairs")


# -- services ---------------------------------------------------------------------------------

def _service(checker: Checker, name: str, service: object, path: str) -> None:
    if not _name_ok(name):
        checker.add("service.name_invalid", path, f"a service's name is {NAME}")
    if not isinstance(service, dict):
        checker.add("service.not_object", path, "a service is an object")
        return
    checker.keys(service, SERVICE_KEYS, path, "service.key_unknown")
    _subject(checker, service.get("subject"), f"{path}.subject")
    steps = service.get("steps", {})
    if not isinstance(steps, dict):
        checker.add("service.steps_invalid", f"{path}.steps", "'steps' maps names to steps")
        steps = {}
    for step, spec in steps.items():
        _step(checker, step, spec, steps, f"{path}.steps.{step}")
    clocks = service.get("clocks", {})
    if not isinstance(clocks, dict):
        checker.add("service.clocks_invalid", f"{path}.clocks", "'clocks' maps names to clocks")
        return
    for clock_name, spec in clocks.items():
        _clock(checker, clock_name, spec, steps, clocks, f"{path}.clocks.{clock_name}")


def _subject(checker: Checker, subject: object, path: str) -> None:
    if not isinstance(subject, dict) or not isinstance(subject.get("kind"), str):
        checker.add("service.subject_invalid", path,
                    "a service names its subject: {\"kind\": \"taxpayer\", \"key\": \"ein\"}")
        return
    checker.keys(subject, SUBJECT_KEYS, path, "service.subject_invalid")
    period = subject.get("period")
    if period is None:
        return
    if not isinstance(period, dict) or period.get("of") not in PERIODS:
        checker.add("service.period_invalid", f"{path}.period.of",
                    f"a period is of one of: {', '.join(PERIODS)}")
        return
    ends = period.get("ends", "12-31")
    text = ends.get("default", "12-31") if isinstance(ends, dict) else ends
    try:
        month, day = (int(part) for part in str(text).split("-"))
        date(2024, month, day)
    except ValueError:
        checker.add("service.period_invalid", f"{path}.period.ends",
                    "'ends' is a month and day written MM-DD, or {\"input\": field, "
                    "\"default\": \"MM-DD\"}")


def _step(checker: Checker, step: str, spec: object, steps: dict, path: str) -> None:
    if not _name_ok(step):
        checker.add("step.name_invalid", path, f"a step's name is {NAME}")
    if spec is None:
        return
    if not isinstance(spec, dict):
        checker.add("step.not_object", path, "a step is an object (or {})")
        return
    checker.keys(spec, ("then", "title"), path, "step.key_unknown")
    for index, then in enumerate(spec.get("then", [])):
        if then not in steps:
            checker.add("step.then_unknown", f"{path}.then[{index}]",
                        f"'{then}' is not a step of this service")


def _clock(checker: Checker, name: str, spec: object, steps: dict, clocks: dict,
           path: str) -> None:
    if not _name_ok(name):
        checker.add("clock.name_invalid", path, f"a clock's name is {NAME}")
    if not isinstance(spec, dict):
        checker.add("clock.not_object", path, "a clock is an object")
        return
    checker.keys(spec, CLOCK_KEYS, path, "clock.key_unknown")
    if "due" not in spec:
        checker.add("clock.due_missing", path, "a clock says when it is due: 'due'")
    else:
        _due(checker, spec["due"], clocks, name, f"{path}.due")
    owner = spec.get("owner", "brand")
    if not isinstance(owner, str) or not (owner in OWNERS or owner.startswith("mbr_")):
        checker.add("clock.owner_invalid", f"{path}.owner",
                    f"the owner is one of {', '.join(OWNERS)}, or a member id (mbr_…)")
    each = spec.get("each")
    if each is not None and not (isinstance(each, dict) and isinstance(each.get("of"), str)):
        checker.add("clock.each_invalid", f"{path}.each",
                    "'each' names the input list of items: {\"of\": \"jurisdictions\"}")
    for index, text in enumerate(spec.get("rungs", [])):
        rung = parse_rung(text)
        if rung is None:
            checker.add("clock.rung_invalid", f"{path}.rungs[{index}]",
                        f"{text!r} is not a rung; write 'notice 90d', 'escalate 3d', "
                        "'ack daily 5d' or 'run <step> 3d'")
        elif rung.action == "run" and rung.step not in steps:
            checker.add("clock.rung_step_unknown", f"{path}.rungs[{index}]",
                        f"the rung runs '{rung.step}', which is not a step of this service")
    moves = spec.get("moves", {})
    if not isinstance(moves, dict):
        checker.add("clock.moves_invalid", f"{path}.moves", "'moves' maps a step to a due rule")
        moves = {}
    if spec.get("hard") and moves:
        checker.add("clock.hard_moves", f"{path}.moves",
                    "a hard clock is moved by no step, only by the calendar's postponements")
    for step, rule in moves.items():
        if step not in steps:
            checker.add("clock.moves_step_unknown", f"{path}.moves.{step}",
                        f"'{step}' is not a step of this service")
        _due(checker, rule, clocks, name, f"{path}.moves.{step}")
    for key in ("bars", "satisfied_by", "choices"):
        for index, step in enumerate(spec.get(key, [])):
            if step not in steps:
                checker.add(f"clock.{key}_unknown", f"{path}.{key}[{index}]",
                            f"'{step}' is not a step of this service")
    if spec.get("bars") and not spec.get("hard"):
        checker.add("clock.bars_needs_hard", f"{path}.bars",
                    "only a hard clock bars steps once its date has passed")
    if "every" in spec and parse_every(spec["every"]) is None:
        checker.add("clock.every_invalid", f"{path}.every",
                    f"{spec['every']!r} is not an interval; write a whole number and d, w, mo "
                    "or y (3mo, 1y)")
    if spec.get("lives_on", "job") not in ("job", "subject"):
        checker.add("clock.lives_on_invalid", f"{path}.lives_on",
                    "'lives_on' is 'job' (the default) or 'subject'")
    for key in ("exposure", "guarantee"):
        if key in spec and not isinstance(spec[key], dict):
            checker.add(f"clock.{key}_invalid", f"{path}.{key}", f"'{key}' is an object")


def _due(checker: Checker, rule: object, clocks: dict, own: str, path: str) -> None:
    if not isinstance(rule, dict):
        checker.add("clock.due_invalid", path, "a due rule is an object: " + _forms())
        return
    per_item = rule.get("items", {})
    forms = [form for form in dues.FORMS if form in rule]
    extra = [key for key in rule if key not in (*dues.FORMS, "items", "days")]
    if "days" in rule and "clock" not in rule:
        extra.append("days")  # days shift only a date read from another clock
    if len(forms) != 1 or extra:
        checker.add("clock.due_invalid", path, "a due rule has exactly one of " + _forms())
        return
    form = forms[0]
    value = rule[form]
    if form == "date":
        try:
            date.fromisoformat(str(value))
        except ValueError:
            checker.add("clock.due_invalid", f"{path}.date", "'date' is written YYYY-MM-DD")
    elif form == "after_period":
        value = value if isinstance(value, dict) else {}
        months, day = value.get("months"), value.get("day")
        if not (isinstance(months, int) and months >= 0 and isinstance(day, int)
                and 1 <= day <= 31):
            checker.add("clock.due_invalid", f"{path}.after_period",
                        "'after_period' is {\"months\": 0 or more, \"day\": 1 to 31}")
    elif form == "input" and not isinstance(value, str):
        checker.add("clock.due_invalid", f"{path}.input", "'input' names a field of the input")
    elif form == "clock":
        if value not in clocks or value == own:
            checker.add("clock.due_clock_unknown", f"{path}.clock",
                        f"'{value}' is not another clock of this service")
        if not isinstance(rule.get("days", 0), int):
            checker.add("clock.due_invalid", f"{path}.days", "'days' is a whole number")
    elif form == "function" and not dues.is_registered(str(value)):
        checker.add("clock.due_function_unknown", f"{path}.function",
                    f"no due function named {value!r} is registered")
    if not isinstance(per_item, dict):
        checker.add("clock.due_invalid", f"{path}.items", "'items' maps an item to a due rule")
        return
    for item, item_rule in per_item.items():
        _due(checker, item_rule, clocks, own, f"{path}.items.{item}")


def _forms() -> str:
    return ", ".join(f"'{form}'" for form in dues.FORMS)
