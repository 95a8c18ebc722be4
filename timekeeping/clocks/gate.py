"""The gate: the one function that commits a step of a job, or refuses it (DESIGN decision 5).

People, the API, rungs, asks, tasks and signals all propose through it. It is the floor the
kinds stand on: it imports none of them. Each kind registers what it checks and what a commit
does to it, and the gate runs them in a fixed order:

    checks, in order (the first to refuse wins):
        10 the job is open (`job_closed`, the gate's own)
        20 the step is one of the Service's steps (`step_unknown`, the gate's own)
        30 its items are the job's (`item_unknown`, the clocks)
        40 a hard date it bars has passed (`date_passed`, the clocks, SPEC S13)
        50 the grant it needs has ended (`needs_grant`, the grant, SPEC S9)
    on commit, in order:
        10 the occurrences the step satisfies (`satisfied_by`), 20 the dates it moves (`moves`)
        30 the job's own work: steps done, asks answered, tasks done, deadlines met, the steps
           that come after opened, a quiet job's signal re-armed

then the steps it proposes next (`then`). A commit writes a `step.committed` record; a refusal
a `step.refused` record with its code. The job's row is locked while a step is judged, so two
steps of one job are judged one after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from timekeeping.models import Job
from timekeeping.specs.current import services_of
from timekeeping.timers import records
from timekeeping.timers.firing import now_for


@dataclass
class Outcome:
    committed: bool
    step: str
    items: list[str]
    code: str = ""
    reason: str = ""
    satisfied: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    then: list[Outcome] = field(default_factory=list)
    record: str = ""  # the record of the person's choice that proposed it (`clocks.choose`)

    def describe(self) -> str:
        if not self.committed:
            return f"{self.step} refused {self.code}: {self.reason}"
        text = f"{self.step} committed" + (f" · {', '.join(self.items)}" if self.items else "")
        for follow in self.then:
            text += f" → {follow.describe()}"
        if self.moved:
            text += f" · moved {'; '.join(self.moved)}"
        if self.satisfied:
            text += f" · satisfied {', '.join(self.satisfied)}"
        return text


# A check answers (code, reason) to refuse, or None; an effect changes what the commit touches
# and may add to the outcome. Both run inside the gate's transaction, the job's row locked.
Check = Callable[[Job, str, list[str], datetime], "tuple[str, str] | None"]
Effect = Callable[[Job, str, list[str], datetime, Outcome], None]
_checks: dict[str, tuple[int, Check]] = {}
_effects: dict[str, tuple[int, Effect]] = {}


def check(order: int):
    """Register a check (`@gate.check(40)`); a kind's module registers its own on import."""

    def decorator(function: Check) -> Check:
        _checks[f"{function.__module__}.{function.__qualname__}"] = (order, function)
        return function

    return decorator


def effect(order: int):
    """Register what a commit does (`@gate.effect(30)`)."""

    def decorator(function: Effect) -> Effect:
        _effects[f"{function.__module__}.{function.__qualname__}"] = (order, function)
        return function

    return decorator


def _in_order(registered: dict) -> list:
    return [function for _, function in sorted(registered.values(), key=lambda each: each[0])]


def propose(*, job: Job, step: str, items: list[str] | None = None, by: str = "",
            savepoint: bool = True, locked: bool = False) -> Outcome:
    """Judge the step and commit it, in a transaction (a savepoint inside another) that an
    error undoes whole. `savepoint=False` inside a firing batch, whose error undoes the batch
    and redoes it a timer at a time, each in a savepoint of its own (a rung's step: two
    statements fewer, issue 32). `locked`: `job` is its row as `lock_jobs` read it, in the
    transaction this one is part of, and nothing has changed it since (a batch's read,
    `Firing.take_read`); else the gate locks and reads it itself."""
    with transaction.atomic(savepoint=savepoint):
        return _propose(job if locked else _locked(job.pk), step, list(items or []), by)


def lock_jobs(pks) -> list[Job]:
    """The jobs, each locked as the gate locks a job to judge its step, in one statement (in
    the order of their ids, as every batch locks them), with what the gate reads with a job."""
    return list(_job_rows().filter(pk__in=list(pks)).order_by("pk"))


def _job_rows():
    return Job.objects.select_for_update(of=("self",)).select_related("subject", "brand",
                                                                      "test_clock")


def _locked(pk: str) -> Job:
    return _job_rows().get(pk=pk)


def _propose(job: Job, step: str, items: list[str], by: str) -> Outcome:
    """Judge the step of `job`, locked and read in the transaction `propose` opened, and
    commit it; then the steps it proposes next, of the same job as its effects left it (they
    change its row through it: `steps_done`), still locked (issue 32: one statement each)."""
    now = now_for(job.brand, job.test_clock)
    refusal = _refusal(job, step, items, now)
    if refusal is not None:
        code, reason = refusal
        _write(job, "step.refused", now, {"step": step, "items": items, "by": by,
                                           "code": code, "reason": reason})
        return Outcome(False, step, items, code=code, reason=reason)
    _write(job, "step.committed", now, {"step": step, "items": items, "by": by})
    outcome = Outcome(True, step, items)
    for function in _in_order(_effects):
        function(job, step, items, now, outcome)
    for follow in services_of(job.bundle)[job.service].steps[step].then:
        # In the transaction of the step they follow, whose savepoint undoes them with it on
        # an error: no savepoint of their own (two statements each, issue 32).
        outcome.then.append(_propose(job, follow, list(items), f"then {step}"))
    return outcome


def judge(job: Job, step: str, items: list[str], now: datetime) -> tuple[str, str] | None:
    """What the gate would answer a step now, without committing or recording anything."""
    return _refusal(job, step, items, now)


def _refusal(job: Job, step: str, items: list[str], now) -> tuple[str, str] | None:
    if job.state != Job.State.OPEN:
        return "job_closed", f"job {job.pk} is {job.state}"
    if step not in services_of(job.bundle)[job.service].steps:
        return "step_unknown", f"'{step}' is not a step of {job.service}"
    for function in _in_order(_checks):
        refusal = function(job, step, items, now)
        if refusal is not None:
            return refusal
    return None


def _write(job: Job, kind: str, now, data: dict) -> None:
    records.write(kind, brand=job.brand, instant=now, test_clock=job.test_clock,
                  subject=job.subject_id, job=job.pk, data=data)
