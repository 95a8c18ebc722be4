"""Manifests: a brand's JSON document (calendar, services, …), checked, versioned, compiled.

    from timekeeping.manifests import check, load, services_of
    problems = check(document)               # every problem at once
    version = load(brand, document)          # ManifestInvalid(problems) if any; nothing stored
    services_of(bundle)                      # the compiled services of a kept version
"""

from timekeeping.manifests.check import Problem, check
from timekeeping.manifests.store import ManifestInvalid, current, load, services_of

__all__ = ["ManifestInvalid", "Problem", "check", "current", "load", "services_of"]
