"""The page an invitation's link opens (S25): it names the brand and the subject, and takes a
password for a new account (or, for a person signed in already, an "accept"), then
`invitations.accept` links the account to the subject and the person is signed in and sent to
the portal. An expired, used or wrong link answers the same page, "this link no longer
works", with status 404: the three are not told apart."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.shortcuts import redirect, render

from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.models import Invitation
from timekeeping.web.throttle import per_address


class PasswordForm(forms.Form):
    password1 = forms.CharField(label="Choose a password", strip=False, widget=forms.PasswordInput(
        attrs={"autocomplete": "new-password"}))
    password2 = forms.CharField(label="The same password again", strip=False,
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean(self):
        given = super().clean()
        if given.get("password1") != given.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        return given


@per_address("link")  # guessing links at full speed: issue 31
def invitation(request, token: str):
    found = invitations.find(token, now=wallclock.wall_now())
    if found is None:
        return _gone(request)
    signed_in = request.user.is_authenticated
    form = None if signed_in else PasswordForm(request.POST or None)
    if request.method == "POST" and (signed_in or form.is_valid()):
        try:
            user = invitations.accept(found, now=wallclock.wall_now(),
                                      user=request.user if signed_in else None,
                                      password="" if signed_in else form.cleaned_data["password1"])
        except invitations.InvitationRefused as refused:
            if refused.field == "invitation":  # used or expired since the page was read
                return _gone(request)
            form.add_error("password1", refused.message[:1].upper() + refused.message[1:] + ".")
        else:
            return _welcome(request, user, found)
    return render(request, "registration/invitation.html", {"invitation": found, "form": form})


def _welcome(request, user, found: Invitation):
    if not request.user.is_authenticated:
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, f"Welcome: {found.brand.name} shares the dates of "
                              f"{found.subject.name} with you here.")
    return redirect("portal:subject", subject_id=found.subject_id)


def _gone(request):
    return render(request, "registration/invitation_gone.html", status=404)
