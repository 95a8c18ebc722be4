"""The check of a table's `holds`: the amount a row holds in a state, in which currency, from
which payer, and until when. Part of the `tables` check (timekeeping.moves.check)."""

from __future__ import annotations

import re

from timekeeping.moves.check_moments import check_moment
from timekeeping.moves.check_scope import Scope, check_keys, column_at
from timekeeping.specs.rules import VALUE_RULE, is_value

HOLD_KEYS = ("on", "amount", "currency", "payer", "until", "takes", "gives_back")
CURRENCY = re.compile(r"[A-Z]{3}")


def check_hold(scope: Scope, number: int, spec: object, path: str) -> None:
    label = f"table '{scope.table}', hold {number}"
    if not isinstance(spec, dict):
        scope.add("hold.invalid", path,
                  f"{label} is an object with on, amount, currency, payer and until")
        return
    check_keys(spec, HOLD_KEYS, path, scope.add, "hold.invalid", label)
    if not is_value(spec.get("on")):
        scope.add("hold.state_invalid", f"{path}.on",
                  f"{label}: 'on' is the state in which the row holds the amount, {VALUE_RULE}")
    for key in ("takes", "gives_back"):
        states = spec.get(key, [])
        if not isinstance(states, list) or not all(is_value(state) for state in states):
            scope.add("hold.state_invalid", f"{path}.{key}",
                      f"{label}: '{key}' is a list of states")
    column_at(scope, label, spec.get("amount"), f"{path}.amount", "hold.amount_invalid",
               "the amount is an integer column of minor units", types=("integer",))
    column_at(scope, label, spec.get("payer"), f"{path}.payer", "hold.payer_invalid",
               "the payer is a column of the row")
    currency = spec.get("currency")
    if not (isinstance(currency, str) and CURRENCY.fullmatch(currency)):
        scope.add("hold.currency_invalid", f"{path}.currency",
                  f"{label}: the currency is a three-letter code such as GBP")
    check_moment(scope, label, spec.get("until"), f"{path}.until")
