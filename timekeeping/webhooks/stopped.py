"""The tick had stopped (J8): when a tick finds the last one passed longer ago than the stale
threshold (`TICK_STALE_SECONDS`), each brand with an endpoint that hears `tick.stopped` gets
a `tick.stopped` record, an event, saying from when to when. It is told on the tick's return:
while it is stopped nothing runs to tell it (the operator's `/health/tick` and its alert say
it then)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from timekeeping.models import Brand, WebhookEndpoint
from timekeeping.timers import records


def tell(before: datetime | None, instant: datetime) -> int:
    """Returns how many brands were told."""
    if before is None or (instant - before).total_seconds() <= settings.TICK_STALE_SECONDS:
        return 0
    hearing = [endpoint.brand_id for endpoint in WebhookEndpoint.objects.filter(enabled=True)
               .only("brand_id", "types") if not endpoint.types
               or "tick.stopped" in endpoint.types]
    brands = Brand.objects.filter(pk__in=set(hearing))
    for brand in brands:
        records.write("tick.stopped", brand=brand, instant=instant,
                      data={"since": before, "until": instant,
                            "stopped_s": (instant - before).total_seconds()})
    return len(brands)
