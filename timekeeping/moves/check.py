"""The manifest check of the `tables` section (A2, A3, A9): every problem at once, never an
exception.

The check reads any JSON value at any place and answers with problems: whatever it lets
through is compiled (timekeeping.specs.tables, `compile_tables`) and becomes DDL and ORM lookups,
so every name and number that can reach the database is held to a stated rule here. The
section's shape is shown in timekeeping.specs.tables.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Model

from calendars.moments import parse_time_of_day
from timekeeping.specs.rules import NAME_RULE, VALUE_RULE, is_name, is_value, is_whole, shown

TYPES = ("text", "integer", "boolean", "date", "timestamptz", "enum")
# 'id' is the key; the others already mean something on the row's Django model ('pk', 'save').
RESERVED = frozenset({"id", "objects"} | {name for name in dir(Model) if not name.startswith("_")})
MAX_VALUES = 100
MAX_LENGTH = 10_000
CODE_MIN, CODE_MAX, CODE_DEFAULT = 12, 64, 16  # shorter codes can be guessed (a public link)
SHIFT_UNITS = ("minutes", "hours", "days")
SHIFT_MAX = {"minutes": 5_256_000, "hours": 87_600, "days": 3_650}  # ten years of each
LEAD_MAX = 8_760  # a year of hours
MAX_TEXT = 10_000
MAX_TIMED = 8
MAX_SET = 8
MAX_OR = 3
TABLE_KEYS = ("columns", "states", "settings", "emails", "reminders", "holds")
COLUMN_KEYS = ("ref", "type", "maxLength", "nullable", "references", "values", "rules")
STATES_KEYS = ("column", "initial", "moves", "timed", "effects", "create", "late")
MOMENT_KEYS = ("column", "via", "time", "plus", "minus", "or")
HOURS_KEYS = ("table", "weekday", "opens", "closes", "open")
LATE_KEYS = ("to", "from", "moment", "within", "mode", "flag", "refuse")
HOLD_KEYS = ("on", "amount", "currency", "payer", "until", "takes", "gives_back")
LEAD_KEYS = ("hours", "column", "via", "fallback", "max", "at")
CURRENCY = re.compile(r"[A-Z]{3}")

Add = Callable[[str, str, str], None]


@dataclass(frozen=True)
class _Scope:
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
    _keys(raw, TABLE_KEYS, path, add, "table.key_unknown", label)
    if not isinstance(raw.get("settings", False), bool):
        add("table.settings_invalid", f"{path}.settings", f"{label}: 'settings' is true or false")
    columns = _check_columns(name, raw.get("columns", []), section, f"{path}.columns", add)
    scope = _Scope(name, columns, _state_column(raw.get("states")), section, add)
    if raw.get("states") is not None:
        _check_states(scope, raw["states"], f"{path}.states")
    _check_rules(scope, raw.get("columns"), f"{path}.columns")
    for key, check_one in (("holds", _check_hold), ("reminders", _check_reminder),
                           ("emails", _check_email)):
        code = f"{key[:-1]}.invalid"
        items = _list(raw.get(key, []), f"{path}.{key}", add, code, f"{label}: '{key}' is a list")
        for number, spec in enumerate(items, start=1):
            check_one(scope, number, spec, f"{path}.{key}[{number - 1}]")


def _keys(value: dict, allowed: tuple[str, ...], path: str, add: Add, code: str,
          label: str) -> None:
    for key in value:
        if key not in allowed:
            add(code, f"{path}.{key}",
                f"{label}: '{key}' is not a key here ({', '.join(allowed)})")


def _list(value: object, path: str, add: Add, code: str, sentence: str) -> list:
    """`value` when it is a list; else a problem at `path`, and nothing to check in it."""
    if isinstance(value, list):
        return value
    add(code, path, sentence)
    return []


def _column_list(raw: dict) -> list[dict]:
    columns = raw.get("columns")
    return [c for c in columns if isinstance(c, dict)] if isinstance(columns, list) else []


def _columns_of(section: dict, table: object) -> dict[str, dict] | None:
    """Another table's columns by ref (its state column as text), or None: no such table."""
    raw = section.get(table) if is_name(table) else None
    if not isinstance(raw, dict):
        return None
    found = {c["ref"]: c for c in _column_list(raw) if is_name(c.get("ref"))}
    state = _state_column(raw.get("states"))
    if state is not None:
        found.setdefault(state, {"ref": state, "type": "text"})
    return found


def _type_of(column: dict) -> str:
    kind = column.get("type")
    return kind if kind in TYPES else shown(kind)


def _state_column(states: object) -> str | None:
    column = states.get("column") if isinstance(states, dict) else None
    return column if is_name(column) and column not in RESERVED else None


# -- columns ----------------------------------------------------------------------------------

def _check_columns(table: str, columns: object, section: dict, path: str,
                   add: Add) -> dict[str, dict]:
    found: dict[str, dict] = {}
    listed = _list(columns, path, add, "column.invalid", f"table '{table}': 'columns' is a list")
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
    _keys(column, COLUMN_KEYS, path, add, "column.key_unknown", label)
    if column.get("type") not in TYPES:
        add("column.type_invalid", f"{path}.type",
            f"{label}: the type is one of {', '.join(TYPES)}")
    if "maxLength" in column and not is_whole(column["maxLength"], 1, MAX_LENGTH):
        add("column.max_length_invalid", f"{path}.maxLength",
            f"{label}: maxLength is a whole number from 1 to {MAX_LENGTH:,}")
    if not isinstance(column.get("nullable", False), bool):
        add("column.nullable_invalid", f"{path}.nullable", f"{label}: nullable is true or false")
    target = column.get("references")
    if target is not None and _columns_of(section, target) is None:
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


def _check_rules(scope: _Scope, columns: object, path: str) -> None:
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


def _check_code(scope: _Scope, label: str, column: dict, rule: object, path: str) -> None:
    """A code opens a row on an endpoint that asks no sign-in: long enough not to be guessed,
    and short enough for its column."""
    if column.get("type") != "text" or not isinstance(rule, dict):
        scope.add("column.code_invalid", path, f"{label}: a code rule is an object with a "
                                               "'length' and an optional 'renew', on a text column")
        return
    _keys(rule, ("length", "renew"), path, scope.add, "column.code_invalid", label)
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
    _column_at(scope, label, on, f"{path}.renew.on", "column.code_invalid",
               "a code renews when a column of the row changes", state=True)


def _check_stamp(scope: _Scope, label: str, column: dict, rule: object, path: str) -> None:
    if column.get("type") not in ("date", "timestamptz") or not isinstance(rule, dict):
        scope.add("column.stamp_invalid", path, f"{label}: a stamp rule is an object with 'on' "
                                                "and an optional 'set', on a date or timestamptz "
                                                "column")
        return
    _keys(rule, ("on", "set"), path, scope.add, "column.stamp_invalid", label)
    _check_on(scope, label, rule.get("on"), f"{path}.on", "column.stamp_invalid")
    sets = rule.get("set")
    if sets is not None and (not isinstance(sets, dict) or set(sets) - {"addMinutes"}):
        scope.add("column.stamp_invalid", f"{path}.set",
                  f"{label}: 'set' is {{\"addMinutes\": a shift}}")
    elif sets is not None and "addMinutes" in sets:
        _check_shift(scope, label, sets["addMinutes"], f"{path}.set.addMinutes")


def _check_on(scope: _Scope, label: str, on: object, path: str, code: str) -> None:
    """`{"column": …, "values": [...]}`: a column of the row entering one of the values."""
    if not isinstance(on, dict):
        scope.add(code, path, f"{label}: 'on' is {{\"column\": …, \"values\": [...]}}")
        return
    _keys(on, ("column", "values"), path, scope.add, code, label)
    _column_at(scope, label, on, path, code, "'on' names a column of the row", state=True)
    values = on.get("values")
    if not (isinstance(values, list) and len(values) <= MAX_VALUES
            and all(is_value(value) for value in values)):
        scope.add(code, f"{path}.values",
                  f"{label}: 'values' is a list of at most {MAX_VALUES} values, each {VALUE_RULE}")


def _column_at(scope: _Scope, label: str, holder: object, path: str, code: str, rule: str,
               *, types: tuple[str, ...] = (), state: bool = False) -> None:
    """`holder` is {"column": name} naming a column of the row (of one of `types`); else a
    problem at its column's path."""
    column = scope.column(holder.get("column"), state=state) if isinstance(holder, dict) \
        else None
    if column is None or (types and column.get("type") not in types):
        where = f"{path}.column" if isinstance(holder, dict) else path
        scope.add(code, where, f"{label}: {rule}")


# -- states -----------------------------------------------------------------------------------

def _check_states(scope: _Scope, states: object, path: str) -> None:
    label = f"table '{scope.table}'"
    if not isinstance(states, dict):
        scope.add("states.invalid", path,
                  f"{label}: 'states' names its 'column', 'initial' and 'moves'")
        return
    _keys(states, STATES_KEYS, path, scope.add, "states.key_unknown", label)
    _check_state_column(scope, states.get("column"), f"{path}.column")
    listed = _check_moves(scope, states.get("moves", {}), f"{path}.moves")
    known = set(listed) | {to for targets in listed.values() for to in targets}
    initial = states.get("initial")
    if not is_value(initial) or initial not in known:
        scope.add("states.initial_unknown", f"{path}.initial",
                  f"{label}: the initial state {shown(initial)} is in no move")
    _check_state_rules(scope, states, listed, path)


def _check_state_rules(scope: _Scope, states: dict, listed: dict, path: str) -> None:
    label, add = f"table '{scope.table}'", scope.add
    timed = _list(states.get("timed", []), f"{path}.timed", add, "timed.invalid",
                  f"{label}: 'timed' is a list of timed moves")
    if len(timed) > MAX_TIMED:
        add("timed.too_many", f"{path}.timed",
            f"{label} has {len(timed)} timed moves; at most {MAX_TIMED}")
    seen_from: set[str] = set()
    for number, rule in enumerate(timed, start=1):
        _check_timed(scope, number, rule, listed, seen_from, f"{path}.timed[{number - 1}]")
    effects = _list(states.get("effects", []), f"{path}.effects", add, "effect.invalid",
                    f"{label}: 'effects' is a list of moves of linked rows")
    for number, effect in enumerate(effects, start=1):
        _check_effect(scope, number, effect, f"{path}.effects[{number - 1}]")
    _check_create(scope, states.get("create"), f"{path}.create")
    late = _list(states.get("late", []), f"{path}.late", add, "late.invalid",
                 f"{label}: 'late' is a list of late rules")
    seen_to: set[str] = set()
    flags: set[str] = set()
    for number, rule in enumerate(late, start=1):
        _check_late(scope, number, rule, listed, (seen_to, flags), f"{path}.late[{number - 1}]")


def _check_state_column(scope: _Scope, column: object, path: str) -> None:
    """The state column is made by DDL: a strict name, and text wherever it is listed."""
    label = f"table '{scope.table}'"
    if not is_name(column) or column in RESERVED:
        scope.add("states.column_invalid", path,
                  f"{label}: the state column is {NAME_RULE}, and not 'id'")
        return
    listed = scope.columns.get(column)
    if listed is not None and listed.get("type") not in ("text", "enum"):
        scope.add("states.column_invalid", path,
                  f"{label}: the state column '{column}' is listed as {shown(listed.get('type'))}; "
                  "a state column is text or enum")


def _check_moves(scope: _Scope, moves: object, path: str) -> dict[str, dict[str, dict]]:
    label = f"table '{scope.table}'"
    if not isinstance(moves, dict):
        scope.add("states.invalid", path,
                  f"{label}: 'moves' maps a state to the states it may move to")
        return {}
    for origin, targets in moves.items():
        where = f"{path}.{origin}"
        if not is_value(origin):
            scope.add("states.move_invalid", where, f"{label}: a state is {VALUE_RULE}")
        for index, target in enumerate(_list(
                targets, where, scope.add, "states.move_invalid",
                f"{label}: state {shown(origin)} lists the states it may move to")):
            _check_target(scope, label, target, f"{where}[{index}]")
    return _listed(moves)


def _check_target(scope: _Scope, label: str, target: object, path: str) -> None:
    if isinstance(target, str) and is_value(target):
        return
    if not isinstance(target, dict) or not is_value(target.get("to")):
        scope.add("states.move_invalid", path, f"{label}: a move is a state ({VALUE_RULE}), or "
                                               "{\"to\": state, \"undo\"?, \"requires\"?}")
        return
    _keys(target, ("to", "undo", "requires"), path, scope.add, "states.move_invalid", label)
    if not isinstance(target.get("undo", False), bool):
        scope.add("states.move_invalid", f"{path}.undo", f"{label}: 'undo' is true or false")
    requires = target.get("requires")
    if requires is not None:
        _check_requires(scope, f"{label}, the move to {target['to']!r}", requires,
                        f"{path}.requires")


def _check_requires(scope: _Scope, label: str, requires: object, path: str) -> None:
    if not isinstance(requires, dict):
        scope.add("states.move_invalid", path,
                  f"{label}: 'requires' is {{\"time\": …, \"setting\": [...]}}")
        return
    _keys(requires, ("time", "setting"), path, scope.add, "states.move_invalid", label)
    if "time" in requires:
        _check_waits(scope, label, requires["time"], f"{path}.time", "states.move_invalid")
    settings = _list(requires.get("setting", []), f"{path}.setting", scope.add,
                     "states.move_invalid",
                     f"{label}: 'setting' is a list of {{table, column, eq}}")
    for index, setting in enumerate(settings):
        _check_setting(scope, label, setting, f"{path}.setting[{index}]",
                       keys=("table", "column", "eq"))


def _check_waits(scope: _Scope, label: str, waits: object, path: str, code: str) -> None:
    """`{"after": moment, "before": moment}`: the time a move or a creation waits for."""
    if not isinstance(waits, dict):
        scope.add(code, path, f"{label}: 'time' is {{\"after\": moment, \"before\": moment}}")
        return
    for bound, moment in waits.items():
        if bound not in ("after", "before"):
            scope.add(code, f"{path}.{bound}",
                      f"{label}: a move or creation waits 'after' or 'before' a moment")
            continue
        _check_moment(scope, label, moment, f"{path}.{bound}")


def _check_create(scope: _Scope, create: object, path: str) -> None:
    if create is None:
        return
    label = f"table '{scope.table}', creation"
    requires = create.get("requires") if isinstance(create, dict) else None
    if not isinstance(requires, dict) or set(create) != {"requires"} or set(requires) != {"time"}:
        scope.add("states.create_invalid", path,
                  f"{label}: 'create' is {{\"requires\": {{\"time\": {{\"after\"/\"before\": "
                  "moment}}}")
        return
    _check_waits(scope, label, requires["time"], f"{path}.requires.time", "states.create_invalid")


def _listed(moves: dict) -> dict[str, dict[str, dict]]:
    listed: dict[str, dict[str, dict]] = {}
    for origin, targets in moves.items():
        listed[origin] = {}
        for target in targets if isinstance(targets, list) else []:
            if isinstance(target, str):
                listed[origin][target] = {}
            elif isinstance(target, dict) and isinstance(target.get("to"), str):
                listed[origin][target["to"]] = target
    return listed


# -- timed moves, effects and late rules ------------------------------------------------------

def _check_timed(scope: _Scope, number: int, rule: object, listed: dict, seen_from: set[str],
                 path: str) -> None:
    label = f"table '{scope.table}', timed move {number}"
    if not isinstance(rule, dict):
        scope.add("timed.invalid", path, f"{label} is an object with from, to and at")
        return
    _keys(rule, ("from", "to", "at", "set"), path, scope.add, "timed.invalid", label)
    move = _timed_move(scope, label, rule, listed, seen_from, path)
    _check_moment(scope, label, rule.get("at"), f"{path}.at", own_row="moment.via_in_timed")
    if "set" in rule:
        _check_set(scope, label, rule["set"], f"{path}.set")
    _check_never_passes(scope, label, move, rule.get("at"), path)


def _timed_move(scope: _Scope, label: str, rule: dict, listed: dict, seen_from: set[str],
                path: str) -> dict | None:
    """The listed move a timed move makes, or None after a problem."""
    origin, to = rule.get("from"), rule.get("to")
    for key in ("from", "to"):
        if not is_value(rule.get(key)):
            scope.add("timed.invalid", f"{path}.{key}",
                      f"{label}: '{key}' is a state, {VALUE_RULE}")
    if not (is_value(origin) and is_value(to)):
        return None
    if origin in seen_from:
        scope.add("timed.from_twice", f"{path}.from",
                  f"{label}: at most one timed move leaves each state; '{origin}' has two")
    seen_from.add(origin)
    move = listed.get(origin, {}).get(to)
    if move is None:
        scope.add("timed.move_unlisted", path,
                  f"{label}: the move from {origin!r} to {to!r} is not one the table lists")
    elif move.get("undo"):
        scope.add("timed.undo", path, f"{label}: the move from \"{origin}\" to \"{to}\" is an "
                                      "undo, which only a person makes")
    return move


def _check_set(scope: _Scope, label: str, sets: object, path: str) -> None:
    if not isinstance(sets, dict) or not 1 <= len(sets) <= MAX_SET:
        scope.add("timed.set_invalid", path,
                  f"{label}: 'set' gives 1 to {MAX_SET} columns their values")
        return
    for name, value in sets.items():
        column = scope.column(name)
        if column is None or name == scope.state:
            scope.add("timed.set_invalid", f"{path}.{name}",
                      f"{label}: 'set' may not write '{name}' (the state column, the key, or a "
                      "column the table does not have)")
        elif value is None and not column.get("nullable"):
            scope.add("timed.set_invalid", f"{path}.{name}",
                      f"{label}: '{name}' may not be empty (it is not nullable)")
        elif not _fits(column, value):
            scope.add("timed.set_invalid", f"{path}.{name}",
                      f"{label}: {shown(value)} is no value for the column '{name}' "
                      f"({_type_of(column)})")


def _fits(column: dict, value: object) -> bool:
    """A `set` value of the column's kind. Its length and dates are judged when the row is
    saved: a value the database refuses sets the row aside (A6), as any refused move."""
    kind = column.get("type")
    if value is None:
        return True
    if isinstance(value, str):
        return kind in ("text", "enum", "date", "timestamptz") and "\x00" not in value
    if isinstance(value, bool):
        return kind == "boolean"
    return kind == "integer" and is_whole(value, -(2**63), 2**63 - 1)


def _check_never_passes(scope: _Scope, label: str, move: dict | None, at: object,
                        path: str) -> None:
    requires = move.get("requires") if isinstance(move, dict) else None
    waits = requires.get("time") if isinstance(requires, dict) else None
    after = waits.get("after") if isinstance(waits, dict) else None
    if not isinstance(after, dict) or not isinstance(at, dict):
        return
    plain = not any(key in after for key in ("time", "or", "via")) and "time" not in at \
        and "or" not in at
    same = isinstance(at.get("column"), str) and after.get("column") == at.get("column")
    if plain and same and (after.get("plus") or at.get("minus")):
        scope.add("timed.never_passes", path,
                  f"{label}: the move waits until after {after.get('column')} "
                  f"{'plus' if after.get('plus') else ''} a shift, so a timed move at "
                  f"{at.get('column')} would be refused every time")


def _check_effect(scope: _Scope, number: int, effect: object, path: str) -> None:
    label = f"table '{scope.table}', effect {number}"
    if not isinstance(effect, dict):
        scope.add("effect.invalid", path, f"{label} is an object with when, table, link and to")
        return
    _keys(effect, ("when", "table", "link", "to"), path, scope.add, "effect.invalid", label)
    if not is_value(effect.get("when")):
        scope.add("effect.invalid", f"{path}.when", f"{label}: 'when' is a state of this table")
    other = effect.get("table")
    raw = scope.section.get(other) if is_name(other) else None
    states = raw.get("states") if isinstance(raw, dict) else None
    if not isinstance(states, dict):
        scope.add("effect.table_invalid", f"{path}.table",
                  f"{label}: 'table' names a table of this manifest that keeps states")
        return
    link = (_columns_of(scope.section, other) or {}).get(effect.get("link")) \
        if is_name(effect.get("link")) else None
    if link is None or link.get("references") != scope.table:
        scope.add("effect.link_invalid", f"{path}.link",
                  f"{label}: 'link' is a column of '{other}' that references '{scope.table}'")
    moves = states.get("moves")
    to = effect.get("to")
    targets = _listed(moves).values() if isinstance(moves, dict) else []
    if not is_value(to) or not any(to in listed for listed in targets):
        scope.add("effect.move_unlisted", f"{path}.to",
                  f"{label}: '{other}' lists no move to {shown(to)}")


def _check_late(scope: _Scope, number: int, rule: object, listed: dict,
                seen: tuple[set[str], set[str]], path: str) -> None:
    """A late rule; `seen` holds the moves and the flags earlier late rules took."""
    label = f"table '{scope.table}', late rule {number}"
    if not isinstance(rule, dict):
        scope.add("late.invalid", path, f"{label} is an object with to, moment, within and mode")
        return
    _keys(rule, LATE_KEYS, path, scope.add, "late.invalid", label)
    _check_late_move(scope, label, rule, listed, seen[0], path)
    _check_moment(scope, label, rule.get("moment"), f"{path}.moment")
    _check_shift(scope, label, rule.get("within"), f"{path}.within")
    mode = rule.get("mode")
    if mode not in ("flag", "refuse"):
        scope.add("late.mode_invalid", f"{path}.mode", f"{label}: the mode is flag or refuse")
    if mode == "flag":
        flag = rule.get("flag")
        column = scope.column(flag)
        if column is None or column.get("type") != "boolean" or flag == scope.state \
                or flag in seen[1]:
            scope.add("late.flag_invalid", f"{path}.flag",
                      f"{label}: the flag is a yes/no column of the row, not the state column "
                      "and not another late rule's flag")
        else:
            seen[1].add(flag)
    if mode == "refuse" and rule.get("refuse", "public") not in ("public", "everyone"):
        scope.add("late.refuse_invalid", f"{path}.refuse",
                  f"{label}: refuse is public or everyone")


def _check_late_move(scope: _Scope, label: str, rule: dict, listed: dict, seen_to: set[str],
                     path: str) -> None:
    to = rule.get("to")
    if not is_value(to):
        scope.add("late.move_unlisted", f"{path}.to",
                  f"{label}: 'to' is a state a listed move goes to, {VALUE_RULE}")
        return
    if to in seen_to:
        scope.add("late.twice", f"{path}.to", f"{label}: one late rule per move; '{to}' has two")
    seen_to.add(to)
    origins = rule.get("from", [])
    if not isinstance(origins, list) or not all(is_value(origin) for origin in origins):
        scope.add("late.invalid", f"{path}.from", f"{label}: 'from' is a list of states")
        return
    origins = origins or [origin for origin, targets in listed.items() if to in targets]
    for origin in origins:
        if to not in listed.get(origin, {}):
            scope.add("late.move_unlisted", f"{path}.from",
                      f"{label}: the table lists no move from {origin!r} to {to!r}")
    if not origins:
        scope.add("late.move_unlisted", f"{path}.to", f"{label}: no listed move goes to {to!r}")


# -- holds, reminders and emails --------------------------------------------------------------

def _check_hold(scope: _Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', hold {number}"
    if not isinstance(spec, dict):
        scope.add("hold.invalid", path,
                  f"{label} is an object with on, amount, currency, payer and until")
        return
    _keys(spec, HOLD_KEYS, path, scope.add, "hold.invalid", label)
    if not is_value(spec.get("on")):
        scope.add("hold.state_invalid", f"{path}.on",
                  f"{label}: 'on' is the state in which the row holds the amount, {VALUE_RULE}")
    for key in ("takes", "gives_back"):
        states = spec.get(key, [])
        if not isinstance(states, list) or not all(is_value(state) for state in states):
            scope.add("hold.state_invalid", f"{path}.{key}",
                      f"{label}: '{key}' is a list of states")
    _column_at(scope, label, spec.get("amount"), f"{path}.amount", "hold.amount_invalid",
               "the amount is an integer column of minor units", types=("integer",))
    _column_at(scope, label, spec.get("payer"), f"{path}.payer", "hold.payer_invalid",
               "the payer is a column of the row")
    currency = spec.get("currency")
    if not (isinstance(currency, str) and CURRENCY.fullmatch(currency)):
        scope.add("hold.currency_invalid", f"{path}.currency",
                  f"{label}: the currency is a three-letter code such as GBP")
    _check_moment(scope, label, spec.get("until"), f"{path}.until")


def _check_reminder(scope: _Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', reminder {number}"
    if not isinstance(spec, dict):
        scope.add("reminder.invalid", path, f"{label} is an object with at, lead, to and subject")
        return
    _keys(spec, ("at", "lead", "to", "subject", "body"), path, scope.add, "reminder.invalid",
          label)
    # The job finds reminders due by a filter on the row's own moment column.
    _check_moment(scope, label, spec.get("at"), f"{path}.at", own_row="moment.via_invalid")
    _check_lead(scope, label, spec.get("lead"), f"{path}.lead")
    _column_at(scope, label, spec.get("to"), f"{path}.to", "reminder.to_invalid",
               "'to' names the text column of the row holding the address", types=("text",))
    _check_text(scope, label, spec, path, "reminder.text_invalid")


def _check_lead(scope: _Scope, label: str, lead: object, path: str) -> None:
    if not isinstance(lead, dict) or not ({"hours", "column"} & set(lead)):
        scope.add("reminder.lead_invalid", path,
                  f"{label}: a lead gives hours, a column, or a setting, with an optional "
                  "fallback, max and at")
        return
    _keys(lead, LEAD_KEYS, path, scope.add, "reminder.lead_invalid", label)
    hours = lead.get("hours")
    if isinstance(hours, dict):
        _check_setting(scope, label, hours, f"{path}.hours")
    elif "hours" in lead and not is_whole(hours, 0, LEAD_MAX):
        scope.add("reminder.lead_invalid", f"{path}.hours",
                  f"{label}: the lead's hours are a whole number from 0 to {LEAD_MAX:,}, or a "
                  "setting")
    if "column" in lead:
        _check_lead_column(scope, label, lead, path)
    if "fallback" in lead:
        _check_setting(scope, label, lead["fallback"], f"{path}.fallback")
    if "max" in lead and not is_whole(lead["max"], 0, LEAD_MAX):
        scope.add("reminder.lead_invalid", f"{path}.max",
                  f"{label}: the lead's max is a whole number of hours from 0 to {LEAD_MAX:,}")
    if "at" in lead and parse_time_of_day(lead["at"]) is None:
        scope.add("reminder.lead_invalid", f"{path}.at",
                  f"{label}: {shown(lead['at'])} is not a time of day (HH:MM)")


def _check_lead_column(scope: _Scope, label: str, lead: dict, path: str) -> None:
    columns = _via_columns(scope, label, lead, path, "reminder.lead_invalid") \
        if "via" in lead else scope.columns
    name = lead["column"]
    column = columns.get(name) if columns is not None and is_name(name) else None
    if columns is not None and (column is None or column.get("type") != "integer"):
        scope.add("reminder.lead_invalid", f"{path}.column",
                  f"{label}: the lead's column is an integer column of the row, or of the row "
                  "its 'via' links to")


def _check_email(scope: _Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', email {number}"
    if not isinstance(spec, dict):
        scope.add("email.invalid", path, f"{label} is an object with on, to and subject")
        return
    _keys(spec, ("on", "to", "subject", "body"), path, scope.add, "email.invalid", label)
    _check_on(scope, label, spec.get("on"), f"{path}.on", "email.on_invalid")
    _column_at(scope, label, spec.get("to"), f"{path}.to", "email.to_invalid",
               "'to' names the text column of the row holding the address", types=("text",))
    _check_text(scope, label, spec, path, "email.text_invalid")


def _check_text(scope: _Scope, label: str, spec: dict, path: str, code: str) -> None:
    for key, shortest in (("subject", 1), ("body", 0)):
        if key == "body" and key not in spec:
            continue
        wrong = _template_rule(spec.get(key), shortest)
        if wrong:
            scope.add(code, f"{path}.{key}", f"{label}: the {key} {wrong}")


def _template_rule(text: object, shortest: int) -> str | None:
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


# -- moments ----------------------------------------------------------------------------------

def _check_moment(scope: _Scope, label: str, moment: object, path: str, *, own_row: str = "",
                  fallback: bool = False) -> None:
    """A moment (moves.moments). `own_row`: the code refusing a `via`, where only the row's
    own columns may be read."""
    if not isinstance(moment, dict) or not isinstance(moment.get("column"), str):
        scope.add("moment.invalid", path, f"{label}: a moment names a 'column' of the row")
        return
    _keys(moment, MOMENT_KEYS, path, scope.add, "moment.key_unknown", label)
    columns: dict[str, dict] | None = scope.columns
    if "via" in moment and own_row:
        scope.add(own_row, f"{path}.via",
                  f"{label} reads its own row's columns only, never via a link")
        columns = None
    elif "via" in moment:
        columns = _via_columns(scope, label, moment, path, "moment.via_invalid")
    if columns is not None:
        _check_moment_column(scope, label, moment, columns, path)
    if "time" in moment:
        _check_time(scope, label, moment["time"], columns or {}, f"{path}.time")
    if "plus" in moment and "minus" in moment:
        scope.add("moment.shift_invalid", path,
                  f"{label}: a moment shifts by plus or minus, not both")
    for key in ("plus", "minus"):
        if key in moment:
            _check_shift(scope, label, moment[key], f"{path}.{key}")
    if "or" in moment:
        _check_fallbacks(scope, label, moment["or"], f"{path}.or", own_row, fallback)


def _check_fallbacks(scope: _Scope, label: str, fallbacks: object, path: str, own_row: str,
                     fallback: bool) -> None:
    if fallback:
        scope.add("moment.or_invalid", path, f"{label}: a fallback has no fallbacks of its own")
        return
    fallbacks = _list(fallbacks, path, scope.add, "moment.or_invalid",
                      f"{label}: 'or' is a list of fallback moments")
    if len(fallbacks) > MAX_OR:
        scope.add("moment.or_too_many", path, f"{label}: at most {MAX_OR} fallbacks")
    for index, other in enumerate(fallbacks):
        _check_moment(scope, label, other, f"{path}[{index}]", own_row=own_row, fallback=True)


def _via_columns(scope: _Scope, label: str, holder: dict, path: str,
                 code: str) -> dict[str, dict] | None:
    """The columns of the table a `via` column links to, or None after a problem."""
    link = scope.column(holder.get("via"))
    columns = _columns_of(scope.section, link.get("references")) if link else None
    if columns is None:
        scope.add(code, f"{path}.via",
                  f"{label}: 'via' is a column of the row that references another table")
    return columns


def _check_moment_column(scope: _Scope, label: str, moment: dict, columns: dict,
                         path: str) -> None:
    name = moment["column"]
    column = columns.get(name) if is_name(name) else None
    if column is None:
        scope.add("moment.column_unknown", f"{path}.column",
                  f"{label}: {shown(name)} is not a column of the table")
    elif column.get("type") not in ("date", "timestamptz"):
        scope.add("moment.column_type", f"{path}.column",
                  f"{label}: '{name}' is {_type_of(column)}; a moment reads a date or "
                  "timestamptz column")
    elif column.get("type") == "date" and "time" not in moment:
        scope.add("moment.date_needs_time", path,
                  f"{label}: '{name}' is a date, which has no clock; give a 'time'")


def _check_time(scope: _Scope, label: str, time: object, columns: dict, path: str) -> None:
    if isinstance(time, str):
        if parse_time_of_day(time) is None:
            scope.add("moment.time_invalid", path,
                      f"{label}: {shown(time)} is not a time of day (HH:MM)")
    elif isinstance(time, dict) and "hours" in time:
        _check_hours(scope, label, time, path)
    elif isinstance(time, dict) and "table" in time:
        _check_setting(scope, label, time, path)
    elif isinstance(time, dict) and set(time) == {"column"}:
        if not is_name(time["column"]) or time["column"] not in columns:
            scope.add("moment.time_invalid", f"{path}.column",
                      f"{label}: {shown(time['column'])} is not a column of the row")
    else:
        scope.add("moment.time_invalid", path, f"{label}: a time is HH:MM, a setting "
                                               "{table, column}, an opening-hours edge, or a "
                                               "column")


def _check_hours(scope: _Scope, label: str, time: dict, path: str) -> None:
    """An opening-hours edge: its table, and the columns the hours are read from (the
    weekday column is always read; `weekday` unless named)."""
    _keys(time, ("hours", "edge"), path, scope.add, "moment.time_invalid", label)
    if time.get("edge") not in ("opens", "closes"):
        scope.add("moment.time_invalid", f"{path}.edge", f"{label}: the edge is opens or closes")
    hours = time["hours"]
    if not isinstance(hours, dict):
        scope.add("hours.table_invalid", f"{path}.hours",
                  f"{label}: 'hours' names the opening-hours table and its columns")
        return
    _keys(hours, HOURS_KEYS, f"{path}.hours", scope.add, "hours.column_invalid", label)
    columns = _columns_of(scope.section, hours.get("table"))
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


def _check_shift(scope: _Scope, label: str, shift: object, path: str) -> None:
    if not isinstance(shift, dict) or len(shift) != 1 or next(iter(shift)) not in SHIFT_UNITS:
        scope.add("moment.shift_invalid", path,
                  f"{label}: a shift is exactly one of minutes, hours or days")
        return
    unit, value = next(iter(shift.items()))
    if isinstance(value, dict):
        _check_setting(scope, label, value, f"{path}.{unit}")
    elif not is_whole(value, 0, SHIFT_MAX[unit]):
        scope.add("moment.shift_invalid", f"{path}.{unit}",
                  f"{label}: a shift of {unit} is a whole number from 0 to "
                  f"{SHIFT_MAX[unit]:,} (ten years), or a setting")


def _check_setting(scope: _Scope, label: str, setting: object, path: str, *,
                   keys: tuple[str, ...] = ("table", "column")) -> None:
    if not isinstance(setting, dict):
        scope.add("setting.table_invalid", path,
                  f"{label}: a setting is {{\"table\": …, \"column\": …}}")
        return
    _keys(setting, keys, path, scope.add, "setting.invalid", label)
    table, name = setting.get("table"), setting.get("column")
    columns = _columns_of(scope.section, table)
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
    links_out = any(column.get("references") for column in _column_list(raw))
    links_in = any(column.get("references") == table for other in section.values()
                   if isinstance(other, dict) for column in _column_list(other))
    return not raw.get("states") and not links_out and not links_in
