"""Checking a manifest: every problem at once, each with a code, a JSON path and a sentence
naming the rule (DESIGN decision 7). A manifest with any problem is never used.

Sections: `calendar` and `services` (this module), `schedules` (timekeeping.schedules),
`tables` (timekeeping.moves.check), `automations` (timekeeping.automations.check, which reads
the brand's webhook endpoints when a brand is given); `settings` is accepted and not yet read.

The check reads any JSON value at any place and answers with problems, never an exception.
What passes is compiled and kept: its tables become DDL, its names and numbers land in columns
of stated lengths. So every name and number is held here to a stated rule, and every text to
the length of the column that keeps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from calendars import rules
from calendars.moments import is_zone, parse_time_of_day
from timekeeping.automations.check import check_section as check_automations
from timekeeping.basics.instants import parse_date
from timekeeping.clocks import dues
from timekeeping.clocks.exposure import FORMS as EXPOSURE_FORMS
from timekeeping.jobs.check import check_work, deliver_steps
from timekeeping.manifests.bounds import check_bounds
from timekeeping.manifests.stewards import check_stewards
from timekeeping.models import Brand
from timekeeping.moves.check import check_section as check_tables
from timekeeping.recurring.check import check_guarantees, check_plan
from timekeeping.specs.rules import is_whole, shown
from timekeeping.specs.services import (
    EVERY_MAX,
    OWNERS,
    PERIODS,
    RUNG_DAYS,
    parse_every,
    parse_rung,
)

SECTIONS = ("calendar", "services", "tables", "schedules", "settings", "removes",
            "automations")
CALENDAR_KEYS = ("zone", "weekends", "holidays", "closed", "closes", "rings_at", "roll",
                 "postpone")
SERVICE_KEYS = ("subject", "steps", "clocks", "deliver", "price", "scope", "signals", "on",
                "outcome", "steward", "keeper")
SUBJECT_KEYS = ("kind", "key", "period", "keeps")
CLOCK_KEYS = ("title", "due", "each", "owner", "rungs", "moves", "hard", "bars", "about",
              "satisfied_by", "choices", "every", "lives_on", "exposure", "guarantee")
NAME = ("a name of 1 to 64 lowercase letters a-z, digits, '-' and '_', starting with a "
        "letter")
# Always `fullmatch`: with `match`, `$` also matches before a final newline. Services, steps
# and clocks are kept by name in columns of 100 characters.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,63}")
MONTH_DAY = re.compile(r"(?P<month>\d{2})-(?P<day>\d{2})")
# What the rows that keep these values hold (Calendar, Subject, Clock, Postponement).
ZONE_MAX, TIME_MAX, KIND_MAX, OWNER_MAX, NOTICE_MAX = 64, 8, 64, 64, 500
TITLE_MAX, PERIOD_MAX = 200, 32  # a clock's title is kept with each {period} filled in
MONTHS_MAX = 120  # ten years after the period ends
DUE_DAYS = 3_650  # ten years either way of another clock's date
KEPT_YEARS = 50  # a date measured from when another was kept: up to fifty years after

MONEY_MAX = 10**12  # minor units: ten billion dollars is no price a date carries
# `removes`: the paths of what a manifest removes while it is in use (manifests.plan). A
# path names a service, a step or clock of one, a table, a column of one, or a schedule.
REMOVES_MAX = 200
_PART = NAME_PATTERN.pattern
REMOVABLE = re.compile(
    rf"services\.{_PART}(\.(steps|clocks)\.{_PART})?|tables\.{_PART}(\.columns\.{_PART})?"
    rf"|schedules\.{_PART}\.{_PART}")

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


def check(document: object, *, brand: Brand | None = None) -> list[Problem]:
    """Every problem in the document, or [] when it may be used. Reads any JSON value at any
    place and answers with problems, never an exception. With `brand` (a plan or a load), the
    names that are the brand's rows (an automation's webhook endpoint) are checked too."""
    checker = Checker()
    if not isinstance(document, dict):
        checker.add("manifest.not_object", "$", "a manifest is a JSON object of sections")
        return checker.problems
    checker.keys(document, SECTIONS, "$", "manifest.section_unknown")
    calendar = document.get("calendar")
    if calendar is not None:
        _calendar(checker, calendar, "$.calendar")
    if "tables" in document:
        check_tables(document["tables"], checker.add)
    if "automations" in document:
        check_automations(document, checker.add, brand=brand)
    if "schedules" in document:
        from timekeeping.schedules.declare import calendar_zone, check_section

        check_section(document["schedules"], checker.add, calendar_zone(document))
    if "removes" in document:
        _removes(checker, document["removes"])
    services = document.get("services", {})
    if not isinstance(services, dict):
        checker.add("services.not_object", "$.services", "'services' maps names to services")
    else:
        for name, service in services.items():
            _service(checker, name, service, f"$.services.{name}")
            if isinstance(service, dict):
                check_plan(checker.add, service, services, f"$.services.{name}")
                check_guarantees(checker.add, service, services, f"$.services.{name}")
        check_stewards(checker.add, services)
    check_bounds(document, checker.add, plan=brand.plan if brand is not None else None)
    return checker.problems


def removal_path(entry: str) -> str:
    """A path of `removes` as the plan writes it, with or without its `$.`."""
    return entry[2:] if entry.startswith("$.") else entry


def _removes(checker: Checker, value: object) -> None:
    if not isinstance(value, list) or len(value) > REMOVES_MAX:
        checker.add("removes.not_list", "$.removes",
                    f"'removes' is a list of at most {REMOVES_MAX} paths, e.g. "
                    "[\"services.tax\"]")
        return
    for number, entry in enumerate(value):
        if not isinstance(entry, str) or not REMOVABLE.fullmatch(removal_path(entry)):
            checker.add("removes.path_invalid", f"$.removes[{number}]",
                        "a path names a service (services.NAME), a step or clock of one "
                        "(services.NAME.steps.STEP, services.NAME.clocks.CLOCK), a table "
                        "(tables.NAME), a column (tables.NAME.columns.COLUMN) or a schedule "
                        "(schedules.DOMAIN.NAME)")


def _name_ok(name: object) -> bool:
    return isinstance(name, str) and NAME_PATTERN.fullmatch(name) is not None


def _text_ok(value: object, longest: int, *, shortest: int = 1) -> bool:
    """Text a column keeps: within its length, and without NUL (PostgreSQL refuses it)."""
    return isinstance(value, str) and shortest <= len(value) <= longest and "\x00" not in value


# -- calendar ---------------------------------------------------------------------------------

def _calendar(checker: Checker, calendar: object, path: str) -> None:
    if not isinstance(calendar, dict):
        checker.add("calendar.not_object", path, "'calendar' is an object")
        return
    checker.keys(calendar, CALENDAR_KEYS, path, "calendar.key_unknown")
    if "zone" in calendar and not _zone_ok(calendar["zone"]):
        checker.add("calendar.zone_invalid", f"{path}.zone",
                    f"{shown(calendar['zone'])} is not an IANA time zone "
                    "(for example America/New_York)")
    for key in ("closes", "rings_at"):
        if key in calendar and not (_text_ok(calendar[key], TIME_MAX)
                                    and parse_time_of_day(calendar[key]) is not None):
            checker.add("calendar.time_invalid", f"{path}.{key}",
                        f"{shown(calendar[key])} is not a time of day; write HH:MM "
                        "(00:00 to 23:59)")
    if "roll" in calendar and calendar["roll"] not in rules.ROLLS:
        checker.add("calendar.roll_invalid", f"{path}.roll",
                    f"{shown(calendar['roll'])} is not one of: {', '.join(rules.ROLLS)}")
    for key in ("weekends", "holidays"):
        if key in calendar:
            _calendar_list(checker, key, calendar[key], f"{path}.{key}")
    if "closed" in calendar:
        _closed(checker, calendar["closed"], f"{path}.closed")
    if "postpone" in calendar:
        _postponements(checker, calendar["postpone"], f"{path}.postpone")


def _calendar_list(checker: Checker, key: str, value: object, path: str) -> None:
    """Weekends or holidays, judged by the calendar itself. Only short texts reach it, so its
    sentences quote no list nested a thousand deep."""
    example = '["sat", "sun"]' if key == "weekends" else '["US", "DC"]'
    if not isinstance(value, list) or not all(
            item is None or is_whole(item, 0, 6) or _text_ok(item, 32) for item in value):
        checker.add(f"calendar.{key}_invalid", path, f"'{key}' is a list such as {example}")
        return
    try:
        rules.Calendar(**{key: value if key == "weekends" else tuple(value)})
    except (ValueError, TypeError) as error:
        checker.add(f"calendar.{key}_invalid", path, str(error).split(": ", 1)[-1])


def _date_in_span(text: object, field: str) -> tuple[date | None, str]:
    """`parse_date`, or None and its sentence. Only short texts reach it, so the sentence
    quotes no list nested a thousand deep."""
    if not _text_ok(text, 32):
        return None, f"{field}: {shown(text)} is not a date written YYYY-MM-DD"
    try:
        return parse_date(text, field=field), ""
    except ValueError as error:
        return None, str(error)


def _zone_ok(zone: object) -> bool:
    return _text_ok(zone, ZONE_MAX) and is_zone(zone)


def _closed(checker: Checker, closed: object, path: str) -> None:
    if not isinstance(closed, list):
        checker.add("calendar.closed_invalid", path, "'closed' is a list of dates (YYYY-MM-DD)")
        return
    for index, day in enumerate(closed):
        found, wrong = _date_in_span(day, f"closed day {index + 1}")
        if found is None:
            checker.add("calendar.closed_invalid", f"{path}[{index}]", wrong)


def _postponements(checker: Checker, notices: object, path: str) -> None:
    if not isinstance(notices, list):
        checker.add("calendar.postpone_invalid", path, "'postpone' is a list of postponements")
        return
    for index, notice in enumerate(notices):
        _postponement(checker, index + 1, notice, f"{path}[{index}]")


def _postponement(checker: Checker, number: int, notice: object, path: str) -> None:
    if not isinstance(notice, dict):
        checker.add("calendar.postpone_invalid", path, "a postponement is an object with "
                    "from, through, to, notice and an optional where")
        return
    checker.keys(notice, ("from", "through", "to", "where", "notice"), path,
                 "calendar.postpone_invalid")
    dates = {}
    for key in ("from", "through", "to"):
        found, wrong = _date_in_span(notice.get(key), f"postponement {number}, '{key}'")
        if found is None:
            checker.add("calendar.postpone_invalid", f"{path}.{key}", wrong)
        else:
            dates[key] = found
    if len(dates) == 3 and dates["through"] < dates["from"]:
        checker.add("calendar.postpone_invalid", f"{path}.through",
                    "'through' is on or after 'from'")
    if not _text_ok(notice.get("notice"), NOTICE_MAX):
        checker.add("calendar.postpone_invalid", f"{path}.notice",
                    f"a postponement cites the notice that moved the dates, in 1 to "
                    f"{NOTICE_MAX} characters")
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
    declared, delivered = steps, deliver_steps(service)
    steps = {**delivered, **declared}  # a step of either section; one named twice is refused
    for step, spec in steps.items():
        if step not in declared:
            if not _name_ok(step):
                checker.add("step.name_invalid", f"{path}.deliver.{step}",
                            f"a step's name is {NAME}")
            continue
        _step(checker, step, spec, steps, f"{path}.steps.{step}")
    clocks = service.get("clocks", {})
    if not isinstance(clocks, dict):
        checker.add("service.clocks_invalid", f"{path}.clocks", "'clocks' maps names to clocks")
        clocks = {}
    for clock_name, spec in clocks.items():
        _clock(checker, clock_name, spec, steps, clocks, f"{path}.clocks.{clock_name}")
    check_work(checker.add, service, steps, clocks, path)


def _subject(checker: Checker, subject: object, path: str) -> None:
    if not isinstance(subject, dict):
        checker.add("service.subject_invalid", path,
                    "a service names its subject: {\"kind\": \"taxpayer\", \"key\": \"ein\"}")
        return
    checker.keys(subject, SUBJECT_KEYS, path, "service.subject_invalid")
    if not _text_ok(subject.get("kind"), KIND_MAX):
        checker.add("service.subject_invalid", f"{path}.kind",
                    f"the subject's kind is text of 1 to {KIND_MAX} characters, such as "
                    "\"taxpayer\"")
    if "key" in subject and not _text_ok(subject["key"], KIND_MAX):
        checker.add("service.subject_invalid", f"{path}.key",
                    f"the subject's key names its identifier in 1 to {KIND_MAX} characters, "
                    "such as \"ein\"")
    if subject.get("period") is not None:
        _period(checker, subject["period"], f"{path}.period")
    if "keeps" in subject and not (
            isinstance(subject["keeps"], list)
            and all(_text_ok(field, KIND_MAX) for field in subject["keeps"])):
        checker.add("subject.keeps_invalid", f"{path}.keeps",
                    f"'keeps' is a list of the job's input fields (1 to {KIND_MAX} characters "
                    "each) the subject keeps for the next period")


def _period(checker: Checker, period: object, path: str) -> None:
    if not isinstance(period, dict) or period.get("of") not in PERIODS:
        checker.add("service.period_invalid", f"{path}.of",
                    f"a period is of one of: {', '.join(PERIODS)}")
        return
    checker.keys(period, ("of", "ends"), path, "service.period_invalid")
    ends = period.get("ends", "12-31")
    text = ends.get("default", "12-31") if isinstance(ends, dict) else ends
    fields_ok = not isinstance(ends, dict) or (
        set(ends) <= {"input", "default"}
        and ("input" not in ends or _text_ok(ends["input"], KIND_MAX)))
    if not (fields_ok and _month_day_ok(text)):
        checker.add("service.period_invalid", f"{path}.ends",
                    "'ends' is a month and day written MM-DD, or {\"input\": field, "
                    "\"default\": \"MM-DD\"}")


def _month_day_ok(text: object) -> bool:
    match = MONTH_DAY.fullmatch(text) if isinstance(text, str) else None
    try:
        return match is not None and bool(date(2024, int(match["month"]), int(match["day"])))
    except ValueError:
        return False  # 2024 is a leap year: 02-29 is a day some years end on


def _step(checker: Checker, step: str, spec: object, steps: dict, path: str) -> None:
    if not _name_ok(step):
        checker.add("step.name_invalid", path, f"a step's name is {NAME}")
    if spec is None:
        return
    if not isinstance(spec, dict):
        checker.add("step.not_object", path, "a step is an object (or {})")
        return
    checker.keys(spec, ("then", "title"), path, "step.key_unknown")
    _known_steps(checker, spec.get("then", []), steps, f"{path}.then", "step.then")
    if "title" in spec and not _text_ok(spec["title"], TITLE_MAX, shortest=0):
        checker.add("step.title_invalid", f"{path}.title",
                    f"a step's title is text of at most {TITLE_MAX} characters")


def _known_steps(checker: Checker, names: object, steps: dict, path: str, code: str) -> None:
    """A list of steps of this service: `<code>_invalid` when no list, `<code>_unknown` at
    each name that is no step."""
    if not isinstance(names, list):
        checker.add(f"{code}_invalid", path,
                    f"'{code.split('.')[-1]}' is a list of this service's step names")
        return
    for index, name in enumerate(names):
        if not isinstance(name, str) or name not in steps:
            checker.add(f"{code}_unknown", f"{path}[{index}]",
                        f"{shown(name)} is not a step of this service")


# -- clocks -----------------------------------------------------------------------------------

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
        _due(checker, spec["due"], clocks, name, f"{path}.due", own_date=True)
    _clock_fields(checker, spec, path)
    _measured(checker, spec, path)
    _rungs(checker, spec.get("rungs", []), steps, f"{path}.rungs")
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
        _known_steps(checker, spec.get(key, []), steps, f"{path}.{key}", f"clock.{key}")
    if spec.get("bars") and not spec.get("hard"):
        checker.add("clock.bars_needs_hard", f"{path}.bars",
                    "only a hard clock bars steps once its date has passed")


def _measured(checker: Checker, spec: dict, path: str) -> None:
    """A date measured from another's keeping (`after_kept`) is one date: no `each` or
    `every`. (Where the rule may stand, `_due` says.)"""
    due = spec.get("due") if isinstance(spec.get("due"), dict) else {}
    if "after_kept" in due and (spec.get("each") or spec.get("every")):
        checker.add("clock.due_invalid", f"{path}.due.after_kept",
                    "a date measured from another's keeping is one date: no 'each' or 'every'")


def _clock_fields(checker: Checker, spec: dict, path: str) -> None:
    """A clock's plain fields: title, owner, each, hard, every, lives_on, exposure. (Its
    `guarantee` is checked with the service's money: `recurring.check.check_guarantees`.)"""
    if spec.get("title") is not None and not _title_ok(spec["title"]):
        checker.add("clock.title_invalid", f"{path}.title",
                    f"a clock's title is text of at most {TITLE_MAX} characters once each "
                    f"{{period}} in it is filled in (a period has up to {PERIOD_MAX})")
    owner = spec.get("owner", "brand")
    if not _text_ok(owner, OWNER_MAX) or not (owner in OWNERS or owner.startswith("mbr_")):
        checker.add("clock.owner_invalid", f"{path}.owner",
                    f"the owner is one of {', '.join(OWNERS)}, or a member id (mbr_…)")
    each = spec.get("each")
    if each is not None and not (isinstance(each, dict) and set(each) == {"of"}
                                 and _text_ok(each["of"], KIND_MAX)):
        checker.add("clock.each_invalid", f"{path}.each",
                    "'each' names the input list of items: {\"of\": \"jurisdictions\"}")
    if not isinstance(spec.get("hard", False), bool):
        checker.add("clock.hard_invalid", f"{path}.hard", "'hard' is true or false")
    if "every" in spec and parse_every(spec["every"]) is None:
        checker.add("clock.every_invalid", f"{path}.every",
                    f"{shown(spec['every'])} is not an interval; write a whole number from 1 to "
                    f"{EVERY_MAX} and d, w, mo or y (3mo, 1y)")
    if spec.get("lives_on", "job") not in ("job", "subject"):
        checker.add("clock.lives_on_invalid", f"{path}.lives_on",
                    "'lives_on' is 'job' (the default) or 'subject'")
    if "exposure" in spec:
        _exposure(checker, spec["exposure"], f"{path}.exposure")
    if "about" in spec and not (isinstance(spec["about"], dict) and set(spec["about"]) ==
                                {"input"} and _text_ok(spec["about"]["input"], KIND_MAX)):
        checker.add("clock.about_invalid", f"{path}.about",
                    "'about' names the input field of a sum the date is about: "
                    "{\"input\": \"carryforward\"}")


def _exposure(checker: Checker, exposure: object, path: str) -> None:
    """What a miss costs: exactly one of per_month_late, per_day_late or once, each an amount
    in minor units and a currency."""
    forms = [form for form in EXPOSURE_FORMS if isinstance(exposure, dict) and form in exposure]
    if not isinstance(exposure, dict) or len(forms) != 1 or len(exposure) != 1:
        checker.add("clock.exposure_invalid", path,
                    "'exposure' has exactly one of: " + ", ".join(EXPOSURE_FORMS))
        return
    rule = exposure[forms[0]]
    where = f"{path}.{forms[0]}"
    if not isinstance(rule, dict) or set(rule) != {"amount", "currency"}:
        checker.add("clock.exposure_invalid", where, "a price is {\"amount\": minor units, "
                                                     "\"currency\": \"USD\"}")
        return
    if not is_whole(rule["amount"], 0, MONEY_MAX):
        checker.add("clock.exposure_invalid", f"{where}.amount",
                    f"the amount is a whole number of minor units from 0 to {MONEY_MAX:,}")
    currency = rule["currency"]
    if not (isinstance(currency, str) and re.fullmatch(r"[A-Z]{3}", currency)):
        checker.add("clock.exposure_invalid", f"{where}.currency",
                    "the currency is a three-letter code such as USD")


def _title_ok(title: object) -> bool:
    return _text_ok(title, TITLE_MAX, shortest=0) and len(title) + title.count("{period}") * (
        PERIOD_MAX - len("{period}")) <= TITLE_MAX


def _rungs(checker: Checker, rungs: object, steps: dict, path: str) -> None:
    if not isinstance(rungs, list):
        checker.add("clock.rungs_invalid", path, "'rungs' is a list of rungs ('notice 90d', …)")
        return
    for index, text in enumerate(rungs):
        rung = parse_rung(text)
        if rung is None:
            checker.add("clock.rung_invalid", f"{path}[{index}]",
                        f"{shown(text)} is not a rung; write 'notice 90d', 'escalate 3d', "
                        f"'ack daily 5d' or 'run <step> 3d', at most {RUNG_DAYS} days")
        elif rung.action == "run" and rung.step not in steps:
            checker.add("clock.rung_step_unknown", f"{path}[{index}]",
                        f"the rung runs '{rung.step}', which is not a step of this service")


QUARTERS = ("Q1", "Q2", "Q3", "Q4")


def _due(checker: Checker, rule: object, clocks: dict, own: str, path: str, *,
         item: bool = False, own_date: bool = False) -> None:
    """A due rule (timekeeping.clocks.dues); `item`: an item's own rule, which holds no items."""
    if not isinstance(rule, dict):
        checker.add("clock.due_invalid", path, "a due rule is an object: " + _forms())
        return
    forms = [form for form in dues.FORMS if form in rule]
    extra = [key for key in rule if key not in (*dues.FORMS, "items", "quarters", "days")]
    if "days" in rule and "clock" not in rule:
        extra.append("days")  # days shift only a date read from another clock
    if len(forms) != 1 or extra:
        checker.add("clock.due_invalid", path, "a due rule has exactly one of " + _forms())
        return
    if forms[0] == "after_kept" and not own_date:
        checker.add("clock.due_invalid", path,
                    "'after_kept' is only a clock's own due rule, not an item's, a quarter's "
                    "or a move's")
    _due_form(checker, forms[0], rule, clocks, own, path)
    for key, names in (("items", None), ("quarters", QUARTERS)):
        if key not in rule:
            continue
        per = rule[key]
        if item or not isinstance(per, dict) or (names and set(per) - set(names)):
            checker.add("clock.due_invalid", f"{path}.{key}",
                        f"'{key}' maps " + ("an item" if key == "items" else
                                            "a quarter, Q1 to Q4,")
                        + " to a due rule (which holds no items or quarters of its own)")
            continue
        for name, own_rule in per.items():
            _due(checker, own_rule, clocks, own, f"{path}.{key}.{name}", item=True)


def _due_form(checker: Checker, form: str, rule: dict, clocks: dict, own: str,
              path: str) -> None:
    value = rule[form]
    if form == "date":
        found, wrong = _date_in_span(value, "'date'")
        if found is None:
            checker.add("clock.due_invalid", f"{path}.date", wrong)
    elif form == "after_period":
        value = value if isinstance(value, dict) else {}
        if not (is_whole(value.get("months"), 0, MONTHS_MAX)
                and is_whole(value.get("day"), 1, 31)):
            checker.add("clock.due_invalid", f"{path}.after_period",
                        f"'after_period' is {{\"months\": 0 to {MONTHS_MAX}, \"day\": 1 to 31}}")
    elif form == "input" and not _text_ok(value, KIND_MAX):
        checker.add("clock.due_invalid", f"{path}.input", "'input' names a field of the input")
    elif form == "clock":
        if not isinstance(value, str) or value not in clocks or value == own:
            checker.add("clock.due_clock_unknown", f"{path}.clock",
                        f"{shown(value)} is not another clock of this service")
        if not is_whole(rule.get("days", 0), -DUE_DAYS, DUE_DAYS):
            checker.add("clock.due_invalid", f"{path}.days",
                        f"'days' is a whole number from -{DUE_DAYS} to {DUE_DAYS}")
    elif form == "after_kept":
        _after_kept(checker, value, clocks, own, f"{path}.after_kept")
    elif form == "function" and not (isinstance(value, str) and dues.is_registered(value)):
        checker.add("clock.due_function_unknown", f"{path}.function",
                    f"no due function named {shown(value)} is registered")


def _after_kept(checker: Checker, value: object, clocks: dict, own: str, path: str) -> None:
    if not isinstance(value, dict) or set(value) - {"clock", "item", "years"}:
        checker.add("clock.due_invalid", path, "'after_kept' is {\"clock\": another clock, "
                                               "\"item\": one of its items (optional), "
                                               f"\"years\": 1 to {KEPT_YEARS}}}")
        return
    clock = value.get("clock")
    if not isinstance(clock, str) or clock not in clocks or clock == own:
        checker.add("clock.due_clock_unknown", f"{path}.clock",
                    f"{shown(clock)} is not another clock of this service")
    if "item" in value and not _text_ok(value["item"], KIND_MAX):
        checker.add("clock.due_invalid", f"{path}.item",
                    f"'item' names one item, text of at most {KIND_MAX} characters")
    if not is_whole(value.get("years"), 1, KEPT_YEARS):
        checker.add("clock.due_invalid", f"{path}.years",
                    f"'years' is a whole number from 1 to {KEPT_YEARS}")


def _forms() -> str:
    return ", ".join(f"'{form}'" for form in dues.FORMS)
