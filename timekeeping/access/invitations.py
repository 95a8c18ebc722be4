"""Inviting a subject's contact to the portal (S25).

    invite(subject=…, email=…, by=user, now=…)       an Invitation, and its email in the outbox
    find(token, now=…)                               the live invitation a link carries, or None
    accept(invitation, now=…, user=… | password=…)   the customer account, linked to the subject

The link carries a secret token (256 bits); only its SHA-256 is stored. It works for seven
days and once: expiry is data, compared on use with the operation's clock (T1). Following it
sets a password for a new account named by the email, or links the account of the person
already signed in. A subject made on a test clock lives in that clock's world: its
invitation goes to the brand's owner, never to a real customer's address.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from timekeeping import clocks
from timekeeping.basics import shown
from timekeeping.models import Customer, Invitation, Subject
from timekeeping.timers import outbox

VALID_FOR = timedelta(days=7)


class InvitationRefused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def link(token: str) -> str:
    return f"{settings.SITE_URL}/accounts/invitations/{token}/"


def invite(*, subject: Subject, email: str, by, now: datetime) -> Invitation:
    try:
        validate_email(email)
    except ValidationError:
        raise InvitationRefused("email", f"{email!r} is not an email address") from None
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        try:
            clocks.lock_unerased(subject)  # an erasure at the same time: one waits
        except clocks.OrderRefused as refused:
            raise InvitationRefused("subject", f"nobody can be invited: {refused.said}"
                                    ) from None
        made = Invitation.objects.create(brand=subject.brand, subject=subject, email=email,
                                         digest=_digest(token), expires=now + VALID_FOR,
                                         created_by=by, created=now)
        _send(made, subject, token)
    return made


def _send(made: Invitation, subject: Subject, token: str) -> None:
    brand = subject.brand
    outbox.tell(
        brand=brand, test_clock_id=subject.test_clock_id, to=[made.email],
        key=f"invitation:{made.id}",
        subject=f"{brand.name} invites you to see the dates of {subject.name}",
        body=(f"{brand.name} keeps the dates of {subject.name} and invites {made.email} to "
              f"see them, acknowledge them and subscribe to them in a calendar.\n\n"
              f"Set your password here (the link works once, until "
              f"{shown.moment(made.expires, subject.zone or 'UTC')}):\n\n{link(token)}\n"))


def find(token: str, *, now: datetime) -> Invitation | None:
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        return None
    return Invitation.objects.select_related("subject", "brand").filter(
        digest=_digest(token), accepted__isnull=True, expires__gt=now).first()


def accept(invitation: Invitation, *, now: datetime, user=None, password: str = ""):
    """Link the signed-in `user`, or a new account named by the email with `password`, to the
    invitation's subject as a customer of its brand. Used once; refused after its expiry."""
    if invitation.expires <= now:
        raise InvitationRefused("invitation", f"the invitation expired at "
                                              f"{invitation.expires:%Y-%m-%d %H:%M} UTC")
    with transaction.atomic():
        if not Invitation.objects.filter(pk=invitation.pk, accepted__isnull=True).update(
                accepted=now):
            raise InvitationRefused("invitation", "the invitation was used already")
        user = user or _new_account(invitation.email, password)
        customer, _ = Customer.objects.get_or_create(brand=invitation.brand, user=user)
        customer.subjects.add(invitation.subject, through_defaults={"brand": customer.brand})
    return user


def _new_account(email: str, password: str):
    users = get_user_model()
    if users.objects.filter(username__iexact=email).exists():  # usernames differ by case
        raise InvitationRefused("password", "an account with this email exists: sign in "
                                            "first, then follow the link again")
    account = users(username=email, email=email)
    try:
        validate_password(password, account)
    except ValidationError as error:
        raise InvitationRefused("password", " ".join(error.messages)) from None
    account.set_password(password)
    account.save()
    return account
