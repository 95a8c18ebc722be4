"""Every table that grows with use carries its brand, and the tick and the pages ask for one
brand's rows at a time (DESIGN "Scale"; issue 14, "The path past one database";
docs/scale.md, "The distribution plan").

Tenant tables are the tables of the models of `timekeeping`, `money` and `calendars` (Django's
link tables included), except Brand, whose own id is the brand, and the tables in REFERENCE,
each with why it is not a brand's.

The rule for the statements (captured with Django's CaptureQueriesContext): a statement may
read or write a tenant table only when one of these reaches it:

1. a brand condition on that table: its `brand_id` (a Brand's own `id`) compared with a value
   or a list of values;
2. its primary key compared with a value or a list of values (`IN`, or `= ANY` of an array),
   taken on trust as a row the code reached through its brand (Django's own saves, deletes and
   reloads address a row by its key alone);
3. an INSERT that writes its `brand_id` (the column is required, so every insert does);
4. a join or a subquery that equates one of its columns with a column of a table in the same
   statement that these rules reach (`clock.job_id = job.id`, with the job read by its brand).

A statement that touches a tenant table none of these reach fails the test, naming the table
and the statement, unless it is one of the statements that cross brands by design
(TICK_CROSSING, PAGE_CROSSING), each with why it is acceptable on a database sharded by brand;
an entry no longer used fails the test too.

What the check does not see: the boolean shape of a WHERE (a brand condition inside an OR still
counts); a schedule's run, which runs in a thread with its own connection; and the COPY with
which the tick writes records on PostgreSQL, which goes around Django's cursor (it writes
`brand_id`, a required column, `timekeeping.timers.records.write_many`). The SQL is read
with regular expressions written for the SQL Django generates on SQLite and on PostgreSQL.
"""

import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import connection, models
from django.test.utils import CaptureQueriesContext

from tests.doors import console, delivery, portal
from tests.test_authorization import _fill
from tests.world import NOW
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Record, Subject, Task
from timekeeping.schedules import engine as schedules_engine
from timekeeping.tick import phases
from timekeeping.timers import delays

APPS = ("timekeeping", "money", "calendars")

REFERENCE = {
    "calendars.Calendar": "a definition brands share: Brand.calendar points at it, one calendar "
                          "may serve many brands (a notice on it moves all their dates), and "
                          "it grows with calendars, not with use",
    "calendars.Postponement": "an authority's notice on a shared calendar, moving the dates of "
                              "every brand on it: a handful per calendar a year",
    "calendars.WeeklyHours": "opening hours kept in the admin and tied to no brand (a venue's "
                             "own hours live in its manifest's tables)",
    "calendars.OpeningHours": "one weekday of a WeeklyHours",
    "timekeeping.Heartbeat": "one row per name for the whole installation: the last tick, "
                             "housekeeping's lease",
    "timekeeping.Fault": "one open fault per place of the tick; the schedules, outbox and "
                         "housekeeping phases are no brand's (brand empty); a row per run of "
                         "failures, not per use",
    "timekeeping.Schedule": "the schedule store (SPEC J6), which may be a database of its own "
                            "(SCHEDULES_STORE): code and purge schedules are no brand's (brand "
                            "empty) beside each manifest's",
    "timekeeping.ScheduleRun": "a run of a Schedule, in the same store; housekeeping deletes "
                               "runs after 30 days",
    "timekeeping.BrandArchive": "a deleted brand's export, kept 30 days after its brand is gone "
                                "(no Brand row is left to point at); read only by the people it "
                                "names (`keepers`) and by housekeeping, which removes it",
    "timekeeping.ArchivePart": "a megabyte of a BrandArchive's export, in the same store",
    "timekeeping.SpentToken": "a form's one-time token, random and of no brand (it names "
                              "nothing): it only guards a double submit, and housekeeping "
                              "deletes those more than a day old",
}


def _crossing(pattern: str, reason: str) -> tuple[re.Pattern, str]:
    return re.compile(pattern), reason


TICK_CROSSING = {
    "the brands whose real clocks owe timers": _crossing(
        r'FROM "timekeeping_brand" .*WHERE EXISTS\(SELECT .*FROM "timekeeping_timer" U0 WHERE '
        r'\(U0\."brand_id" = \("timekeeping_brand"\."id"\)',
        "the tick's first question, once per tick: every shard answers from the index of its "
        "armed timers (timer_armed_real); each brand's clock is then ticked on its own shard"),
    "the brands whose manifests declare schedules": _crossing(
        r'FROM "timekeeping_brand" WHERE \(SELECT U0\."bundle" AS "bundle" FROM '
        r'"timekeeping_manifest" U0 WHERE U0\."brand_id" = \("timekeeping_brand"\."id"\)',
        "once per tick; the manifest is joined on its brand, so each shard answers for its "
        "own brands"),
    "a manifest by its bundle": _crossing(
        r'FROM "timekeeping_manifest" .*WHERE "timekeeping_manifest"\."bundle" = ',
        "a bundle is the hash of a manifest's content: any brand's row with it holds the same "
        "document, read once per process and bundle (lru_cache)"),
    "the connections whose minute is due": _crossing(
        r'FROM "timekeeping_connection" INNER JOIN "timekeeping_brand" ON '
        r'\("timekeeping_connection"\."brand_id" = "timekeeping_brand"\."id"\).* WHERE '
        r'\("timekeeping_connection"\."parked" IS NULL AND NOT "timekeeping_connection"\."paused"',
        "once per tick, joined on the brand, those not paused nor parked whose next attempt "
        "has come (issue 31); each connection's minute then runs on its brand's rows"),
    "the outbox sweep": _crossing(
        r'FROM "timekeeping_delivery" WHERE \(\("timekeeping_delivery"\."next_attempt" <=',
        "once per tick, at most 100 deliveries by the partial indexes of what is pending or "
        "running; each is then written by its key"),
    "housekeeping: delivered emails and webhook deliveries past keeping": _crossing(
        r'FROM "timekeeping_delivery" WHERE \("timekeeping_delivery"\."channel" = '
        r"'(email|webhook)' AND \"timekeeping_delivery\"\.\"(delivered|created)\" < ",
        "at most hourly, at most ten batches of 1,000 of each, deleted by their keys"),
    "the brands whose endpoints hear a stopped tick": _crossing(
        r'FROM "timekeeping_webhookendpoint" WHERE "timekeeping_webhookendpoint"\."enabled"',
        "only on the first tick after the tick was stopped longer than TICK_STALE_SECONDS; each "
        "shard answers for its own endpoints, and each brand's record is written on its own"),
    "housekeeping: dismissed deliveries": _crossing(
        r'FROM "timekeeping_dismissal" WHERE \("timekeeping_dismissal"\."at" < ',
        "at most hourly, at most ten batches of 1,000 dismissals 30 days old; a dismissal's "
        "delivery is asked beside it on its brand, and both are deleted by their keys"),
    "housekeeping: revoked API keys": _crossing(
        r'FROM "timekeeping_apikey" WHERE "timekeeping_apikey"\."revoked" < ',
        "at most hourly, at most ten batches of 1,000, deleted by their keys"),
    "housekeeping: used or expired invitations": _crossing(
        r'FROM "timekeeping_invitation" WHERE \("timekeeping_invitation"\."accepted" < ',
        "at most hourly, at most ten batches of 1,000, deleted by their keys"),
    "housekeeping: runs a killed tick left": _crossing(
        r'UPDATE "timekeeping_tickrun" SET .* WHERE "timekeeping_tickrun"\."id" IN \(SELECT '
        r'U0\."id" FROM "timekeeping_tickrun" U0 INNER JOIN "timekeeping_brand" U1 ON '
        r'\(U0\."brand_id" = U1\."id"\)',
        "at most hourly, by the partial index of unfinished runs; the run is joined to its "
        "brand on the brand"),
    "the digests due": _crossing(
        r'FROM "timekeeping_digest" INNER JOIN "timekeeping_brand" ON '
        r'\("timekeeping_digest"\."brand_id" = "timekeeping_brand"\."id"\).* WHERE '
        r'"timekeeping_digest"\."next_due" <= ',
        "once per tick, at most 500 by the partial index of digests on (digest_due), joined "
        "on the brand; each is then claimed by its key and read by its brand"),
    "the test clocks' walks under way": _crossing(
        r'FROM "timekeeping_walk" INNER JOIN "timekeeping_brand" ON '
        r'\("timekeeping_walk"\."brand_id" = "timekeeping_brand"\."id"\) WHERE '
        r'"timekeeping_walk"\."state" = ',
        "once per round of the walks phase, by the partial index of walks under way (a "
        "handful: test clocks' advances); each walk is then read and written by its key"),
}

PAGE_CROSSING = {
    "the brands a person keeps": _crossing(
        r'FROM "timekeeping_brand" (?:LEFT OUTER|INNER) JOIN "timekeeping_member" ON '
        r'\("timekeeping_brand"\."id" = "timekeeping_member"\."brand_id"\) WHERE '
        r'\("timekeeping_brand"\."owner_id" = \S+ OR "timekeeping_member"\."user_id" = ',
        "a person may work for several brands: once per page (the header's brands, the "
        "console's access), an index probe of owners and members on each shard"),
    "the customer accounts of a person": _crossing(
        r'FROM "timekeeping_customer" WHERE "timekeeping_customer"\."user_id" = ',
        "a person may be a customer of several brands: once or twice per page (the header; "
        "the portal's brands, whose subjects it then asks by brand), one row per brand"),
    "the memberships of a person": _crossing(
        r'FROM "timekeeping_(?:brand|member)" .*WHERE \(?"timekeeping_(?:brand"\."owner_id"|'
        r'member"\."user_id") = ',
        "the members' portal shows one person's work at every brand they are a member of: "
        "once per page; what follows names those brands"),
}

LITERAL = r"(?:'(?:[^']|'')*'(?:::[\w ]+)?|-?\d+(?:\.\d+)?|%s|TRUE|FALSE)"
COLUMN = r'(?:"(\w+)"|\b([A-Z]\d+))\."(\w+)"'
TABLE = re.compile(r'\b(?:FROM|JOIN|UPDATE|INTO)\s+"(\w+)"(?:\s+(?:AS\s+)?"?([A-Z]\d+)\b"?)?')
COMPARED = re.compile(COLUMN + r"\s*(?:=\s*" + LITERAL + r"|=\s*ANY\(\s*" + LITERAL + r"\s*\)"
                      + r"|IN\s*\(\s*" + LITERAL + r"(?:\s*,\s*" + LITERAL + r")*\s*\))")
JOINED = re.compile(COLUMN + r"\s*(?:=\s*\(?\s*|IN\s*\(\s*SELECT\s+(?:DISTINCT\s+)?)" + COLUMN)
INSERTED = re.compile(r'\bINTO\s+"(\w+)"\s*\(([^)]*)\)')


def tenant_tables() -> dict[str, tuple[str, str]]:
    """Each tenant table with its brand column and its key column."""
    found = {}
    for app in APPS:
        for model in apps.get_app_config(app).get_models(include_auto_created=True):
            if model._meta.label in REFERENCE:
                continue
            brand = "id" if model is Brand else "brand_id"
            found[model._meta.db_table] = (brand, model._meta.pk.column)
    return found


def unscoped(sql: str, tenants: dict[str, tuple[str, str]]) -> list[str]:
    """The tenant tables of the statement that no rule of the module's docstring reaches."""
    aliases = {m.group(2) or m.group(1): m.group(1) for m in TABLE.finditer(sql)}
    reached = {m.group(1) for m in INSERTED.finditer(sql)
               if '"brand_id"' in m.group(2) or m.group(1) == Brand._meta.db_table}
    for m in COMPARED.finditer(sql):
        alias = m.group(1) or m.group(2)
        if aliases.get(alias) in tenants and m.group(3) in tenants[aliases[alias]]:
            reached.add(alias)
    joins = [(m.group(1) or m.group(2), m.group(4) or m.group(5)) for m in JOINED.finditer(sql)]
    grown = True
    while grown:
        grown = False
        for left, right in joins + [(b, a) for a, b in joins]:
            if left in reached and right in aliases and right not in reached:
                reached.add(right)
                grown = True
    return sorted({table for alias, table in aliases.items()
                   if table in tenants and alias not in reached})


def assert_scoped(statements: list[str], crossing: dict) -> None:
    tenants, wrong, used = tenant_tables(), [], set()
    for sql in statements:
        tables = unscoped(sql, tenants)
        if not tables:
            continue
        name = next((name for name, (pattern, _) in crossing.items() if pattern.search(sql)),
                    None)
        if name is None:
            wrong.append(f"{', '.join(tables)} not scoped by brand in: {sql[:600]}")
        else:
            used.add(name)
    assert wrong == [], "\n\n".join(wrong)
    assert used == set(crossing), f"no longer crossing brands: {set(crossing) - used}"


# -- (a) the models ------------------------------------------------------------------------------

def _brand_key(model):
    try:
        field = model._meta.get_field("brand")
    except FieldDoesNotExist:
        return None
    return field if isinstance(field, models.ForeignKey) and field.related_model is Brand \
        else None


def test_every_tenant_model_has_a_required_brand_key_or_says_why_not():
    missing = []
    for app in APPS:
        for model in apps.get_app_config(app).get_models(include_auto_created=True):
            label, field = model._meta.label, _brand_key(model)
            if model is Brand or label in REFERENCE:
                continue
            if field is None or field.null:
                missing.append(f"{label}: give it a required `brand` key to Brand, or name it "
                               "in REFERENCE with why it is no brand's")
    assert missing == [], "\n".join(missing)


def test_the_reference_list_names_only_models_without_a_required_brand_key():
    for label in REFERENCE:
        field = _brand_key(apps.get_model(label))  # LookupError: a model that is gone
        assert field is None or field.null, f"{label} carries its brand: not a reference"


# -- (b) the statements --------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_rule_finds_a_tenant_table_read_without_its_brand(brand):
    subject = Subject.objects.create(brand=brand, kind="k", key="1", name="S")
    asked = {
        "unscoped": lambda: list(Task.objects.filter(subject=subject)),
        "by brand": lambda: list(Task.objects.filter(brand=brand, subject=subject)),
        "joined to a scoped table": lambda: list(Task.objects.filter(
            subject__brand=brand, subject__key="1")),
        "by key": lambda: list(Task.objects.filter(pk__in=["tsk_A", "tsk_B"])),
        "by a foreign key only": lambda: list(Task.objects.filter(test_clock_id="tc_A")),
    }
    found = {}
    for name, ask in asked.items():
        with CaptureQueriesContext(connection) as captured:
            ask()
        found[name] = [unscoped(q["sql"], tenant_tables()) for q in captured.captured_queries]
    assert found == {"unscoped": [["timekeeping_task"]], "by brand": [[]],
                     "joined to a scoped table": [[]], "by key": [[]],
                     "by a foreign key only": [["timekeeping_task"]]}


# The instants of the tick: a minute after both brands' delays are owed; after the outcome of
# A's recovery job lapsed (and A's plan minted its job); after A's plan renewed (the ledger).
INSTANTS = [NOW + timedelta(minutes=2), NOW + timedelta(days=200), NOW + timedelta(days=370)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_tick_over_two_brands_reads_and_writes_each_brands_rows_by_its_brand(world):
    other = Subject.objects.create(brand=world.other, kind="taxpayer", key="2", name="T",
                                   input={"jurisdictions": ["US"]})
    clocks.order(brand=world.other, service="annual-return", subject=other, period="2027",
                 input={"jurisdictions": ["US"]})
    for brand in (world.brand, world.other):
        delays.delay("timekeeping.note", {}, brand=brand, at=NOW + timedelta(minutes=1))
    # As in a fresh tick process, whatever ran before in this one: the manifests' schedules
    # are read by bundle, once, and kept.
    schedules_engine._declared_in_bundle.cache_clear()
    statements = []
    for at in INSTANTS:
        with wallclock.fixed(at), CaptureQueriesContext(connection) as captured:
            phases.run_once(now=at, phases=True)
        statements += [query["sql"] for query in captured.captured_queries]
    assert {r.brand_id for r in Record.objects.filter(kind="timer.fired")} == {
        world.brand.pk, world.other.pk}
    assert Record.objects.filter(kind__in=["outcome.lapsed", "cycle.renewed"]).count() == 2
    assert any('INSERT INTO "money_posting"' in sql for sql in statements)  # the renewal's
    assert_scoped(statements, TICK_CROSSING)


PAGES = [
    *[(door, "owner_a") for door in console.DOORS if door.method == "get"],
    *[(door, "customer_a") for door in portal.DOORS
      if door.method == "get" and door.expect["customer_a"] == 200],
    *[(door, "staff_a") for door in delivery.DOORS if door.method == "get"],
]
HOMES = [("/portal/", "customer_a")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_each_page_of_a_brand_reads_its_rows_by_its_brand(world):
    asked = [(_fill(door.path, world, 0) + (f"?{_fill(door.query, world, 0)}"
                                             if door.query else ""), actor)
             for door, actor in PAGES] + HOMES
    statements, answers = [], {}
    for path, actor in asked:
        with CaptureQueriesContext(connection) as captured:
            answers[path] = world.clients[actor].get(path).status_code
        statements += [query["sql"] for query in captured.captured_queries]
    assert {path: status for path, status in answers.items() if status != 200} == {}
    assert_scoped(statements, PAGE_CROSSING)
