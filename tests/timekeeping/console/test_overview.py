"""/console/ for a person who keeps several brands: each at a glance, live only, with a link
in; for one brand, its home (issue 27)."""

import html
import re
from datetime import UTC, datetime, timedelta

from django.test import Client

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Fault, Member, Timer

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_one_brand_lands_on_its_home(desk, actors):
    owner = Client()
    owner.force_login(actors["owner"])
    assert owner.get("/console/")["Location"] == desk.url()


def test_several_brands_are_each_at_a_glance_live_only(desk, actors,
                                                        django_assert_max_num_queries):
    second = Brand.objects.create(name="Arbor Venue", slug="arbor", owner=actors["staff"])
    Member.objects.create(brand=second, user=actors["owner"], role=Member.Role.MANAGER)
    Fault.objects.create(brand=second, phase=Fault.Phase.TIMERS, where=second.pk,
                         error="ValueError: broke", first_seen=NOW, last_seen=NOW)
    Timer.objects.create(brand=second, key="late", kind="delay", place=4, owed=NOW,
                         state=Timer.State.FIRED, fired=NOW - timedelta(hours=1),
                         late_by=timedelta(minutes=9), owner_id="job_X", owner_opened=NOW)
    owner = Client()
    owner.force_login(actors["owner"])
    # +1: webhooks off; +1: parked timers; +2: parked timed moves (one per brand); 46 on
    # main before issue 31's parked schedules, +2 for them (one per brand)
    with wallclock.fixed(NOW), django_assert_max_num_queries(48):
        page = owner.get("/console/")
    text = _text(page)
    assert page.status_code == 200 and "Your brands" in text
    assert text.index("Arbor Venue") < text.index("Northwind Filing")  # by name
    assert "2 things, 1 failed, 1 ran late" in text
    # Northwind's dates live on its test clock: live, nothing is at risk or due.
    northwind = text.split("Northwind Filing")[-1]
    assert northwind.strip().startswith("nothing nothing nothing falls due")
    body = page.content.decode()
    assert f'href="/console/{second.pk}/"' in body and f'href="{desk.url()}"' in body
    assert "tc_" not in body and "brd_" not in text
