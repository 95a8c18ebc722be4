"""A checked manifest's services, as values the clocks and the gate read (DESIGN 7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from dateutil.relativedelta import relativedelta

from timekeeping.specs.jobs import WorkSpec, compile_work
from timekeeping.specs.plans import PlanSpec, compile_plan

# Digits are bounded in the patterns: int() refuses a string of more than 4,300 digits.
RUNG = re.compile(
    r"(?:(?P<plain>notice|escalate) (?P<days>\d{1,4})d"
    r"|ack daily (?P<ack_days>\d{1,4})d"
    r"|run (?P<step>[a-z][a-z0-9_-]{0,63}) (?P<run_days>\d{1,4})d)"
)
RUNG_DAYS = 3_650  # ten years
RUNG_TEXT_MAX = 80  # the text names the rung's timer, kept in 255 characters with its clock's
EVERY = re.compile(r"(?P<n>[1-9]\d{0,2})(?P<unit>d|w|mo|y)")
EVERY_MAX = 100
OWNERS = ("brand", "buyer", "of_record")
PERIODS = ("tax_year", "quarter", "month", "none")


@dataclass(frozen=True)
class Rung:
    text: str
    action: str  # notice, escalate, ack, run
    days: int
    step: str = ""


def parse_rung(text: object) -> Rung | None:
    if not isinstance(text, str) or len(text) > RUNG_TEXT_MAX:
        return None
    match = RUNG.fullmatch(text.strip())
    if match is None:
        return None
    days = int(match["days"] or match["ack_days"] or match["run_days"])
    if days > RUNG_DAYS:
        return None
    if match["plain"]:
        return Rung(text, match["plain"], days)
    if match["ack_days"]:
        return Rung(text, "ack", days)
    return Rung(text, "run", days, match["step"])


def parse_every(text: object) -> relativedelta | None:
    if not isinstance(text, str):
        return None
    match = EVERY.fullmatch(text)
    if match is None or int(match["n"]) > EVERY_MAX:
        return None
    n, unit = int(match["n"]), match["unit"]
    return {"d": relativedelta(days=n), "w": relativedelta(weeks=n),
            "mo": relativedelta(months=n), "y": relativedelta(years=n)}[unit]


@dataclass(frozen=True)
class ClockSpec:
    name: str
    title: str
    due: dict
    owner: str
    rungs: tuple[Rung, ...] = ()
    each: str | None = None
    moves: dict = field(default_factory=dict)  # step -> due rule
    hard: bool = False
    bars: tuple[str, ...] = ()
    satisfied_by: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    every: str | None = None
    lives_on_subject: bool = False
    exposure: dict | None = None
    guarantee: dict | None = None
    about: str | None = None  # the input field of a sum the date is about (a carryforward)


@dataclass(frozen=True)
class StepSpec:
    name: str
    then: tuple[str, ...] = ()


@dataclass(frozen=True)
class PeriodSpec:
    of: str = "none"
    ends: str = "12-31"
    ends_input: str | None = None

    def end_of(self, period: str, job_input: dict) -> date | None:
        """The last day of the named period ('2027', '2027-Q1', '2027-03')."""
        try:
            if self.of == "tax_year":
                month_day = job_input.get(self.ends_input, self.ends) if self.ends_input \
                    else self.ends
                month, day = (int(part) for part in str(month_day).split("-"))
                return date(int(period), month, day)
            if self.of == "quarter":
                year, quarter = period.split("-Q")
                return date(int(year), 3 * int(quarter), 1) + relativedelta(day=31)
            if self.of == "month":
                year, month = period.split("-")
                return date(int(year), int(month), 1) + relativedelta(day=31)
        except (ValueError, TypeError):
            return None
        return None


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    subject_kind: str
    period: PeriodSpec
    steps: dict[str, StepSpec]
    clocks: dict[str, ClockSpec]
    work: WorkSpec = field(default_factory=WorkSpec)
    plan: PlanSpec = field(default_factory=PlanSpec)
    keeps: tuple[str, ...] = ()  # the job's input fields its subject keeps when it ends
    # S16: a steward service keeps a subject's `lives_on: subject` dates between its jobs;
    # `keeper` is the email of the member who keeps them ("": the brand's owner).
    steward: bool = False
    keeper: str = ""


def compile_services(document: dict) -> dict[str, ServiceSpec]:
    """Build the service values of a document that passed `check`."""
    services = {}
    for name, raw in (document.get("services") or {}).items():
        subject = raw.get("subject", {})
        period = subject.get("period") or {}
        ends = period.get("ends", "12-31")
        ends_input = None
        if isinstance(ends, dict):
            ends_input, ends = ends.get("input"), ends.get("default", "12-31")
        steps = {step: StepSpec(step, tuple((spec or {}).get("then", ())))
                 for step, spec in {**(raw.get("deliver") or {}),
                                    **(raw.get("steps") or {})}.items()}
        clocks = {}
        for clock_name, spec in (raw.get("clocks") or {}).items():
            clocks[clock_name] = ClockSpec(
                name=clock_name, title=spec.get("title") or f"{clock_name} ({name})",
                due=spec["due"], owner=spec.get("owner", "brand"),
                rungs=tuple(parse_rung(text) for text in spec.get("rungs", ())),
                each=(spec.get("each") or {}).get("of"), moves=dict(spec.get("moves") or {}),
                hard=bool(spec.get("hard")), bars=tuple(spec.get("bars", ())),
                satisfied_by=tuple(spec.get("satisfied_by", ())),
                choices=tuple(spec.get("choices", ())), every=spec.get("every"),
                lives_on_subject=spec.get("lives_on") == "subject",
                exposure=spec.get("exposure"), guarantee=spec.get("guarantee"),
                about=(spec.get("about") or {}).get("input"),
            )
        services[name] = ServiceSpec(
            name=name, subject_kind=subject.get("kind", ""),
            period=PeriodSpec(of=period.get("of", "none"), ends=ends, ends_input=ends_input),
            steps=steps, clocks=clocks, work=compile_work(raw), plan=compile_plan(raw),
            keeps=tuple(subject.get("keeps", ())), steward=raw.get("steward") is True,
            keeper=raw.get("keeper") or "",
        )
    return services
