"""A customer's plans in the portal: the cycle, when it renews, each allowance's use this cycle,
and cancelling at the cycle's end (through the function the API calls); another customer's
plan answers 404."""

import html
import re
from datetime import UTC, datetime

from django.test import Client

from timekeeping.basics import wallclock
from timekeeping.models import Customer, Subscription
from timekeeping.recurring import plans
from timekeeping.tick import phases

from .test_plans import client_of, document  # noqa: F401 - the fixture


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_a_customer_sees_their_plan_and_cancels_it_at_the_cycles_end(brand, actors,
                                                                    client_of):  # noqa: F811
    from timekeeping import manifests

    manifests.load(brand, document())
    subject = client_of()
    Customer.objects.create(brand=brand, user=actors["buyer"]).subjects.add(
        subject, through_defaults={"brand": brand})
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
    phases.run_once(now=datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC), phases=False)
    buyer = Client()
    buyer.force_login(actors["buyer"])
    with wallclock.fixed(datetime(2027, 2, 3, 15, tzinfo=UTC)):
        page = _text(buyer.get(f"/portal/subjects/{subject.pk}/"))
        assert "Your plans plan · cycle 1 · renews on Mon 15 Feb 2027" in page
        assert "1 × books 1 0 Mon 15 Feb 2027" in page
        # What comes on its own: the next renewal and the next mint, nothing already done.
        assert ("Mon 15 Feb 2027 the plan renews ahead · cycle 2 Mon 1 Mar 2027 the "
                "2027-03 books opens ahead") in page
        assert "opened" not in page.split("Also ahead")[1].split("Your plans")[0]
        asked = buyer.post(f"/portal/plans/{subscription.pk}/cancel")
        assert "Cancel your plan at the end of this cycle?" in asked.content.decode()
        assert Subscription.objects.get(pk=subscription.pk).ends_after is None  # not yet
        answer = buyer.post(f"/portal/plans/{subscription.pk}/cancel", {"confirmed": "yes"})
    assert answer.status_code == 302
    assert Subscription.objects.get(pk=subscription.pk).ends_after == 1
    with wallclock.fixed(datetime(2027, 2, 3, 15, tzinfo=UTC)):
        page = _text(buyer.get(f"/portal/subjects/{subject.pk}/"))
    assert ("Your plan stops on Mon 15 Feb 2027; you keep it until then; you can resume it "
            "until then.") in page
    assert "ends on Mon 15 Feb 2027: you cancelled it at the cycle's end" in page
    stranger = Client()
    stranger.force_login(actors["outsider"])
    assert stranger.post(f"/portal/plans/{subscription.pk}/cancel").status_code == 404


def test_the_console_shows_a_subjects_plans_and_why_tells_their_timers(brand, actors,
                                                                       client_of):  # noqa: F811
    from timekeeping import manifests

    manifests.load(brand, document())
    subject = client_of()
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
    owner = Client()
    owner.force_login(actors["owner"])
    with wallclock.fixed(datetime(2027, 1, 20, 15, tzinfo=UTC)):
        page = _text(owner.get(f"/console/{brand.pk}/subjects/{subject.pk}/"))
        why = _text(owner.get(f"/console/{brand.pk}/why?q={subscription.pk}"))
    assert ("Plans plan · since Fri 15 Jan 2027 · cycle 1 · renews on Mon 15 Feb 2027; books: 0 "
            "of 1 used, starts afresh Mon 15 Feb 2027") in page
    assert subscription.pk not in page.split("Details")[0]  # its id under Details
    assert f"Subscription {subscription.pk}: {subject.pk} on plan since 2027-01-15, cycle 1, " \
           "active." in why
    assert why.count("is armed and owed") == 2  # the renewal and the February mint
