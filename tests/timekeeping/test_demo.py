import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from timekeeping.demo import (
    CUSTOMER_USERNAME,
    DEMO_PASSWORD,
    DEMO_USERNAME,
    MEMBER_USERNAME,
    NEAR_CLOCK,
    NEAR_SUBJECT,
    RELIEF_NOTICE,
    RELIEF_SUBJECT,
    TAX_SUBJECT,
    VENUE_USERNAME,
    DemoRefused,
    demo_load,
)
from timekeeping.models import (
    Brand,
    Customer,
    Invitation,
    Job,
    Member,
    Occurrence,
    Record,
    SetAside,
    Subscription,
    Task,
    TestClock,
    Timer,
)

# The demo builds its venue's tables (DDL), which SQLite allows only outside a transaction.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


@pytest.fixture(autouse=True)
def debug_on(settings):
    """The demo loads only in development (its login's password is published)."""
    settings.DEBUG = True


def test_it_refuses_to_load_the_demo_with_debug_off_and_writes_nothing(settings):
    settings.DEBUG = False
    with pytest.raises(DemoRefused, match="published password"):
        demo_load()
    with pytest.raises(CommandError) as refused:
        call_command("demo")
    assert str(refused.value) == ("the demo login has a published password; load the demo "
                                  "only with DEBUG=true")
    assert not get_user_model().objects.filter(username=DEMO_USERNAME).exists()
    assert not (Brand.objects.exists() or Timer.objects.exists() or Record.objects.exists())


def test_it_loads_the_demo_twice_without_doubling_anything(capsys):
    call_command("demo")
    call_command("demo")
    out = capsys.readouterr().out
    assert Brand.objects.filter(slug="demo").count() == 1
    # The near taxpayer's job, and the tax subject's year on tc_7Hq4: the 2025 return taken
    # on, the 2026 return, four estimates and a notice's response, each ended; the 2027 return
    # opens at tc_7Hq4's next tick, by one timer, and the first estimate of 2028 by another;
    # the relieved taxpayer's 2027 return on tc_7Hq6.
    assert Job.objects.count() == 9 and Customer.objects.count() == 1
    assert sorted(Job.objects.filter(subject_id=TAX_SUBJECT).values_list("period", flat=True)
                  ) == ["2025", "2026", "2027-Q1", "2027-Q2", "2027-Q3", "2027-Q4", "CP161"]
    assert not Job.objects.filter(subject_id=TAX_SUBJECT, state=Job.State.OPEN).exists()
    assert Subscription.objects.filter(subject_id=TAX_SUBJECT).count() == 1
    assert sorted(str(period) for period in Timer.objects.filter(
        kind="schedule", owner_id__startswith="sbn_", state=Timer.State.ARMED,
    ).values_list("payload__period", flat=True)
    ) == ["2027", "2028-Q1"]
    assert Invitation.objects.count() == 1 and SetAside.objects.count() == 0
    assert f"{DEMO_USERNAME} / {DEMO_PASSWORD}" in out


def test_it_prints_the_sign_ins_that_each_reach_their_place(capsys):
    call_command("demo")
    out = capsys.readouterr().out
    assert "Sign in at http://127.0.0.1:8000/accounts/login/ as:" in out
    for username in (DEMO_USERNAME, CUSTOMER_USERNAME, MEMBER_USERNAME, VENUE_USERNAME):
        assert f"  {username} / {DEMO_PASSWORD}" in out
    tax = Brand.objects.get(slug="demo-tax")
    venue = Brand.objects.get(slug="demo-venue")
    owner, customer, other = Client(), Client(), Client()
    assert owner.login(username=DEMO_USERNAME, password=DEMO_PASSWORD)
    assert customer.login(username=CUSTOMER_USERNAME, password=DEMO_PASSWORD)
    assert other.login(username=VENUE_USERNAME, password=DEMO_PASSWORD)
    assert owner.get("/")["Location"] == "/console/"
    assert owner.get(f"/console/{tax.pk}/").status_code == 200
    assert customer.get("/")["Location"] == "/portal/"
    portal = customer.get("/portal/").content.decode()
    assert "Harbor Robotics" in portal and "Juniper Labs" not in portal
    assert customer.get(f"/portal/subjects/{TAX_SUBJECT}/").status_code == 200
    assert customer.get(f"/portal/subjects/{NEAR_SUBJECT}/").status_code == 404
    assert other.get(f"/console/{venue.pk}/").status_code == 200
    assert other.get(f"/console/{tax.pk}/").status_code == 404  # another brand: as if none


def test_its_first_load_shows_a_priced_date_at_risk_a_late_timer_and_a_set_aside_row():
    from datetime import timedelta

    from timekeeping.basics import wallclock
    from timekeeping.clocks import dates
    from timekeeping.tick import phases

    loaded = wallclock.wall_now()
    with wallclock.fixed(loaded):
        call_command("demo")
    near = TestClock.objects.get(pk=NEAR_CLOCK)  # the demo's dates live in test worlds
    priced = [line for line in dates.AtRisk(Brand.objects.get(slug="demo-tax"), world=near)[0:]
              if line.price is not None]
    assert priced and priced[0].state == "near"
    assert priced[0].cost == "about $324 a month late"
    first_tick = loaded + timedelta(minutes=1)
    with wallclock.fixed(first_tick):
        phases.run_once(now=first_tick)
    late = Timer.objects.get(key__startswith="demo:late:")
    assert late.state == "fired" and late.late_by >= timedelta(hours=1)
    aside = SetAside.objects.get()
    assert aside.table == "lockers" and aside.code.startswith("STATE_MOVE_REFUSED")


def test_it_lets_the_printed_login_into_the_admin(client):
    call_command("demo")
    assert client.login(username=DEMO_USERNAME, password=DEMO_PASSWORD)
    page = client.get("/admin/timekeeping/brand/")
    assert page.status_code == 200
    assert "Demo brand" in page.content.decode()


def test_it_loads_a_venue_whose_sample_rows_move_on_their_own():
    from datetime import timedelta

    from timekeeping.basics import wallclock
    from timekeeping.models import Connection, SampleRow
    from timekeeping.moves.rows import Venue
    from timekeeping.tick import phases

    call_command("demo")
    call_command("demo")
    link = Connection.objects.select_related("brand").get(brand__slug="demo-venue")
    assert SampleRow.objects.filter(connection=link).count() == 4
    later = wallclock.wall_now() + timedelta(days=3)
    with wallclock.fixed(later):
        phases.run_once(now=later)
    venue = Venue.of(link)
    assert set(venue.model("orders").objects.values_list("status", flat=True)) == {"cancelled"}
    assert venue.model("tickets").objects.get().status == "valid"
    assert venue.model("stays").objects.get().status == "no_show"


def test_it_prints_a_members_sign_in_whose_tasks_page_has_work(capsys):
    call_command("demo")
    call_command("demo")  # again: nothing doubles
    out = capsys.readouterr().out
    assert f"  {MEMBER_USERNAME} / {DEMO_PASSWORD}" in out and "a member of Demo tax" in out
    member = Member.objects.get(user__username=MEMBER_USERNAME)
    assert member.brand.slug == "demo-tax" and member.role == "manager"
    (held,) = Task.objects.filter(holder=member, state=Task.State.HELD)
    assert held.title == "prepare the return" and held.job.subject_id == NEAR_SUBJECT
    assert Occurrence.objects.filter(assignee=member).count() == 2  # Juniper's filing dates
    ada = Client()
    assert ada.login(username=MEMBER_USERNAME, password=DEMO_PASSWORD)
    page = ada.get("/delivery/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "prepare the return" in html and "Juniper Labs" in html


def test_it_shows_a_missed_filing_date_reopened_by_a_relief_notice():
    demo_load()
    demo_load()  # again: the notice is added once
    federal = Occurrence.objects.get(clock__subject_id=RELIEF_SUBJECT, clock__name="file",
                                     item="US")
    assert (federal.status, str(federal.due), str(federal.moved_from)) == (
        "open", "2029-02-15", "2028-10-16")
    (withdrawn,) = Record.objects.filter(kind="clock.lapse_withdrawn",
                                         subject=RELIEF_SUBJECT)
    assert withdrawn.data["notice"] == RELIEF_NOTICE and withdrawn.data["who"] == "the demo"
    pay = Occurrence.objects.get(clock__subject_id=RELIEF_SUBJECT, clock__name="pay")
    assert pay.status == "lapsed"  # April's miss: outside the notice, it stands


def test_its_venue_has_a_rule_that_tells_a_customer_their_order_is_ready():
    from datetime import timedelta

    from timekeeping.basics import wallclock
    from timekeeping.models import Connection, Delivery
    from timekeeping.moves.rows import Venue, create, move

    call_command("demo")
    venue = Venue.of(Connection.objects.select_related("brand").get(brand__slug="demo-venue"))
    at = wallclock.wall_now()
    order = create(venue, "orders", {"customer": "Mira", "email": "mira@example.test",
                                     "pickup_at": at + timedelta(hours=2)}, who="staff", at=at)
    for state in ("confirmed", "preparing", "ready"):
        move(venue, "orders", order.pk, state, who="staff", at=at)
    (mail,) = Delivery.objects.filter(brand=venue.link.brand,
                                      payload__subject="Your order is ready, Mira")
    assert mail.payload["to"] == ["mira@example.test"]
    ran = Record.objects.get(brand=venue.link.brand, kind="automation.ran")
    assert (ran.data["rule"], ran.data["did"], ran.data["row"]) == (1, "emailed the customer",
                                                                   order.pk)
