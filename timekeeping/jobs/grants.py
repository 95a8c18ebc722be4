"""A grant's term (S9, `scope.for`): what the party allows the brand to do on a job, for a term
from when it was given. Place 3 of the tick.

Once it ends, the gate refuses a step that needs it (`needs_grant`), a `run` rung whose step
needs it is held, and the party is asked again by a link. Given again, it runs for another
term, and the held rungs are released: owed in the past, they fire in place at the next tick.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping.jobs import common
from timekeeping.models import Grant, Job, Timer

KIND = "grant"


def start(job: Job, now: datetime) -> Grant | None:
    work = common.work_of(job)
    if work.grant is None:
        return None
    ends = work.grant.after(now, common.zone_of(job))
    grant = Grant.objects.create(brand=job.brand, test_clock=job.test_clock, job=job,
                                 term=ends - now, ask_term=work.grant_ask.after(
                                     now, common.zone_of(job)) - now,
                                 starts=now, ends=ends)
    _arm(grant)
    common.record(job, "grant.given", {"grant": grant.pk, "until": ends})
    return grant


def _arm(grant: Grant) -> None:
    common.rearm(grant.job, KIND, f"{grant.pk}:end", grant.ends, {"grant": grant.pk},
                 why="given again")


def holds_by(grant: Grant) -> str:
    return f"grant {grant.pk} ended"


@transaction.atomic
def renew(job: Job, now: datetime, *, by: str) -> Grant:
    """The party gave the grant again: another term from now, and the rungs it held run."""
    grant = Grant.objects.select_for_update(of=("self",)).get(job=job)
    work = common.work_of(job)
    grant.starts, grant.state = now, Grant.State.ACTIVE
    grant.ends = work.grant.after(now, common.zone_of(job)) if work.grant else now + grant.term
    grant.save(update_fields=["starts", "ends", "state"])
    _arm(grant)
    released = Timer.objects.filter(state=Timer.State.HELD, brand=job.brand,
                                    ended_by__endswith=holds_by(grant)).update(
        state=Timer.State.ARMED, ended_by="")
    common.record(job, "grant.given", {"grant": grant.pk, "until": grant.ends, "by": by,
                                       "released": released})
    return grant


def active(job: Job, now: datetime) -> bool:
    """Whether the job's grant holds at `now` (expiry is data: compared on use, T1)."""
    grant = Grant.objects.filter(job=job).first()
    return grant is None or (grant.state == Grant.State.ACTIVE and now < grant.ends)


def check_needs_grant(job: Job, step: str, items: list[str], now: datetime):
    if not common.work_of(job).needs_grant(step) or active(job, now):
        return None
    grant = Grant.objects.get(job=job)
    return "needs_grant", (f"'{step}' needs the grant {grant.pk}, which ended at "
                           f"{common.at(grant.ends)}; the party has been asked to give it again")


def held_rung(job: Job, step: str, now: datetime) -> str | None:
    """Why a run rung for `step` must wait, or None when it may run."""
    if not common.work_of(job).needs_grant(step) or active(job, now):
        return None
    return holds_by(Grant.objects.get(job=job))
