"""Requests counted per caller, for every door alike (issue 31): the API's throttles, the link
pages and the password reset (docs/security.md#throttling-and-lockout).

    address_of(request)       the caller's address, as far as the proxies in front vouch for it
    Rate                      DRF's rate throttle, on our wall clock, its rate read from
                              THROTTLE_RATES when asked (so a test may set it)
    per_address(scope, …)     a page's view counted per address: past the rate, the "too many
                              tries" page, 429 with Retry-After (`too_many`)

The counts live in the default cache: one window of timestamps per caller and scope, DRF's.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import wraps

from django.conf import settings
from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle

from timekeeping.basics import shown, wallclock


def address_of(request) -> str:
    """The caller's address. With NUM_PROXIES proxies in front, the one the first of them saw
    (counted from the right of X-Forwarded-For, which a client can only prepend to); with none,
    the connection's. An IPv6 address counts as its /64 network, which one machine holds."""
    seen = request.META.get("REMOTE_ADDR") or ""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if settings.NUM_PROXIES and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        seen = hops[-min(settings.NUM_PROXIES, len(hops))]
    try:
        address = ipaddress.ip_address(seen)
    except ValueError:
        # No address (a Unix socket, a proxy that sent none): all such callers count as one,
        # under an address axes can store.
        return "0.0.0.0"
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False).network_address)


class Rate(SimpleRateThrottle):
    """A rate throttle for `scope`, counting per `ident`. Its clock is ours (the only reader
    of the wall clock, which a test fixes), its rate read from THROTTLE_RATES on each use."""

    scope = ""

    def __init__(self, scope: str | None = None, *, ident: str | None = None):
        # No rate read here, as DRF would: it is read on each request, from the settings.
        if scope is not None:
            self.scope = scope
        self.ident = ident

    def allow_request(self, request, view) -> bool:
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def timer(self) -> float:
        return wallclock.wall_now().timestamp()

    def get_rate(self) -> str:
        return settings.THROTTLE_RATES[self.scope]

    def get_ident(self, request) -> str:
        """What is counted: the `ident` given (an email address), else the caller's address."""
        return self.ident or address_of(request)

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def allowed(self, request) -> float | None:
        """None when the request may go on; else the seconds to wait."""
        if self.allow_request(request, None):
            return None
        return self.wait() or 1.0


def too_many(request, wait: float):
    """The page past a rate: what happened, and when to try again."""
    seconds = max(1, math.ceil(wait))
    answer = render(request, "too_many.html", {"wait": _minutes(seconds)}, status=429)
    answer["Retry-After"] = str(seconds)
    return answer


def per_address(scope: str, methods: Iterable[str] = ("GET", "POST")) -> Callable:
    """Count a page's `methods` per address under `scope`'s rate (THROTTLE_RATES)."""
    counted = frozenset(methods)

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def counted_view(request, *args, **kwargs):
            if request.method in counted:
                wait = Rate(scope).allowed(request)
                if wait is not None:
                    return too_many(request, wait)
            return view(request, *args, **kwargs)
        return counted_view
    return decorate


def _minutes(seconds: int) -> str:
    """"1 minute", "15 minutes": rounded up, since it says how long to wait."""
    return shown.span(timedelta(minutes=math.ceil(seconds / 60)))
