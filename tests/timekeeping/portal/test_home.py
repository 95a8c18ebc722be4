"""The portal's home serves the customer (issue 27): what is waiting for them (an open ask, its
page and the date it is needed by), what is in progress for them (the job and its next step),
the dates coming up, and what they pay (the plan's price, the next charge, the charges and
payments so far, the allowances left), with cancel at the cycle's end and resume, with and
without htmx; the empty states say what would fill them. Los Angeles, on a held real clock."""

import copy
import html
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Ask, Customer, Subscription
from timekeeping.recurring import dunning, plans

from .conftest import TAX

LA = ZoneInfo("America/Los_Angeles")
NOW = datetime(2028, 2, 3, 9, tzinfo=LA)
PLAN = {"subject": {"kind": "taxpayer"},
        "price": {"every": "1y", "amount": 240000, "currency": "USD",
                  "includes": {"annual-return": 1}}}


def text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


@pytest.fixture
def on_plan(portal):
    found = copy.deepcopy(TAX)
    found["services"]["tax-plan"] = copy.deepcopy(PLAN)
    manifests.load(portal.brand, found)
    with wallclock.fixed(datetime(2028, 1, 10, 9, tzinfo=LA)):
        subscription = plans.subscribe(subject=portal.subject, service="tax-plan", by="owner")
        dunning.pay(subscription, amount=100000, currency="USD", by="owner")
    return subscription


def test_the_home_shows_what_is_waiting_in_progress_and_paid(portal, on_plan):
    ask = Ask.objects.filter(subject=portal.subject, state=Ask.State.OPEN).first()
    assert ask is not None  # the return opened asking for the organizer
    with wallclock.fixed(NOW):
        answer = portal.client.get("/portal/")
    page, body = text(answer), answer.content.decode()
    waiting = page.split("Waiting for you")[1].split("In progress for you")[0]
    assert ask.title.capitalize() in waiting
    assert f'href="/portal/asks/{ask.pk}/"' in body
    needed = ask.expires.astimezone(LA)
    assert f"by {needed:%a} {needed.day} {needed:%b %Y}, {needed:%H:%M %Z}" in waiting
    assert f'datetime="{ask.expires.isoformat()}"' in body
    progress = page.split("In progress for you")[1].split("Dates coming up")[0]
    assert "Fernhill Tools' 2027 annual return is under way." in progress
    assert f"We need {ask.title} from Ada Fernhill" in progress
    pays = page.split("What you pay")[1]
    assert "tax plan · $2,400.00 every year" in pays
    assert "Next charge: $2,400.00 on Wed 10 Jan 2029, when it renews." in pays
    assert "$2,400.00 charged, $1,000.00 paid" in pays
    assert "Mon 10 Jan 2028 Charge for cycle 1 $2,400.00 part paid" in pays
    assert "Mon 10 Jan 2028 Payment $1,000.00 received" in pays
    assert "Owed now: $1,400.00" in pays
    assert "1 × annual return 0 1 Wed 10 Jan 2029" in pays
    assert "Subscribe in your calendar app" in page


def test_cancel_then_resume_without_javascript(portal, on_plan):
    with wallclock.fixed(NOW):
        asked = portal.client.post(f"/portal/plans/{on_plan.pk}/cancel", {"next": "/portal/"})
        assert "You keep it until then, and you can resume it until then." in text(asked)
        assert Subscription.objects.get(pk=on_plan.pk).ends_after is None
        portal.client.post(f"/portal/plans/{on_plan.pk}/cancel",
                           {"next": "/portal/", "confirmed": "yes"})
        page = text(portal.client.get("/portal/"))
        assert ("Your tax plan stops on Wed 10 Jan 2029; you keep it until then; you can "
                "resume it until then.") in page
        assert "No more charges." in page
        resumed = portal.client.post(f"/portal/plans/{on_plan.pk}/resume", {"next": "/portal/"})
        assert resumed.status_code == 302 and resumed.url == "/portal/"
        page = text(portal.client.get("/portal/"))
    assert ("Resumed: your tax plan renews on Wed 10 Jan 2029; the next charge is "
            "$2,400.00 on Wed 10 Jan 2029.") in page
    assert Subscription.objects.get(pk=on_plan.pk).ends_after is None


def test_cancel_then_resume_with_htmx_answers_the_plan_in_place(portal, on_plan):
    htmx = {"HTTP_HX_REQUEST": "true"}
    with wallclock.fixed(NOW):
        cancelled = text(portal.client.post(f"/portal/plans/{on_plan.pk}/cancel",
                                            {"confirmed": "yes"}, **htmx))
        assert "Your tax plan stops on Wed 10 Jan 2029" in cancelled
        assert "Resume tax plan" in cancelled
        resumed = text(portal.client.post(f"/portal/plans/{on_plan.pk}/resume", **htmx))
        assert "Resumed: your tax plan renews on Wed 10 Jan 2029" in resumed
        assert "Next charge: $2,400.00 on Wed 10 Jan 2029" in resumed
        again = text(portal.client.post(f"/portal/plans/{on_plan.pk}/resume", **htmx))
    assert "Not resumed: it is not cancelled, so there is nothing to resume." in again


def test_resume_is_refused_once_the_cycle_has_ended(portal, on_plan):
    with wallclock.fixed(NOW):
        plans.cancel_at_cycle_end(on_plan, by="owner")
    with wallclock.fixed(datetime(2029, 1, 10, 12, tzinfo=LA)):
        portal.client.post(f"/portal/plans/{on_plan.pk}/resume")
        page = text(portal.client.get(f"/portal/subjects/{portal.subject.pk}/"))
    assert "Not resumed: its last cycle has ended, so there is nothing to resume" in page
    assert Subscription.objects.get(pk=on_plan.pk).ends_after is not None


def test_another_customer_hears_404_for_the_plan_and_the_ask(portal, on_plan, second_customer):
    ask = Ask.objects.filter(subject=portal.subject).first()
    with wallclock.fixed(NOW):
        plans.cancel_at_cycle_end(on_plan, by="owner")
        assert second_customer.post(f"/portal/plans/{on_plan.pk}/resume").status_code == 404
        assert second_customer.get(f"/portal/asks/{ask.pk}/").status_code == 404
    assert Subscription.objects.get(pk=on_plan.pk).ends_after is not None


def test_the_customer_answers_their_ask_from_the_portal(portal):
    ask = Ask.objects.filter(subject=portal.subject, state=Ask.State.OPEN).first()
    with wallclock.fixed(ask.expires - timedelta(days=1)):
        page = text(portal.client.get(f"/portal/asks/{ask.pk}/"))
        assert "Send my answer" in page
        answered = text(portal.client.post(f"/portal/asks/{ask.pk}/"))
    assert "Thank you: your answer is recorded." in answered
    assert Ask.objects.get(pk=ask.pk).state == Ask.State.ANSWERED


def test_empty_states_say_what_would_fill_them(portal):
    user = get_user_model().objects.create_user("empty")
    Customer.objects.create(brand=portal.brand, user=user)
    client = Client()
    client.force_login(user)
    with wallclock.fixed(NOW):
        page = text(client.get("/portal/"))
    assert "Nothing is waiting for you. When we need something from you" in page
    assert "Nothing is in progress for you. When work starts for you" in page
    assert "No dates coming up. The dates we keep for you" in page
    assert "You are on no plan, so nothing is charged here." in page


def test_the_home_costs_a_bounded_number_of_queries_however_many_plans(
        portal, on_plan, django_assert_max_num_queries):
    """A second subject with its own return, ask and plan costs no query more."""
    with wallclock.fixed(NOW):
        portal.client.get("/portal/")  # warm: a manifest's compiled services are cached
        with django_assert_max_num_queries(MAX_QUERIES):
            portal.client.get("/portal/")
        Customer.objects.get(user__username="buyer").subjects.add(
            portal.others, through_defaults={"brand": portal.brand})
        plans.subscribe(subject=portal.others, service="tax-plan", by="owner")
        portal.client.get("/portal/")
        with django_assert_max_num_queries(MAX_QUERIES):
            page = text(portal.client.get("/portal/"))
    assert page.count("tax plan · $2,400.00 every year") == 2


# The session and its user, the accounts, subjects, asks, jobs, tasks, grants, the dates' own,
# the plans, their allowances and their ledger lines: one each.
MAX_QUERIES = 17
