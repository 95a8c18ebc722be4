"""The gate: the one function that commits a step of a job, or refuses it (DESIGN decision 5).

People, the API and rungs all propose through it. In order it checks:

1. the job is open (`job_closed`);
2. the step is one of the Service's steps (`step_unknown`), and its items are the job's
   (`item_unknown`);
3. hard dates: a hard clock of the job, or one living on its subject, whose date has passed
   refuses the steps it `bars` (`date_passed`, SPEC S13);

then commits: a `step.committed` record, the occurrences the step satisfies (`satisfied_by`),
the dates it moves (`moves`), and the steps it proposes next (`then`). A refusal writes a
`step.refused` record with its code. The job's row is locked while a step is judged, so two
steps of one job are judged one after the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from timekeeping import clocks, records
from timekeeping.manifests import services_of
from timekeeping.models import Job


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


def propose(*, job: Job, step: str, items: list[str] | None = None, by: str = "") -> Outcome:
    items = list(items or [])
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).select_related("subject", "brand",
                                                             "test_clock").get(pk=job.pk)
        now = clocks.now_for(job.brand, job.test_clock)
        refusal = _refusal(job, step, items, now)
        if refusal is not None:
            code, reason = refusal
            _write(job, "step.refused", now, {"step": step, "items": items, "by": by,
                                               "code": code, "reason": reason})
            return Outcome(False, step, items, code=code, reason=reason)
        _write(job, "step.committed", now, {"step": step, "items": items, "by": by})
        outcome = Outcome(True, step, items)
        outcome.satisfied = clocks.satisfy(job, step, items, now)
        outcome.moved = clocks.move(job, step, items)
        for follow in services_of(job.bundle)[job.service].steps[step].then:
            outcome.then.append(propose(job=job, step=follow, items=items, by=f"then {step}"))
        return outcome


def _refusal(job: Job, step: str, items: list[str], now) -> tuple[str, str] | None:
    if job.state != Job.State.OPEN:
        return "job_closed", f"job {job.pk} is {job.state}"
    service = services_of(job.bundle)[job.service]
    if step not in service.steps:
        return "step_unknown", f"'{step}' is not a step of {job.service}"
    known = {item for spec in service.clocks.values() for item in clocks.items_of(job, spec)}
    unknown = [item for item in items if item not in known]
    if unknown:
        return "item_unknown", f"{', '.join(unknown)} is not an item of job {job.pk}"
    passed = clocks.date_passed(job, step, items, now)
    if passed is not None:
        return "date_passed", (f"the hard date {passed.clock.name}"
                               f"{' ' + passed.item if passed.item else ''} of {passed.due} "
                               f"has passed, and it bars '{step}'")
    return None


def _write(job: Job, kind: str, now, data: dict) -> None:
    records.write(kind, brand=job.brand, instant=now, test_clock=job.test_clock,
                  subject=job.subject_id, job=job.pk, data=data)
