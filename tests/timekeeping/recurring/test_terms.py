"""Plans kept (S24): a subscription, job and subject keep the brand's plan they opened under
and run to their end on it; a smaller plan refuses new orders only, and a plan change says
what stays on the old terms and until when. Live, on the brand's real clock in New York."""

from datetime import UTC, date, datetime

import pytest
from django.contrib.admin.utils import quote
from django.test import Client

from tests.timekeeping.recurring.test_plans import document
from tests.words import engine_words, visible_text
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import Job, Record, Subject, Subscription
from timekeeping.recurring import plans, terms
from timekeeping.subjects import making
from timekeeping.tick import phases


@pytest.fixture
def on_launch(brand):
    brand.plan = "launch"
    brand.save(update_fields=["plan"])
    manifests.load(brand, document())
    return brand


def _client(brand, key: str) -> Subject:
    return making.make(brand, kind="client", key=key, name=f"Harbor {key}",
                       zone="America/New_York")


def test_a_downgraded_brands_running_subscription_renews_and_mints_a_year_on_its_old_plan(
        on_launch):
    subject = _client(on_launch, "1")
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
        kept = terms.change_plan(brand=on_launch, plan="free", by="owner")
    assert (subscription.plan, subject.plan) == ("launch", "launch")
    assert kept.as_dict()["kept"] == [{"plan": "launch", "subscriptions": 1, "jobs": 0,
                                       "subjects": 0, "last_ends": None, "open_ended": 1}]
    # A year of the real clock, ticked on each mint (the 1st) and renewal (the 15th).
    for month in range(2, 14):
        year, month = 2027 + (month - 1) // 12, (month - 1) % 12 + 1
        phases.run_once(now=datetime(year, month, 1, 15, tzinfo=UTC), phases=False)
        phases.run_once(now=datetime(year, month, 15, 15, tzinfo=UTC), phases=False)
    renewed = Record.objects.filter(kind="cycle.renewed", brand=on_launch.pk)
    minted = Record.objects.filter(kind="schedule.minted", brand=on_launch.pk)
    assert [r.data["cycle"] for r in renewed.order_by("instant")] == list(range(2, 14))
    assert minted.count() == 12
    assert not Record.objects.filter(kind="schedule.refused").exists()
    assert set(Job.objects.filter(subject=subject).values_list("plan", flat=True)) == {"launch"}
    assert Subscription.objects.get(pk=subscription.pk).cycle == 13
    # A new order under the smaller plan is refused, naming the field, the key and the plan.
    with pytest.raises(clocks.OrderRefused) as refused:
        plans.subscribe(subject=_client(on_launch, "2"), service="plan")
    assert refused.value.field == "service"
    assert refused.value.message.startswith("plan_lacks_key: ")
    assert "runs live on the launch plan; the brand is on free" in refused.value.message


def test_a_plan_change_says_what_stays_on_the_old_terms_and_until_when(on_launch):
    subject = _client(on_launch, "1")
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
        plans.cancel_at_cycle_end(subscription, by="buyer")
        job = clocks.order(brand=on_launch, service="books", subject=subject, period="2027-01")
        assert job.plan == "launch"
        preview = terms.kept_on(on_launch, "free")
    assert [each.as_dict() for each in preview.behind] == [
        {"plan": "launch", "subscriptions": 1, "jobs": 1, "subjects": 0,
         "last_ends": date(2027, 2, 15), "open_ended": 1}]
    assert terms.said(preview) == (
        "1 subscription and 1 job keep the Launch plan until they end; the last ends on "
        "Mon 15 Feb 2027; 1 has no end date yet (a subscription renews until it is "
        "cancelled).")
    assert on_launch.plan == "launch"  # a preview changes nothing
    with wallclock.fixed(datetime(2027, 1, 16, 15, tzinfo=UTC)):
        changed = terms.change_plan(brand=on_launch, plan="free", by="owner")
    assert changed.as_dict()["said"] == terms.said(preview)
    line = Record.objects.get(kind="brand.plan_changed")
    assert (line.data["plan"], line.data["was"], line.data["by"]) == ("free", "launch", "owner")
    # Back up: nothing stays behind, and running work gets the higher plan at once.
    assert terms.said(terms.change_plan(brand=on_launch, plan="team", by="owner")) == (
        "Nothing running stays on the old plan.")


def test_a_plan_that_is_no_plan_is_refused_naming_the_field_and_changes_nothing(on_launch):
    with pytest.raises(terms.PlanRefused) as refused:
        terms.change_plan(brand=on_launch, plan="gold", by="owner")
    assert str(refused.value) == "plan: one of free, launch, team"
    on_launch.refresh_from_db()
    assert on_launch.plan == "launch"
    assert not Record.objects.filter(kind="brand.plan_changed").exists()


@pytest.fixture
def running(on_launch, actors):
    """A live subscription and its job under Launch, on 15 Jan 2027; the owner signed in."""
    subject = _client(on_launch, "1")
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
        clocks.order(brand=on_launch, service="books", subject=subject, period="2027-01")
    owner = Client()
    owner.force_login(actors["owner"])
    return subscription, owner


def test_the_api_says_what_a_move_would_keep_and_moves_only_for_the_owner(running, actors):
    subscription, owner = running
    brand = subscription.brand
    url = f"/api/brands/{brand.pk}/plan"
    previewed = owner.get(url, {"to": "free"}).json()
    assert previewed["plan"] == "free" and previewed["was"] == "launch"
    assert previewed["kept"] == [{"plan": "launch", "subscriptions": 1, "jobs": 1,
                                  "subjects": 0, "last_ends": None, "open_ended": 2}]
    assert owner.get(url, {"to": "gold"}).json() == {
        "to": ['"gold" is not a valid choice.']}
    refused = owner.post(url, {"plan": "gold"}, content_type="application/json")
    assert refused.status_code == 400 and list(refused.json()) == ["plan"]
    brand.members.create(user=actors["staff"], role="manager")
    staff = Client()
    staff.force_login(actors["staff"])
    assert staff.post(url, {"plan": "free"}, content_type="application/json").status_code == 403
    brand.refresh_from_db()
    assert brand.plan == "launch"
    moved = owner.post(url, {"plan": "free"}, content_type="application/json").json()
    assert moved["kept"] == previewed["kept"] and moved["said"].startswith(
        "1 subscription and 1 job keep the Launch plan until they end")
    brand.refresh_from_db()
    assert brand.plan == "free"
    read = owner.get(f"/api/subscriptions/{subscription.pk}").json()
    assert read["plan"] == "launch"
    job = owner.get("/api/jobs", {"subject": subscription.subject_id}).json()["results"][0]
    assert job["plan"] == "launch"


def test_the_console_asks_before_a_downgrade_saying_what_keeps_the_old_plan(running):
    subscription, owner = running
    brand = subscription.brand
    page = owner.get(f"/console/{brand.pk}/plan/").content.decode()
    assert "Northwind Filing is on the Launch plan." in page
    change = f"/console/{brand.pk}/plan/change"
    asked = owner.post(change, {"plan": "free"}).content.decode()
    assert "Before you move to the Free plan" in asked
    assert engine_words(visible_text(asked)) == []
    assert "1 subscription and 1 job keep the Launch plan until they end" in asked
    brand.refresh_from_db()
    assert brand.plan == "launch"  # nothing moves until confirmed
    assert owner.post(change, {"plan": "gold"}).status_code == 400
    moved = owner.post(change, {"plan": "free", "confirm": "on"}, follow=True)
    said = moved.content.decode()
    assert "Northwind Filing is on the Free plan now. 1 subscription and 1 job keep" in said
    brand.refresh_from_db()
    assert brand.plan == "free"
    subject = owner.get(f"/console/{brand.pk}/subjects/{subscription.subject_id}/")
    assert "keeps the Launch plan it was ordered under" in subject.content.decode()
    assert "keeps the Launch plan it opened under" in subject.content.decode()


def test_the_admins_change_of_plan_goes_on_the_record_and_says_what_keeps_the_old_one(
        running, admin_client_logged_in):
    subscription, _ = running
    brand = subscription.brand
    url = f"/admin/timekeeping/brand/{quote(brand.pk)}/change/"  # admin ids quote "_"
    changed = admin_client_logged_in.post(url, {
        "name": brand.name, "slug": brand.slug, "owner": brand.owner_id, "calendar": "",
        "plan": "free", "park_after": "10", "members-TOTAL_FORMS": "0",
        "members-INITIAL_FORMS": "0", "members-MIN_NUM_FORMS": "0",
        "members-MAX_NUM_FORMS": "1000"}, follow=True)
    assert "1 subscription and 1 job keep the Launch plan until they end" in (
        changed.content.decode())
    brand.refresh_from_db()
    assert brand.plan == "free"
    line = Record.objects.get(kind="brand.plan_changed")
    assert (line.data["was"], line.data["plan"]) == ("launch", "free")
    assert line.data["by"].endswith("(root)")
