import subprocess
import sys
from datetime import UTC, datetime, timedelta

from timekeeping.models import Brand
from timekeeping.timers import leases

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)


def test_it_gives_a_lease_to_one_holder_until_it_ends_or_is_given_back(brand):
    until = T0 + timedelta(minutes=2)
    assert leases.take(Brand, brand.pk, holder="elsewhere:1:a", now=T0, until=until)
    assert not leases.take(Brand, brand.pk, holder="elsewhere:2:b", now=T0, until=until)
    assert not leases.give_back(Brand, brand.pk, holder="elsewhere:2:b")
    assert leases.take(Brand, brand.pk, holder="elsewhere:2:b", now=until + timedelta(1),
                       until=until + timedelta(minutes=5))
    assert leases.give_back(Brand, brand.pk, holder="elsewhere:2:b")
    assert leases.take(Brand, brand.pk, holder="elsewhere:1:a", now=T0, until=until)


def test_it_takes_over_a_live_lease_whose_holder_died_on_this_machine(brand):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    holder = f"{leases.HOST}:{dead.pid}:deadbeef"
    until = T0 + timedelta(hours=1)
    assert leases.take(Brand, brand.pk, holder=holder, now=T0, until=until)
    assert leases.take(Brand, brand.pk, holder=leases.holder_name(), now=T0, until=until)
    brand.refresh_from_db()
    assert brand.lease_holder == leases.holder_name()


def test_it_never_takes_over_a_live_holder_on_another_machine(brand):
    until = T0 + timedelta(hours=1)
    assert leases.take(Brand, brand.pk, holder="other-host:1:x", now=T0, until=until)
    assert not leases.take(Brand, brand.pk, holder=leases.holder_name(), now=T0, until=until)
