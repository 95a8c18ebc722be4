"""The check of a table's `reminders` and `emails`: when each is sent, to which column's
address, and its subject and body, templates of the row's columns. Part of the `tables` check
(timekeeping.moves.check)."""

from __future__ import annotations

import string

from calendars.moments import parse_time_of_day
from timekeeping.moves.check_columns import check_on
from timekeeping.moves.check_moments import check_moment, check_setting, via_columns
from timekeeping.moves.check_scope import Scope, check_keys, column_at
from timekeeping.specs.rules import is_name, is_whole, shown

LEAD_MAX = 8_760  # a year of hours
MAX_TEXT = 10_000
LEAD_KEYS = ("hours", "column", "via", "fallback", "max", "at")


def check_reminder(scope: Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', reminder {number}"
    if not isinstance(spec, dict):
        scope.add("reminder.invalid", path, f"{label} is an object with at, lead, to and subject")
        return
    check_keys(spec, ("at", "lead", "to", "subject", "body"), path, scope.add, "reminder.invalid",
          label)
    # The job finds reminders due by a filter on the row's own moment column.
    check_moment(scope, label, spec.get("at"), f"{path}.at", own_row="moment.via_invalid")
    _check_lead(scope, label, spec.get("lead"), f"{path}.lead")
    column_at(scope, label, spec.get("to"), f"{path}.to", "reminder.to_invalid",
               "'to' names the text column of the row holding the address", types=("text",))
    _check_text(scope, label, spec, path, "reminder.text_invalid")


def _check_lead(scope: Scope, label: str, lead: object, path: str) -> None:
    if not isinstance(lead, dict) or not ({"hours", "column"} & set(lead)):
        scope.add("reminder.lead_invalid", path,
                  f"{label}: a lead gives hours, a column, or a setting, with an optional "
                  "fallback, max and at")
        return
    check_keys(lead, LEAD_KEYS, path, scope.add, "reminder.lead_invalid", label)
    hours = lead.get("hours")
    if isinstance(hours, dict):
        check_setting(scope, label, hours, f"{path}.hours")
    elif "hours" in lead and not is_whole(hours, 0, LEAD_MAX):
        scope.add("reminder.lead_invalid", f"{path}.hours",
                  f"{label}: the lead's hours are a whole number from 0 to {LEAD_MAX:,}, or a "
                  "setting")
    if "column" in lead:
        _check_lead_column(scope, label, lead, path)
    if "fallback" in lead:
        check_setting(scope, label, lead["fallback"], f"{path}.fallback")
    if "max" in lead and not is_whole(lead["max"], 0, LEAD_MAX):
        scope.add("reminder.lead_invalid", f"{path}.max",
                  f"{label}: the lead's max is a whole number of hours from 0 to {LEAD_MAX:,}")
    if "at" in lead and parse_time_of_day(lead["at"]) is None:
        scope.add("reminder.lead_invalid", f"{path}.at",
                  f"{label}: {shown(lead['at'])} is not a time of day (HH:MM)")


def _check_lead_column(scope: Scope, label: str, lead: dict, path: str) -> None:
    columns = via_columns(scope, label, lead, path, "reminder.lead_invalid") \
        if "via" in lead else scope.columns
    name = lead["column"]
    column = columns.get(name) if columns is not None and is_name(name) else None
    if columns is not None and (column is None or column.get("type") != "integer"):
        scope.add("reminder.lead_invalid", f"{path}.column",
                  f"{label}: the lead's column is an integer column of the row, or of the row "
                  "its 'via' links to")


def check_email(scope: Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', email {number}"
    if not isinstance(spec, dict):
        scope.add("email.invalid", path, f"{label} is an object with on, to and subject")
        return
    check_keys(spec, ("on", "to", "subject", "body"), path, scope.add, "email.invalid", label)
    check_on(scope, label, spec.get("on"), f"{path}.on", "email.on_invalid")
    column_at(scope, label, spec.get("to"), f"{path}.to", "email.to_invalid",
               "'to' names the text column of the row holding the address", types=("text",))
    _check_text(scope, label, spec, path, "email.text_invalid")


def _check_text(scope: Scope, label: str, spec: dict, path: str, code: str) -> None:
    for key, shortest in (("subject", 1), ("body", 0)):
        if key == "body" and key not in spec:
            continue
        wrong = template_rule(spec.get(key), shortest)
        if wrong:
            scope.add(code, f"{path}.{key}", f"{label}: the {key} {wrong}")


def template_rule(text: object, shortest: int) -> str | None:
    """Why `text` is no template of the row's columns, or None. The text is filled by
    `str.format_map`: an attribute, an index, a conversion or a format spec inside the braces
    would reach past the row's values or raise when the message is sent."""
    if not isinstance(text, str) or not shortest <= len(text) <= MAX_TEXT or "\x00" in text:
        return f"is text of {shortest} to {MAX_TEXT:,} characters"
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion
                  in string.Formatter().parse(text) if name is not None]
    except ValueError:
        return "has a brace that opens or closes nothing; write {{ or }} for a brace"
    if any(not is_name(name) or spec or conversion for name, spec, conversion in fields):
        return "names columns as {column} only, with no '.', '[', '!' or ':' in the braces"
    return None
