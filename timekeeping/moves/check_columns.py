"""The check of a table's `columns` (A2): refs, types, lengths, links, listed values, and the
column rules (a code, a stamp). Part of the `tables` check (timekeeping.moves.check)."""

from __future__ import annotations

from timekeeping.moves.check_moments import check_shift
from timekeeping.moves.check_scope import (
    RESERVED,
    TYPES,
    Add,
    Scope,
    check_keys,
    column_at,
    columns_of,
    listed_at,
)
from timekeeping.specs.rules import NAME_RULE, VALUE_RULE, is_name, is_value, is_whole, shown

MAX_VALUES = 100
MAX_LENGTH = 10_000
CODE_MIN, CODE_MAX, CODE_DEFAULT = 12, 64, 16  # shorter codes can be guessed (a public link)
COLUMN_KEYS = ("ref", "type", "maxLength", "nullable", "references", "values", "rules")


def check_column_section(table: str, columns: object, section: dict, path: str,
                   add: Add) -> dict[str, dict]:
    found: dict[str, dict] = {}
    listed = listed_at(columns, path, add, "column.invalid",
                       f"table '{table}': 'columns' is a list")
    for index, column in enumerate(listed):
        where = f"{path}[{index}]"
        ref = column.get("ref") if isinstance(column, dict) else None
        if not isinstance(column, dict):
            add("column.invalid", where,
                f"table '{table}': a column is an object with 'ref' and 'type'")
        elif not is_name(ref) or ref in RESERVED:
            add("column.invalid", f"{where}.ref",
                f"table '{table}': each column has a 'ref' that is {NAME_RULE} (not 'id'), "
                "and no name the row's model already uses, such as 'pk' or 'save'")
        elif ref in found:
            add("column.ref_twice", f"{where}.ref", f"table '{table}': two columns are '{ref}'")
        else:
            _check_column(f"table '{table}', column '{ref}'", column, section, where, add)
            found[ref] = column
    return found


def _check_column(label: str, column: dict, section: dict, path: str, add: Add) -> None:
    check_keys(column, COLUMN_KEYS, path, add, "column.key_unknown", label)
    if column.get("type") not in TYPES:
        add("column.type_invalid", f"{path}.type",
            f"{label}: the type is one of {', '.join(TYPES)}")
    if "maxLength" in column and not is_whole(column["maxLength"], 1, MAX_LENGTH):
        add("column.max_length_invalid", f"{path}.maxLength",
            f"{label}: maxLength is a whole number from 1 to {MAX_LENGTH:,}")
    if not isinstance(column.get("nullable", False), bool):
        add("column.nullable_invalid", f"{path}.nullable", f"{label}: nullable is true or false")
    target = column.get("references")
    if target is not None and columns_of(section, target) is None:
        add("column.references_unknown", f"{path}.references",
            f"{label} references {shown(target)}, which is not a table of this manifest")
    if "values" in column:
        _check_values(label, column["values"], f"{path}.values", add)


def _check_values(label: str, values: object, path: str, add: Add) -> None:
    if not isinstance(values, list) or len(values) > MAX_VALUES:
        add("column.values_invalid", path,
            f"{label}: 'values' is a list of at most {MAX_VALUES} values")
        return
    for index, value in enumerate(values):
        if not is_value(value):
            add("column.values_invalid", f"{path}[{index}]", f"{label}: a value is {VALUE_RULE}")


def check_rules(scope: Scope, columns: object, path: str) -> None:
    for index, column in enumerate(columns if isinstance(columns, list) else []):
        if not isinstance(column, dict) or scope.column(column.get("ref")) is not column:
            continue  # not a column (already a problem), or a second column of its name
        rules, where = column.get("rules"), f"{path}[{index}].rules"
        label = f"table '{scope.table}', column '{column['ref']}'"
        if rules is not None and not isinstance(rules, dict):
            scope.add("column.rules_invalid", where,
                      f"{label}: 'rules' is an object holding a code rule or a stamp rule")
            continue
        for rule in rules or {}:
            if rule not in ("code", "stamp"):
                scope.add("column.rules_invalid", f"{where}.{rule}",
                          f"{label}: a column rule is code or stamp")
        if "code" in (rules or {}):
            _check_code(scope, label, column, rules["code"], f"{where}.code")
        if "stamp" in (rules or {}):
            _check_stamp(scope, label, column, rules["stamp"], f"{where}.stamp")


def _check_code(scope: Scope, label: str, column: dict, rule: object, path: str) -> None:
    """A code opens a row on an endpoint that asks no sign-in: long enough not to be guessed,
    and short enough for its column."""
    if column.get("type") != "text" or not isinstance(rule, dict):
        scope.add("column.code_invalid", path, f"{label}: a code rule is an object with a "
                                               "'length' and an optional 'renew', on a text column")
        return
    check_keys(rule, ("length", "renew"), path, scope.add, "column.code_invalid", label)
    given = column.get("maxLength")
    given = given if is_whole(given, 1, MAX_LENGTH) else None
    if not is_whole(rule.get("length", CODE_DEFAULT), CODE_MIN, min(given or CODE_MAX, CODE_MAX)):
        scope.add("column.code_length_invalid", f"{path}.length",
                  f"{label}: a code's length is a whole number from {CODE_MIN} to {CODE_MAX} "
                  f"({CODE_DEFAULT} unless given), and no longer than the column's maxLength"
                  + (f" ({given})" if given else ""))
    if "renew" not in rule:
        return
    renew = rule["renew"]
    on = renew.get("on") if isinstance(renew, dict) else None
    if not isinstance(on, dict) or set(renew) != {"on"} or set(on) - {"column", "changed"}:
        scope.add("column.code_invalid", f"{path}.renew",
                  f"{label}: 'renew' is {{\"on\": {{\"column\": …, \"changed\": true}}}}")
        return
    column_at(scope, label, on, f"{path}.renew.on", "column.code_invalid",
               "a code renews when a column of the row changes", state=True)


def _check_stamp(scope: Scope, label: str, column: dict, rule: object, path: str) -> None:
    if column.get("type") not in ("date", "timestamptz") or not isinstance(rule, dict):
        scope.add("column.stamp_invalid", path, f"{label}: a stamp rule is an object with 'on' "
                                                "and an optional 'set', on a date or timestamptz "
                                                "column")
        return
    check_keys(rule, ("on", "set"), path, scope.add, "column.stamp_invalid", label)
    check_on(scope, label, rule.get("on"), f"{path}.on", "column.stamp_invalid")
    sets = rule.get("set")
    if sets is not None and (not isinstance(sets, dict) or set(sets) - {"addMinutes"}):
        scope.add("column.stamp_invalid", f"{path}.set",
                  f"{label}: 'set' is {{\"addMinutes\": a shift}}")
    elif sets is not None and "addMinutes" in sets:
        check_shift(scope, label, sets["addMinutes"], f"{path}.set.addMinutes")


def check_on(scope: Scope, label: str, on: object, path: str, code: str) -> None:
    """`{"column": …, "values": [...]}`: a column of the row entering one of the values."""
    if not isinstance(on, dict):
        scope.add(code, path, f"{label}: 'on' is {{\"column\": …, \"values\": [...]}}")
        return
    check_keys(on, ("column", "values"), path, scope.add, code, label)
    column_at(scope, label, on, path, code, "'on' names a column of the row", state=True)
    values = on.get("values")
    if not (isinstance(values, list) and len(values) <= MAX_VALUES
            and all(is_value(value) for value in values)):
        scope.add(code, f"{path}.values",
                  f"{label}: 'values' is a list of at most {MAX_VALUES} values, each {VALUE_RULE}")
