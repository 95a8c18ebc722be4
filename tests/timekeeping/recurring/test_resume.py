"""Resuming a plan cancelled at its cycle's end (issue 27): through the API, before the cycle
ends, the plan renews again as if never cancelled, and the record says who resumed it; a plan
not cancelled, or whose last cycle has ended, is refused naming `subscription`; another
brand's caller hears 404. In New York, on the brand's real clock held still."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.clocks import history
from timekeeping.models import Record, Subject, Subscription
from timekeeping.recurring import plans
from timekeeping.tick import phases

from .test_plans import document

NY = ZoneInfo("America/New_York")


@pytest.fixture
def on_plan(brand, actors):
    manifests.load(brand, document())
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York")
    with wallclock.fixed(datetime(2027, 1, 15, 10, tzinfo=NY)):
        subscription = plans.subscribe(subject=subject, service="plan")
    api = Client()
    api.force_login(actors["owner"])
    return subscription, api


def _post(api, subscription, what: str):
    return api.post(f"/api/subscriptions/{subscription.pk}/{what}", content_type="application/json")


def test_a_cancelled_plan_resumed_before_its_cycle_ends_renews_again(on_plan):
    subscription, api = on_plan
    with wallclock.fixed(datetime(2027, 2, 3, 10, tzinfo=NY)):
        assert _post(api, subscription, "cancel").json()["ends_after"] == 1
        resumed = _post(api, subscription, "resume")
        assert resumed.status_code == 200
        assert resumed.json()["ends_after"] is None
        assert resumed.json()["renews_on"] == "2027-02-15"
        told = [said.text for said in history.history(subscription.subject)]
    # Both at the same instant (the clock held still), so in either order.
    assert set(told[:2]) == {"The plan plan was resumed by owner: it renews on Mon 15 Feb 2027.",
                             "The plan plan was cancelled at its cycle's end by owner: it stops "
                             "on Mon 15 Feb 2027."}
    assert Record.objects.filter(kind="subscription.resumed").count() == 1
    # Cycle 2 starts at 09:00 New York on 15 February: it renews as if never cancelled.
    phases.run_once(now=datetime(2027, 2, 15, 9, 0, 30, tzinfo=NY), phases=False)
    found = Subscription.objects.get(pk=subscription.pk)
    assert (found.state, found.cycle) == (Subscription.State.ACTIVE, 2)


def test_resume_is_refused_when_nothing_is_cancelled(on_plan):
    subscription, api = on_plan
    with wallclock.fixed(datetime(2027, 2, 3, 10, tzinfo=NY)):
        refused = _post(api, subscription, "resume")
    assert refused.status_code == 400
    assert refused.json()["subscription"] == ["it is not cancelled, so there is nothing to resume"]
    assert not Record.objects.filter(kind="subscription.resumed").exists()


@pytest.mark.parametrize("ticked", [False, True], ids=["before the tick", "after the tick"])
def test_resume_is_refused_once_the_last_cycle_has_ended(on_plan, ticked):
    subscription, api = on_plan
    with wallclock.fixed(datetime(2027, 2, 3, 10, tzinfo=NY)):
        _post(api, subscription, "cancel")
    ended = datetime(2027, 2, 15, 9, 0, 30, tzinfo=NY)
    if ticked:
        phases.run_once(now=ended, phases=False)
    with wallclock.fixed(ended):
        refused = _post(api, subscription, "resume")
    assert refused.status_code == 400
    assert "its last cycle has ended" in refused.json()["subscription"][0]
    assert Subscription.objects.get(pk=subscription.pk).ends_after == 1


def test_another_brands_caller_hears_404_and_nothing_changes(on_plan, actors):
    subscription, api = on_plan
    with wallclock.fixed(datetime(2027, 2, 3, 10, tzinfo=NY)):
        _post(api, subscription, "cancel")
        stranger = Client()
        stranger.force_login(actors["outsider"])
        assert _post(stranger, subscription, "resume").status_code == 404
    assert Subscription.objects.get(pk=subscription.pk).ends_after == 1
