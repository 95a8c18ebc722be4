"""Signing in, guarded (issue 31, docs/security.md#throttling-and-lockout): every door that
takes a password (the site's sign-in at /accounts/login/, which the portals share, and the
admin's) goes through `django.contrib.auth.authenticate`, whose first backend is `Guard`.

django-axes counts the failures per username and per address, on its own clock. After
AXES_FAILURE_LIMIT of either within AXES_COOLOFF_TIME, signing in with that username, or
from that address, pauses: the password is not even checked, and `paused` answers instead of
the sign-in page. A username that exists and one that does not are counted and answered alike,
so neither the message nor the pause tells which accounts exist.

    Guard                               the backend that refuses a paused sign-in
    paused(request, response, creds)    the page that says so: 429, Retry-After
"""

from __future__ import annotations

import math
from datetime import timedelta

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Q
from django.shortcuts import render

from timekeeping.basics import shown


class Guard(AxesStandaloneBackend):
    """Refuses a sign-in whose username or address is paused; checks no password itself.

    A call without a request (code, the test client's `login`) is no door a stranger can reach,
    so it is let through to the next backend instead of being refused as axes would."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def paused(request, original_response=None, credentials=None):
    """The answer to a sign-in refused for too many failures: what happened, how long to wait,
    the same words whoever's username was tried."""
    wait = _wait(request, credentials)
    seconds = max(1, math.ceil(wait.total_seconds()))
    answer = render(request, "registration/paused.html", {
        "wait": shown.span(timedelta(minutes=math.ceil(seconds / 60))),
        "pause": shown.span(settings.AXES_COOLOFF_TIME),
    }, status=429)
    answer["Retry-After"] = str(seconds)
    return answer


def _wait(request, credentials) -> timedelta:
    """Until the pause ends: tries made while paused are not counted
    (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT off), so it ends a cool-off after the
    latest failure counted for this username or this address."""
    now, cool_off = request.axes_attempt_time, settings.AXES_COOLOFF_TIME
    username = get_client_username(request, credentials)
    latest = AccessAttempt.objects.filter(
        Q(username=username) | Q(ip_address=request.axes_ip_address),
        attempt_time__gte=now - cool_off,
    ).aggregate(latest=Max("attempt_time"))["latest"]
    return (latest or now) + cool_off - now
