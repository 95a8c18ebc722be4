"""The grant kind (place 3, with the asks): a grant's term ends (S9); see
timekeeping.jobs.grants. The grant's end is fired here: it asks the party again, so
it reaches the asks, which reach the grants when answered."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping.jobs import asks, common
from timekeeping.models import Ask, Grant, Job, Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return "the grant's term ends"


def fire(timer: Timer, firing: Firing) -> str:
    return end(timer.payload["grant"], firing.instant)


def end(grant_id: str, instant: datetime) -> str:
    with transaction.atomic():
        grant = Grant.objects.select_for_update(of=("self",)).select_related(
            "job__brand__owner", "job__subject").get(pk=grant_id)
        job = grant.job
        if grant.state != Grant.State.ACTIVE or instant < grant.ends or \
                job.state != Job.State.OPEN:
            return f"grant · {grant.state}: nothing to do"
        grant.state = Grant.State.ENDED
        grant.save(update_fields=["state"])
        common.record(job, "grant.ended", {"grant": grant.pk, "ended": grant.ends})
        if not Ask.objects.filter(job=job, purpose=Ask.Purpose.GRANT,
                                  state=Ask.State.OPEN).exists():
            opened = asks.open_ask(job, now=instant, purpose=Ask.Purpose.GRANT,
                                   term=common.work_of(job).grant_ask,
                                   title="give the grant again")
            return f"grant · ended: the party is asked again ({opened.ask.pk})"
        return "grant · ended: the party was already asked again"
