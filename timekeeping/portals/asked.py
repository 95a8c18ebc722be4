"""The page a party's link opens (S8, T1): what the brand asks, of whom, and until when the
link works, in the subject's zone with the zone named; a button answers it. The expiry is
data, compared on use with the job's clock (its test clock's in a rehearsal): past its
moment the page says when it stopped working, with status 410, and refuses an answer. An
unknown link answers 404."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.http import Http404
from django.shortcuts import render

from timekeeping import clocks
from timekeeping.jobs import asks
from timekeeping.jobs.common import now_of


def ask(request, token: str):
    found = asks.by_token(token)
    if found is None:
        raise Http404("no such link")
    job = found.job
    zone = ZoneInfo(clocks.calendar_for(job.subject).zone_name)
    said, status = None, 200
    if request.method == "POST":
        try:
            asks.answer(token)
        except asks.AskRefused as refused:
            said = refused
        found.refresh_from_db()
    refused = said or asks.judge(found, now_of(job))
    if refused is not None and refused.code == "link_expired":
        status = 410
    return render(request, "portal/ask.html", {
        "ask": found, "job": job, "zone": zone.key, "refused": refused,
        "answered_now": request.method == "POST" and not said,
        "moment": refused.moment if refused else None,
    }, status=status)
