"""The manifest check's bounds (issue 31): how many services, steps, clocks, rungs and schedules
a manifest may declare, and how often a schedule may run, each refused at the path of what is
too many or too often (the numbers: `timekeeping.specs.limits`, docs/security.md "Limits").

The section checks say whether each thing is well formed; this says whether there is too
much of it, so a problem here comes beside theirs, never instead.
"""

from __future__ import annotations

from collections.abc import Callable

from timekeeping.specs import limits

Add = Callable[[str, str, str], None]


def check_bounds(document: dict, add: Add, *, plan: str | None) -> None:
    """Every bound the document passes, for a brand on `plan` (None: the highest plan's)."""
    services = document.get("services")
    if isinstance(services, dict):
        _services(services, add)
    schedules = document.get("schedules")
    if isinstance(schedules, dict):
        _schedules(schedules, add, limits.schedules_for(plan), plan)


def _too_many(add: Add, code: str, path: str, value: object, most: int, what: str) -> bool:
    if isinstance(value, dict | list) and len(value) > most:
        add(code, path, f"at most {most} {what}; this has {len(value):,}")
        return True
    return False


def _services(services: dict, add: Add) -> None:
    _too_many(add, "manifest.services_too_many", "$.services", services,
              limits.SERVICES_MAX, "services in a manifest")
    for name, service in services.items():
        if not isinstance(service, dict):
            continue
        path = f"$.services.{name}"
        _too_many(add, "service.steps_too_many", f"{path}.steps", service.get("steps"),
                  limits.STEPS_PER_SERVICE, "steps in a service")
        clocks = service.get("clocks")
        _too_many(add, "service.clocks_too_many", f"{path}.clocks", clocks,
                  limits.CLOCKS_PER_SERVICE, "clocks in a service")
        if not isinstance(clocks, dict):
            continue
        for clock, spec in clocks.items():
            if isinstance(spec, dict):
                _too_many(add, "clock.rungs_too_many", f"{path}.clocks.{clock}.rungs",
                          spec.get("rungs"), limits.RUNGS_PER_CLOCK, "rungs on a clock")


def _schedules(section: dict, add: Add, bounds: limits.Schedules, plan: str | None) -> None:
    from timekeeping.schedules.declare import parse_every

    on = f" on the {plan.title()} plan" if plan else ""
    items = [(f"$.schedules.{domain}.{name}", spec) for domain, each in section.items()
             if isinstance(each, dict) for name, spec in each.items()]
    if len(items) > bounds.most:
        add("schedule.too_many", "$.schedules",
            f"a brand declares at most {bounds.most} schedules{on}; this has {len(items):,}")
    for path, spec in items:
        every = parse_every(spec.get("every")) if isinstance(spec, dict) else None
        if every is not None and every < bounds.shortest_s:
            add("schedule.every_too_short", f"{path}.every",
                f"a schedule runs at most once every {bounds.shortest_s} seconds{on}, "
                f"not every {spec['every']}")
