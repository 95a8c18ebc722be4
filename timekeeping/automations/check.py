"""The manifest check of the `automations` section (SPEC A7, issue 30): every problem at once,
each with a code, a JSON path and a sentence, never an exception.

A rule names what it hears and what it does by the names the rest of the manifest declares:
a table and one of its states, a clock or an ask (a `deliver` step with `ask`) of a service,
a task step, a table's declared move, and (when the brand is known, as when a manifest is
planned or loaded) one of the brand's webhook endpoints. A name that is not there is refused
at its path. So is a loop that can be seen: a rule whose move (and the moves of linked rows
that move sets off, `states.effects`) makes a row enter a state a rule hears, and that chain
of rules leads back to the rule itself. The section's shape is shown in
timekeeping.specs.automations.
"""

from __future__ import annotations

from collections.abc import Callable

from timekeeping.models import Brand, WebhookEndpoint
from timekeeping.moves.check_mail import template_rule
from timekeeping.specs.automations import ACTIONS, RULES_MAX, TRIGGERS
from timekeeping.specs.rules import is_name, is_value, shown

Add = Callable[[str, str, str], None]
WHO_MAX = 60
ADDRESSEES = ("owner", "customer")  # a date's or an ask's email: the brand's owner, the customer
EMAIL_KEYS = ("to", "who", "subject", "body")
ENDPOINT_MAX = 200  # an endpoint's description is kept in 200 characters


def check_section(document: dict, add: Add, *, brand: Brand | None = None) -> None:
    """The `automations` section of `document`, against its `tables` and `services`; with
    `brand`, its endpoints too (without one, an endpoint's name is held only to its form)."""
    section = document.get("automations")
    path = "$.automations"
    if not isinstance(section, list) or len(section) > RULES_MAX:
        add("automation.invalid", path,
            f"'automations' is a list of at most {RULES_MAX} rules, each "
            "{\"when\": …, \"do\": …}")
        return
    names = _Names(document, brand)
    whole = []
    for index, rule in enumerate(section):
        if _rule(names, index + 1, rule, f"{path}[{index}]", add):
            whole.append((index, rule))
    _loops(names, whole, add)


class _Names:
    """What the rest of the manifest declares, read defensively (its own checks say what is
    wrong with it)."""

    def __init__(self, document: dict, brand: Brand | None):
        tables = document.get("tables")
        services = document.get("services")
        self.tables = tables if isinstance(tables, dict) else {}
        self.services = {name: spec for name, spec in (services.items() if isinstance(
            services, dict) else ()) if isinstance(spec, dict)}
        self.brand = brand

    def table(self, name: object) -> dict | None:
        raw = self.tables.get(name) if is_name(name) else None
        return raw if isinstance(raw, dict) and isinstance(raw.get("states"), dict) else None

    def states(self, name: object) -> set[str]:
        """Every state a table names: its initial one, each move's origin and target, and
        each timed move's."""
        states = (self.table(name) or {}).get("states") or {}
        found = [states.get("initial")]
        moves = states.get("moves") if isinstance(states.get("moves"), dict) else {}
        for origin, targets in moves.items():
            found.append(origin)
            found += [_target(t) for t in (targets if isinstance(targets, list) else ())]
        timed = states.get("timed") if isinstance(states.get("timed"), list) else []
        for rule in timed:
            if isinstance(rule, dict):
                found += [rule.get("from"), rule.get("to")]
        return {state for state in found if isinstance(state, str)}

    def movable_to(self, name: object) -> set[str]:
        """The states a listed move that is no undo leads to (what the clock, an effect or a
        rule may make: an undo only a person makes, naming the state they saw)."""
        moves = ((self.table(name) or {}).get("states") or {}).get("moves")
        found = []
        for targets in (moves.values() if isinstance(moves, dict) else ()):
            for target in (targets if isinstance(targets, list) else ()):
                if not (isinstance(target, dict) and target.get("undo")):
                    found.append(_target(target))
        return {state for state in found if isinstance(state, str)}

    def columns(self, name: object) -> dict[str, dict]:
        raw = self.tables.get(name) if is_name(name) else None
        columns = raw.get("columns") if isinstance(raw, dict) else None
        return {c["ref"]: c for c in (columns if isinstance(columns, list) else ())
                if isinstance(c, dict) and is_name(c.get("ref"))}

    def effects(self, name: str, state: str) -> list[tuple[str, str]]:
        """The linked rows a move of `name` into `state` moves (`states.effects`)."""
        effects = ((self.table(name) or {}).get("states") or {}).get("effects")
        return [(e["table"], e["to"]) for e in (effects if isinstance(effects, list) else ())
                if isinstance(e, dict) and e.get("when") == state
                and isinstance(e.get("table"), str) and isinstance(e.get("to"), str)]

    def services_of(self, when: dict, key: str) -> list[dict]:
        """The services a rule's clock or ask may be of: the one it names, else all."""
        if "service" in when:
            found = self.services.get(when["service"]) if isinstance(when["service"], str) \
                else None
            return [found] if found is not None else []
        return list(self.services.values())


def _target(target: object) -> object:
    return target.get("to") if isinstance(target, dict) else target


def _rule(names: _Names, number: int, rule: object, path: str, add: Add) -> bool:
    """One rule; True when it is whole enough to follow for loops."""
    label = f"rule {number}"
    if not isinstance(rule, dict) or set(rule) != {"when", "do"}:
        add("automation.invalid", path, f"{label} is an object with exactly 'when' and 'do'")
        return False
    trigger = _when(names, label, rule["when"], f"{path}.when", add)
    if trigger is None:
        return False
    return _do(names, label, trigger, rule["when"], rule["do"], f"{path}.do", add)


def _when(names: _Names, label: str, when: object, path: str, add: Add) -> str | None:
    """What the rule hears: its trigger's name (row, missed or ask_expired), or None."""
    found = [key for key in TRIGGERS if isinstance(when, dict) and key in when]
    allowed = {"row": {"row", "enters"}, "missed": {"missed", "service"},
               "ask_expired": {"ask_expired", "service"}}
    if len(found) != 1 or set(when) - allowed[found[0]]:
        add("automation.when_invalid", path,
            f"{label} hears one thing: {{\"row\": table, \"enters\": state}}, {{\"missed\": "
            "clock}} or {\"ask_expired\": ask}, the last two with an optional \"service\"")
        return None
    trigger = found[0]
    if trigger == "row":
        return trigger if _row_when(names, label, when, path, add) else None
    if "service" in when and not names.services_of(when, trigger):
        add("automation.service_unknown", f"{path}.service",
            f"{label}: {shown(when['service'])} is not a service of this manifest")
        return None
    held = [s for s in names.services_of(when, trigger) if _declares(s, trigger, when[trigger])]
    if not held:
        what = "a clock" if trigger == "missed" else "an ask (a 'deliver' step with 'ask')"
        add(f"automation.{'clock' if trigger == 'missed' else 'ask'}_unknown",
            f"{path}.{trigger}", f"{label}: {shown(when[trigger])} is not {what} of "
            + (f"service '{when['service']}'" if "service" in when else "any service"))
        return None
    return trigger


def _declares(service: dict, trigger: str, name: object) -> bool:
    if not isinstance(name, str):
        return False
    if trigger == "missed":
        clocks = service.get("clocks")
        return isinstance(clocks, dict) and name in clocks
    deliver = service.get("deliver")
    step = deliver.get(name) if isinstance(deliver, dict) else None
    return isinstance(step, dict) and bool(step.get("ask"))


def _row_when(names: _Names, label: str, when: dict, path: str, add: Add) -> bool:
    table = when.get("row")
    if names.table(table) is None:
        add("automation.table_unknown", f"{path}.row",
            f"{label}: {shown(table)} is not a table of this manifest with states")
        return False
    state = when.get("enters")
    if not is_value(state) or state not in names.states(table):
        add("automation.state_unknown", f"{path}.enters",
            f"{label}: {shown(state)} is not a state of table '{table}'")
        return False
    return True


def _do(names: _Names, label: str, trigger: str, when: dict, do: object, path: str,
        add: Add) -> bool:
    found = [key for key in ACTIONS if isinstance(do, dict) and key in do]
    if len(found) != 1 or len(do) != 1:
        add("automation.do_invalid", path,
            f"{label} does one thing: 'email', 'webhook', 'move' (a row's linked row) or "
            "'task'")
        return False
    action, spec, where = found[0], do[found[0]], f"{path}.{found[0]}"
    if action in ("move", "task") and (action == "move") != (trigger == "row"):
        add(f"automation.{action}_invalid", where,
            f"{label}: a 'move' follows a row's change (it moves a row linked to it); a 'task' "
            "follows a date missed or an ask expired (it opens a task of the same job)")
        return False
    if action == "email":
        return _email(names, label, trigger, when, spec, where, add)
    if action == "webhook":
        return _webhook(names, label, spec, where, add)
    if action == "task":
        return _task(names, label, trigger, when, spec, where, add)
    return _move(names, label, when["row"], spec, where, add)


def _email(names: _Names, label: str, trigger: str, when: dict, spec: object, path: str,
           add: Add) -> bool:
    if not isinstance(spec, dict) or set(spec) - set(EMAIL_KEYS) or "subject" not in spec:
        add("automation.email_invalid", path,
            f"{label}: an email is an object with to, subject and optionally who and body")
        return False
    whole = True
    to = spec.get("to")
    if trigger == "row":
        column = names.columns(when["row"]).get(to["column"]) if isinstance(to, dict) \
            and set(to) == {"column"} and is_name(to["column"]) else None
        if column is None or column.get("type") != "text":
            add("automation.email_invalid", f"{path}.to",
                f"{label}: 'to' names the text column of the row holding the address: "
                "{\"column\": \"email\"}")
            whole = False
    elif to not in ADDRESSEES:
        add("automation.email_invalid", f"{path}.to",
            f"{label}: 'to' is \"owner\" (the brand's owner) or \"customer\" (the subject's "
            "contact)")
        whole = False
    if "who" in spec and not (isinstance(spec["who"], str) and 1 <= len(spec["who"]) <= WHO_MAX
                              and "\x00" not in spec["who"]):
        add("automation.email_invalid", f"{path}.who",
            f"{label}: 'who' says whom it emails, in 1 to {WHO_MAX} characters "
            "(\"the guest\")")
        whole = False
    for key, shortest in (("subject", 1), ("body", 0)):
        wrong = template_rule(spec[key], shortest) if key in spec else None
        if wrong:
            add("automation.email_invalid", f"{path}.{key}", f"{label}: the {key} {wrong}")
            whole = False
    return whole


def _webhook(names: _Names, label: str, spec: object, path: str, add: Add) -> bool:
    if not (isinstance(spec, str) and 1 <= len(spec) <= ENDPOINT_MAX and "\x00" not in spec):
        add("automation.webhook_invalid", path,
            f"{label}: 'webhook' names one of the brand's endpoints, by its description or "
            "its id (whe_…)")
        return False
    if names.brand is None:
        return True
    found = endpoints_named(names.brand, spec)
    if len(found) != 1:
        add("automation.endpoint_unknown", path,
            f"{label}: {shown(spec)} is not one of the brand's webhook endpoints"
            if not found else f"{label}: {len(found)} endpoints are described "
            f"{shown(spec)}; name one by its id (whe_…)")
        return False
    return True


def endpoints_named(brand: Brand, name: str) -> list[WebhookEndpoint]:
    """The brand's endpoints a rule's `webhook` names: the one with that id, else those with
    that description (more than one: the name is ambiguous)."""
    by_id = list(WebhookEndpoint.objects.filter(brand=brand, pk=name)[:1])
    return by_id or list(WebhookEndpoint.objects.filter(brand=brand, description=name)[:2])


def _task(names: _Names, label: str, trigger: str, when: dict, spec: object, path: str,
          add: Add) -> bool:
    services = [s for s in names.services_of(when, trigger) if _declares(s, trigger,
                                                                          when[trigger])]
    for service in services:
        deliver = service.get("deliver") if isinstance(service.get("deliver"), dict) else {}
        step = deliver.get(spec) if isinstance(spec, str) else None
        if not (isinstance(step, dict) and step.get("task")):
            add("automation.task_unknown", path,
                f"{label}: {shown(spec)} is not a task step (a 'deliver' step with \"task\": "
                "true) of every service whose "
                + ("clock" if trigger == "missed" else "ask") + " it hears")
            return False
    return True


def _move(names: _Names, label: str, table: str, spec: object, path: str, add: Add) -> bool:
    """A declared move of a row linked to the row that changed: `{"table", "link", "to"}`,
    the rows of `table` whose `link` column references it; or `{"via", "to"}`, the row its
    own `via` column references."""
    keys = set(spec) if isinstance(spec, dict) else set()
    if keys not in ({"table", "link", "to"}, {"via", "to"}):
        add("automation.move_invalid", path,
            f"{label}: a move is {{\"table\", \"link\", \"to\"}} (the rows of a table linked "
            "to this one) or {\"via\", \"to\"} (the row this one links to)")
        return False
    target = moved_table(names.columns, table, spec)
    if target is None or names.table(target) is None:
        key = "table" if "table" in spec else "via"
        rule = (f"{shown(spec.get('table'))} is not a table with states whose column "
                f"{shown(spec.get('link'))} references '{table}'" if key == "table" else
                f"{shown(spec.get('via'))} is not a column of '{table}' referencing a "
                "table with states")
        add("automation.move_unknown", f"{path}.{key}", f"{label}: {rule}")
        return False
    if not is_value(spec["to"]) or spec["to"] not in names.movable_to(target):
        add("automation.move_unknown", f"{path}.to",
            f"{label}: table '{target}' declares no move to {shown(spec['to'])} (an undo, "
            "which only a person makes, does not count)")
        return False
    return True


def moved_table(columns: Callable[[str], dict], table: str, spec: dict) -> str | None:
    """The table whose rows a rule's move moves, or None when its link is not declared."""
    if "via" in spec:
        column = columns(table).get(spec["via"]) if is_name(spec["via"]) else None
        return column.get("references") if column else None
    column = columns(spec["table"]).get(spec["link"]) if is_name(spec["table"]) and \
        is_name(spec["link"]) else None
    return spec["table"] if column and column.get("references") == table else None


# -- loops ------------------------------------------------------------------------------------

def _loops(names: _Names, rules: list[tuple[int, dict]], add: Add) -> None:
    """Refuse each rule that can set itself off again, through the rules its move sets off."""
    heard = {index: (rule["when"]["row"], rule["when"]["enters"]) for index, rule in rules
             if "row" in rule["when"]}
    sets_off = {index: [other for other, entered in heard.items()
                        if entered in _entered(names, rule)] for index, rule in rules}
    for index, _ in rules:
        chain = _path_back(index, sets_off)
        if chain:
            said = " → ".join(f"rule {i + 1}" for i in [index, *chain])
            add("automation.loop", f"$.automations[{index}].do.move",
                f"rule {index + 1} sets itself off again ({said}): a rule's move may not "
                "lead back to a rule of its own chain")


def _entered(names: _Names, rule: dict) -> set[tuple[str, str]]:
    """Every (table, state) a rule's move can make a row enter: its own move, and the moves
    of linked rows (`states.effects`) each sets off in turn."""
    move = rule["do"].get("move")
    if move is None:
        return set()
    start = (moved_table(names.columns, rule["when"]["row"], move), move["to"])
    found, todo = set(), [start]
    while todo:
        entered = todo.pop()
        if entered in found or not isinstance(entered[0], str):
            continue
        found.add(entered)
        todo.extend(names.effects(*entered))
    return found


def _path_back(start: int, sets_off: dict[int, list[int]]) -> list[int]:
    """The rules from `start`'s first to `start` again, or [] when none leads back."""
    seen: set[int] = set()
    todo = [(index, [index]) for index in sets_off.get(start, [])]
    while todo:
        index, chain = todo.pop()
        if index == start:
            return chain
        if index in seen:
            continue
        seen.add(index)
        todo.extend((nxt, [*chain, nxt]) for nxt in sets_off.get(index, []))
    return []
