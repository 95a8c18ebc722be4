"""Checking a Service's own time (`price`, `deliver`, `scope`, `signals`): every problem at
once, each with a code, a JSON path and a sentence, and never an exception (DESIGN decision 7).

`deliver` names steps too: a name in both `steps` and `deliver` is refused, and every other
key of the Service that names steps (`then`, `after`, `goto`, a rung's `run`, `moves`,
`satisfied_by`) may name a step of either.
"""

from __future__ import annotations

from collections.abc import Callable

from timekeeping.specs.jobs import LATE, parse_span, parse_within
from timekeeping.specs.rules import shown

Add = Callable[[str, str, str], None]
PRICE_KEYS = ("within", "late", "every", "amount", "currency", "includes", "final_after",
              "dunning", "release", "acts", "share")
DELIVER_KEYS = ("title", "then", "after", "ask", "expires", "task", "hold", "within",
                "needs_grant", "perfect")
SCOPE_KEYS = ("for", "expires")
SIGNAL_KEYS = ("silent", "goto")
SPAN_RULE = ("a span written <n>d, <n>h or <n>m (days, hours, minutes), at most ten years, "
             "such as \"30d\"")
TITLE_MAX = 200
INPUT_MAX = 64


def _keys(add: Add, value: dict, allowed: tuple[str, ...], path: str, code: str) -> None:
    for key in value:
        if key not in allowed:
            add(code, f"{path}.{key}",
                f"'{key}' is not a key here; the keys are: {', '.join(allowed)}")


def deliver_steps(service: dict) -> dict:
    """The steps `deliver` declares (an empty dict when it is not an object)."""
    deliver = service.get("deliver")
    return deliver if isinstance(deliver, dict) else {}


def check_work(add: Add, service: dict, steps: dict, clocks: dict, path: str) -> None:
    """`steps`: every step of the Service (`steps` and `deliver`); `clocks`: its clocks."""
    if "price" in service:
        _price(add, service["price"], clocks, f"{path}.price")
        if isinstance(service["price"], dict) and "release" in service["price"]:
            _release(add, service["price"], steps, f"{path}.price.release")
        if isinstance(service["price"], dict) and "acts" in service["price"]:
            _acts(add, service["price"], steps, f"{path}.price.acts")
    if "deliver" in service:
        _deliver(add, service, steps, clocks, f"{path}.deliver")
    if "scope" in service:
        _scope(add, service["scope"], f"{path}.scope")
    if "signals" in service:
        _signals(add, service["signals"], steps, f"{path}.signals")


def _within(add: Add, value: object, clocks: dict, path: str) -> None:
    within = parse_within(value)
    if within is None:
        add("deadline.within_invalid", path,
            f"{shown(value)} is not a deadline; write {SPAN_RULE}, or a span before a clock "
            "of this service, such as \"5d before file\"")
    elif within.clock and within.clock not in clocks:
        add("deadline.clock_unknown", path,
            f"'{within.clock}' is not a clock of this service, so nothing says when the "
            "deadline ends")


def _price(add: Add, price: object, clocks: dict, path: str) -> None:
    if not isinstance(price, dict):
        add("price.not_object", path, "'price' is an object, such as {\"within\": \"30d\"}")
        return
    _keys(add, price, PRICE_KEYS, path, "price.key_unknown")
    if "within" in price:
        _within(add, price["within"], clocks, f"{path}.within")
    if "late" in price:
        if not isinstance(price["late"], str) or LATE.fullmatch(price["late"]) is None:
            add("price.late_invalid", f"{path}.late",
                f"{shown(price['late'])} is not a late price; write a whole percent of the "
                "charge from 1% to 100%, such as \"20%\"")
        if "within" not in price:
            add("price.late_without_within", f"{path}.late",
                "a late price needs a deadline ('within') to be late against")
    if "final_after" in price:
        if parse_span(price["final_after"]) is None:
            add("price.final_after_invalid", f"{path}.final_after",
                f"{shown(price['final_after'])}: {SPAN_RULE}")
        if "amount" not in price or "every" in price:
            add("price.final_after_without_charge", f"{path}.final_after",
                "an acceptance window releases a job's charge: give the service an 'amount' "
                "(and no 'every': a plan's cycles are charged as they renew)")


def _release(add: Add, price: dict, steps: dict, path: str) -> None:
    step = price["release"]
    if not isinstance(step, str) or step not in steps:
        add("price.release_unknown", path,
            f"{shown(step)} is not a step of this service; the charge releases when the step "
            "named here is taken")
    if "amount" not in price or "every" in price or "final_after" in price:
        add("price.release_without_charge", path,
            "a release step releases a job's charge: give the service an 'amount', and no "
            "'every' or 'final_after' (the step is when the work is accepted)")


def _acts(add: Add, price: dict, steps: dict, path: str) -> None:
    acts, amount = price["acts"], price.get("amount")
    if not isinstance(amount, int) or isinstance(amount, bool) or "every" in price:
        add("price.acts_without_charge", path,
            "paid acts are parts of a job's charge: give the service an 'amount' (and no "
            "'every')")
        return
    if not isinstance(acts, dict) or not acts:
        add("price.acts_invalid", path, "'acts' maps a step to what taking it costs, in minor "
                                        "units ({\"prepare\": 60000})")
        return
    for step, cost in acts.items():
        if step not in steps:
            add("price.acts_unknown", f"{path}.{step}", f"{shown(step)} is not a step of this "
                                                        "service")
        if not isinstance(cost, int) or isinstance(cost, bool) or not 0 < cost <= amount:
            add("price.acts_invalid", f"{path}.{step}",
                f"{shown(cost)} is not a price here; write whole minor units from 1 to the "
                f"charge, {amount}")
    if all(isinstance(cost, int) for cost in acts.values()) and sum(acts.values()) > amount:
        add("price.acts_invalid", path, f"the acts cost {sum(acts.values())} together, more "
                                        f"than the charge, {amount}")


def _deliver(add: Add, service: dict, steps: dict, clocks: dict, path: str) -> None:
    deliver = service["deliver"]
    if not isinstance(deliver, dict):
        add("deliver.not_object", path, "'deliver' maps step names to what each needs")
        return
    declared = service.get("steps") if isinstance(service.get("steps"), dict) else {}
    for name, spec in deliver.items():
        here = f"{path}.{name}"
        if name in declared:
            add("deliver.step_twice", here,
                f"'{name}' is also in 'steps'; a step is declared in one of them")
        if spec is None:
            continue
        if not isinstance(spec, dict):
            add("deliver.not_object", here, "a step to deliver is an object (or {})")
            continue
        _keys(add, spec, DELIVER_KEYS, here, "deliver.key_unknown")
        _deliver_step(add, name, spec, steps, clocks, here)
        if spec.get("needs_grant") is True and "scope" not in service:
            add("deliver.needs_grant_without_scope", f"{here}.needs_grant",
                "a step that needs the grant needs a 'scope' on its service saying how long "
                "the grant lasts")
    _no_loop(add, deliver, path)


def _deliver_step(add: Add, name: str, spec: dict, steps: dict, clocks: dict,
                  path: str) -> None:
    if "title" in spec and not (isinstance(spec["title"], str)
                                and 0 < len(spec["title"]) <= TITLE_MAX
                                and "\x00" not in spec["title"]):
        add("deliver.title_invalid", f"{path}.title",
            f"a step's title is text of 1 to {TITLE_MAX} characters")
    for key in ("then", "after"):
        if key in spec:
            _step_list(add, spec[key], steps, f"{path}.{key}", f"deliver.{key}")
    if "ask" in spec:
        ask = spec["ask"]
        input_ok = (isinstance(ask, dict) and set(ask) == {"input"}
                    and isinstance(ask["input"], str) and 0 < len(ask["input"]) <= INPUT_MAX)
        if ask != "owner" and not input_ok:
            add("deliver.ask_invalid", f"{path}.ask",
                f"{shown(ask)} names no party; write \"owner\" (the subject's contact) or "
                "{\"input\": field}, the field of the job's input that holds the party's email")
        if "expires" not in spec:
            add("deliver.expires_missing", f"{path}.expires",
                "a party's link needs 'expires': how long it works, such as \"180d\"")
        if spec.get("task"):
            add("deliver.ask_and_task", f"{path}.task",
                "a step is asked of a party or done by a member, not both")
    for key in ("expires", "hold", "perfect"):
        if key in spec and parse_span(spec[key]) is None:
            add(f"deliver.{key}_invalid", f"{path}.{key}", f"{shown(spec[key])}: {SPAN_RULE}")
    if "expires" in spec and "ask" not in spec:
        add("deliver.expires_without_ask", f"{path}.expires",
            "only a party's link expires: give the step an 'ask'")
    if "hold" in spec and not spec.get("task"):
        add("deliver.hold_without_task", f"{path}.hold",
            "only a task is held: give the step \"task\": true")
    for key in ("task", "needs_grant"):
        if key in spec and not isinstance(spec[key], bool):
            add(f"deliver.{key}_invalid", f"{path}.{key}", f"'{key}' is true or false")
    if "within" in spec:
        _within(add, spec["within"], clocks, f"{path}.within")
    if "perfect" in spec and not any(
            isinstance(clock, dict) and isinstance(clock.get("satisfied_by"), list)
            and name in clock["satisfied_by"] for clock in clocks.values()):
        add("deliver.perfect_without_date", f"{path}.perfect",
            f"a repair window keeps the first filing time of a date: '{name}' keeps no clock "
            "(name it in a clock's 'satisfied_by')")
    if isinstance(spec.get("after"), list) and name in spec["after"]:
        add("deliver.after_itself", f"{path}.after", f"'{name}' cannot come after itself")


def _step_list(add: Add, names: object, steps: dict, path: str, code: str) -> None:
    if not isinstance(names, list):
        add(f"{code}_invalid", path,
            f"'{code.split('.')[-1]}' is a list of this service's step names")
        return
    for index, name in enumerate(names):
        if not isinstance(name, str) or name not in steps:
            add(f"{code}_unknown", f"{path}[{index}]", f"{shown(name)} is not a step of this "
                                                       "service")


def _no_loop(add: Add, deliver: dict, path: str) -> None:
    """Steps that come `after` each other in a ring would never open."""
    after = {name: [each for each in (spec or {}).get("after", []) if isinstance(each, str)]
             for name, spec in deliver.items()
             if isinstance(spec, dict) and isinstance(spec.get("after"), list)}
    for start in after:
        seen, todo = set(), list(after[start])
        while todo:
            name = todo.pop()
            if name == start:
                add("deliver.after_loop", f"{path}.{start}.after",
                    f"'{start}' comes after steps that come after it: it would never open")
                todo = []
                break
            if name not in seen:
                seen.add(name)
                todo.extend(after.get(name, []))


def _scope(add: Add, scope: object, path: str) -> None:
    if not isinstance(scope, dict):
        add("scope.not_object", path, "'scope' is an object, such as {\"for\": \"365d\"}")
        return
    _keys(add, scope, SCOPE_KEYS, path, "scope.key_unknown")
    if "for" not in scope:
        add("scope.for_missing", f"{path}.for", "a grant needs 'for': how long it lasts")
    for key in ("for", "expires"):
        if key in scope and parse_span(scope[key]) is None:
            add(f"scope.{key}_invalid", f"{path}.{key}", f"{shown(scope[key])}: {SPAN_RULE}")


def _signals(add: Add, signals: object, steps: dict, path: str) -> None:
    if not isinstance(signals, dict):
        add("signals.not_object", path, "'signals' maps names to {\"silent\", \"goto\"}")
        return
    for name, spec in signals.items():
        here = f"{path}.{name}"
        if not isinstance(spec, dict):
            add("signal.not_object", here, "a signal is {\"silent\": \"14d\", \"goto\": step}")
            continue
        _keys(add, spec, SIGNAL_KEYS, here, "signal.key_unknown")
        if parse_span(spec.get("silent")) is None:
            add("signal.silent_invalid", f"{here}.silent",
                f"{shown(spec.get('silent'))}: {SPAN_RULE}")
        if not isinstance(spec.get("goto"), str) or spec["goto"] not in steps:
            add("signal.goto_unknown", f"{here}.goto",
                f"{shown(spec.get('goto'))} is not a step of this service")
