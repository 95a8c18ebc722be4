"""Manifests: a brand's JSON document (calendar, services, …), checked, versioned, compiled.

    from timekeeping.manifests import check, load, services_of
    problems = check(document)               # every problem at once
    planned = plan(brand, document)          # what a load would change; writes nothing
    version = load(brand, document)          # ManifestInvalid(problems) if any; nothing stored
    applied = apply(brand, document, by=…)   # the version and the plan it applied
    services_of(bundle)                      # the compiled services of a kept version
"""

from timekeeping.manifests.check import Problem, check
from timekeeping.manifests.plan import Change, Plan, plan
from timekeeping.manifests.store import (
    Applied,
    ManifestInvalid,
    apply,
    current,
    load,
    services_of,
)

__all__ = ["Applied", "Change", "ManifestInvalid", "Plan", "Problem", "apply", "check",
           "current", "load", "plan", "services_of"]
