"""The check of a table's `states`: its state column, the moves it lists and what they require,
creation, timed moves, effects on linked rows, and late rules. Part of the `tables` check
(timekeeping.moves.check)."""

from __future__ import annotations

from timekeeping.moves.check_moments import check_moment, check_setting, check_shift
from timekeeping.moves.check_scope import (
    RESERVED,
    Scope,
    check_keys,
    columns_of,
    listed_at,
    type_of,
)
from timekeeping.specs.rules import NAME_RULE, VALUE_RULE, is_name, is_value, is_whole, shown

MAX_TIMED = 8
MAX_SET = 8
STATES_KEYS = ("column", "initial", "moves", "timed", "effects", "create", "late")
LATE_KEYS = ("to", "from", "moment", "within", "mode", "flag", "refuse")


def check_state_section(scope: Scope, states: object, path: str) -> None:
    label = f"table '{scope.table}'"
    if not isinstance(states, dict):
        scope.add("states.invalid", path,
                  f"{label}: 'states' names its 'column', 'initial' and 'moves'")
        return
    check_keys(states, STATES_KEYS, path, scope.add, "states.key_unknown", label)
    _check_state_column(scope, states.get("column"), f"{path}.column")
    listed = _check_moves(scope, states.get("moves", {}), f"{path}.moves")
    known = set(listed) | {to for targets in listed.values() for to in targets}
    initial = states.get("initial")
    if not is_value(initial) or initial not in known:
        scope.add("states.initial_unknown", f"{path}.initial",
                  f"{label}: the initial state {shown(initial)} is in no move")
    _check_state_rules(scope, states, listed, path)


def _check_state_rules(scope: Scope, states: dict, listed: dict, path: str) -> None:
    label, add = f"table '{scope.table}'", scope.add
    timed = listed_at(states.get("timed", []), f"{path}.timed", add, "timed.invalid",
                  f"{label}: 'timed' is a list of timed moves")
    if len(timed) > MAX_TIMED:
        add("timed.too_many", f"{path}.timed",
            f"{label} has {len(timed)} timed moves; at most {MAX_TIMED}")
    seen_from: set[str] = set()
    for number, rule in enumerate(timed, start=1):
        _check_timed(scope, number, rule, listed, seen_from, f"{path}.timed[{number - 1}]")
    effects = listed_at(states.get("effects", []), f"{path}.effects", add, "effect.invalid",
                    f"{label}: 'effects' is a list of moves of linked rows")
    for number, effect in enumerate(effects, start=1):
        _check_effect(scope, number, effect, f"{path}.effects[{number - 1}]")
    _check_create(scope, states.get("create"), f"{path}.create")
    late = listed_at(states.get("late", []), f"{path}.late", add, "late.invalid",
                 f"{label}: 'late' is a list of late rules")
    seen_to: set[str] = set()
    flags: set[str] = set()
    for number, rule in enumerate(late, start=1):
        _check_late(scope, number, rule, listed, (seen_to, flags), f"{path}.late[{number - 1}]")


def _check_state_column(scope: Scope, column: object, path: str) -> None:
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


def _check_moves(scope: Scope, moves: object, path: str) -> dict[str, dict[str, dict]]:
    label = f"table '{scope.table}'"
    if not isinstance(moves, dict):
        scope.add("states.invalid", path,
                  f"{label}: 'moves' maps a state to the states it may move to")
        return {}
    for origin, targets in moves.items():
        where = f"{path}.{origin}"
        if not is_value(origin):
            scope.add("states.move_invalid", where, f"{label}: a state is {VALUE_RULE}")
        for index, target in enumerate(listed_at(
                targets, where, scope.add, "states.move_invalid",
                f"{label}: state {shown(origin)} lists the states it may move to")):
            _check_target(scope, label, target, f"{where}[{index}]")
    return _listed(moves)


def _check_target(scope: Scope, label: str, target: object, path: str) -> None:
    if isinstance(target, str) and is_value(target):
        return
    if not isinstance(target, dict) or not is_value(target.get("to")):
        scope.add("states.move_invalid", path, f"{label}: a move is a state ({VALUE_RULE}), or "
                                               "{\"to\": state, \"undo\"?, \"requires\"?}")
        return
    check_keys(target, ("to", "undo", "requires"), path, scope.add, "states.move_invalid", label)
    if not isinstance(target.get("undo", False), bool):
        scope.add("states.move_invalid", f"{path}.undo", f"{label}: 'undo' is true or false")
    requires = target.get("requires")
    if requires is not None:
        _check_requires(scope, f"{label}, the move to {target['to']!r}", requires,
                        f"{path}.requires")


def _check_requires(scope: Scope, label: str, requires: object, path: str) -> None:
    if not isinstance(requires, dict):
        scope.add("states.move_invalid", path,
                  f"{label}: 'requires' is {{\"time\": …, \"setting\": [...]}}")
        return
    check_keys(requires, ("time", "setting"), path, scope.add, "states.move_invalid", label)
    if "time" in requires:
        _check_waits(scope, label, requires["time"], f"{path}.time", "states.move_invalid")
    settings = listed_at(requires.get("setting", []), f"{path}.setting", scope.add,
                     "states.move_invalid",
                     f"{label}: 'setting' is a list of {{table, column, eq}}")
    for index, setting in enumerate(settings):
        check_setting(scope, label, setting, f"{path}.setting[{index}]",
                       keys=("table", "column", "eq"))


def _check_waits(scope: Scope, label: str, waits: object, path: str, code: str) -> None:
    """`{"after": moment, "before": moment}`: the time a move or a creation waits for."""
    if not isinstance(waits, dict):
        scope.add(code, path, f"{label}: 'time' is {{\"after\": moment, \"before\": moment}}")
        return
    for bound, moment in waits.items():
        if bound not in ("after", "before"):
            scope.add(code, f"{path}.{bound}",
                      f"{label}: a move or creation waits 'after' or 'before' a moment")
            continue
        check_moment(scope, label, moment, f"{path}.{bound}")


def _check_create(scope: Scope, create: object, path: str) -> None:
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

def _check_timed(scope: Scope, number: int, rule: object, listed: dict, seen_from: set[str],
                 path: str) -> None:
    label = f"table '{scope.table}', timed move {number}"
    if not isinstance(rule, dict):
        scope.add("timed.invalid", path, f"{label} is an object with from, to and at")
        return
    check_keys(rule, ("from", "to", "at", "set"), path, scope.add, "timed.invalid", label)
    move = _timed_move(scope, label, rule, listed, seen_from, path)
    check_moment(scope, label, rule.get("at"), f"{path}.at", own_row="moment.via_in_timed")
    if "set" in rule:
        _check_set(scope, label, rule["set"], f"{path}.set")
    _check_never_passes(scope, label, move, rule.get("at"), path)


def _timed_move(scope: Scope, label: str, rule: dict, listed: dict, seen_from: set[str],
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


def _check_set(scope: Scope, label: str, sets: object, path: str) -> None:
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
                      f"({type_of(column)})")


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


def _check_never_passes(scope: Scope, label: str, move: dict | None, at: object,
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


def _check_effect(scope: Scope, number: int, effect: object, path: str) -> None:
    label = f"table '{scope.table}', effect {number}"
    if not isinstance(effect, dict):
        scope.add("effect.invalid", path, f"{label} is an object with when, table, link and to")
        return
    check_keys(effect, ("when", "table", "link", "to"), path, scope.add, "effect.invalid", label)
    if not is_value(effect.get("when")):
        scope.add("effect.invalid", f"{path}.when", f"{label}: 'when' is a state of this table")
    other = effect.get("table")
    raw = scope.section.get(other) if is_name(other) else None
    states = raw.get("states") if isinstance(raw, dict) else None
    if not isinstance(states, dict):
        scope.add("effect.table_invalid", f"{path}.table",
                  f"{label}: 'table' names a table of this manifest that keeps states")
        return
    link = (columns_of(scope.section, other) or {}).get(effect.get("link")) \
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


def _check_late(scope: Scope, number: int, rule: object, listed: dict,
                seen: tuple[set[str], set[str]], path: str) -> None:
    """A late rule; `seen` holds the moves and the flags earlier late rules took."""
    label = f"table '{scope.table}', late rule {number}"
    if not isinstance(rule, dict):
        scope.add("late.invalid", path, f"{label} is an object with to, moment, within and mode")
        return
    check_keys(rule, LATE_KEYS, path, scope.add, "late.invalid", label)
    _check_late_move(scope, label, rule, listed, seen[0], path)
    check_moment(scope, label, rule.get("moment"), f"{path}.moment")
    check_shift(scope, label, rule.get("within"), f"{path}.within")
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


def _check_late_move(scope: Scope, label: str, rule: dict, listed: dict, seen_to: set[str],
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
