"""The manifest check of the `tables` section (A2, A3, A9): every problem at once, never an
exception.

The check reads any JSON value at any place and answers with problems: whatever it lets
through is compiled (timekeeping.specs.tables, `compile_tables`) and becomes DDL and ORM lookups,
so every name and number that can reach the database is held to a stated rule here. The
section's shape is shown in timekeeping.specs.tables.
"""

from __future__ import annotations

from timekeeping.moves.check_columns import check_column_section, check_rules
from timekeeping.moves.check_holds import check_hold
from timekeeping.moves.check_mail import check_email, check_reminder
from timekeeping.moves.check_scope import Add, Scope, check_keys, listed_at, state_column
from timekeeping.moves.check_states import check_state_section
from timekeeping.specs.rules import NAME_RULE, is_name, shown

TABLE_KEYS = ("columns", "states", "settings", "emails", "reminders", "holds")


def check_section(section: object, add: Add) -> None:
    if not isinstance(section, dict):
        add("table.invalid", "$.tables", "'tables' maps a table's name to its definition")
        return
    for name, raw in section.items():
        _check_table(name, raw, section, f"$.tables.{name}", add)


def _check_table(name: str, raw: object, section: dict, path: str, add: Add) -> None:
    if not is_name(name):
        add("table.name_invalid", path, f"table {shown(name)}: a table's name is {NAME_RULE}")
    if not isinstance(raw, dict):
        add("table.invalid", path, f"table {shown(name)} is an object with 'columns'")
        return
    label = f"table '{name}'"
    check_keys(raw, TABLE_KEYS, path, add, "table.key_unknown", label)
    if not isinstance(raw.get("settings", False), bool):
        add("table.settings_invalid", f"{path}.settings", f"{label}: 'settings' is true or false")
    columns = check_column_section(name, raw.get("columns", []), section, f"{path}.columns", add)
    scope = Scope(name, columns, state_column(raw.get("states")), section, add)
    if raw.get("states") is not None:
        check_state_section(scope, raw["states"], f"{path}.states")
    check_rules(scope, raw.get("columns"), f"{path}.columns")
    for key, check_one in (("holds", check_hold), ("reminders", check_reminder),
                           ("emails", check_email)):
        code = f"{key[:-1]}.invalid"
        items = listed_at(raw.get(key, []), f"{path}.{key}", add, code,
                          f"{label}: '{key}' is a list")
        for number, spec in enumerate(items, start=1):
            check_one(scope, number, spec, f"{path}.{key}[{number - 1}]")
