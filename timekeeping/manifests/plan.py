"""What loading a manifest would change, before anything is stored (issue 15, S24).

`plan(brand, document)` compares the document with the brand's current version, section by
section: services and their steps and clocks, schedules (a schedule no longer declared under
its name whose action another new name runs is renamed, as the schedules' sync sees it),
tables and their columns, the calendar and the settings. Each removal says what still uses
it here: open jobs and active subscriptions of a service, open dates of a clock, open jobs
that may still take a step, rows of a table, runs of a schedule.

A removal in use must be stated: the document names it in its top-level `removes` list (the
path the plan gives, e.g. `services.tax` or `$.tables.orders`). An unstated one is a problem,
`removal_unstated`, and the load is refused whole. A stated one is kept in the records
(`manifest.removed`) with who removed it and what used it; nothing is deleted by a load:
open jobs run to their end on the version they opened under, a removed table keeps its rows,
readable and retired.

The plan also counts what stays on older versions (S24): open jobs, active subscriptions and
subjects whose version is not the new one, and when the last armed timer of an older version
is owed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, partial

from django.db import connections
from django.db.models import Max

from timekeeping.manifests.check import Problem, check, removal_path
from timekeeping.models import (
    Brand,
    BrandTable,
    Job,
    Manifest,
    Occurrence,
    ScheduleRun,
    Subject,
    Subscription,
    Timer,
)
from timekeeping.moves.tables import safe


@dataclass(frozen=True)
class Change:
    action: str  # added, changed, renamed, removed
    what: str  # service, step, clock, table, column, schedule, calendar, settings, automations
    path: str  # $.services.tax.clocks.file
    uses: tuple[str, ...] = ()  # what still uses a removal here
    stated: bool = False  # a removal the document names in `removes`
    was: str = ""  # a rename's old path

    def as_dict(self) -> dict:
        found = {"action": self.action, "what": self.what, "path": self.path}
        if self.action == "removed":
            found.update(uses=list(self.uses), stated=self.stated)
        if self.was:
            found["was"] = self.was
        return found

    def __str__(self) -> str:
        text = f"{self.action} {self.what} {self.path}"
        if self.was:
            text += f" (was {self.was})"
        if self.action == "removed":
            text += f": in use ({', '.join(self.uses)})" if self.uses else ": not in use"
            text += ", stated" if self.stated else ""
        return text


@dataclass
class Staying:
    """What keeps an older version (S24): it runs to its end on it."""

    jobs: int = 0
    subscriptions: int = 0
    subjects: int = 0
    last_owed: datetime | None = None

    def as_dict(self) -> dict:
        return {"jobs": self.jobs, "subscriptions": self.subscriptions,
                "subjects": self.subjects,
                "last_owed": self.last_owed.isoformat() if self.last_owed else None}


@dataclass
class Plan:
    current: Manifest | None
    bundle: str = ""
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    staying: Staying = field(default_factory=Staying)

    @property
    def unchanged(self) -> bool:
        return self.current is not None and self.current.bundle == self.bundle

    @property
    def removals(self) -> list[Change]:
        return [change for change in self.changes if change.action == "removed"]

    def as_dict(self) -> dict:
        return {
            "current_version": self.current.version if self.current else None,
            "bundle": self.bundle, "unchanged": self.unchanged, "loadable": not self.problems,
            "changes": [change.as_dict() for change in self.changes],
            "problems": [problem.as_dict() for problem in self.problems],
            "staying": self.staying.as_dict(),
        }


def plan(brand: Brand, document: object, *, current: Manifest | None = None) -> Plan:
    """What loading `document` as the brand's manifest would change; writes nothing. With
    problems (the check's, and every removal in use that `removes` does not state), the load
    would be refused."""
    from timekeeping.specs.current import bundle_of
    from timekeeping.specs.current import current as current_of

    current = current if current is not None else current_of(brand)
    problems = check(document, brand=brand)
    if problems:
        return Plan(current=current, problems=problems)
    old = current.document if current else {}
    found = Plan(current=current, bundle=bundle_of(document))
    stated = {removal_path(entry) for entry in document.get("removes", [])}
    changes: list[Change] = []
    changes += _services(brand, old.get("services") or {}, document.get("services") or {})
    changes += _schedules(brand, old, document)
    changes += _tables(brand, old.get("tables") or {}, document.get("tables") or {})
    for section in ("calendar", "settings", "automations"):
        if section in document and old.get(section) != document[section]:
            changes.append(Change("added" if section not in old else "changed", section,
                                  f"$.{section}"))
    if old.get("automations") and "automations" not in document:  # the rules stop hearing
        changes.append(Change("removed", "automations", "$.automations"))
    found.changes = [
        Change(c.action, c.what, c.path, c.uses, stated=c.path[2:] in stated, was=c.was)
        for c in changes
    ]
    # A path the document still declares contradicts it. One that neither version declares
    # (removed by an earlier version whose file keeps its `removes`) is left alone.
    for entry in sorted(entry for entry in stated if _declares(document, entry)):
        found.problems.append(Problem(
            "removes.not_removed", "$.removes",
            f"'{entry}' is named in 'removes' but this manifest still declares it"))
    for change in found.removals:
        if change.uses and not change.stated:
            found.problems.append(Problem(
                "removal_unstated", change.path,
                f"this manifest removes the {change.what} {change.path.rsplit('.', 1)[1]!r}, "
                f"which is in use ({', '.join(change.uses)}); name '{change.path[2:]}' in "
                "the top-level "
                "'removes' list to remove it (what uses it keeps running on the version it "
                "opened under, and nothing is deleted)"))
    found.staying = _staying(brand, found.bundle)
    return found


def _declares(document: dict, path: str) -> bool:
    """Whether the document declares what a `removes` path names."""
    parts = path.split(".")
    if parts[0] == "schedules":
        return any(item.name == ".".join(parts[1:]) for item in _schedules_of(document))
    found = document.get(parts[0]) or {}
    for part in parts[1:]:
        if part == "columns" and isinstance(found, dict):
            found = {column.get("ref"): column for column in _columns(found)}
        elif isinstance(found, dict) and part in found:
            found = found[part]
        else:
            return False
    return True


def _schedules_of(document: dict) -> list:
    from timekeeping.schedules.declare import manifest_schedules

    return manifest_schedules(document)


def _compare(old: dict, new: dict) -> tuple[list[str], list[str], list[str]]:
    """Names added, changed and removed between two mappings, each in document order."""
    added = [name for name in new if name not in old]
    changed = [name for name in new if name in old and old[name] != new[name]]
    removed = [name for name in old if name not in new]
    return added, changed, removed


def _count(number: int, one: str, many: str | None = None) -> list[str]:
    if not number:
        return []
    return [f"{number} {one if number == 1 else (many or one + 's')}"]


def _named(what: str, path: str, old: dict, new: dict, *, uses,
           inside=lambda name: ()) -> list[Change]:
    """The entries of a mapping under `path` added, changed (each followed by what `inside`
    finds changed within it) and removed (each with what `uses` finds still using it)."""
    added, changed, removed = _compare(old, new)
    changes = [Change("added", what, f"{path}.{name}") for name in added]
    for name in changed:
        changes += [Change("changed", what, f"{path}.{name}"), *inside(name)]
    changes += [Change("removed", what, f"{path}.{name}", uses=uses(name)) for name in removed]
    return changes


def _services(brand: Brand, old: dict, new: dict) -> list[Change]:
    def parts(name: str) -> list[Change]:
        return [change for part, what in (("steps", "step"), ("clocks", "clock"))
                for change in _named(what, f"$.services.{name}.{part}",
                                     old[name].get(part) or {}, new[name].get(part) or {},
                                     uses=partial(_part_uses, brand, name, what))]

    return _named("service", "$.services", old, new, uses=partial(_service_uses, brand),
                  inside=parts)


def _service_uses(brand: Brand, name: str) -> tuple[str, ...]:
    jobs = Job.objects.filter(brand=brand, service=name, state=Job.State.OPEN).count()
    subscriptions = Subscription.objects.filter(
        brand=brand, service=name, state=Subscription.State.ACTIVE).count()
    return tuple(_count(jobs, "open job") + _count(subscriptions, "active subscription"))


def _part_uses(brand: Brand, service: str, what: str, name: str) -> tuple[str, ...]:
    if what == "clock":
        dates = Occurrence.objects.filter(
            brand=brand, clock__job__service=service, clock__job__state=Job.State.OPEN,
            clock__name=name, status=Occurrence.Status.OPEN).count()
        return tuple(_count(dates, "open date"))
    done = Job.objects.filter(brand=brand, service=service, state=Job.State.OPEN)
    waiting = sum(1 for steps in done.values_list("steps_done", flat=True)
                  if name not in (steps or []))
    return tuple(_count(waiting, "open job that may still take it",
                        "open jobs that may still take it"))


def _schedules(brand: Brand, old_document: dict, new_document: dict) -> list[Change]:
    old = {item.name: item for item in _schedules_of(old_document)}
    new = {item.name: item for item in _schedules_of(new_document)}
    changes: list[Change] = []
    gone = [name for name in old if name not in new]
    renamed: dict[str, str] = {}
    for name, item in new.items():
        if name in old:
            if old[name] != item:
                changes.append(Change("changed", "schedule", f"$.schedules.{name}"))
            continue
        # The schedules' own rule (timekeeping.schedules.engine): a name no longer declared
        # whose action a new name runs is that schedule, renamed; its state and runs go on.
        was = next((before for before in gone if before not in renamed.values()
                    and old[before].action == item.action), None)
        if was is not None:
            renamed[name] = was
            changes.append(Change("renamed", "schedule", f"$.schedules.{name}",
                                  was=f"$.schedules.{was}"))
        else:
            changes.append(Change("added", "schedule", f"$.schedules.{name}"))
    for name in gone:
        if name in renamed.values():
            continue
        runs = ScheduleRun.objects.filter(schedule__brand=brand, schedule__name=name).count()
        changes.append(Change("removed", "schedule", f"$.schedules.{name}",
                              uses=tuple(_count(runs, "run"))))
    return changes


def _tables(brand: Brand, old: dict, new: dict) -> list[Change]:
    def rows(name: str) -> tuple[str, ...]:
        return tuple(_count(_rows(brand, name), "row"))

    def columns(name: str) -> list[Change]:
        # Columns are compared by ref alone: a column removed is in use while its table
        # has rows, counted once for the table.
        counted = cache(partial(rows, name))
        return _named("column", f"$.tables.{name}.columns",
                      dict.fromkeys(column.get("ref") for column in _columns(old[name])),
                      dict.fromkeys(column.get("ref") for column in _columns(new[name])),
                      uses=lambda ref: counted())

    return _named("table", "$.tables", old, new, uses=rows, inside=columns)


def _columns(table: object) -> list[dict]:
    columns = table.get("columns") if isinstance(table, dict) else None
    return [column for column in columns or [] if isinstance(column, dict)]


def _rows(brand: Brand, name: str) -> int:
    """The rows of the brand's table of that name, if it was built. The physical name is the
    registry's (made from the brand's id and a checked name), checked again against the
    identifier pattern and quoted by the database."""
    kept = BrandTable.objects.filter(brand=brand, name=name).first()
    if kept is None:
        return 0
    connection = connections[kept.database]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(safe(kept.db_table))}")
        return cursor.fetchone()[0]


def _staying(brand: Brand, bundle: str) -> Staying:
    jobs = Job.objects.filter(brand=brand, state=Job.State.OPEN).exclude(bundle=bundle)
    subscriptions = Subscription.objects.filter(
        brand=brand, state=Subscription.State.ACTIVE).exclude(bundle=bundle)
    subjects = Subject.objects.filter(brand=brand).exclude(bundle="").exclude(bundle=bundle)
    last = (Timer.objects.filter(brand=brand, state=Timer.State.ARMED).exclude(bundle="")
            .exclude(bundle=bundle).aggregate(last=Max("owed"))["last"])
    return Staying(jobs=jobs.count(), subscriptions=subscriptions.count(),
                   subjects=subjects.count(), last_owed=last)
