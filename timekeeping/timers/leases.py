"""Leases on rows: one process at a time for a brand clock, a test clock's advance, and
later a schedule or a connection (DESIGN decision 4, J7).

A lease is taken by one conditional UPDATE whose row count is checked: the row has no live
lease (none, or expired), or the holder is a process on this machine that no longer exists
(a killed tick need not wait for its lease to run out). A row lock would not do: it ends at
the first commit, and a tick commits once per batch.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime

from django.db import models
from django.db.models import Q

HOST = socket.gethostname()


def holder_name() -> str:
    """This process's name as a lease holder: host, pid and a token (a reused pid differs)."""
    return f"{HOST}:{os.getpid()}:{_TOKEN}"


_TOKEN = uuid.uuid4().hex[:8]


def is_dead_here(holder: str) -> bool:
    """The holder is a process on this machine that no longer exists."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != HOST or not pid_text.isdigit():
        return False
    if holder == holder_name():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def take(
    model: type[models.Model], pk: str, *, holder: str, now: datetime, until: datetime,
    extra: dict | None = None,
) -> bool:
    """Take the lease on row `pk` until `until`. True if this holder has it now."""
    current = model.objects.filter(pk=pk).values_list("lease_holder", flat=True).first()
    if current is None:
        return False
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_holder=holder)
    if current and is_dead_here(current):
        # Compare-and-set on the dead holder's name: of two takers, one wins.
        free |= Q(lease_holder=current)
    updated = model.objects.filter(free, pk=pk).update(
        lease_holder=holder, lease_until=until, **(extra or {})
    )
    return updated == 1


def give_back(
    model: type[models.Model], pk: str, *, holder: str, extra: dict | None = None
) -> bool:
    """Give the lease back; only its holder can."""
    updated = model.objects.filter(pk=pk, lease_holder=holder).update(
        lease_holder="", lease_until=None, **(extra or {})
    )
    return updated == 1


def take_many(model: type[models.Model], pks: list[str], *, holder: str, now: datetime,
              until: datetime) -> set[str]:
    """Take the free leases among rows `pks` until `until`, in one conditional UPDATE: the
    keys this holder has now. A lease held by a process that died here is not taken; `take`,
    row by row, does that."""
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_holder=holder)
    model.objects.filter(free, pk__in=pks).update(lease_holder=holder, lease_until=until)
    return set(model.objects.filter(pk__in=pks, lease_holder=holder)
               .values_list("pk", flat=True))


def give_back_many(model: type[models.Model], pks: list[str], *, holder: str) -> int:
    """Give back this holder's leases on rows `pks` in one UPDATE."""
    return model.objects.filter(pk__in=pks, lease_holder=holder).update(
        lease_holder="", lease_until=None)
