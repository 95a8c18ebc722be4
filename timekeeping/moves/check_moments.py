"""The check of the moments a table's rules read (moves.moments): a column of the row or of a
linked row, a time of day, an opening-hours edge, a shift, fallbacks, and the settings a time,
a shift or a lead may read. Part of the `tables` check (timekeeping.moves.check)."""

from __future__ import annotations

from calendars.moments import parse_time_of_day
from timekeeping.moves.check_scope import (
    Scope,
    check_keys,
    column_list,
    columns_of,
    listed_at,
    type_of,
)
from timekeeping.specs.rules import is_name, is_whole, shown

SHIFT_UNITS = ("minutes", "hours", "days")
SHIFT_MAX = {"minutes": 5_256_000, "hours": 87_600, "days": 3_650}  # ten years of each
MAX_OR = 3
MOMENT_KEYS = ("column", "via", "time", "plus", "minus", "or")
HOURS_KEYS = ("table", "weekday", "opens", "closes", "open")


def check_moment(scope: Scope, label: str, moment: object, path: str, *, own_row: str = "",
                  fallback: bool = False) -> None:
    """A moment (moves.moments). `own_row`: the code refusing a `via`, where only the row's
    own columns may be read."""
    if not isinstance(moment, dict) or not isinstance(moment.get("column"), str):
        scope.add("moment.invalid", path, f"{label}: a moment names a 'column' of the row")
        return
    check_keys(moment, MOMENT_KEYS, path, scope.add, "moment.key_unknown", label)
    columns: dict[str, dict] | None = scope.columns
    if "via" in moment and own_row:
        scope.add(own_row, f"{path}.via",
                  f"{label} reads its own row's columns only, never via a link")
        columns = None
    elif "via" in moment:
        columns = via_columns(scope, label, moment, path, "moment.via_invalid")
    if columns is not None:
        _check_moment_column(scope, label, moment, columns, path)
    if "time" in moment:
        _check_time(scope, label, moment["time"], columns or {}, f"{path}.time")
    if "plus" in moment and "minus" in moment:
        scope.add("moment.shift_invalid", path,
                  f"{label}: a moment shifts by plus or minus, not both")
    for key in ("plus", "minus"):
        if key in moment:
            check_shift(scope, label, moment[key], f"{path}.{key}")
    if "or" in moment:
        _check_fallbacks(scope, label, moment["or"], f"{path}.or", own_row, fallback)


def _check_fallbacks(scope: Scope, label: str, fallbacks: object, path: str, own_row: str,
                     fallback: bool) -> None:
    if fallback:
        scope.add("moment.or_invalid", path, f"{label}: a fallback has no fallbacks of its own")
        return
    fallbacks = listed_at(fallbacks, path, scope.add, "moment.or_invalid",
                      f"{label}: 'or' is a list of fallback moments")
    if len(fallbacks) > MAX_OR:
        scope.add("moment.or_too_many", path, f"{label}: at most {MAX_OR} fallbacks")
    for index, other in enumerate(fallbacks):
        check_moment(scope, label, other, f"{path}[{index}]", own_row=own_row, fallback=True)


def via_columns(scope: Scope, label: str, holder: dict, path: str,
                 code: str) -> dict[str, dict] | None:
    """The columns of the table a `via` column links to, or None after a problem."""
    link = scope.column(holder.get("via"))
    columns = columns_of(scope.section, link.get("references")) if link else None
    if columns is None:
        scope.add(code, f"{path}.via",
                  f"{label}: 'via' is a column of the row that references another table")
    return columns


def _check_moment_column(scope: Scope, label: str, moment: dict, columns: dict,
                         path: str) -> None:
    name = moment["column"]
    column = columns.get(name) if is_name(name) else None
    if column is None:
        scope.add("moment.column_unknown", f"{path}.column",
                  f"{label}: {shown(name)} is not a column of the table")
    elif column.get("type") not in ("date", "timestamptz"):
        scope.add("moment.column_type", f"{path}.column",
                  f"{label}: '{name}' is {type_of(column)}; a moment reads a date or "
                  "timestamptz column")
    elif column.get("type") == "date" and "time" not in moment:
        scope.add("moment.date_needs_time", path,
                  f"{label}: '{name}' is a date, which has no clock; give a 'time'")


def _check_time(scope: Scope, label: str, time: object, columns: dict, path: str) -> None:
    if isinstance(time, str):
        if parse_time_of_day(time) is None:
            scope.add("moment.time_invalid", path,
                      f"{label}: {shown(time)} is not a time of day (HH:MM)")
    elif isinstance(time, dict) and "hours" in time:
        _check_hours(scope, label, time, path)
    elif isinstance(time, dict) and "table" in time:
        check_setting(scope, label, time, path)
    elif isinstance(time, dict) and set(time) == {"column"}:
        if not is_name(time["column"]) or time["column"] not in columns:
            scope.add("moment.time_invalid", f"{path}.column",
                      f"{label}: {shown(time['column'])} is not a column of the row")
    else:
        scope.add("moment.time_invalid", path, f"{label}: a time is HH:MM, a setting "
                                               "{table, column}, an opening-hours edge, or a "
                                               "column")


def _check_hours(scope: Scope, label: str, time: dict, path: str) -> None:
    """An opening-hours edge: its table, and the columns the hours are read from (the
    weekday column is always read; `weekday` unless named)."""
    check_keys(time, ("hours", "edge"), path, scope.add, "moment.time_invalid", label)
    if time.get("edge") not in ("opens", "closes"):
        scope.add("moment.time_invalid", f"{path}.edge", f"{label}: the edge is opens or closes")
    hours = time["hours"]
    if not isinstance(hours, dict):
        scope.add("hours.table_invalid", f"{path}.hours",
                  f"{label}: 'hours' names the opening-hours table and its columns")
        return
    check_keys(hours, HOURS_KEYS, f"{path}.hours", scope.add, "hours.column_invalid", label)
    columns = columns_of(scope.section, hours.get("table"))
    if columns is None:
        scope.add("hours.table_invalid", f"{path}.hours.table", f"{label}: the opening-hours "
                  f"table {shown(hours.get('table'))} is not in the manifest")
        return
    for key in ("weekday", "opens", "closes", "open"):
        name = hours.get(key, key)
        if (key in hours or key == "weekday") and not (is_name(name) and name in columns):
            scope.add("hours.column_invalid", f"{path}.hours.{key}",
                      f"{label}: {shown(name)} is not a column of the opening-hours table "
                      f"'{hours['table']}'")


def check_shift(scope: Scope, label: str, shift: object, path: str) -> None:
    if not isinstance(shift, dict) or len(shift) != 1 or next(iter(shift)) not in SHIFT_UNITS:
        scope.add("moment.shift_invalid", path,
                  f"{label}: a shift is exactly one of minutes, hours or days")
        return
    unit, value = next(iter(shift.items()))
    if isinstance(value, dict):
        check_setting(scope, label, value, f"{path}.{unit}")
    elif not is_whole(value, 0, SHIFT_MAX[unit]):
        scope.add("moment.shift_invalid", f"{path}.{unit}",
                  f"{label}: a shift of {unit} is a whole number from 0 to "
                  f"{SHIFT_MAX[unit]:,} (ten years), or a setting")


def check_setting(scope: Scope, label: str, setting: object, path: str, *,
                   keys: tuple[str, ...] = ("table", "column")) -> None:
    if not isinstance(setting, dict):
        scope.add("setting.table_invalid", path,
                  f"{label}: a setting is {{\"table\": …, \"column\": …}}")
        return
    check_keys(setting, keys, path, scope.add, "setting.invalid", label)
    table, name = setting.get("table"), setting.get("column")
    columns = columns_of(scope.section, table)
    if columns is None:
        scope.add("setting.table_invalid", f"{path}.table",
                  f"{label}: the setting's table {shown(table)} is not in the manifest")
        return
    if not _holds_settings(scope.section, table):
        read = f"{table}.{name}" if is_name(name) else table
        scope.add("setting.table_invalid", f"{path}.table",
                  f"{label}: '{read}' is no setting: read settings from the one-row settings "
                  "table, or from a table that links nowhere, that no table links to, and "
                  "that keeps no states")
    if not is_name(name) or name not in columns:
        scope.add("setting.column_invalid", f"{path}.column",
                  f"{label}: {shown(name)} is not a column of the table '{table}'")


def _holds_settings(section: dict, table: str) -> bool:
    """The settings table, or a table standing alone (no states, no links either way)."""
    raw = section[table]
    if raw.get("settings") is True:
        return True
    links_out = any(column.get("references") for column in column_list(raw))
    links_in = any(column.get("references") == table for other in section.values()
                   if isinstance(other, dict) for column in column_list(other))
    return not raw.get("states") and not links_out and not links_in
