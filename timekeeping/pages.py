"""What every page needs (S25): where `/` sends a person, and the header's frame (the brands
they keep, whether they are a customer).

    home(request)      the console for a brand's people, the portal for a customer, else
                       the sign-in page
    frame(request)     the context processor: `frame.brands`, `frame.customer`
    confirmed(request) whether a control that is hard to undo was asked about and said yes to
    ask_first(…)       the page that asks, for a browser without JavaScript
"""

from __future__ import annotations

from functools import cached_property

from django.shortcuts import redirect, render

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
