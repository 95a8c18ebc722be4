"""The customer portal (S25, D3): a customer sees their subjects' dates and acts on their own.
Views stay thin: they scope to the customer's subjects (404 otherwise), call the same functions
as the API, and render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from timekeeping import dates
from timekeeping.models import Customer
from timekeeping.portals.access import subjects_of


@login_required
def home(request):
    if not Customer.objects.filter(user=request.user).exists():
        raise Http404("you are no customer here")
    subjects = list(subjects_of(request))
    return render(request, "portal/home.html", {"subjects": subjects,
                                                "coming_up": dates.coming_up(subjects)})
