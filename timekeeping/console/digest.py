"""A person's digest in the console (issue 27; docs/digests.md): each of a brand's people
(its owner, managers and viewers alike: it is their own email) turns their digest of the brand
on or off and picks when it goes; and the unsubscribe link's page, which needs no sign-in."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from calendars.moments import zone_of as iana_zone
from timekeeping.basics import shown, wallclock
from timekeeping.console.access import brand_of
from timekeeping.digests import choose, tokens
from timekeeping.models import Brand, Digest
from timekeeping.web.throttle import per_address

PERIODS = [("off", "Off"), ("daily", "Every day"), ("weekly", "Every week")]
HOURS = [(hour, f"{hour:02d}:00") for hour in range(24)]
WEEKDAYS = list(enumerate(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                           "Sunday"]))


class DigestForm(forms.Form):
    period = forms.ChoiceField(choices=PERIODS, label="Send me a digest",
                               widget=forms.RadioSelect)
    hour = forms.TypedChoiceField(choices=HOURS, coerce=int, label="At", initial=7)
    weekday = forms.TypedChoiceField(choices=WEEKDAYS, coerce=int, initial=0,
                                     label="On (a weekly digest)")
    zone = forms.CharField(max_length=64, required=False, label="Time zone",
                           help_text="A zone such as Europe/London or America/Chicago. Leave "
                                     "it empty for the brand's.")

    def clean_zone(self) -> str:
        zone = self.cleaned_data["zone"].strip()
        if zone:
            try:
                iana_zone(zone)
            except ValueError:
                raise forms.ValidationError(
                    f"We don't know the time zone '{zone}': write it as a place, such as "
                    "Europe/London or America/Chicago.") from None
        return zone


def _said(digest: Digest) -> str:
    """The choice as a sentence: when it goes next, or that it is off."""
    if digest.period == Digest.Period.OFF or digest.next_due is None:
        return f"Your digest of {digest.brand.name} is off."
    zone = choose.zone_of(digest)
    every = "daily" if digest.period == Digest.Period.DAILY else "weekly"
    return (f"Your {every} digest of {digest.brand.name} goes to {digest.user.email or 'you'}; "
            f"the next one {shown.moment(digest.next_due, zone)}.")


def _page(request, brand: Brand, digest: Digest, form: DigestForm, status: int = 200):
    return render(request, "console/digest.html", {
        "brand": brand, "form": form, "said": _said(digest),
        "brand_zone": shown.zone_name(choose.brand_zone(brand)),
        "no_email": not request.user.email}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def digest_page(request, brand_id: str):
    brand = brand_of(request, brand_id)  # any of the brand's people: it is their own email
    digest = choose.digest_of(brand, request.user)
    if request.method == "GET":
        return _page(request, brand, digest, DigestForm(initial={
            "period": digest.period, "hour": digest.hour, "weekday": digest.weekday,
            "zone": digest.zone}))
    form = DigestForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        digest = choose.digest_set(brand=brand, user=request.user, period=data["period"],
                                   zone=data["zone"], hour=data["hour"],
                                   weekday=data["weekday"], now=wallclock.wall_now())
        messages.success(request, _said(digest))
        return redirect("console:digest", brand_id=brand.pk)
    return _page(request, brand, digest, form, status=400)


def _digest_of(token: str) -> Digest:
    digest_id = tokens.digest_id_of(token)
    digest = Digest.objects.filter(pk=digest_id).select_related("brand").first() \
        if digest_id else None
    if digest is None:
        raise Http404("This link is not one we sent, or it was changed on the way. Open the "
                      "link in the email again, or turn the digest off in the console.")
    return digest


# One-click unsubscribe (RFC 8058, the List-Unsubscribe-Post header): a mail provider posts to
# the link with no session and no CSRF token. The signed token is the proof, and all the post
# can do is turn one digest off.
@csrf_exempt
@require_http_methods(["GET", "POST"])
@per_address("link")  # guessing links at full speed: issue 31
def unsubscribe(request, token: str):
    digest = _digest_of(token)
    if request.method == "POST":
        choose.digest_off(digest.pk)
        return render(request, "digests/unsubscribed.html", {"brand_name": digest.brand.name})
    return render(request, "confirm.html", {
        "question": f"Stop the digest of {digest.brand.name}?",
        "consequence": "We will stop sending it to you. You can turn it on again in the "
                       "console, under the brand's settings.",
        "action": reverse("digest-unsubscribe", args=[token]), "fields": [],
        "yes": "Yes, stop it", "back": "/"})
