"""Standby seasons (S20): members on standby are offered new tasks first, and each week of the
season accrues their retainer (place 8). On a New York test clock across the spring change of
2027 (14 March): the second week ends at midnight EDT, an hour earlier in UTC than the first."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from money import ledger
from timekeeping import clocks, manifests
from timekeeping.models import Delivery, Member, Record, Subject, Task, Timer
from timekeeping.tick import test_clocks

START = datetime(2027, 3, 1, 14, tzinfo=UTC)  # Monday 09:00 EST


def document() -> dict:
    return {"calendar": {"zone": "America/New_York", "weekends": []},
            "services": {"work": {"subject": {"kind": "client"},
                                  "deliver": {"prepare": {"task": True, "hold": "2d"}}}}}


@pytest.fixture
def season(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    manifests.load(brand, document())
    clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                     name="Harbor", zone="America/New_York")
    standby = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    other = Member.objects.create(brand=brand, user=actors["member"], role="manager")
    owner = Client()
    owner.force_login(actors["owner"])
    made = owner.post(f"/api/brands/{brand.pk}/standby",
                      {"member": standby.pk, "first": "2027-03-01", "last": "2027-03-17",
                       "retainer": 20000, "currency": "USD", "offer": "4h",
                       "test_clock": clock.pk}, content_type="application/json")
    assert made.status_code == 201, made.json()
    return clock, subject, standby, other, owner, made.json()


def _advance(clock, to):
    clock.refresh_from_db()
    return test_clocks.advance(clock, to=to)


def test_each_week_of_the_season_accrues_the_retainer(season):
    clock, _, standby, _, _, made = season
    # Weeks end at midnight New York: 8 March EST (05:00Z), 15 March EDT (04:00Z), and the
    # three days left end on 18 March.
    owed = list(Timer.objects.filter(kind="money", key__startswith=made["id"]).values_list(
        "owed", flat=True))
    assert owed == [datetime(2027, 3, 8, 5, tzinfo=UTC)]
    _advance(clock, datetime(2027, 3, 18, 5, tzinfo=UTC))
    accrued = Record.objects.filter(kind="standby.accrued").order_by("instant")
    assert [(r.instant, r.data["amount"]) for r in accrued] == [
        (datetime(2027, 3, 8, 5, tzinfo=UTC), 20000),
        (datetime(2027, 3, 15, 4, tzinfo=UTC), 20000),
        (datetime(2027, 3, 18, 4, tzinfo=UTC), 8571)]  # 3/7 of a week, rounded down
    brand = standby.brand_id
    assert ledger.balance(f"{brand}:pay:{standby.pk}:USD", brand=brand) == 48571
    assert ledger.balance(f"{brand}:line:USD", brand=brand) == -48571
    # Nothing more is armed, and walking on accrues nothing twice.
    _advance(clock, datetime(2027, 4, 1, 5, tzinfo=UTC))
    assert Record.objects.filter(kind="standby.accrued").count() == 3


def test_a_task_is_offered_to_the_standby_member_first(season, actors):
    clock, subject, standby, other, _, _ = season
    _advance(clock, datetime(2027, 3, 2, 14, tzinfo=UTC))
    job = clocks.order(brand=subject.brand, service="work", subject=subject)
    task = Task.objects.get(job=job)
    assert task.offered_until == datetime(2027, 3, 2, 18, tzinfo=UTC)
    told = Delivery.objects.get(payload__subject="Practice run: Offered to you first: "
                                                 "prepare")
    assert "until Tue 2 Mar 2027, 13:00 EST" in told.payload["body"]
    someone = Client()
    someone.force_login(actors["member"])
    refused = someone.post(f"/api/tasks/{task.pk}/take")
    assert refused.status_code == 409 and refused.json()["code"] == "offered_to_standby"
    assert Task.objects.get(pk=task.pk).state == "open"
    # After the offer, anyone may take it.
    _advance(clock, datetime(2027, 3, 2, 18, tzinfo=UTC))
    assert someone.post(f"/api/tasks/{task.pk}/take").status_code == 200
    # The member on standby sees the season in the delivery portal.
    mine = Client()
    mine.force_login(actors["staff"])
    page = mine.get("/delivery/").content.decode()
    assert "On standby" in page and "Mon 1 Mar 2027 – Wed 17 Mar 2027" in page
    assert "$200 a week" in page


def test_the_standby_member_may_take_it_at_once(season, actors):
    clock, subject, *_ = season
    job = clocks.order(brand=subject.brand, service="work", subject=subject)
    mine = Client()
    mine.force_login(actors["staff"])
    assert mine.post(f"/api/tasks/{Task.objects.get(job=job).pk}/take").status_code == 200


@pytest.mark.parametrize(("change", "field"), [
    ({"first": "2027-03-05", "last": "2027-03-20"}, "first"),  # overlaps the season
    ({"first": "2027-05-02", "last": "2027-05-01"}, "last"),
    ({"first": "2027-05-01", "last": "2028-05-01"}, "last"),
    ({"first": "2027-05-01", "last": "2027-05-02", "retainer": -1}, "retainer"),
    ({"first": "2027-05-01", "last": "2027-05-02", "offer": "8d"}, "offer"),
    ({"first": "2027-05-01", "last": "2027-05-02", "offer": "soon"}, "offer"),
    ({"first": "2027-05-01", "last": "2027-05-02", "member": "mbr_Nobody000000000"}, "member"),
])
def test_a_season_is_refused_by_name_and_changes_nothing(season, change, field):
    clock, _, standby, _, owner, _ = season
    body = {"member": standby.pk, "retainer": 20000, "currency": "USD", "offer": "4h",
            "test_clock": clock.pk, **change}
    refused = owner.post(f"/api/brands/{standby.brand_id}/standby", body,
                         content_type="application/json")
    assert refused.status_code == 400 and field in refused.json(), refused.json()
    assert Record.objects.filter(kind="standby.started").count() == 1


def test_the_console_puts_a_member_on_standby_through_the_same_function(brand, actors):
    """The console's Standby page: a manager starts a season with the retainer typed as money;
    a refusal is shown on the field it names and keeps nothing; a viewer is refused."""
    manifests.load(brand, document())
    clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
    member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    owner = Client()
    owner.force_login(actors["owner"])
    page = f"/console/{brand.pk}/standby/"
    form = {"member": member.pk, "first": "2027-03-01", "last": "2027-03-17",
            "retainer": "200.00", "currency": "USD", "offer": "4h", "test_clock": clock.pk}
    refused = owner.post(page + "add", {**form, "last": "2027-02-01"})
    assert refused.status_code == 400
    assert "a season runs from its first day through its last" in refused.content.decode()
    wrong = owner.post(page + "add", {**form, "retainer": "200.001", "offer": "a while"})
    assert wrong.status_code == 400
    said = wrong.content.decode()
    assert "write the weekly retainer in USD, such as 250.00" in said
    assert "a span written &lt;n&gt;d, &lt;n&gt;h or &lt;n&gt;m" in said
    assert not member.standby.exists() and not Timer.objects.filter(kind="money").exists()
    made = owner.post(page + "add", form, follow=True).content.decode()
    assert "On standby: staff from Mon 1 Mar 2027 through Wed 17 Mar 2027, $200 a week." in made
    season = member.standby.get()
    assert (season.retainer, season.currency, season.test_clock_id) == (20000, "USD", clock.pk)
    # The same season the API makes: its first week's retainer armed at midnight New York.
    assert list(Timer.objects.filter(kind="money", key__startswith=season.pk).values_list(
        "owed", flat=True)) == [datetime(2027, 3, 8, 5, tzinfo=UTC)]
    row = made[made.index("<tbody>"):]
    assert '<td data-label="Retainer">$200</td>' in row and "test world spring" in row
    assert '<td data-label="Offered first for">4 hours</td>' in row
    viewer = Client()
    viewer.force_login(actors["member"])
    Member.objects.create(brand=brand, user=actors["member"], role="viewer")
    assert viewer.get(page).status_code == 200
    assert viewer.post(page + "add", form).status_code == 403
