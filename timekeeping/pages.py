"""What every page needs (S25): where `/` sends a person, and the header's frame (the brands
they keep, whether they are a customer).

    home(request)      the console for a brand's people, the portal for a customer, else
                       the sign-in page
    frame(request)     the context processor: `frame.brands`, `frame.customer`
"""

from __future__ import annotations

from functools import cached_property

from django.shortcuts import redirect

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
