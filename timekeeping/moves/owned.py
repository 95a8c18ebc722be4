"""Columns only the product writes (SPEC A7, A11): a writer's value for them is refused.

- `id`, the key;
- the state column: a row changes state only by a move;
- every late rule's flag: it says whether a move was late, which only the move judges;
- every column with a `code` rule (a link code) or a `stamp` rule (a deadline): written when
  the row is made or enters a state, and renewed by the product.

A timed move's `set` columns are not here: they are ordinary columns a person may write too,
which the move gives a fixed value.
"""

from __future__ import annotations

from timekeeping.specs.tables import Table

PRODUCT_RULES = ("code", "stamp")


def product_columns(table: Table, raw: dict) -> set[str]:
    """The columns of `table` (compiled, and its manifest definition `raw` for the column
    rules) that no writer may write."""
    owned = {"id"}
    if table.states:
        owned.add(table.states.column)
        owned |= {late.flag for late in table.states.late if late.flag}
    for column in raw.get("columns", []):
        rules = (column.get("rules") or {}) if isinstance(column, dict) else {}
        if any(rule in rules for rule in PRODUCT_RULES):
            owned.add(column["ref"])
    return owned
