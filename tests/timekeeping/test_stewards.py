"""Stewards (S16): a carryforward date that outlives its 2027 return passes, when the job
ends, to the subject's steward (a job of the manifest's steward service) and its keeper, or
stays with its owner; either way on the record. On a test clock in New York."""

import copy
import json
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timekeeping import clocks, manifests
from timekeeping.clocks import history
from timekeeping.demo import TAX_MANIFEST
from timekeeping.jobs import lifecycle
from timekeeping.models import Clock, Job, Member, Record, Subject
from timekeeping.tick import test_clocks

START = datetime(2028, 3, 1, 14, tzinfo=UTC)  # 09:00 in New York
INPUT = {"jurisdictions": ["US"], "earliest_credit_expiry": "2046-12-31"}
KEEPER = "ana@northwind.test"
STEWARD = {"subject": {"kind": "taxpayer"}, "steward": True, "keeper": KEEPER,
           "price": {"amount": 12000, "currency": "USD"}}


def with_steward(**steward) -> dict:
    """The demo's tax manifest with a steward service, `date-keeping`."""
    document = copy.deepcopy(json.loads(TAX_MANIFEST.read_text()))
    document["services"]["date-keeping"] = {**STEWARD, **steward}
    return document


def keeper_of(brand, actors) -> Member:
    user = actors["staff"]
    user.email, user.first_name, user.last_name = KEEPER, "Ana", "Ruiz"
    user.save()
    return Member.objects.create(brand=brand, user=user, role=Member.Role.MANAGER)


@pytest.fixture
def taxpayer(brand, actors):
    manifests.load(brand, with_steward())
    brand.refresh_from_db()
    clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                     key="11-1111111", name="Fernhill Tools",
                                     zone="America/New_York")
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input=INPUT)
    return subject, job


def expiry(job: Job) -> Clock:
    return Clock.objects.get(job=job, name="credit-expiry")


def test_it_passes_a_carryforward_date_to_the_steward_when_the_job_ends(taxpayer, brand,
                                                                         actors):
    subject, job = taxpayer
    ana = keeper_of(brand, actors)
    steward = clocks.order(brand=brand, service="date-keeping", subject=subject)
    with CaptureQueriesContext(connection) as sent:
        lifecycle.end(job, by="owner")
    kept = expiry(job)
    assert (kept.steward, kept.keeper) == (steward, ana)
    # Its two dates that live on the subject pass in one statement (issue 32).
    passed = Clock.objects.filter(job=job, lives_on_subject=True)
    assert {(clock.steward_id, clock.keeper_id) for clock in passed} == {(steward.pk, ana.pk)}
    assert len([query for query in sent.captured_queries if query["sql"].startswith(
        'UPDATE "timekeeping_clock" SET "steward_id"')]) == 1
    line = Record.objects.get(kind="clock.kept", data__clock=kept.pk)
    assert line.data["keeper"] == "steward" and line.data["member"] == ana.pk
    assert line.instant == START and line.subject == subject.pk
    said = [each.text for each in history.history(subject) if each.kind == "clock.kept"]
    assert sorted(said) == [
        "The date 'refund claims on the 2027 return close' passed to date keeping: Ana Ruiz "
        "keeps it now.",
        "The date 'the earliest carryforward expires' passed to date keeping: Ana Ruiz keeps "
        "it now."]
    # The date that does not live on the subject closed with its job: nobody keeps it.
    assert not Record.objects.filter(kind="clock.kept", data__name="file").exists()


def test_without_a_steward_it_stays_with_its_owner_on_the_record(taxpayer):
    subject, job = taxpayer
    lifecycle.end(job, by="owner")
    kept = expiry(job)
    assert kept.steward is None and kept.kept_by(Job.State.ENDED) == "owner"
    line = Record.objects.get(kind="clock.kept", data__clock=kept.pk)
    assert line.data["keeper"] == "owner" and "steward" not in line.data


def test_a_steward_ordered_later_takes_the_date_up_and_gives_it_back_when_it_ends(taxpayer,
                                                                                   brand):
    subject, job = taxpayer
    lifecycle.end(job, by="owner")
    steward = clocks.order(brand=brand, service="date-keeping", subject=subject)
    kept = expiry(job)
    # No member is named KEEPER yet: the brand's owner keeps it for the steward.
    assert (kept.steward, kept.keeper) == (steward, None)
    lifecycle.end(steward, by="owner")
    kept.refresh_from_db()
    assert kept.steward is None
    # One instant on the test clock: the three lines are told apart by what they say.
    lines = Record.objects.filter(kind="clock.kept", data__clock=kept.pk)
    assert sorted(each.data["by"] for each in lines) == sorted([
        f"job {job.pk} ended", f"job {steward.pk} ended", f"steward job {steward.pk} opened"])
    taken = lines.get(data__by=f"steward job {steward.pk} opened").data
    assert (taken["keeper"], taken["named"], taken["member"]) == ("steward", KEEPER, None)
    assert lines.get(data__by=f"job {steward.pk} ended").data["keeper"] == "owner"


def test_a_steward_runs_live_on_the_team_plan_only(taxpayer, brand):
    subject, _ = taxpayer
    brand.plan = "launch"
    brand.save(update_fields=["plan"])
    live = Subject.objects.create(brand=brand, kind="taxpayer", key="22", name="Live")
    with pytest.raises(clocks.OrderRefused, match="'steward' runs live on the team plan"):
        clocks.order(brand=brand, service="date-keeping", subject=live)
