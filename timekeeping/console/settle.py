"""The console's control that settles an item of "Needs attention" (issue 27): it calls
`settling.act`, as the API does, and sends the person back with what happened."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.console.access import back_to, brand_of, by

FIELDS_SAID = {"do": "What to do", "row": "The item", "reason": "The reason"}


@login_required
@require_POST
def settle(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    kind, row = request.POST.get("kind", "")[:20], request.POST.get("row", "")[:64]
    try:
        said = settling.act(brand, kind, row, request.POST.get("do", "")[:20],
                            reason=request.POST.get("reason", "")[:settling.REASON_LONGEST + 1],
                            by=by(request), now=wallclock.wall_now())
    except settling.Refused as refused:
        messages.error(request, f"Nothing was done. {FIELDS_SAID[refused.field]}: "
                                f"{refused.message}.")
    else:
        messages.success(request, said)
    return redirect(back_to(request, brand))
