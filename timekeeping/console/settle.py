"""The console's control that settles an item of "Needs attention" (issue 27): it calls
`settling.act`, as the API does, and sends the person back with what happened. With htmx the
answer takes the item's place in the list: what happened and, after a dismissal, its Undo
(issue 29); without JavaScript the page is shown again with the message and the Undo above it
(`{% undo_offered %}`). A refusal always shows the page again, with why."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.clocks.undo import UNDO_WINDOW_WORDS
from timekeeping.console.access import back_to, brand_of, by
from timekeeping.console.controls import OFFERED

FIELDS_SAID = {"do": "What to do", "row": "The item", "reason": "The reason"}


@login_required
@require_POST
def settle(request, brand_id: str):
    kind, row = request.POST.get("kind", "")[:20], request.POST.get("row", "")[:64]
    brand = brand_of(request, brand_id, at_least="owner" if kind in settling.OWNER_ONLY
                     else "manager")
    do, now = request.POST.get("do", "")[:20], wallclock.wall_now()
    try:
        said = settling.act(brand, kind, row, do,
                            reason=request.POST.get("reason", "")[:settling.REASON_LONGEST + 1],
                            by=by(request), now=now)
    except settling.Refused as refused:
        messages.error(request, f"Nothing was done. {FIELDS_SAID[refused.field]}: "
                                f"{refused.message}.")
        return _back(request, brand)
    undo = {"kind": kind, "row": row, "do": "undismiss"} if do == "dismiss" and \
        settling.undo_offer(brand, kind, row, by=by(request), now=now) else None
    if request.htmx and do != "undismiss":
        return render(request, "console/_settled.html", {
            "said": said, "undo": undo, "brand": brand, "window": UNDO_WINDOW_WORDS,
            "next": back_to(request, brand)})
    messages.success(request, said)
    if undo is not None:
        request.session[OFFERED] = {"action": reverse("console:settle", args=[brand.pk]),
                                    "fields": undo}
    return _back(request, brand)


def _back(request, brand):
    """The page the control was on, shown again (with htmx, reloaded whole)."""
    if request.htmx:
        return HttpResponseClientRedirect(back_to(request, brand))
    return redirect(back_to(request, brand))
