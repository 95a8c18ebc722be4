"""A manifest's `tables` section: its check (A2, A3, A9) and the values the job reads.

    "tables": {
      "orders": {
        "columns": [{"ref": "pickup_at", "type": "timestamptz"},
                    {"ref": "cancel_code", "type": "text", "maxLength": 20, "nullable": true}],
        "states": {
          "column": "status", "initial": "placed",
          "moves": {"placed": ["confirmed", "cancelled"], "confirmed": ["cancelled"]},
          "timed": [{"from": "placed", "to": "cancelled",
                     "at": {"column": "pickup_at", "time": {"hours": {...}, "edge": "closes"}},
                     "set": {"cancel_code": "closed"}}]
        }
      },
      "settings": {"settings": true, "columns": [{"ref": "no_show_at", "type": "text"}]}
    }
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from calendars.moments import parse_time_of_day

TYPES = ("text", "integer", "boolean", "date", "timestamptz", "enum")
NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
SHIFT_UNITS = ("minutes", "hours", "days")
MAX_TIMED = 8
MAX_SET = 8
MAX_OR = 3
RESERVED = ("id",)

Add = Callable[[str, str, str], None]


@dataclass(frozen=True)
class Column:
    ref: str
    type: str
    nullable: bool = False
    max_length: int | None = None
    references: str | None = None
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Move:
    to: str
    undo: bool = False
    requires_time: dict = field(default_factory=dict)  # {"after": moment, "before": moment}
    requires_settings: tuple = ()  # ({"table", "column", "eq"}, …)


@dataclass(frozen=True)
class Timed:
    number: int
    from_state: str
    to: str
    at: dict
    set: dict


@dataclass(frozen=True)
class Late:
    """A move made close to a moment: flagged, or refused (A11)."""

    to: str
    from_states: tuple[str, ...]
    moment: dict
    within: dict
    mode: str  # flag or refuse
    flag: str = ""
    refuse: str = "public"  # public or everyone


@dataclass(frozen=True)
class States:
    column: str
    initial: str
    moves: dict[str, dict[str, Move]]
    timed: tuple[Timed, ...] = ()
    late: tuple[Late, ...] = ()
    create_requires: dict = field(default_factory=dict)  # {"after": moment, "before": moment}


@dataclass(frozen=True)
class Table:
    name: str
    columns: dict[str, Column]
    states: States | None = None
    settings: bool = False


def compile_tables(section: dict) -> dict[str, Table]:
    tables = {}
    for name, raw in (section or {}).items():
        columns = {c["ref"]: Column(c["ref"], c["type"], bool(c.get("nullable")),
                                    c.get("maxLength"), c.get("references"),
                                    tuple(c.get("values", ())))
                   for c in raw.get("columns", [])}
        states = None
        if raw.get("states"):
            spec = raw["states"]
            columns.setdefault(spec["column"], Column(spec["column"], "text"))
            moves: dict[str, dict[str, Move]] = {}
            for origin, targets in spec.get("moves", {}).items():
                moves[origin] = {}
                for target in targets:
                    requires = {} if isinstance(target, str) else (target.get("requires") or {})
                    move = Move(target) if isinstance(target, str) else Move(
                        target["to"], bool(target.get("undo")), requires.get("time", {}),
                        tuple(requires.get("setting", ())))
                    moves[origin][move.to] = move
            timed = tuple(Timed(n, t["from"], t["to"], t["at"], dict(t.get("set", {})))
                          for n, t in enumerate(spec.get("timed", []), start=1))
            late = tuple(Late(rule["to"], tuple(rule.get("from", ())), rule["moment"],
                              rule["within"], rule["mode"], rule.get("flag", ""),
                              rule.get("refuse", "public")) for rule in spec.get("late", []))
            create = ((spec.get("create") or {}).get("requires") or {}).get("time", {})
            states = States(spec["column"], spec["initial"], moves, timed, late, create)
        tables[name] = Table(name, columns, states, bool(raw.get("settings")))
    return tables


# -- the check --------------------------------------------------------------------------------

def check_section(section: object, add: Add) -> None:
    path = "$.tables"
    if not isinstance(section, dict):
        add("table.invalid", path, "'tables' maps a table's name to its definition")
        return
    for name, raw in section.items():
        where = f"{path}.{name}"
        if not NAME.match(str(name)):
            add("table.name_invalid", where, f"table '{name}': a name of a-z, 0-9 and _")
        if not isinstance(raw, dict):
            add("table.invalid", where, f"table '{name}' is an object with 'columns'")
            continue
        for key in raw:
            if key not in ("columns", "states", "settings", "emails", "reminders", "holds"):
                add("table.key_unknown", f"{where}.{key}",
                    f"table '{name}': '{key}' is not a key here (columns, states, settings, "
                    "emails, reminders, holds)")
        columns = _check_columns(name, raw.get("columns", []), section, f"{where}.columns", add)
        if raw.get("states") is not None:
            _check_states(name, raw["states"], columns, section, f"{where}.states", add)
        for number, spec in enumerate(raw.get("holds", []), start=1):
            label = f"table '{name}', hold {number}"
            here = f"{where}.holds[{number - 1}]"
            amount = (spec.get("amount") or {}).get("column") if isinstance(spec, dict) else None
            if columns.get(amount, {}).get("type") != "integer":
                add("hold.amount_invalid", f"{here}.amount",
                    f"{label}: the amount is an integer column of minor units")
            currency = spec.get("currency") if isinstance(spec, dict) else None
            if not (isinstance(currency, str) and len(currency) == 3 and currency.isupper()):
                add("hold.currency_invalid", f"{here}.currency",
                    f"{label}: the currency is a three-letter code such as GBP")
            _check_moment(label, spec.get("until") if isinstance(spec, dict) else None,
                          columns, section, f"{here}.until", add)
        for number, spec in enumerate(raw.get("reminders", []), start=1):
            label = f"table '{name}', reminder {number}"
            here = f"{where}.reminders[{number - 1}]"
            _check_moment(label, spec.get("at") if isinstance(spec, dict) else None, columns,
                          section, f"{here}.at", add)
            lead = spec.get("lead") if isinstance(spec, dict) else None
            if not isinstance(lead, dict) or not ({"hours", "column"} & set(lead)):
                add("reminder.lead_invalid", f"{here}.lead",
                    f"{label}: a lead gives hours, a column, or a setting, with an optional "
                    "fallback, max and at")
            elif "at" in lead and parse_time_of_day(lead["at"]) is None:
                add("reminder.lead_invalid", f"{here}.lead.at",
                    f"{label}: {lead['at']!r} is not a time of day (HH:MM)")


def _check_columns(table: str, columns: object, section: dict, path: str, add: Add) -> dict:
    found: dict[str, dict] = {}
    if not isinstance(columns, list):
        add("column.invalid", path, f"table '{table}': 'columns' is a list")
        return found
    for index, column in enumerate(columns):
        where = f"{path}[{index}]"
        ref = column.get("ref") if isinstance(column, dict) else None
        if not isinstance(ref, str) or not NAME.match(ref) or ref in RESERVED:
            add("column.invalid", where, f"table '{table}': each column has a 'ref' of a-z, "
                                         "0-9 and _ (not 'id')")
            continue
        if column.get("type") not in TYPES:
            add("column.type_invalid", f"{where}.type",
                f"table '{table}', column '{ref}': the type is one of {', '.join(TYPES)}")
        if column.get("references") is not None and column["references"] not in section:
            add("column.references_unknown", f"{where}.references",
                f"table '{table}', column '{ref}' references '{column['references']}', which "
                "is not a table of this manifest")
        for rule in column.get("rules") or {}:
            if rule not in ("code", "stamp"):
                add("column.rules_invalid", f"{where}.rules.{rule}",
                    f"table '{table}', column '{ref}': a column rule is code or stamp")
        found[ref] = column
    return found


def _check_states(table: str, states: object, columns: dict, section: dict, path: str,
                  add: Add) -> None:
    if not isinstance(states, dict) or not isinstance(states.get("column"), str):
        add("states.invalid", path, f"table '{table}': 'states' names its 'column', "
                                    "'initial' and 'moves'")
        return
    moves = states.get("moves", {})
    if not isinstance(moves, dict):
        add("states.invalid", f"{path}.moves", f"table '{table}': 'moves' maps a state to the "
                                                "states it may move to")
        moves = {}
    listed = _listed(moves)
    known = set(moves) | {to for targets in listed.values() for to in targets}
    if states.get("initial") not in known:
        add("states.initial_unknown", f"{path}.initial",
            f"table '{table}': the initial state {states.get('initial')!r} is in no move")
    timed = states.get("timed", [])
    if len(timed) > MAX_TIMED:
        add("timed.too_many", f"{path}.timed", f"table '{table}' has {len(timed)} timed moves; "
                                               f"at most {MAX_TIMED}")
    seen_from: set[str] = set()
    for number, rule in enumerate(timed, start=1):
        _check_timed(table, number, rule, states, listed, columns, section, seen_from,
                     f"{path}.timed[{number - 1}]", add)
    for index, effect in enumerate(states.get("effects", [])):
        _check_effect(table, index, effect, section, f"{path}.effects[{index}]", add)
    waits = ((states.get("create") or {}).get("requires") or {}).get("time", {})
    for bound, moment in waits.items() if isinstance(waits, dict) else []:
        if bound not in ("after", "before"):
            add("states.create_invalid", f"{path}.create.requires.time.{bound}",
                f"table '{table}': a creation waits 'after' or 'before' a moment")
            continue
        _check_moment(f"table '{table}', creation", moment, columns, section,
                      f"{path}.create.requires.time.{bound}", add)
    seen_to: set[str] = set()
    flags: set[str] = set()
    for number, rule in enumerate(states.get("late", []), start=1):
        _check_late(table, number, rule, states, listed, columns, section, seen_to, flags,
                    f"{path}.late[{number - 1}]", add)


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


def _check_timed(table, number, rule, states, listed, columns, section, seen_from, path, add):
    label = f"table '{table}', timed move {number}"
    if not isinstance(rule, dict):
        add("timed.invalid", path, f"{label} is an object with from, to and at")
        return
    origin, to = rule.get("from"), rule.get("to")
    if origin in seen_from:
        add("timed.from_twice", f"{path}.from",
            f"{label}: at most one timed move leaves each state; '{origin}' has two")
    seen_from.add(origin)
    move = listed.get(origin, {}).get(to)
    if move is None:
        add("timed.move_unlisted", path, f"{label}: the move from {origin!r} to {to!r} is not "
                                         "one the table lists")
    elif move.get("undo"):
        add("timed.undo", path, f"{label}: the move from \"{origin}\" to \"{to}\" is an undo, "
                                "which only a person makes")
    _check_moment(label, rule.get("at"), columns, section, f"{path}.at", add, timed=True)
    sets = rule.get("set", {})
    if sets and (not isinstance(sets, dict) or not 1 <= len(sets) <= MAX_SET):
        add("timed.set_invalid", f"{path}.set", f"{label}: 'set' gives 1 to {MAX_SET} columns "
                                                "their values")
    for column, value in (sets.items() if isinstance(sets, dict) else []):
        if column == states.get("column") or column not in columns:
            add("timed.set_invalid", f"{path}.set.{column}",
                f"{label}: 'set' may not write '{column}' (the state column, the key, or a "
                "column the table does not have)")
        elif value is None and not columns[column].get("nullable"):
            add("timed.set_invalid", f"{path}.set.{column}",
                f"{label}: '{column}' may not be empty (it is not nullable)")
    waits = (move or {}).get("requires", {}).get("time", {}) if isinstance(move, dict) else {}
    after = waits.get("after")
    at = rule.get("at") or {}
    if isinstance(after, dict) and after.get("column") == at.get("column") and not any(
            key in after for key in ("time", "or", "via")) and "time" not in at and "or" not in at \
            and (after.get("plus") or at.get("minus")):
        add("timed.never_passes", path,
            f"{label}: the move waits until after {after.get('column')} "
            f"{'plus' if after.get('plus') else ''} a shift, so a timed move at "
            f"{at.get('column')} would be refused every time")


def _check_effect(table, index, effect, section, path, add):
    label = f"table '{table}', effect {index + 1}"
    other = section.get(effect.get("table")) if isinstance(effect, dict) else None
    if not isinstance(other, dict) or not other.get("states"):
        add("effect.table_invalid", path, f"{label}: 'table' names a table of this manifest "
                                          "that keeps states")
        return
    link = next((c for c in other.get("columns", []) if c.get("ref") == effect.get("link")),
                None)
    if link is None or link.get("references") != table:
        add("effect.link_invalid", f"{path}.link",
            f"{label}: 'link' is a column of '{effect.get('table')}' that references '{table}'")
    targets = _listed(other["states"].get("moves", {}))
    if not any(effect.get("to") in moves for moves in targets.values()):
        add("effect.move_unlisted", f"{path}.to",
            f"{label}: '{effect.get('table')}' lists no move to {effect.get('to')!r}")


def _check_late(table, number, rule, states, listed, columns, section, seen_to, flags, path,
                add):
    label = f"table '{table}', late rule {number}"
    if not isinstance(rule, dict):
        add("late.invalid", path, f"{label} is an object with to, moment, within and mode")
        return
    to = rule.get("to")
    if to in seen_to:
        add("late.twice", f"{path}.to", f"{label}: one late rule per move; '{to}' has two")
    seen_to.add(to)
    origins = rule.get("from") or [o for o, targets in listed.items() if to in targets]
    for origin in origins:
        if to not in listed.get(origin, {}):
            add("late.move_unlisted", f"{path}.from", f"{label}: the table lists no move from "
                                                      f"{origin!r} to {to!r}")
    if not origins:
        add("late.move_unlisted", f"{path}.to", f"{label}: no listed move goes to {to!r}")
    _check_moment(label, rule.get("moment"), columns, section, f"{path}.moment", add)
    _check_shift(label, rule.get("within"), section, f"{path}.within", add)
    mode = rule.get("mode")
    if mode not in ("flag", "refuse"):
        add("late.mode_invalid", f"{path}.mode", f"{label}: the mode is flag or refuse")
    if mode == "flag":
        flag = rule.get("flag")
        column = columns.get(flag)
        if column is None or column.get("type") != "boolean" or flag == states.get("column") \
                or flag in flags:
            add("late.flag_invalid", f"{path}.flag",
                f"{label}: the flag is a yes/no column of the row, not the state column and not "
                "another late rule's flag")
        flags.add(flag)
    if mode == "refuse" and rule.get("refuse", "public") not in ("public", "everyone"):
        add("late.refuse_invalid", f"{path}.refuse", f"{label}: refuse is public or everyone")


def _check_moment(label, moment, columns, section, path, add, *, timed=False, depth=0):
    if not isinstance(moment, dict) or not isinstance(moment.get("column"), str):
        add("moment.invalid", path, f"{label}: a moment names a 'column' of the row")
        return
    column = columns.get(moment["column"])
    if timed and "via" in moment:
        add("moment.via_in_timed", f"{path}.via",
            f"{label}: a timed move reads its own row's columns only, never via a link")
    if column is None and "via" not in moment:
        add("moment.column_unknown", f"{path}.column",
            f"{label}: '{moment['column']}' is not a column of the table")
    elif column is not None and column.get("type") not in ("date", "timestamptz"):
        add("moment.column_type", f"{path}.column",
            f"{label}: '{moment['column']}' is {column.get('type')}; a moment reads a date or "
            "timestamptz column")
    elif column is not None and column.get("type") == "date" and "time" not in moment:
        add("moment.date_needs_time", path,
            f"{label}: '{moment['column']}' is a date, which has no clock; give a 'time'")
    if "time" in moment:
        _check_time(label, moment["time"], columns, section, f"{path}.time", add)
    if "plus" in moment and "minus" in moment:
        add("moment.shift_invalid", path, f"{label}: a moment shifts by plus or minus, not both")
    for key in ("plus", "minus"):
        if key in moment:
            _check_shift(label, moment[key], section, f"{path}.{key}", add)
    fallbacks = moment.get("or", [])
    if len(fallbacks) > MAX_OR:
        add("moment.or_too_many", f"{path}.or", f"{label}: at most {MAX_OR} fallbacks")
    if depth == 0:
        for index, fallback in enumerate(fallbacks):
            _check_moment(label, fallback, columns, section, f"{path}.or[{index}]", add,
                          timed=timed, depth=1)


def _check_time(label, time, columns, section, path, add):
    if isinstance(time, str):
        if parse_time_of_day(time) is None:
            add("moment.time_invalid", path, f"{label}: {time!r} is not a time of day (HH:MM)")
    elif isinstance(time, dict) and "hours" in time:
        if time.get("edge") not in ("opens", "closes"):
            add("moment.time_invalid", f"{path}.edge", f"{label}: the edge is opens or closes")
        hours = time["hours"] if isinstance(time["hours"], dict) else {}
        if hours.get("table") not in section:
            add("moment.time_invalid", f"{path}.hours.table",
                f"{label}: the opening-hours table {hours.get('table')!r} is not in the manifest")
    elif isinstance(time, dict) and "table" in time:
        _check_setting(label, time, section, path, add)
    elif isinstance(time, dict) and time.get("column") in columns:
        return
    else:
        add("moment.time_invalid", path, f"{label}: a time is HH:MM, a setting "
                                         "{table, column}, an opening-hours edge, or a column")


def _check_shift(label, shift, section, path, add):
    if not isinstance(shift, dict) or len(shift) != 1 or next(iter(shift)) not in SHIFT_UNITS:
        add("moment.shift_invalid", path,
            f"{label}: a shift is exactly one of minutes, hours or days")
        return
    value = next(iter(shift.values()))
    if isinstance(value, dict):
        _check_setting(label, value, section, path, add)
    elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
        add("moment.shift_invalid", path, f"{label}: a shift is a whole number of 0 or more, "
                                          "or a setting")


def _check_setting(label, setting, section, path, add):
    table = section.get(setting.get("table")) if isinstance(section, dict) else None
    if not isinstance(table, dict):
        add("setting.table_invalid", path, f"{label}: the setting's table "
                                           f"{setting.get('table')!r} is not in the manifest")
        return
    standalone = not table.get("states") and not any(
        c.get("references") for c in table.get("columns", []) if isinstance(c, dict)) and not any(
        c.get("references") == setting["table"] for other in section.values()
        if isinstance(other, dict) for c in other.get("columns", []) if isinstance(c, dict))
    if not table.get("settings") and not standalone:
        add("setting.table_invalid", path,
            f"{label}: '{setting['table']}.{setting.get('column')}' is no setting: read "
            "settings from the one-row settings table, or from a table that links nowhere, "
            "that no table links to, and that keeps no states")
