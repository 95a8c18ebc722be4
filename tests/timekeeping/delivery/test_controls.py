"""The member's controls: take, extend once, release and finish a task, and acknowledge, mark
done and choose on a date assigned to them; a refusal said in words on the row, never an error
page; htmx gets the row back in place, a plain form post a message and a redirect; a viewer's
post 403; another brand's id 404 as a missing one; CSRF everywhere."""

from datetime import timedelta
from html import unescape

from django.test import Client

from tests.csrf import unmasked
from timekeeping import clocks
from timekeeping.jobs import tasks
from timekeeping.models import Occurrence, Record, Task

HTMX = {"HTTP_HX_REQUEST": "true"}


def task_post(delivery, verb, task=None, who="staff", htmx=False, **fields):
    task = task or delivery.task
    return delivery.client(who).post(f"/delivery/tasks/{task.pk}/{verb}", fields,
                                     **(HTMX if htmx else {}))


def date_post(delivery, verb, date=None, who="staff", htmx=False, **fields):
    """A date's control, said yes to where it asks first (Mark done)."""
    fields.setdefault("confirmed", "yes")
    date = date or delivery.date
    return delivery.client(who).post(f"/delivery/dates/{date.pk}/{verb}", fields,
                                     **(HTMX if htmx else {}))


def said(answer) -> str:
    return unescape(answer.content.decode())


def told(delivery, who="staff") -> str:
    """The page the plain post was sent back to, with its message."""
    return unescape(delivery.client(who).get("/delivery/").content.decode())


def test_a_plain_post_takes_extends_releases_and_says_so_after_a_redirect(delivery):
    task = delivery.task
    answer = task_post(delivery, "take")
    assert answer.status_code == 302 and answer["Location"] == "/delivery/"
    task.refresh_from_db()
    assert task.state == Task.State.HELD and task.holder == delivery.manager
    assert "Taken: prepare the return is yours until Fri 3 Mar 2028, 09:00 EST." in \
        told(delivery)
    assert task_post(delivery, "extend").status_code == 302
    assert "Extended: prepare the return is yours until Sun 5 Mar 2028, 09:00 EST." in \
        told(delivery)
    assert task_post(delivery, "extend").status_code == 302
    page = told(delivery)
    assert "Not extended: a hold can be extended once; this one was already extended." in page
    assert 'class="error"' in page
    assert task_post(delivery, "release").status_code == 302
    assert "Released: prepare the return is open in the pool again." in told(delivery)
    task.refresh_from_db()
    assert task.state == Task.State.OPEN and task.holder is None
    kinds = Record.objects.filter(kind__startswith="task.", job=delivery.job.pk).values_list(
        "kind", flat=True)
    assert sorted(kinds) == ["task.extended", "task.opened", "task.opened_again", "task.taken"]


def test_htmx_answers_the_row_in_place(delivery):
    task = delivery.task
    answer = task_post(delivery, "take", htmx=True)
    text = said(answer)
    assert answer.status_code == 200
    assert text.strip().startswith(f'<tr id="task-{task.pk}"')
    assert "<html" not in text and text.count("<tr") == 1
    assert "Taken: prepare the return is yours until Fri 3 Mar 2028, 09:00 EST." in text
    assert "held by you until Fri 3 Mar 2028, 09:00 EST" in text
    assert f"/delivery/tasks/{task.pk}/extend" in text
    assert f"/delivery/tasks/{task.pk}/take" not in text
    text = said(task_post(delivery, "extend", htmx=True))
    assert "(extended once)" in text
    assert f"/delivery/tasks/{task.pk}/extend" not in text  # extended: no second button
    text = said(task_post(delivery, "extend", htmx=True))
    assert 'class="said refused" role="status">Not extended: a hold can be extended once; ' \
           "this one was already extended.</p>" in text
    text = said(task_post(delivery, "release", htmx=True))
    assert "Released: prepare the return is open in the pool again." in text
    assert "open in the pool</td>" in text


def test_done_commits_the_step_and_the_row_leaves_the_list(delivery):
    task_post(delivery, "take")
    answer = task_post(delivery, "done", htmx=True)
    text = said(answer)
    assert "Done: prepare the return; its step 'prepare' committed." in text
    assert "The task is done, so it left this list" in text
    assert Task.objects.get(pk=delivery.task.pk).state == Task.State.DONE
    step = Record.objects.get(kind="step.committed", job=delivery.job.pk)
    assert step.data["step"] == "prepare" and step.data["by"].endswith("(staff)")
    assert f'id="task-{delivery.task.pk}"' not in told(delivery)


def test_done_as_a_plain_post_redirects_with_its_message(delivery):
    task_post(delivery, "take")
    assert task_post(delivery, "done").status_code == 302
    assert "Done: prepare the return; its step 'prepare' committed." in told(delivery)


def test_refusals_are_said_in_words_never_as_an_error_page(delivery):
    tasks.take(delivery.task, delivery.owner)
    for verb in ("take", "extend", "release", "done"):
        answer = task_post(delivery, verb, htmx=True)
        assert answer.status_code == 200
        text = said(answer)
        assert 'class="said refused"' in text
    assert "Not taken: owner holds it until 2028-03-03 14:00Z." in \
        said(task_post(delivery, "take", htmx=True))
    assert "Not released: only the member who holds the task can do this." in \
        said(task_post(delivery, "release", htmx=True))
    assert Task.objects.get(pk=delivery.task.pk).holder == delivery.owner


def test_a_gate_refusal_of_done_is_said_in_words(delivery):
    task_post(delivery, "take")
    Task.objects.filter(pk=delivery.task.pk).update(step="nudge-again")  # a step it lacks
    text = said(task_post(delivery, "done", htmx=True))
    assert "Not done: the service has no such step ('nudge-again' is not a step of work)." \
        in text


def test_a_closed_task_leaves_the_list_saying_why(delivery):
    clocks.end_job(delivery.job)
    text = said(task_post(delivery, "take", htmx=True))
    assert "Not taken: the task is closed (its job ended)." in text
    assert "left this list" in text


def test_a_date_assigned_to_the_member_is_acknowledged_in_place(delivery):
    date = delivery.date
    answer = date_post(delivery, "acknowledge", htmx=True)
    text = said(answer)
    assert text.strip().startswith(f'<tr id="date-{date.pk}"')
    assert "Acknowledged: file it." in text and "Acknowledged Wed 1 Mar 2028" in text
    record = Record.objects.get(kind="clock.acknowledged", subject=delivery.subject.pk)
    assert record.data["by"] == f"user {delivery.manager.user.pk} (staff)"


def test_a_date_is_marked_done_by_a_plain_post(delivery):
    answer = date_post(delivery, "done")
    assert answer.status_code == 302 and answer["Location"] == "/delivery/"
    assert "Marked done: file it." in told(delivery)
    assert Occurrence.objects.get(pk=delivery.date.pk).status == Occurrence.Status.SATISFIED


def test_a_choice_commits_its_step_and_a_wrong_one_is_said_in_words(delivery):
    text = said(date_post(delivery, "choose", htmx=True, choice="amend"))
    assert "Nothing chosen: 'amend' is not one of this clock's choices: file." in text
    text = said(date_post(delivery, "choose", htmx=True, choice="file"))
    assert "'file' was taken for file it." in text and "left this list" in text
    assert Occurrence.objects.get(pk=delivery.date.pk).status == Occurrence.Status.SATISFIED
    assert "Not marked done: the date is satisfied" in said(date_post(delivery, "done",
                                                                      htmx=True))


def test_a_date_no_longer_assigned_to_the_member_is_refused_in_words(delivery):
    clocks.assign(delivery.date, delivery.owner, by="owner")
    text = said(date_post(delivery, "done", htmx=True))
    assert "Nothing was done: file it is no longer assigned to you." in text
    assert Occurrence.objects.get(pk=delivery.date.pk).status == Occurrence.Status.OPEN


def test_a_viewer_hears_403_on_every_control(delivery):
    clocks.assign(delivery.date, delivery.viewer, by="owner")
    for verb in ("take", "extend", "release", "done"):
        assert task_post(delivery, verb, who="member").status_code == 403
        assert task_post(delivery, verb, who="member", htmx=True).status_code == 403
    for verb in ("acknowledge", "done", "choose"):
        assert date_post(delivery, verb, who="member", choice="file").status_code == 403
    assert Task.objects.get(pk=delivery.task.pk).state == Task.State.OPEN
    assert not Record.objects.filter(kind__in=["clock.acknowledged", "task.taken"]).exists()


def test_another_brands_task_or_date_answers_as_a_missing_one(delivery):
    theirs_date = Occurrence.objects.get(clock__job=delivery.stranger.job)
    for verb in ("take", "extend", "release", "done"):
        theirs = task_post(delivery, verb, task=delivery.stranger)
        missing = delivery.client("staff").post(f"/delivery/tasks/tsk_Missing0000000000/{verb}")
        assert theirs.status_code == missing.status_code == 404
        assert unmasked(theirs.content.decode()) == unmasked(missing.content.decode())
    for verb in ("acknowledge", "done", "choose"):
        theirs = date_post(delivery, verb, date=theirs_date)
        missing = delivery.client("staff").post(f"/delivery/dates/999999999/{verb}")
        assert theirs.status_code == missing.status_code == 404
        assert unmasked(theirs.content.decode()) == unmasked(missing.content.decode())
    assert Task.objects.get(pk=delivery.stranger.pk).state == Task.State.OPEN
    # A viewer, too, hears 404 before 403 for what is not their brand's.
    assert task_post(delivery, "take", task=delivery.stranger, who="member").status_code == 404


def test_a_control_answers_only_a_post(delivery):
    assert delivery.client("staff").get(f"/delivery/tasks/{delivery.task.pk}/take"
                                        ).status_code == 405
    assert delivery.client("staff").get(f"/delivery/dates/{delivery.date.pk}/done"
                                        ).status_code == 405
    assert delivery.client("staff").get("/delivery/withdraw").status_code == 405


def test_a_post_without_its_csrf_token_is_refused(delivery, actors):
    client = Client(enforce_csrf_checks=True)
    client.force_login(actors["staff"])
    path = f"/delivery/tasks/{delivery.task.pk}/take"
    assert client.post(path).status_code == 403
    assert Task.objects.get(pk=delivery.task.pk).state == Task.State.OPEN
    token = client.get("/delivery/").cookies["csrftoken"].value
    assert client.post(path, {"csrfmiddlewaretoken": token}).status_code == 302
    assert client.post(f"/delivery/tasks/{delivery.task.pk}/release",
                       HTTP_X_CSRFTOKEN=token, **HTMX).status_code == 200


def test_the_hold_ends_and_the_row_shows_it_open_again(delivery):
    from timekeeping.tick import test_clocks

    task_post(delivery, "take")
    test_clocks.advance(delivery.spring, to=delivery.spring.frozen_time + timedelta(days=2))
    text = told(delivery)
    assert "open in the pool" in text and f"/delivery/tasks/{delivery.task.pk}/take" in text


def test_mark_done_asks_first_and_changes_nothing_until_yes(delivery):
    asked = date_post(delivery, "done", confirmed="")
    assert asked.status_code == 200 and "Yes, mark it done" in said(asked)
    assert "you can undo it for 15 minutes" in said(asked)
    delivery.date.refresh_from_db()
    assert delivery.date.status == Occurrence.Status.OPEN
    row = said(delivery.client("staff").get("/delivery/"))
    assert 'hx-confirm="Mark file it done?' in row and 'hx-vals=\'{"confirmed": "yes"}\'' in row
