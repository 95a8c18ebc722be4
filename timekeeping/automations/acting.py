"""What a rule does, in the transaction of the change it heard (SPEC A7, issue 30): each action
answers with what it did, in words, for the record (`automation.ran`) and the Why page.

    email    through the app's emails: a row's rule to the address in a column of the row
             (`moves.effects.send`, as a table's own emails); a date's or an ask's to the
             brand's owner or the customer. Queued in the outbox; a test clock's only to
             the brand's owner, marked a practice run.
    webhook  the heard record, as the catalogue's event, to one named endpoint through the
             outbox (the key `publish` uses, so an endpoint that hears the type anyway is sent
             it once).
    move     a declared move of the rows linked to the row that changed: locked NOWAIT, judged
             as the table's move (what it waits for, its undo), audited, its own effects
             following; a linked row that lists no such move from its state is left as it is.
    task     the task of a `deliver` step of the same job, unless the job has it already.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from timekeeping.automations.check import endpoints_named
from timekeeping.jobs import common, tasks
from timekeeping.models import Ask, Brand, Connection, Job, Task, TestClock
from timekeeping.moves import effects
from timekeeping.moves.rows import (
    MoveRefused,
    Venue,
    as_dict,
    audit,
    is_sample,
    judge_requires,
    linked,
)
from timekeeping.specs.automations import Rule
from timekeeping.timers import outbox
from timekeeping.timers.records import Entry
from timekeeping.webhooks import publish


@dataclass(frozen=True)
class Heard:
    """The change a rule heard: the record, on its brand clock, at its instant."""

    brand: Brand
    test_clock: TestClock | None
    instant: datetime
    entry: Entry

    @property
    def key(self) -> str:
        return f"auto:{self.entry.id}"


def act(rule: Rule, heard: Heard) -> str:
    """Do what the rule says; what was done, in words ("emailed the guest")."""
    return {"email": _email, "webhook": _webhook, "move": _move, "task": _task}[rule.action](
        rule, heard)


# -- email ------------------------------------------------------------------------------------

def _email(rule: Rule, heard: Heard) -> str:
    spec, who = rule.spec, rule.spec.get("who", "")
    key = f"{heard.key}:{rule.number}"
    if rule.when.trigger == "row":
        venue, row = _row(heard)
        column = spec["to"]["column"]
        if row is not None and is_sample(venue, heard.entry.data["table"], row.pk):
            return "emailed nobody: a sample row sends no email"
        if row is None or not effects.send(venue, row, spec, key=key):
            return f"emailed nobody: the row has no address in {column}"
        return f"emailed {who or 'the address in ' + column}"
    job = Job.objects.select_related("brand__owner", "subject").get(brand=heard.brand,
                                                                    pk=heard.entry.job)
    address = (common.owner_email(job) if spec["to"] == "owner"
               else _customer_email(job, heard.entry))
    if not address:
        return f"emailed nobody: {_whom(spec['to'])} has no address"
    fields = _Fields(_job_fields(job, rule, heard))
    outbox.tell(brand=job.brand, test_clock_id=job.test_clock_id, to=[address],
                subject=spec["subject"].format_map(fields),
                body=spec.get("body", "").format_map(fields), key=key)
    return f"emailed {who or _whom(spec['to'])}"


def _whom(to: str) -> str:
    return "the brand's owner" if to == "owner" else "the customer"


def _customer_email(job: Job, entry: Entry) -> str:
    ask = Ask.objects.filter(pk=entry.data.get("ask"), brand_id=job.brand_id).first() \
        if entry.data.get("ask") else None
    return (ask.email if ask and ask.email else "") or job.subject.contact_email


def _job_fields(job: Job, rule: Rule, heard: Heard) -> dict:
    """What a date's or an ask's email may name: {subject}, {job} (the job as emails name it),
    {name} (the clock or the ask's step), and {due} (the missed date) or {until}."""
    data = heard.entry.data
    fields = {"subject": job.subject.name, "job": common.named(job), "name": rule.when.name}
    if rule.when.trigger == "missed":
        fields["due"] = str(data.get("due", ""))
    else:
        until = Ask.objects.filter(brand_id=job.brand_id, pk=data.get("ask")).values_list(
            "expires", flat=True).first()
        fields["until"] = common.said_at(job, until) if until else ""
    return fields


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# -- webhook ----------------------------------------------------------------------------------

def _webhook(rule: Rule, heard: Heard) -> str:
    name = rule.spec["endpoint"]
    found = endpoints_named(heard.brand, name)
    if len(found) != 1:
        return f"sent nothing: the brand has no one endpoint named {name!r}"
    endpoint = found[0]
    called = endpoint.description or urlsplit(endpoint.url).hostname or "its endpoint"
    if not endpoint.enabled:
        return f"sent nothing: the endpoint {called} is turned off"
    if heard.test_clock is not None and not endpoint.test_clocks:
        return f"sent nothing: the endpoint {called} hears no test clock"
    outbox.enqueue_event(brand=heard.brand, endpoint_id=endpoint.pk, event=heard.entry.id,
                         key=publish.key(endpoint.pk, heard.entry.id))
    return f"sent the event to {called}"


# -- move -------------------------------------------------------------------------------------

def _move(rule: Rule, heard: Heard) -> str:
    venue, row = _row(heard)
    spec, table = rule.spec, heard.entry.data["table"]
    if row is None:
        return "moved nothing: the row is gone"
    target = spec.get("table") or venue.tables[table].columns[spec["via"]].references
    model = venue.model(target)
    rows = model.objects.using(venue.link.database).select_for_update(nowait=True)
    if "via" in spec:
        rows = rows.filter(pk=getattr(row, spec["via"]))
    else:
        rows = rows.filter(**{spec["link"]: row.pk})
    moved, stuck, real = 0, 0, 0
    # A sample row's rules move only sample rows (A14): removing the samples undoes them all.
    sample = is_sample(venue, table, row.pk)
    for linked_row in rows.order_by("pk"):
        if sample and not is_sample(venue, target, linked_row.pk):
            real += 1
        elif _move_one(venue, target, linked_row, spec["to"], rule, heard.instant):
            moved += 1
        else:
            stuck += 1
    said = f"moved {_rows(moved)} of {target} to {spec['to']}"
    if stuck:
        said += (f"; left {_rows(stuck)} as {'it was' if stuck == 1 else 'they were'}: no "
                 "such move from its state")
    if real:
        said += f"; left alone {_rows(real)} that {'is' if real == 1 else 'are'} no sample"
    return said


def _rows(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def _move_one(venue: Venue, table: str, row, to: str, rule: Rule, at: datetime) -> bool:
    """One linked row moved as its table's declared move; False (left as it is) when its
    state lists no move to `to`, only an undo, or what the move waits for refuses it."""
    states = venue.tables[table].states
    listed = states.moves.get(getattr(row, states.column), {}).get(to)
    if listed is None or listed.undo:
        return False
    try:
        judge_requires(venue, row, listed, at)
    except MoveRefused:
        return False
    who = f"automation rule {rule.number}"
    before = as_dict(row)
    setattr(row, states.column, to)
    effects.apply(venue, table, row, before, at)
    row.save(using=venue.link.database)
    audit(venue, table, row, kind="automation", who=who, at=at, before=before)
    linked(venue, table, row, before, who=who, at=at)
    return True


def _row(heard: Heard):
    """The venue of the heard row's world and the row as it is now (None when gone)."""
    link = Connection.objects.select_related("brand").filter(brand=heard.brand).first()
    test_clock_id = heard.test_clock.pk if heard.test_clock is not None else None
    venue = Venue.of(link, test_clock_id=test_clock_id)
    table = heard.entry.data["table"]
    if table not in venue.tables:
        return venue, None
    row = venue.model(table).objects.using(link.database).filter(
        pk=heard.entry.data["row"]).first()
    return venue, row


# -- task -------------------------------------------------------------------------------------

def _task(rule: Rule, heard: Heard) -> str:
    step = rule.spec["step"]
    job = Job.objects.select_related("brand", "subject", "test_clock").get(
        brand=heard.brand, pk=heard.entry.job)
    spec = common.work_of(job).deliver.get(step)
    if job.state != Job.State.OPEN:
        return f"opened no task: the job is {job.state}"
    if spec is None or not spec.task:
        return f"opened no task: the job's version of the service has no task {step}"
    if Task.objects.filter(brand=heard.brand, job=job, step=step).exists():
        return f"opened no task: the task to {spec.title} is already there"
    tasks.open_task(job, spec, heard.instant)
    return f"opened the task to {spec.title}"
