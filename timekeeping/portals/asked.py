"""The page a party's link opens (S8, T1): what the brand asks, of whom, and until when the
link works, in the subject's zone with the zone named; a button answers it. The expiry is
data, compared on use with the job's clock (its test clock's in a rehearsal): past its
moment the page says when it stopped working, with status 410, and refuses an answer. An
unknown link answers 404."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render

from timekeeping import clocks
from timekeeping.jobs import asks
from timekeeping.jobs.common import now_of
from timekeeping.models import Ask
from timekeeping.portals.access import subjects_of, who
from timekeeping.web.throttle import per_address


# A link is its own key: counted per address, so none is guessed at full speed (issue 31).
@per_address("link")
def ask(request, token: str):
    found = asks.by_token(token)
    if found is None:
        raise Http404("no such link")
    return _page(request, found, lambda: asks.answer(token))


@login_required
def mine(request, ask_id: str):
    found = Ask.objects.filter(pk=ask_id, subject__in=subjects_of(request)).select_related(
        "job__brand__owner", "job__subject", "job__test_clock", "brand").first()
    if found is None:
        raise Http404("no such ask")
    yours = not found.email or found.email.lower() == found.job.subject.contact_email.lower()
    if request.method == "POST" and not yours:
        raise PermissionDenied("this is asked of someone else; their link answers it")
    return _page(request, found, lambda: asks.answer_ask(found, by=who(request)),
                 yours=yours)


def _page(request, found: Ask, answer, *, yours: bool = True):
    job = found.job
    zone = ZoneInfo(clocks.calendar_for(job.subject).zone_name)
    said, status = None, 200
    if request.method == "POST":
        try:
            answer()
        except asks.AskRefused as refused:
            said = refused
        found.refresh_from_db()
    refused = said or asks.judge(found, now_of(job))
    if refused is not None and refused.code == "link_expired":
        status = 410
    return render(request, "portal/ask.html", {
        "ask": found, "job": job, "zone": zone.key, "refused": refused,
        "answered_now": request.method == "POST" and not said,
        "moment": refused.moment if refused else None, "yours": yours,
    }, status=status)
