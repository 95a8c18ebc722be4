"""The pages' one format for dates and times (timekeeping/shown.py), as template filters:

    {{ day_value|day }}              Tue 18 Apr 2028
    {{ instant|moment:zone }}        Tue 18 Apr 2028, 09:00 EDT
    {{ zone|zone_name }}             New York time
"""

from django import template

from timekeeping.basics import shown

register = template.Library()


@register.filter
def day(value) -> str:
    if not value:
        return ""
    return shown.day(value.date() if hasattr(value, "date") and callable(value.date) else value)


@register.filter
def moment(instant, zone) -> str:
    return shown.moment(instant, zone) if instant else ""


@register.filter
def zone_name(zone) -> str:
    return shown.zone_name(zone) if zone else ""


@register.filter
def kind(name, count=1) -> str:
    """{{ kind|kind:n }}: "reminder", "tasks"."""
    return shown.kind(name, count)


@register.filter
def service(name) -> str:
    """{{ job.service|service }}: "annual return"."""
    return shown.service(name) if isinstance(name, str) else ""


@register.filter
def plan(name) -> str:
    """{{ sub.service|plan }}: "tax plan"."""
    return shown.plan(name) if isinstance(name, str) else ""
