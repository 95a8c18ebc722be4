"""The demo's own webhook receiver (issue 30): the endpoint `make demo` gives each demo brand
points here, so a newcomer sees events arrive, signed, without a system of their own. It
answers only while DEBUG is on (the demo); with DEBUG off every door of it is 404.

    POST /demo/receiver/<endpoint id>/   check the Standard Webhooks signature against that
                                         endpoint's secret(s) with the `standardwebhooks`
                                         library, as any receiver would; keep what arrived
    GET  /demo/receiver/                 what arrived for the brands the signed-in person owns

A receiver deduplicates by `webhook-id`: an event sent again (a resend, a replay) arrives with
the id it had, and is marked so here rather than kept apart.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from timekeeping.basics import wallclock
from timekeeping.models import Brand, ReceivedWebhook, WebhookEndpoint
from timekeeping.webhooks import endpoints

LARGEST_BODY = 256 * 1024  # bytes: our own events are a few KB
SHOWN = 100  # arrivals on the page, newest first
HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


class Unverified(ValueError):
    """A post whose signature does not verify: nothing is kept."""


def demo_only(view):
    """404 unless DEBUG is on, before anything else: with DEBUG off nobody, signed in or not,
    can tell the receiver is there."""
    @functools.wraps(view)
    def guarded(request, *args, **kwargs):
        if not settings.DEBUG:
            raise Http404("the demo receiver runs only in the demo")
        return view(request, *args, **kwargs)
    return guarded


def take(endpoint: WebhookEndpoint, body: bytes, headers: dict[str, str], *,
         now: datetime) -> ReceivedWebhook:
    """Verify a post with the endpoint's secrets (the current one, and the one it replaced
    while a rotation's 24 hours last) and keep it, with the newest `KEPT` of its brand.
    Raises `Unverified` (and keeps nothing) when no secret verifies it."""
    event, reason = None, "no secret verifies it"
    for secret in endpoints.signing_secrets(endpoint, now):
        try:
            event = Webhook(secret).verify(body, headers)
            break
        except (WebhookVerificationError, ValueError) as refused:
            reason = str(refused)
    if not isinstance(event, dict):
        raise Unverified(reason if event is None else "The body is not a JSON object.")
    with transaction.atomic():
        again = ReceivedWebhook.objects.filter(endpoint=endpoint,
                                               webhook_id=headers["webhook-id"]).exists()
        kept = ReceivedWebhook.objects.create(
            brand_id=endpoint.brand_id, endpoint=endpoint,
            webhook_id=headers["webhook-id"][:100], type=str(event.get("type", ""))[:100],
            summary=str(event.get("summary", ""))[:2000], received=now, again=again,
            body=json.dumps(event, indent=2, ensure_ascii=False))
        _keep_newest(endpoint.brand_id)
    return kept


def _keep_newest(brand_id: str) -> None:
    older = ReceivedWebhook.objects.filter(brand_id=brand_id).values_list("pk", flat=True)[
        ReceivedWebhook.KEPT:]
    ReceivedWebhook.objects.filter(pk__in=list(older)).delete()


@demo_only
@csrf_exempt
@require_POST
def receive(request, endpoint_id: str):
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("no such endpoint")
    body = request.body  # Django refuses one past DATA_UPLOAD_MAX_MEMORY_SIZE
    if len(body) > LARGEST_BODY:
        return JsonResponse({"error": "The body is larger than this receiver reads."},
                            status=413)
    headers = {name: request.headers.get(name, "") for name in HEADERS}
    try:
        kept = take(endpoint, body, headers, now=wallclock.wall_now())
    except Unverified as refused:
        return JsonResponse({"error": f"The signature did not verify: {refused}"}, status=400)
    return JsonResponse({"verified": True, "again": kept.again})


@demo_only
@require_GET
@login_required
def arrived(request):
    """What arrived for the brands the signed-in person owns; 404 for one who owns none."""
    brands = {brand.pk: brand for brand in Brand.objects.filter(owner=request.user)}
    if not brands:
        raise Http404("no brand of yours")
    zones = {pk: brand.calendar_rules().zone_name for pk, brand in brands.items()}
    rows = list(ReceivedWebhook.objects.filter(brand_id__in=list(brands))
                .select_related("endpoint")[:SHOWN])
    for row in rows:
        row.brand_name, row.zone = brands[row.brand_id].name, zones[row.brand_id]
    return render(request, "demo/receiver.html", {"rows": rows, "shown": SHOWN})
