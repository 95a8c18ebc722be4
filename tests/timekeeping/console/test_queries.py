"""Each console page runs a number of queries independent of the data: rendered with 10
subjects and again with 1,000 (their jobs, dates, rungs, timers, schedules, set-aside rows,
deliveries, keys, notices and test clocks written in bulk), no page asks more than it did with
10. The counts measured are printed (`-s`) for docs/console.md."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from calendars.models import Postponement
from tests.world import manifest
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import (
    ApiKey,
    Brand,
    Clock,
    Connection,
    Delivery,
    Job,
    Member,
    Occurrence,
    Record,
    Schedule,
    ScheduleRun,
    SetAside,
    Standby,
    Subject,
    TestClock,
    Timer,
    Walk,
    WalkLine,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
JURISDICTIONS = {"jurisdictions": ["US", "US-CA"]}


def _subjects(brand: Brand, start: int, count: int, test_clock=None) -> list[Subject]:
    return Subject.objects.bulk_create([
        Subject(brand=brand, kind="taxpayer" if n % 3 else "venue", key=f"{n:06d}",
                name=f"Subject {n:06d}", zone="America/New_York", test_clock=test_clock)
        for n in range(start, start + count)])


def _dates(brand: Brand, subjects: list[Subject], bundle: str) -> None:
    """A job per subject with a hard pay date and two filing dates spread over the days around
    NOW (some passed, some near, most ahead), each with a rung armed or fired."""
    jobs = Job.objects.bulk_create([
        Job(brand=brand, subject=subject, service="annual-return", period="2027",
            input=JURISDICTIONS, bundle=bundle, opened=NOW) for subject in subjects])
    rows = Clock.objects.bulk_create([
        Clock(brand=brand, subject=job.subject, job=job, name=name, title=f"{name} the return",
              owner="of_record", hard=name == "pay", bundle=bundle, opened=NOW)
        for job in jobs for name in ("file", "pay")])
    occurrences = []
    for n, row in enumerate(rows):
        due = (NOW + timedelta(days=n % 90 - 20)).date()
        for item in (["US", "US-CA"] if row.name == "file" else [""]):
            occurrences.append(Occurrence(clock=row, item=item, rule_due=due, due=due,
                                          late_from=datetime.combine(due, datetime.min.time(),
                                                                     UTC) + timedelta(days=1),
                                          brand_id=row.brand_id, hard=row.hard,
                                          test_clock_id=row.test_clock_id))
    Occurrence.objects.bulk_create(occurrences)
    Timer.objects.bulk_create([
        Timer(brand=brand, key=f"{o.label}:notice", kind="clock", place=6,
              owed=o.late_from - timedelta(days=3), owner_type="occurrence", owner_id=o.label,
              owner_opened=NOW, payload={"rung": "notice 3d"},
              state="fired" if o.late_from - timedelta(days=3) < NOW else "armed",
              fired=o.late_from - timedelta(days=3) if o.late_from - timedelta(days=3) < NOW
              else None, late_by=timedelta(minutes=7)) for o in occurrences])


def _operations(brand: Brand, start: int, count: int) -> None:
    """Rows for every operations page, in proportion to the subjects."""
    link = Connection.objects.get(brand=brand)
    schedules = Schedule.objects.bulk_create([
        Schedule(key=f"{brand.pk}:-:s{n}", name=f"s{n}", brand=brand, action="a.b",
                 every_s=3600, next_due=NOW + timedelta(minutes=n))
        for n in range(start, start + count // 10)])
    ScheduleRun.objects.bulk_create([
        ScheduleRun(schedule=row, due=NOW - timedelta(hours=1), tick=NOW - timedelta(hours=1),
                    outcome=outcome, reason=outcome) for row in schedules
        for outcome in ("failed", "skipped", "succeeded")])
    SetAside.objects.bulk_create([
        SetAside(brand_id=link.brand_id, connection=link,
                 table="orders", row=n, rule=1, code="REFUSED",
                 until=NOW + timedelta(minutes=30)) for n in range(start, start + count)])
    Delivery.objects.bulk_create([
        Delivery(brand=brand, channel="email", payload={"subject": f"m{n}"}, state="failed",
                 idempotency_key=f"k{n}", next_attempt=NOW, created=NOW - timedelta(hours=2))
        for n in range(start, start + count)])
    ApiKey.objects.bulk_create([ApiKey(brand=brand, name=f"key {n}", digest=f"{n:064d}",
                                       created=NOW) for n in range(start, start + count // 10)])
    TestClock.objects.bulk_create([TestClock(brand=brand, name=f"t{n}", frozen_time=NOW)
                                   for n in range(start, start + count // 10)])
    spring = TestClock.objects.get(brand=brand, name="spring")
    walk = Walk.objects.filter(test_clock=spring).first() or Walk.objects.create(
        brand=brand, test_clock=spring, start=NOW, to=NOW + timedelta(days=30),
        reached=NOW + timedelta(days=30), state="done", finished=NOW)
    WalkLine.objects.bulk_create([
        WalkLine(brand=brand, walk=walk, seq=n, timer=f"tmr_{n}", owner="ord_1",
                 outcome="fired", text=f"  1     line {n}") for n in range(start, start + count)])
    member = Member.objects.filter(brand=brand).first()
    Standby.objects.bulk_create([
        Standby(brand=brand, member=member, first=date(2027, 1, 1) + timedelta(days=7 * n),
                last=date(2027, 1, 6) + timedelta(days=7 * n), retainer=20000, currency="USD",
                offer=timedelta(hours=4), created=NOW) for n in range(start, start + count)])
    Postponement.objects.bulk_create([
        Postponement(calendar=brand.calendar, from_date=date(2030, 1, 1) + timedelta(days=n),
                     through=date(2030, 1, 1) + timedelta(days=n), to=date(2031, 1, 1),
                     notice=f"notice {n}", where={}) for n in range(start, start + count)])


def _pages(brand: Brand, subject: Subject, test_clock: TestClock) -> dict[str, str]:
    base = f"/console/{brand.pk}/"
    row = subject.clocks.get(name="file")
    timer = Timer.objects.filter(owner_id__startswith=row.pk).first()
    return {
        # Test mode on, then off again (the session keeps it: the pages after are live).
        "home": base, "home, in test mode": f"{base}?test={test_clock.pk}",
        "home, test mode off": f"{base}?test=off",
        "subjects": f"{base}subjects/",
        "subjects, searched": f"{base}subjects/?q=Subject+00&kind=taxpayer&page=2",
        "a subject": f"{base}subjects/{subject.pk}/",
        "why, a date": f"{base}why?q={row.pk}", "why, a timer": f"{base}why?q={timer.pk}",
        "why, a schedule": f"{base}why?q=s1", "why, a row": f"{base}why?q=orders:1",
        "schedules": f"{base}schedules/", "timed moves": f"{base}moves/",
        "postponements": f"{base}postponements/", "test clocks": f"{base}test-clocks/",
        "standby": f"{base}standby/",
        "a test clock": f"{base}test-clocks/{test_clock.pk}/", "API keys": f"{base}keys/",
        "manifests": f"{base}manifests/",
    }


def _count(client, path: str) -> int:
    with CaptureQueriesContext(connection) as asked:
        answer = client.get(path)
    assert answer.status_code == 200, (path, answer.content[:500])
    return len(asked)


def _control(client, path: str) -> int:
    """Acknowledging a date with htmx: its row comes back."""
    with CaptureQueriesContext(connection) as asked:
        answer = client.post(path, {}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200
    return len(asked)


def test_every_page_asks_the_same_few_queries_for_10_subjects_and_for_1000(
        client, actors, django_assert_max_num_queries):
    brand = Brand.objects.create(name="Bulk", slug="bulk", owner=actors["owner"])
    Member.objects.create(brand=brand, user=actors["staff"], role=Member.Role.MANAGER)
    version = manifests.load(brand, manifest())
    spring = TestClock.objects.create(brand=brand, name="spring", frozen_time=NOW)
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="first", name="First",
                                     input=JURISDICTIONS)
    with wallclock.fixed(NOW):
        clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                     input=JURISDICTIONS)
    _dates(brand, _subjects(brand, 0, 6) + _subjects(brand, 6, 3, spring), version.bundle)
    _operations(brand, 0, 10)
    client.force_login(actors["owner"])
    pages = _pages(brand, subject, spring)
    control = f"/console/{brand.pk}/clocks/{subject.clocks.get(name='pay').pk}/acknowledge"
    with wallclock.fixed(NOW):
        for path in pages.values():  # warm: templates compiled, manifests cached
            _count(client, path)
        small = {name: _count(client, path) for name, path in pages.items()}
        small["a control, in place"] = _control(client, control)

        more = _subjects(brand, 10, 890) + _subjects(brand, 900, 100, spring)
        _dates(brand, more, version.bundle)
        _operations(brand, 10, 990)
        Record.objects.bulk_create([Record(kind="clock.acknowledged", instant=NOW, brand=brand,
                                           subject=subject.pk, data={"by": "x"})
                                    for _ in range(200)])
        assert Subject.objects.filter(brand=brand).count() == 1000
        big = {}
        for name, path in pages.items():
            with django_assert_max_num_queries(small[name], info=name):
                big[name] = _count(client, path)
        with django_assert_max_num_queries(small["a control, in place"]):
            big["a control, in place"] = _control(client, control)
    print("\nqueries per page, 10 subjects → 1,000 subjects:")
    for name in small:
        print(f"  {name:<32} {small[name]:>3} → {big[name]:>3}")
