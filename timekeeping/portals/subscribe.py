"""Subscribing to a subject's dates (S22, S25): the feed's address, for calendar apps, as a
`webcal://` link (which opens the reader's calendar app) and as the `https://` address to
paste. Both carry the subject's secret token; rotating it (`subject_calendar.rotate_token`)
stops the old address at once."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from timekeeping.clocks import subject_calendar
from timekeeping.models import Subject


@dataclass(frozen=True)
class Feed:
    https: str
    webcal: str


def feed_of(subject: Subject) -> Feed:
    address = (f"{settings.SITE_URL}{subject_calendar.feed_path(subject)}"
               f"?token={subject.feed_token}")
    return Feed(https=address, webcal="webcal://" + address.split("://", 1)[-1])
