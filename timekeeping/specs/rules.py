"""The rules a manifest's names, values and numbers follow, and how a problem quotes them.

The checks of every section (timekeeping.manifests.check, timekeeping.moves.check,
timekeeping.schedules.declare) read these. This module imports nothing of the project: it
sits below every check, and lives outside `timekeeping.manifests`, whose package imports its
check and its store, so that a section's check can read it without importing itself back.
"""

from __future__ import annotations

import re

# Names reach DDL and ORM lookups. Always `fullmatch`: with `match`, `$` also matches before a
# final newline. No '__' (the ORM reads it as a lookup) and no final '_' (Django refuses it).
NAME = re.compile(r"(?!.*__)[a-z][a-z0-9_]{0,40}(?<!_)")
NAME_RULE = ("a name of 1 to 41 characters a-z, 0-9 and _, starting with a letter, without "
             "'__' and not ending in '_'")
VALUE_LENGTH = 64  # an enum or state column holds 64 characters
VALUE_RULE = f"text of 1 to {VALUE_LENGTH} characters, without NUL"


def is_name(value: object) -> bool:
    """A name that may reach SQL: a table, a column, a link (NAME_RULE)."""
    return isinstance(value, str) and NAME.fullmatch(value) is not None


def is_whole(value: object, low: int, high: int) -> bool:
    """An int from low to high; JSON true is a bool and 20.0 a float, neither a whole number."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def is_value(value: object) -> bool:
    """An enum value or a state (VALUE_RULE; PostgreSQL text refuses NUL)."""
    return isinstance(value, str) and 1 <= len(value) <= VALUE_LENGTH and "\x00" not in value


def shown(value: object) -> str:
    """A value as a problem's sentence quotes it: short, and never raising (a list nested a
    thousand deep, a string of a megabyte, an int longer than repr writes)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int) and value.bit_length() > 200:
        return "a number of more than 60 digits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}…"
