"""A quiet job (S11, `signals.<s>.silent`): nothing happened on the job for that long, so the
signal is raised and its `goto` step is proposed through the gate. Place 5 of the tick.

What counts as something happening is a step committed on the job: each commit re-arms every
signal of the job for `silent` from then.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping.clocks import gate
from timekeeping.jobs import common
from timekeeping.models import Job

KIND = "signal"


def _key(job: Job, name: str) -> str:
    return f"{job.pk}:signal:{name}"


def arm_all(job: Job, now: datetime) -> None:
    signals = common.work_of(job).signals.values()
    zone = common.zone_of(job) if signals else ""  # a job with no signals reads no calendar
    for spec in signals:
        common.rearm(job, KIND, _key(job, spec.name), spec.silent.after(now, zone),
                     {"signal": spec.name, "silent": spec.silent.text, "goto": spec.goto},
                     why="something happened on the job")


def close(job: Job, why: str) -> None:
    common.cancel(job, *(_key(job, name) for name in common.work_of(job).signals), why=why)


def fire(job_id: str, name: str, instant: datetime) -> str:
    with transaction.atomic():
        job = Job.objects.select_related("brand__owner", "subject").get(pk=job_id)
        spec = common.work_of(job).signals.get(name)
        if job.state != Job.State.OPEN or spec is None:
            return f"{name} · job {job.state}: nothing to do"
        common.record(job, "signal.raised", {"signal": name, "silent": spec.silent.text,
                                             "goto": spec.goto})
        outcome = gate.propose(job=job, step=spec.goto, by=f"signal {name}")
        return f"{name} · silent {spec.silent.text} → {outcome.describe()}"
