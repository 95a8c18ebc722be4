"""Fault injection in real tick processes on PostgreSQL: broken brands (a record that cannot
be stored, a raising handler, a connection whose database is down, a row whose moment leaves
the calendar) beside healthy ones. The healthy ones fire, move and send in the same tick; each
broken place is recorded once; the process exits 0."""

import json
from datetime import UTC, datetime, timedelta

import pytest

import tests.faulty  # noqa: F401 - the failing operations the child process runs too
from tests.processes import needs_postgres, start_manage
from tests.timekeeping.moves.test_moves import VENUE, make_venue
from timekeeping.models import Connection, Delivery, Fault, Record, SetAside, Timer
from timekeeping.timers import delays

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("drop_venue_tables")]
T0 = datetime(2026, 10, 23, 20, tzinfo=UTC)  # Friday 21:00 in London: the venues close
PICKUP = datetime(2026, 10, 23, 11, 30, tzinfo=UTC)
CHILD = """
import json, tests.faulty
from datetime import datetime, timedelta, timezone
from timekeeping.tick import phases
t0 = datetime(2026, 10, 23, 20, tzinfo=timezone.utc)
said = []
for minute in (0, 2):  # a failed timer waits about a minute (1 min ± 10%) to retry
    result = phases.run_once(now=t0 + timedelta(minutes=minute))
    said.append({"faults": [[f.phase, f.where] for f in result.faults],
                 "moved": sum(len(m.moved) for m in result.moves),
                 "sent": result.sweep.sent if result.sweep else 0,
                 "failed_timers": result.total("failed"), "fired": result.total("fired")})
print("RESULT" + json.dumps(said))
"""


def note(brand, n):
    return delays.delay("timekeeping.note", {"n": n}, brand=brand, at=T0 - timedelta(minutes=1),
                        key=f"note:{n}")


def test_broken_brands_are_recorded_once_and_healthy_ones_fire_move_and_send():
    healthy = make_venue("Healthy", "healthy", VENUE)
    good_order = healthy.model("orders").objects.create(customer="Ines", pickup_at=PICKUP,
                                                        status="placed",
                                                        email="ines@example.test")
    fine = [note(healthy.link.brand, n) for n in range(3)]
    broken = make_venue("Broken records", "broken", VENUE)
    bad_record = delays.delay("faulty.bad_record", {}, brand=broken.link.brand,
                              at=T0 - timedelta(minutes=1))
    boom = delays.delay("faulty.boom", {}, brand=broken.link.brand, at=T0 - timedelta(minutes=1))
    beside = note(broken.link.brand, 9)
    bad_row = broken.model("orders").objects.create(customer="Year one", status="placed",
                                                    pickup_at=datetime(1, 1, 1, tzinfo=UTC))
    also_due = broken.model("orders").objects.create(customer="Rui", pickup_at=PICKUP,
                                                     status="placed")
    down = make_venue("Down", "down", VENUE)
    Connection.objects.filter(pk=down.link.pk).update(database="down")

    child = start_manage("shell", "-c", CHILD, env={
        "EXTRA_DATABASES": "down=postgres://postgres@127.0.0.1:1/nowhere",
        "SCHEDULES_STORE": "default", "EMAIL_URL": "consolemail://"})
    out, err = child.communicate(timeout=240)
    assert child.returncode == 0, err[-3000:]
    first, second = json.loads(out.split("RESULT", 1)[1])

    # The healthy brand and the healthy parts of the broken one did their work at once.
    assert all(Timer.objects.get(pk=pk).state == "fired" for pk in [*fine, beside])
    assert healthy.model("orders").objects.get(pk=good_order.pk).status == "cancelled"
    assert broken.model("orders").objects.get(pk=also_due.pk).status == "cancelled"
    assert first["moved"] == 2
    cancelled = Delivery.objects.get(brand=healthy.link.brand)
    assert cancelled.state == "succeeded" and first["sent"] >= 1
    # Each broken place is on the record, once.
    assert [Timer.objects.get(pk=pk).state for pk in (bad_record, boom)] == ["armed", "armed"]
    assert first["failed_timers"] == 2 == second["failed_timers"]
    assert SetAside.objects.get(row=bad_row.pk).code.startswith("MOMENT_OUT_OF_RANGE")
    assert broken.model("orders").objects.get(pk=bad_row.pk).status == "placed"
    fault = Fault.objects.get(phase="moves")
    assert (fault.where, fault.count, fault.resolved) == (down.link.pk, 2, None)
    assert first["faults"] == [["moves", down.link.pk]] == second["faults"]
    assert Record.objects.filter(kind="tick.failed").count() == 1

    # The cron command itself says so and exits 0: only a database that is gone fails it.
    cron = start_manage("tick", env={"EXTRA_DATABASES": "down=postgres://postgres@127.0.0.1:1/x",
                                     "SCHEDULES_STORE": "default"})
    said, err = cron.communicate(timeout=120)
    assert cron.returncode == 0, err[-2000:]
    assert f"FAILED moves {down.link.pk}" in said
    assert Record.objects.filter(kind="tick.failed").count() == 1
