"""What every page needs (S25): where `/` sends a person, and the header's frame (the brands
they keep, whether they are a customer).

    home(request)      the console for a brand's people, the portal for a customer, else
                       the sign-in page
    frame(request)     the context processor: `frame.brands`, `frame.customer`
    confirmed(request) whether a control that is hard to undo was asked about and said yes to
    ask_first(…)       the page that asks, for a browser without JavaScript
    zone_switch(…)     the control that reads every page's times in another zone
"""

from __future__ import annotations

from functools import cached_property

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from timekeeping.basics import shown
from timekeeping.models import Customer, brands_kept_by


def home(request):
    if not request.user.is_authenticated:
        return redirect("login")
    if brands_kept_by(request.user).exists():
        return redirect("console:index")
    if Customer.objects.filter(user=request.user).exists():
        return redirect("portal:home")
    return redirect("login")


class _Frame:
    """Read lazily: a page that never shows the header's brands asks nothing."""

    def __init__(self, request):
        self.request = request

    @cached_property
    def brands(self):
        user = self.request.user
        return list(brands_kept_by(user).only("id", "name")) if user.is_authenticated else []

    @cached_property
    def customer(self) -> bool:
        user = self.request.user
        return user.is_authenticated and Customer.objects.filter(user=user).exists()


def frame(request) -> dict:
    return {"frame": _Frame(request)}


def confirmed(request) -> bool:
    """A control that is hard to undo (issue 27) acts only once the person said yes: htmx
    asks in the browser (`hx-confirm`) and sends `confirmed=yes` with the post (`hx-vals`);
    a plain form post without it gets `ask_first`'s page, whose button posts it."""
    return request.POST.get("confirmed") == "yes"


def ask_first(request, *, question: str, consequence: str, yes: str, back: str):
    """The page that asks before a control that is hard to undo: what will happen, a button
    that posts the same form again with `confirmed=yes`, and a way back that changes nothing."""
    fields = [(name, value) for name, values in request.POST.lists()
              if name not in {"csrfmiddlewaretoken", "confirmed"} for value in values]
    return render(request, "confirm.html", {
        "question": question, "consequence": consequence, "yes": yes, "back": back,
        "action": request.path, "fields": fields})


@login_required
@require_POST
def zone_switch(request):
    """Read every page's times in another zone (issue 27): "" for each page's own (the
    brand's, a subject's), UTC, or any zone the person names (their own); kept in their
    session, for the console and the portals alike."""
    asked = (request.POST.get("other") or request.POST.get("zone") or "").strip()[:100]
    if not asked:
        request.session.pop(shown.ZONE_KEY, None)
    elif shown.zone_named(asked) is None:
        messages.error(request, f"Nothing changed. Zone: \u201c{asked}\u201d is not a time "
                                "zone we know; name one as your computer does, such as "
                                "Europe/Paris or America/Chicago, or choose UTC.")
    else:
        request.session[shown.ZONE_KEY] = asked
    target = request.POST.get("next") or ""
    if not (target.startswith(("/console/", "/portal/", "/delivery/"))
            and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure())):
        target = "/"
    return redirect(target)
