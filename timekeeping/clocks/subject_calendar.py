"""A subject's calendar (SPEC S22): every date kept and ahead, for the API, the iCalendar feed
and the command line. Dates print in the subject's zone; each line says what it is, its kind,
who answers for it, and its status (open; kept on a date; extended from; rolled from; lapsed).
Occurrences of one clock with the same date and status share a line, their items joined."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from calendars import ical
from calendars.moments import day_in_zone
from timekeeping.clocks import exposure
from timekeeping.clocks.basis import calendar_for, refuse_erased
from timekeeping.clocks.following import follows
from timekeeping.clocks.opening import measured_from
from timekeeping.clocks.rungs import spec_of
from timekeeping.clocks.telling import MEMBER
from timekeeping.models import (
    Ask,
    Deadline,
    Job,
    Member,
    Occurrence,
    Record,
    Subject,
    Subscription,
    Task,
    Timer,
)
from timekeeping.models.service import new_feed_token


@dataclass(frozen=True)
class Line:
    date: date
    what: str
    kind: str
    answers_for: str
    status: str
    uid: str

    def as_dict(self) -> dict:
        return {"date": self.date.isoformat(), "what": self.what, "kind": self.kind,
                "answers_for": self.answers_for, "status": self.status, "uid": self.uid}


def lines(subject: Subject, *, start: date | None = None, end: date | None = None,
          grouped: bool = True) -> list[Line]:
    """The subject's dates, on its own clock (its test clock's world, or the real one).
    `grouped` joins the occurrences that share a date, a title and how they stand (open, kept,
    lapsed) into one line: the items of one clock, or the same date kept by two jobs."""
    found = Occurrence.objects.filter(brand_id=subject.brand_id,
                                      clock__subject=subject).select_related("clock__job")
    if start:
        found = found.filter(due__gte=start)
    if end:
        found = found.filter(due__lte=end)
    groups: dict[tuple, list[Occurrence]] = {}
    for occurrence in found.order_by("clock__opened", "item", "seq"):
        row = occurrence.clock
        key = (occurrence.due, row.title, row.hard, row.owner, occurrence.status) if grouped \
            else (occurrence.due, occurrence.label)
        groups.setdefault(key, []).append(occurrence)
    result = []
    for group in groups.values():
        row = group[0].clock
        items = list(dict.fromkeys(occurrence.item for occurrence in group if occurrence.item))
        what = row.title + (f", {_joined(items)}" if items else "")
        uid = "+".join(sorted(occurrence.label for occurrence in group)) + "@keeping-time"
        result.append(Line(group[0].due, what, "hard" if row.hard else "clock",
                           _answers_for(subject, row.owner), _status(subject, group), uid))
    result.extend(line for line in [*_work_lines(subject), *_plan_lines(subject),
                                    *_window_lines(subject)]
                  if (not start or line.date >= start) and (not end or line.date <= end))
    return sorted(result, key=lambda line: (line.date, line.what))


def _plan_lines(subject: Subject) -> list[Line]:
    """The subject's plans (S18, S19): each renewal (`cycle`) and each mint (`schedule`), those
    done from the record and the next ones from their armed timers, in the subject's zone."""
    zone = zone_of_subject(subject)
    buyer = subject.owner_name or "the buyer"
    found = []
    subscriptions = {each.pk: each for each in Subscription.objects.filter(
        brand_id=subject.brand_id, subject=subject)}
    if not subscriptions:
        return found
    for record in Record.objects.filter(brand_id=subject.brand_id, subject=subject.pk,
                                        kind__in=["cycle.renewed", "schedule.minted"]):
        data = record.data
        owed = data.get("owed")
        day = day_in_zone(datetime.fromisoformat(owed) if isinstance(owed, str)
                          else record.instant, zone)  # the day it was due, if it ran late
        owner = subscriptions.get(data.get("subscription"))
        if owner is None:
            continue
        if record.kind == "cycle.renewed":
            found.append(Line(day, f"the {owner.service} renews", "cycle", buyer,
                              f"renewed, cycle {data.get('cycle')}", f"{record.pk}@keeping-time"))
        else:
            found.append(Line(day, f"the {data.get('period')} {data.get('service')} opens",
                              "schedule", "the brand", "opened",
                              f"{record.pk}@keeping-time"))
    for timer in Timer.objects.filter(brand_id=subject.brand_id, owner_id__in=list(
            subscriptions), state=Timer.State.ARMED, kind__in=["cycle", "schedule"]):
        owner, day = subscriptions[timer.owner_id], day_in_zone(timer.owed, zone)
        if timer.kind == "cycle":
            ending = owner.ends_after is not None and timer.payload["cycle"] > owner.ends_after
            found.append(Line(day, f"the {owner.service} renews", "cycle", buyer,
                              "ends: cancelled at the cycle's end" if ending else
                              f"ahead · cycle {timer.payload['cycle']}",
                              f"{timer.pk}@keeping-time"))
        else:
            found.append(Line(day, f"the {timer.payload['period']} {timer.payload['order']} "
                                   "opens", "schedule", "the brand", "ahead",
                              f"{timer.pk}@keeping-time"))
    return found


WINDOW_STATUS = {Timer.State.ARMED: "open · a send-back reopens the work until it closes",
                 Timer.State.FIRED: "closed: accepted", Timer.State.CANCELLED: "sent back"}
# An outcome's timers (S21): its wait, each invoice's window, its tail; a cancelled one says
# why by what ended it ("won", "lost: …", "reversed: …").
OUTCOME_LINES = {
    "due": ("the outcome of {job} is due", {
        Timer.State.ARMED: "waiting · no matching payment by then and it lapses",
        Timer.State.FIRED: "lapsed: no payment matched it"}),
    "collected": ("the window of invoice {invoice} of {job} closes", {
        Timer.State.ARMED: "open · a refund or chargeback reverses the share until it closes",
        Timer.State.FIRED: "closed: final"}),
    "tail": ("the tail of the outcome of {job} ends", {
        Timer.State.ARMED: "watching · a matching payment until then still wins it",
        Timer.State.FIRED: "ended"}),
    "repair": ("the repair window of {step} of {job} closes", {
        Timer.State.ARMED: "open · resubmitted by then, it keeps the first filing time",
        Timer.State.FIRED: "closed: the first filing time is lost"}),
}


def _window_lines(subject: Subject) -> list[Line]:
    """Each window of the subject's jobs (S21, `window`), on the day it closes in the subject's
    zone: an acceptance window (open, accepted or sent back), an outcome's wait, each
    invoice's window and its tail, a repair window. Two queries."""
    jobs = {pk: f"{service} {period}".strip() for pk, service, period in Job.objects.filter(
        brand_id=subject.brand_id, subject=subject).values_list("pk", "service", "period")}
    if not jobs:
        return []
    zone, buyer = zone_of_subject(subject), subject.owner_name or "the buyer"
    found = []
    for timer in Timer.objects.filter(brand_id=subject.brand_id, kind="window",
                                      owner_type="job", owner_id__in=list(jobs),
                                      state__in=list(WINDOW_STATUS)):
        what = timer.payload.get("window")
        if what in OUTCOME_LINES:
            text, statuses = OUTCOME_LINES[what]
            said = (text.format(job=jobs[timer.owner_id], invoice=timer.payload.get("invoice"),
                                step=timer.payload.get("step")),
                    statuses.get(timer.state) or timer.ended_by.split(":")[0])
        else:
            said = (f"the acceptance window of {jobs[timer.owner_id]} closes",
                    WINDOW_STATUS[timer.state])
        found.append(Line(day_in_zone(timer.owed, zone), said[0], "window", buyer, said[1],
                          f"{timer.pk}@keeping-time"))
    return found


def _work_lines(subject: Subject) -> list[Line]:
    """A job's own time on the subject's calendar (S6-S10): each party's link expiry (`ask`),
    each deadline (`deadline`) and each task's due date (`task`), in the subject's zone."""
    zone = zone_of_subject(subject)

    def day(instant):
        return day_in_zone(instant, zone) if instant else ""

    found = []
    mine = {"brand_id": subject.brand_id}
    for ask in Ask.objects.filter(**mine, subject=subject):
        status = {"open": "open", "answered": f"answered {day(ask.answered)}",
                  "lapsed": "lapsed: the job lapsed", "closed": "closed with its job"}[ask.state]
        if ask.state == "open" and ask.expiries:
            status += " · opened once more"
        found.append(Line(day(ask.expires), f"the link for {ask.title} expires", "ask",
                          ask.party, status.strip(), f"{ask.pk}@keeping-time"))
    # A deadline or task closed with its job was neither met nor missed: no date of the
    # subject's any more, so not on its calendar.
    for deadline in Deadline.objects.filter(**mine, job__subject=subject).exclude(
            state=Deadline.State.CLOSED).select_related("job"):
        what = (f"{deadline.job.service} {deadline.job.period}".strip() if not deadline.step
                else f"step {deadline.step} of {deadline.job.service}") + " is due"
        status = deadline.get_state_display()
        if deadline.state in ("open", "at_risk") and deadline.running_since is None:
            status += " · held while a party is asked"
        if deadline.state == "met":
            status = f"met {day(deadline.settled)}"
        found.append(Line(day(deadline.ends), f"{what} (within {deadline.rule})", "deadline",
                          "the brand", status, f"{deadline.pk}@keeping-time"))
    for task in Task.objects.filter(**mine, subject=subject).exclude(due=None).exclude(
            state=Task.State.CLOSED).select_related(
            "holder__user"):
        holder = task.holder.user.get_username() if task.holder else "the pool"
        status = {"open": "open in the pool", "held": f"held until {day(task.held_until)}",
                  "done": f"done {day(task.done)}", "closed": "closed with its job"}[task.state]
        found.append(Line(day(task.due), task.title, "task", holder, status,
                          f"{task.pk}@keeping-time"))
    return found


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _answers_for(subject: Subject, owner: str) -> str:
    if owner.startswith(MEMBER):  # a member's own clock: by their name, or the brand's
        member = Member.objects.select_related("user").filter(
            pk=owner, brand_id=subject.brand_id, user__is_active=True).first()
        return member.name if member is not None else "the brand"
    return {"brand": "the brand", "buyer": subject.owner_name or "the buyer",
            "of_record": "of record"}.get(owner, owner)


def _status(subject: Subject, group: list[Occurrence]) -> str:
    """How the dates of one line stand: open, kept (on a day; an item kept on another day is
    named), lapsed or closed; then how they came to their date (extended, postponed, measured
    from another's keeping, rolled), what a miss costs, what a passed hard date bars, and
    the sum the date is about."""
    first, zone = group[0], zone_of_subject(subject)
    if first.status == Occurrence.Status.SATISFIED:
        days = [(occurrence.item, day_in_zone(occurrence.settled, zone)) for occurrence in group]
        common = Counter(day for _, day in days).most_common(1)[0][0]
        head = ", ".join([f"kept {common}", *(f"{item} {day}" for item, day in days
                                               if day != common)])
    else:
        head = {"open": "open", "lapsed": "lapsed", "closed": "closed with its job"}[
            first.status]
    notes = []
    measured = [measured_from(o.moved_by) for o in group if measured_from(o.moved_by)]
    followed = [o for o in group if follows(o.moved_by)]
    with_it = f"moved with {follows(followed[0].moved_by)} from" if followed else ""
    for says, moves in (("postponed from", [o for o in group if o.moved_by == "calendar"]),
                        ("extended from", [o for o in group if o.moved_from and
                                           o.moved_by not in ("calendar", "") and
                                           not measured_from(o.moved_by)
                                           and not follows(o.moved_by)]),
                        (with_it, followed)):
        if moves:
            notes.append(f"{says} " + _joined(_days(o.moved_from for o in moves)))
    if measured:
        notes.append(f"measured from when {measured[0]} was kept")
    rolled = [o.rolled_from for o in group if o.rolled_from]
    if rolled:
        notes.append("rolled from " + _joined(_days(rolled)))
    spec = spec_of(first.clock)
    price = exposure.price(spec.exposure)
    if price is not None and first.status == Occurrence.Status.OPEN:
        notes.append(price.text)
    if spec.hard and spec.bars and first.status != Occurrence.Status.SATISFIED:
        notes.append(f"bars {_joined(list(spec.bars))}")
    about = exposure.about_text(spec.about, {**subject.input, **first.clock.job.input})
    if about:
        notes.append(about)
    return " · ".join([head, *notes])


def _days(days) -> list[str]:
    return [f"{day:%m-%d}" for day in sorted(set(days))]


AHEAD_SHOWN = 20


def ahead(subject: Subject, *, today: date) -> list[Line]:
    """What comes on its own from `today` on, beside the dates: each mint and renewal of the
    subject's plans and each window still open (the portal's "Also ahead"). At most
    `AHEAD_SHOWN`, soonest first; five queries."""
    found = [line for line in [*_plan_lines(subject), *_window_lines(subject)]
             if line.date >= today and (line.status.startswith(("ahead", "open", "waiting",
                                                                 "watching", "ends")))]
    return sorted(found, key=lambda line: (line.date, line.what))[:AHEAD_SHOWN]


def zone_of_subject(subject: Subject) -> str:
    """The zone its dates are judged and printed in: its own, else its brand calendar's."""
    return calendar_for(subject).zone_name


def feed(subject: Subject, *, stamp: datetime) -> bytes:
    """One event per date kept (not grouped), so each keeps its UID whatever its neighbours do.
    An open date the customer answers for carries an alarm for each rung they hear."""
    alarms = _alarms(subject)
    entries = [ical.Entry(line.date, line.what, line.uid,
                          f"{line.kind} · answers for it: {line.answers_for} · {line.status}",
                          alarms=alarms.get(line.uid, ()))
               for line in lines(subject, grouped=False)]
    return ical.render(entries, name=f"{subject.name}: dates kept", stamp=stamp)


HEARD = ("notice", "escalate")  # the rungs of a buyer's clock that ring in the feed


def _alarms(subject: Subject) -> dict[str, tuple[ical.Alarm, ...]]:
    """The alarms of the subject's open buyer-owned dates, by event UID: one per notice or
    escalate rung, at the instant its timer rings (`clocks.arm`: `rings_at` on its day, N
    calendar days before the date kept, in the subject's zone)."""
    cal = calendar_for(subject)
    found: dict[str, tuple[ical.Alarm, ...]] = {}
    for occurrence in Occurrence.objects.filter(
            brand_id=subject.brand_id, clock__subject=subject, clock__owner="buyer",
            status=Occurrence.Status.OPEN,
    ).select_related("clock__job"):
        row = occurrence.clock
        what = row.title + (f", {occurrence.item}" if occurrence.item else "")
        found[f"{occurrence.label}@keeping-time"] = tuple(
            ical.Alarm(cal.rings(occurrence.due - timedelta(days=rung.days)),
                       f"{what}: due {occurrence.due} ({rung.text})",
                       uid=f"{occurrence.label}:{rung.text}@keeping-time")
            for rung in spec_of(row).rungs if rung.action in HEARD)
    return found


def feed_path(subject: Subject) -> str:
    return f"/subjects/{subject.pk}/calendar.ics"


def rotate_token(subject: Subject) -> str:
    """A new secret for the subject's feed: the old link stops working at once. The API and
    the console both rotate through it. An erased subject has no feed (OrderRefused)."""
    refuse_erased(subject)
    subject.feed_token = new_feed_token()
    subject.save(update_fields=["feed_token"])
    return subject.feed_token
