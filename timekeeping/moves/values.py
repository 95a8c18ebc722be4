"""What a writer may put in a row of a manifest table (docs/security.md).

Only the table's declared columns that a writer may write (not the key, not the state, not a
link code, a stamp or a late flag: `owned.product_columns`), each value of its column's type:

    text         a string, no longer than the column's maxLength
    enum         one of the column's values (or a string of at most 64 characters)
    integer      a whole number (not true/false) that fits 64 bits
    boolean      true or false
    date         YYYY-MM-DD, within the span of dates kept (timekeeping.basics.instants)
    timestamptz  an ISO 8601 instant with an offset, within that span

and null only where the column may be empty. Every refusal names its column and its rule, and
all of them are given at once; a write with any refusal changes nothing.
"""

from __future__ import annotations

from timekeeping.basics import instants
from timekeeping.moves.owned import product_columns
from timekeeping.specs.rules import VALUE_LENGTH
from timekeeping.specs.tables import Column, Table

LIMIT_64 = 2**63


class ValuesInvalid(Exception):
    def __init__(self, errors: dict[str, list[str]]):
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def clean(table: Table, raw: dict, given: dict) -> dict:
    """The values a writer gave, converted, or ValuesInvalid naming every refused field."""
    owned = product_columns(table, raw)
    errors: dict[str, list[str]] = {}
    values = {}
    for key, value in given.items():
        refusal = _refusal(table, owned, key)
        if refusal is None:
            try:
                values[key] = convert(table.columns[key], value)
            except ValueError as error:
                refusal = str(error)
        if refusal is not None:
            errors[key] = [refusal]
    if errors:
        raise ValuesInvalid(errors)
    return values


def _refusal(table: Table, owned: set[str], key: str) -> str | None:
    if key == "pk" or key.startswith("_") or key in owned:
        return f"'{key}' is written by the product, never by a writer"
    if key not in table.columns:
        writable = ", ".join(sorted(set(table.columns) - owned)) or "none"
        return f"'{key}' is not a column of {table.name}; its writable columns are: {writable}"
    return None


def convert(column: Column, value):
    """One value for `column`, or ValueError saying the rule it breaks."""
    if value is None:
        if not column.nullable:
            raise ValueError(f"{column.ref} may not be empty")
        return None
    kind = column.type
    if kind in ("text", "enum"):
        return _text(column, value)
    if kind == "integer":
        if type(value) is not int or not -LIMIT_64 < value < LIMIT_64:
            raise ValueError(f"{column.ref} is a whole number that fits 64 bits")
        return value
    if kind == "boolean":
        if type(value) is not bool:
            raise ValueError(f"{column.ref} is true or false")
        return value
    if kind == "date":
        return instants.parse_date(value, field=column.ref)
    if kind == "timestamptz":
        return instants.parse_instant(value, field=column.ref)
    raise ValueError(f"{column.ref} has a type no writer can write ({kind})")


def _text(column: Column, value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{column.ref} is text")
    if column.type == "enum":
        if column.values and value not in column.values:
            raise ValueError(f"{column.ref} is one of: {', '.join(column.values)}")
        limit = VALUE_LENGTH
    else:
        limit = column.max_length
    if limit is not None and len(value) > limit:
        raise ValueError(f"{column.ref} is at most {limit} characters")
    return value
