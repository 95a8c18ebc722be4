"""A brand's webhook endpoints in the console (issue 30, docs/console.md "Webhooks"): the list,
adding one (its secret shown once), an endpoint's page with its settings and delivery log, and
its controls: change, send a test event, resend an event, a new secret, off, on again (what
it missed sent), replay the failed events between two times, and remove (asked first).

Only the brand's owner uses them (a manager or a viewer hears 403, anyone else 404, as for
API keys). Every change goes through `timekeeping.webhooks.endpoints`, as the API's does.
Resend and the test event answer in place with htmx; every control works without JavaScript.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.console import webhook_pages as pages
from timekeeping.console.access import brand_of, may
from timekeeping.console.shown import face_of
from timekeeping.models import Brand, Delivery, WebhookEndpoint
from timekeeping.webhooks import endpoints


def _endpoint(request, brand_id: str, endpoint_id: str) -> tuple[Brand, WebhookEndpoint]:
    brand = brand_of(request, brand_id, at_least="owner")
    found = WebhookEndpoint.objects.filter(brand=brand, pk=endpoint_id).first()
    if found is None:
        raise Http404("no such endpoint")
    return brand, found


def _back(endpoint: WebhookEndpoint):
    return redirect("console:webhook", brand_id=endpoint.brand_id, endpoint_id=endpoint.pk)


def _secret(request, brand: Brand, made: endpoints.Made, *, rotated: bool):
    """The secret on this answer only: never cached, never shown again."""
    answer = render(request, "console/webhook_secret.html", {
        "brand": brand, "endpoint": made.endpoint, "secret": made.secret, "rotated": rotated,
        "overlap_hours": int(endpoints.ROTATION_OVERLAP.total_seconds() // 3600)})
    answer["Cache-Control"] = "no-store"
    return answer


# -- the list and adding one -----------------------------------------------------------------

@login_required
def webhook_list(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    face = face_of(brand, wallclock.wall_now(), request)
    return render(request, "console/webhooks.html", {
        "brand": brand, "face": face, "glances": pages.glances(brand, face),
        "most": endpoints.MOST_ENDPOINTS})


@login_required
def webhook_add(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    if request.method != "POST":
        return _add_page(request, brand, pages.EndpointForm())
    form = pages.EndpointForm(request.POST)
    if not form.is_valid():
        return _add_page(request, brand, form, status=400)
    try:
        made = endpoints.make(brand, **form.changes())
    except endpoints.Invalid as invalid:
        pages.refused(form, invalid)
        return _add_page(request, brand, form, status=400)
    return _secret(request, brand, made, rotated=False)


def _add_page(request, brand: Brand, form: pages.EndpointForm, status: int = 200):
    return render(request, "console/webhook_add.html", {"brand": brand, "form": form},
                  status=status)


# -- an endpoint's page ----------------------------------------------------------------------

def _page(request, brand: Brand, endpoint: WebhookEndpoint, *, form=None, replay=None,
          status: int = 200):
    face = face_of(brand, wallclock.wall_now(), request)
    deliveries = Delivery.objects.filter(brand=brand, endpoint=endpoint).order_by(
        "-created", "-pk")
    page = Paginator(deliveries, pages.LOG_PAGE).get_page(request.GET.get("page"))
    zone = brand.calendar_rules().zone_name
    return render(request, "console/webhook.html", {
        "brand": brand, "endpoint": endpoint, "face": face, "page": page,
        "log": pages.log(brand, list(page), face), "off_said": pages.off_said(endpoint),
        "failing": face.at(endpoint.failing_since),
        "types": [pages.title(name) for name in endpoint.types],
        "form": form or pages.endpoint_form(endpoint),
        "replay": replay or pages.ReplayForm(zone=zone, auto_id="replay_%s"),
        "rotating_until": face.at(endpoint.previous_until)
        if endpoint.previous_until and endpoint.previous_until > face.now else None,
        "next": request.get_full_path()}, status=status)


@login_required
def webhook_page(request, brand_id: str, endpoint_id: str):
    brand, endpoint = _endpoint(request, brand_id, endpoint_id)
    return _page(request, brand, endpoint)


@login_required
@require_POST
def webhook_change(request, brand_id: str, endpoint_id: str):
    brand, endpoint = _endpoint(request, brand_id, endpoint_id)
    form = pages.EndpointForm(request.POST, auto_id="change_%s")
    if not form.is_valid():
        return _page(request, brand, endpoint, form=form, status=400)
    try:
        endpoints.change(endpoint, **form.changes())
    except endpoints.Invalid as invalid:
        pages.refused(form, invalid)
        endpoint.refresh_from_db()
        return _page(request, brand, endpoint, form=form, status=400)
    messages.success(request, "Saved: the endpoint's settings are changed.")
    return _back(endpoint)


@login_required
@require_POST
def webhook_test(request, brand_id: str, endpoint_id: str):
    _, endpoint = _endpoint(request, brand_id, endpoint_id)
    endpoints.send_test(endpoint)
    return _said(request, endpoint, "A test event is on its way: it goes out within a minute, "
                                    "and its answer shows in the log below.")


@login_required
@require_POST
def webhook_resend(request, brand_id: str, endpoint_id: str):
    _, endpoint = _endpoint(request, brand_id, endpoint_id)
    form = pages.EventForm(request.POST)
    try:
        if not form.is_valid():
            raise endpoints.Invalid("event", "event.required", "No such event of this brand.")
        endpoints.resend(endpoint, form.cleaned_data["event"])
    except endpoints.Invalid as invalid:
        return _said(request, endpoint, f"Nothing was sent. {invalid.message}", ok=False)
    return _said(request, endpoint, "Sent again: it goes out within a minute, with the same "
                                    "event id, so your system can tell it already has it.")


def _said(request, endpoint: WebhookEndpoint, said: str, *, ok: bool = True):
    """With htmx, the sentence in place of the button; without, the page again with it."""
    if request.htmx:
        # 200 even when refused: htmx swaps in only a success's answer.
        return render(request, "console/_webhook_said.html", {"said": said, "ok": ok})
    (messages.success if ok else messages.error)(request, said)
    return _back(endpoint)


@login_required
@require_POST
def webhook_rotate(request, brand_id: str, endpoint_id: str):
    brand, endpoint = _endpoint(request, brand_id, endpoint_id)
    return _secret(request, brand, endpoints.rotate(endpoint), rotated=True)


@login_required
@require_POST
def webhook_off(request, brand_id: str, endpoint_id: str):
    _, endpoint = _endpoint(request, brand_id, endpoint_id)
    endpoints.change(endpoint, enabled=False)
    messages.success(request, "Turned off: no events go to it until you turn it on again. "
                              "Events are still kept.")
    return _back(endpoint)


@login_required
@require_POST
def webhook_on(request, brand_id: str, endpoint_id: str):
    _, endpoint = _endpoint(request, brand_id, endpoint_id)
    messages.success(request, settling.turned_on(endpoint, endpoints.enable(endpoint)))
    return _back(endpoint)


@login_required
@require_POST
def webhook_replay(request, brand_id: str, endpoint_id: str):
    brand, endpoint = _endpoint(request, brand_id, endpoint_id)
    form = pages.ReplayForm(request.POST, zone=brand.calendar_rules().zone_name,
                            auto_id="replay_%s")
    if form.is_valid():
        try:
            sent = endpoints.replay(endpoint, since=form.cleaned_data["since"],
                                    until=form.cleaned_data["until"])
        except endpoints.Invalid as invalid:
            pages.refused(form, invalid)
    if not form.is_valid():
        return _page(request, brand, endpoint, replay=form, status=400)
    face = face_of(brand, wallclock.wall_now(), request)
    since, until = (face.at(form.cleaned_data[name]).local for name in ("since", "until"))
    events = "1 event" if sent == 1 else f"{sent} events"
    messages.success(request, f"Sent again: {events} from {since} to {until} that it did not "
                              "have." if sent else
                     f"Nothing to send again: it has every event from {since} to {until}.")
    return _back(endpoint)


@login_required
@require_POST
def webhook_remove(request, brand_id: str, endpoint_id: str):
    """Asked first, on a page of its own (no JavaScript needed): removing is hard to undo."""
    brand, endpoint = _endpoint(request, brand_id, endpoint_id)
    if request.POST.get("confirmed") != "yes":
        page = reverse("console:webhook", args=[brand.pk, endpoint.pk])
        return render(request, "confirm.html", {
            "brand": brand, "question": f"Remove the endpoint {endpoint}?",
            "consequence": "No more events go to it, and its delivery log is deleted. This "
                           "cannot be undone: to send events there again you would add it anew, "
                           "with a new secret for your system to check.",
            "action": request.path, "fields": [], "yes": "Yes, remove it", "back": page})
    name = str(endpoint)
    endpoints.remove(endpoint)
    messages.success(request, f"Removed: no more events go to {name}.")
    return redirect("console:webhooks", brand_id=brand.pk)


@login_required
def help_webhooks(request, brand_id: str):
    """What a webhook is and how a receiver checks one, in plain words."""
    brand = brand_of(request, brand_id)
    return render(request, "console/help_webhooks.html", {"brand": brand,
                                                          "can_own": may(request, "owner")})
