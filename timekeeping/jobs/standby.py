"""Standby seasons (S20, place 8 · money): members on standby are offered new tasks first, and
each is paid a retainer for every week of the season.

    start(brand=…, member=…, first=date(2027, 1, 4), last=date(2027, 4, 18), retainer=20000,
          currency="USD", offer=timedelta(hours=4), by=…)

A season runs from its first day through its last, in the brand's zone. A task that opens
inside it is offered to the members on standby then: for `offer` after it opens only they may
take it (anyone else is refused `offered_to_standby`, told until when), and each hears it.
The retainer accrues at the end of each week of the season (a `money` timer,
`stb_…:week:<n>`, at midnight in the brand's zone): a balanced posting from the brand's line
to the member's pay, `<brand>:pay:<member>:<currency>`; a last week shorter than seven days
accrues its share, in whole minor units. A season on a test clock lives in that clock's world.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction

from calendars.moments import day_in_zone, wall_time
from money import ledger
from timekeeping.basics import shown
from timekeeping.models import Brand, Member, Standby, Task, TestClock
from timekeeping.timers import arming, outbox, records
from timekeeping.timers.firing import now_for

KIND = "money"
SEASON_MAX_DAYS = 366
RETAINER_MAX = 10**10
OFFER_MAX = timedelta(days=7)


class StandbyRefused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def _zone(brand: Brand) -> str:
    return brand.calendar_rules().zone_name


def week_ends(season: Standby) -> list[datetime]:
    """The instants each week of the season accrues: midnight after its seventh day (or after
    the season's last day), in the brand's zone."""
    zone, found, day = _zone(season.brand), [], season.first
    while day <= season.last:
        end = min(day + timedelta(days=7), season.last + timedelta(days=1))
        found.append(wall_time(end, time(0), zone))
        day = end
    return found


@transaction.atomic
def start(*, brand: Brand, member: Member, first: date, last: date, retainer: int,
          currency: str, offer: timedelta, test_clock: TestClock | None = None,
          by: str) -> Standby:
    """A member on standby for a season. Refused, naming the field, when the member is not
    the brand's manager or owner, the days are out of order or longer than a year, the
    retainer is not 0 to 10¹⁰ minor units, or the offer is longer than a week."""
    if member.brand_id != brand.pk or member.role == Member.Role.VIEWER:
        raise StandbyRefused("member", f"{member.pk} is no manager or owner of {brand.pk}")
    if not first <= last or (last - first).days >= SEASON_MAX_DAYS:
        raise StandbyRefused("last", f"a season runs from its first day through its last, at "
                                     f"most {SEASON_MAX_DAYS} days")
    if not isinstance(retainer, int) or not 0 <= retainer <= RETAINER_MAX:
        raise StandbyRefused("retainer", f"a weekly retainer is whole minor units from 0 to "
                                         f"{RETAINER_MAX}")
    if not timedelta(0) <= offer <= OFFER_MAX:
        raise StandbyRefused("offer", "a task is offered first for at most a week")
    if Standby.objects.filter(member=member, test_clock=test_clock, first__lte=last,
                              last__gte=first).exists():
        raise StandbyRefused("first", f"{member.pk} is on standby already on some of these "
                                      "days")
    now = now_for(brand, test_clock)
    season = Standby.objects.create(brand=brand, test_clock=test_clock, member=member,
                                    first=first, last=last, retainer=retainer,
                                    currency=currency, offer=offer, created=now)
    if retainer:
        _arm(season, 1)
    _record(season, "standby.started", {"member": member.pk, "first": first, "last": last,
                                        "retainer": retainer, "currency": currency,
                                        "weeks": len(week_ends(season)), "by": by}, now)
    return season


def _arm(season: Standby, week: int) -> None:
    ends = week_ends(season)
    if week > len(ends):
        return
    arming.arm(brand=season.brand, test_clock=season.test_clock, kind=KIND,
               key=f"{season.pk}:week:{week}", owed=ends[week - 1], owner_type="standby",
               owner_id=season.pk, owner_opened=season.created, bundle="",
               payload={"standby": season.pk, "week": week})


def _record(season: Standby, kind: str, data: dict, at: datetime) -> None:
    records.write(kind, brand=season.brand, instant=at, test_clock=season.test_clock,
                  data={"standby": season.pk, **data})


def accrue(season_id: str, week: int, instant: datetime) -> str:
    """The end of a week of the season: its retainer is the member's (once, by its key)."""
    with transaction.atomic():
        season = Standby.objects.select_for_update(of=("self",)).select_related(
            "brand", "test_clock", "member").get(pk=season_id)
        ends = week_ends(season)
        start_of_week = season.first + timedelta(days=7 * (week - 1))
        days = (min(start_of_week + timedelta(days=7), season.last + timedelta(days=1))
                - start_of_week).days
        amount = season.retainer * days // 7
        brand = season.brand_id
        ledger.post(brand=brand, kind="standby.retainer", reference=f"{season.pk}:week:{week}",
                    currency=season.currency, at=instant,
                    lines=[(f"{brand}:line:{season.currency}", -amount),
                           (f"{brand}:pay:{season.member_id}:{season.currency}", amount)])
        season.weeks_accrued = week
        season.save(update_fields=["weeks_accrued"])
        _record(season, "standby.accrued", {"member": season.member_id, "week": week,
                                            "of": len(ends), "days": days, "amount": amount,
                                            "currency": season.currency}, instant)
        _arm(season, week + 1)
        return (f"standby {season.pk} · week {week} of {len(ends)}: {amount} "
                f"{season.currency} to {season.member_id}")


def on_standby(brand_id: str, test_clock_id: str | None, day: date) -> list[Standby]:
    """The seasons of the brand's world that hold `day`."""
    return list(Standby.objects.filter(brand_id=brand_id, test_clock_id=test_clock_id,
                                       first__lte=day, last__gte=day).select_related(
        "member__user"))


def offer(task: Task, now: datetime) -> None:
    """A task opened: inside a season it is offered to the members on standby first."""
    seasons = on_standby(task.brand_id, task.test_clock_id, day_in_zone(now, _zone(task.brand)))
    if not seasons:
        return
    task.offered_until = now + max(season.offer for season in seasons)
    task.save(update_fields=["offered_until"])
    for season in seasons:
        outbox.tell(brand=task.brand, test_clock_id=task.test_clock_id,
                    to=[season.member.user.email], subject=f"Offered to you first: "
                                                           f"{task.title}",
                    body=f"You are on standby: the task {task.title} for {task.subject.name} "
                         f"is yours to take before anyone else until "
                         f"{shown.moment(task.offered_until, _zone(task.brand))}. Take it "
                         f"on the Your work page:\n\n{settings.SITE_URL}/delivery/\n",
                    key=f"{task.pk}:offered:{season.pk}")


def may_take(task: Task, member: Member, now: datetime) -> str:
    """"" when the member may take the task now, else why not (the offer to standby)."""
    if task.offered_until is None or now >= task.offered_until:
        return ""
    day = day_in_zone(task.opened, _zone(task.brand))
    if Standby.objects.filter(member=member, test_clock_id=task.test_clock_id,
                              first__lte=day, last__gte=day).exists():
        return ""
    return (f"the task is offered to the members on standby until "
            f"{task.offered_until:%Y-%m-%d %H:%MZ}")


def _day(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b %Y}"


def seasons_of(members: dict) -> list[dict]:
    """The standby seasons of these memberships, for the delivery portal: the latest 20, each
    with its days, its retainer and the weeks accrued so far. One query."""
    return [{"brand": season.brand.name, "days": f"{_day(season.first)} – {_day(season.last)}",
             "retainer": f"{shown.money(season.retainer, season.currency, short=True)} a week",
             "weeks": f"{season.weeks_accrued} of {len(week_ends(season))}",
             "world": season.test_clock_id or ""}
            for season in Standby.objects.filter(brand__in=list(members),
                                                 member__in=list(members.values()))
            .select_related("brand__calendar").order_by("-first")[:20]]
