"""Pausing and resuming a brand's connection: a paused connection's timed moves wait, and the
once-a-minute job skips it until it is resumed (SPEC A6)."""

from __future__ import annotations

from timekeeping.models import Connection


def pause(link: Connection) -> None:
    Connection.objects.filter(pk=link.pk).update(paused=True)
    link.paused = True


def resume(link: Connection) -> None:
    Connection.objects.filter(pk=link.pk).update(paused=False)
    link.paused = False
