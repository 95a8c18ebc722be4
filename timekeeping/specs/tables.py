"""A manifest's `tables` section, compiled: the values the job, the rows and the DDL read.

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

`compile_tables` reads a section that passed its check (timekeeping.moves.check, A2, A3, A9)
and trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
