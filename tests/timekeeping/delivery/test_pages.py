"""The delivery page: a member sees the open and held tasks of their brands, late first, each
due in its subject's zone with the zone named and its hold, and the dates assigned to them; a
viewer reads it without controls; everyone else hears 404 (or is sent to sign in)."""

import re
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.test import Client

from tests.timekeeping.delivery.conftest import START, order
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.jobs import tasks
from timekeeping.models import Task
from timekeeping.tick import test_clocks

REAL_NOW = datetime(2027, 1, 4, 15, tzinfo=UTC)


def page(client) -> str:
    answer = client.get("/delivery/")
    assert answer.status_code == 200
    return answer.content.decode()


def test_it_lists_the_brands_tasks_with_due_zone_and_hold(delivery):
    text = page(delivery.client("staff"))
    task = delivery.task
    assert f'id="task-{task.pk}"' in text
    assert "prepare the return" in text and "Harbor" in text
    assert "Sat 11 Mar 2028, 09:00 EST" in text and "New York time" in text  # START + 10d
    assert "open in the pool" in text
    assert "(in a test world)" in text and delivery.spring.pk not in text
    assert "A Stranger" not in text and delivery.stranger.pk not in text
    assert f"/delivery/tasks/{task.pk}/take" in text


def test_a_held_task_says_who_holds_it_until_when(delivery):
    tasks.take(delivery.task, delivery.owner)
    text = page(delivery.client("staff"))
    assert "held by owner until Fri 3 Mar 2028, 09:00 EST" in text
    assert f"/delivery/tasks/{delivery.task.pk}/take" not in text  # not the manager's to take
    assert "Held by someone else" in text
    assert "held by you until" in page(delivery.client("owner"))


def test_live_tasks_stand_apart_from_practice_each_judged_on_its_own_worlds_clock(delivery,
                                                                                   brand):
    # The real world's task is due first (January 2027), but only spring's is late: spring
    # stands at 2028-03-12, past its task's due of 03-11. Live first; spring's under the
    # practice runs (issue 27: test and live never share a list).
    with wallclock.fixed(REAL_NOW):
        real = Task.objects.get(job=order(brand, None, "2", "Real World", due="2027-06-30"))
        test_clocks.advance(delivery.spring, to=START + timedelta(days=11))
        text = page(delivery.client("staff"))
    assert real.due < delivery.task.due
    practice = text.index('id="practice"')
    assert text.index(f'id="task-{real.pk}"') < practice < text.index(
        f'id="task-{delivery.task.pk}"')
    late = re.search(rf'id="task-{delivery.task.pk}".*?</tr>', text, re.S).group(0)
    assert "state-late" in late
    assert "state-late" not in re.search(rf'id="task-{real.pk}".*?</tr>', text, re.S).group(0)


def test_it_lists_the_dates_assigned_to_the_member_only(delivery, brand):
    other = order(brand, delivery.spring, "3", "Unassigned Books")
    text = page(delivery.client("staff"))
    date = delivery.date
    assert f'id="date-{date.pk}"' in text
    assert "file it" in text and "due Fri 30 Jun 2028" in text
    assert "late from Sat 1 Jul 2028, 00:00 EDT, New York time" in text
    assert f'id="date-{other.clocks.get().occurrences.get().pk}"' not in text
    assert f'id="date-{date.pk}"' not in page(delivery.client("owner"))  # not assigned to them


def test_live_dates_stand_apart_from_practice_each_judged_on_its_own_worlds_clock(delivery, brand):
    # The real world's date is due first (June 2027) but only spring's is late: spring stands
    # at 2028-07-02, past its filing date's late_from (2028-07-01 00:00 EDT).
    with wallclock.fixed(REAL_NOW):
        real = order(brand, None, "4", "Real World", due="2027-06-30").clocks.get()
        sooner = real.occurrences.get()
        clocks.assign(sooner, delivery.manager, by="owner")
        text = page(delivery.client("staff"))
        assert text.index(f'id="date-{sooner.pk}"') < text.index('id="practice"') < \
            text.index(f'id="date-{delivery.date.pk}"')  # live first, practice apart
        test_clocks.advance(delivery.spring, to=datetime(2028, 7, 2, 14, tzinfo=UTC))
        text = page(delivery.client("staff"))
    assert sooner.late_from < delivery.date.late_from
    spring = re.search(rf'id="date-{delivery.date.pk}".*?</tr>', text, re.S).group(0)
    assert "state-lapsed" in spring and ">missed<" in spring  # on spring's clock
    real_row = re.search(rf'id="date-{sooner.pk}".*?</tr>', text, re.S).group(0)
    assert "state-lapsed" not in real_row and "state-late" not in real_row  # the real clock's


def test_a_viewer_reads_the_page_without_controls(delivery):
    clocks.assign(delivery.date, delivery.viewer, by="owner")
    text = page(delivery.client("member"))
    assert "prepare the return" in text and "file it" in text
    assert "/delivery/tasks/" not in text and "/delivery/dates/" not in text
    assert "/delivery/withdraw" not in text
    assert "You read them as a viewer" in text


def test_a_person_who_is_no_member_hears_404(delivery, actors):
    assert delivery.client("buyer").get("/delivery/").status_code == 404
    brandless = get_user_model().objects.create_user("brandless")
    client = Client()
    client.force_login(brandless)
    assert client.get("/delivery/").status_code == 404


def test_it_sends_a_stranger_to_sign_in(delivery):
    for answer in (Client().get("/delivery/"),
                   Client().post(f"/delivery/tasks/{delivery.task.pk}/take")):
        assert answer.status_code == 302
        assert answer["Location"].startswith("/accounts/login/?next=")


def test_a_page_has_one_h1_labelled_inputs_and_csrf_on_every_post_form(delivery):
    tasks.take(delivery.task, delivery.manager)
    for name in ("staff", "member", "owner"):
        text = page(delivery.client(name))
        assert text.count("<h1") == 1
        fields = re.findall(r'<(?:select|input|textarea)\b[^>]*>', text)
        for field in fields:
            if 'type="hidden"' in field:
                continue
            found = re.search(r'id="([^"]+)"', field)
            assert found and f'<label for="{found.group(1)}"' in text, field
        forms = re.findall(r'<form\b[^>]*method="post"[^>]*>.*?</form>', text, re.S)
        assert forms
        assert all('name="csrfmiddlewaretoken"' in form for form in forms)
    assert "<select" in page(delivery.client("staff"))  # the choice and the successor


def test_it_notes_when_there_are_more_than_a_hundred(delivery, monkeypatch):
    from timekeeping.delivery import rows

    monkeypatch.setattr(rows, "LIMIT", 1)
    order(delivery.brand, delivery.spring, "5", "Second Books")
    text = page(delivery.client("staff"))
    assert text.count('<tr id="task-') == 1
    assert "Only the first 1 tasks are shown" in text
