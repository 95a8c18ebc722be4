"""What every part of the `tables` check (timekeeping.moves.check) reads: the table under
check (`Scope`), the column types and reserved names, and the small helpers that report a
problem (unknown keys, a value that is no list, a column that is not there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Model

from timekeeping.specs.rules import is_name, shown

TYPES = ("text", "integer", "boolean", "date", "timestamptz", "enum")
# 'id' is the key; the others already mean something on the row's Django model ('pk', 'save').
RESERVED = frozenset({"id", "objects"} | {name for name in dir(Model) if not name.startswith("_")})

Add = Callable[[str, str, str], None]


@dataclass(frozen=True)
class Scope:
    """One table under check: its name, its listed columns by ref, its state column, the
    whole section (links, settings and opening hours read other tables), and `add`."""

    table: str
    columns: dict[str, dict]
    state: str | None
    section: dict
    add: Add

    def column(self, name: object, *, state: bool = False) -> dict | None:
        """The listed column `name` (the state column too, when `state`), or None."""
        if not is_name(name):
            return None
        if state and name == self.state:
            return self.columns.get(name) or {"ref": name, "type": "text"}
        return self.columns.get(name)


def check_keys(value: dict, allowed: tuple[str, ...], path: str, add: Add, code: str,
          label: str) -> None:
    for key in value:
        if key not in allowed:
            add(code, f"{path}.{key}",
                f"{label}: '{key}' is not a key here ({', '.join(allowed)})")


def listed_at(value: object, path: str, add: Add, code: str, sentence: str) -> list:
    """`value` when it is a list; else a problem at `path`, and nothing to check in it."""
    if isinstance(value, list):
        return value
    add(code, path, sentence)
    return []


def column_list(raw: dict) -> list[dict]:
    columns = raw.get("columns")
    return [c for c in columns if isinstance(c, dict)] if isinstance(columns, list) else []


def columns_of(section: dict, table: object) -> dict[str, dict] | None:
    """Another table's columns by ref (its state column as text), or None: no such table."""
    raw = section.get(table) if is_name(table) else None
    if not isinstance(raw, dict):
        return None
    found = {c["ref"]: c for c in column_list(raw) if is_name(c.get("ref"))}
    state = state_column(raw.get("states"))
    if state is not None:
        found.setdefault(state, {"ref": state, "type": "text"})
    return found


def type_of(column: dict) -> str:
    kind = column.get("type")
    return kind if kind in TYPES else shown(kind)


def state_column(states: object) -> str | None:
    column = states.get("column") if isinstance(states, dict) else None
    return column if is_name(column) and column not in RESERVED else None


def column_at(scope: Scope, label: str, holder: object, path: str, code: str, rule: str,
               *, types: tuple[str, ...] = (), state: bool = False) -> None:
    """`holder` is {"column": name} naming a column of the row (of one of `types`); else a
    problem at its column's path."""
    column = scope.column(holder.get("column"), state=state) if isinstance(holder, dict) \
        else None
    if column is None or (types and column.get("type") not in types):
        where = f"{path}.column" if isinstance(holder, dict) else path
        scope.add(code, where, f"{label}: {rule}")
