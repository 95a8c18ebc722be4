"""What the console's webhook pages show (issue 30, docs/console.md "Webhooks"): the forms that
read what an owner typed, the event types in the owner's words, a brand's endpoints at a
glance, and one endpoint's delivery log. The views (`console/webhooks.py`) call
`timekeeping.webhooks.endpoints` for every change; nothing here changes anything.

Each list is read in a fixed number of queries: the endpoints with their last attempt (one),
a page of the log with its events and its attempts (three)."""

from __future__ import annotations

from dataclasses import dataclass, field
from http import HTTPStatus

from django import forms
from django.db.models import OuterRef, Subquery

from timekeeping.clocks import history
from timekeeping.console.forms import InstantField
from timekeeping.console.shown import Face, Shown
from timekeeping.models import Delivery, Record, WebhookAttempt, WebhookEndpoint
from timekeeping.webhooks import catalogue, endpoints, sending

LOG_PAGE = 25  # events a page of the log shows

# Each event type as an owner names it; the catalogue's own sentence says what it means.
TITLES = {
    "date.notice_sent": "Reminder sent", "date.at_risk": "Date at risk",
    "date.kept": "Date kept", "date.missed": "Date missed", "date.moved": "Date moved",
    "date.reopened": "Missed date reopened", "job.opened": "Job opened",
    "job.ended": "Job ended", "job.lapsed": "Job ran out of time",
    "ask.opened": "Question asked", "ask.answered": "Question answered",
    "ask.expired": "Question went unanswered", "task.held": "Task on hold",
    "task.released": "Task off hold", "subscription.renewed": "Subscription renewed",
    "subscription.charged": "Subscription paid",
    "subscription.payment_failed": "Subscription payment failed",
    "subscription.cancelled": "Subscription cancelled",
    "subject.erased": "Subject's personal data erased", "schedule.failed": "Schedule failed",
    "schedule.recovered": "Schedule ran again", "row.moved": "Row moved on time",
    "row.set_aside": "Row held back", "timer.late": "Work ran late",
    "timer.parked": "Work parked after failing",
    "connection.parked": "Timed moves parked after failing",
    "schedule.parked": "Schedule parked after failing",
    "tick.stopped": "Scheduled work had stopped",
    catalogue.TEST_TYPE: "Test event",
}
# What each delivery's state is to the owner.
STATES = {Delivery.State.PENDING: "waiting to be sent", Delivery.State.RUNNING: "being sent",
          Delivery.State.SUCCEEDED: "delivered", Delivery.State.FAILED: "not delivered"}
WHY_OFF = {WebhookEndpoint.Disabled.BY_OWNER: "you turned it off",
           WebhookEndpoint.Disabled.GONE: "its receiver answered that it is gone (410)",
           WebhookEndpoint.Disabled.FAILING: "every attempt to reach it failed for 5 days"}


def title(type_name: str) -> str:
    return TITLES.get(type_name, type_name)


# -- forms -----------------------------------------------------------------------------------

class EndpointForm(forms.Form):
    url = forms.CharField(label="Address (URL)", max_length=endpoints.URL_LONGEST,
                          help_text="Where we send the events: an https:// address of your own "
                                    "system.",
                          widget=forms.URLInput(attrs={"placeholder": "https://", "size": 60}))
    description = forms.CharField(label="Description", required=False,
                                  max_length=endpoints.DESCRIPTION_LONGEST,
                                  help_text="A name you will recognise, such as “Billing "
                                            "system”.")
    types = forms.MultipleChoiceField(
        label="Events to send", required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(each.name, title(each.name)) for each in catalogue.TYPES],
        help_text="Pick none to be sent every kind of event, including kinds added later.")
    test_clocks = forms.BooleanField(label="Also send what happens in test worlds",
                                     required=False)

    def changes(self) -> dict:
        data = self.cleaned_data
        return {"url": data["url"], "description": data["description"],
                "types": list(data["types"]), "test_clocks": data["test_clocks"]}


def endpoint_form(endpoint: WebhookEndpoint) -> EndpointForm:
    return EndpointForm(initial={"url": endpoint.url, "description": endpoint.description,
                                 "types": endpoint.types, "test_clocks": endpoint.test_clocks},
                        auto_id="change_%s")


class ReplayForm(forms.Form):
    def __init__(self, *args, zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["since"] = InstantField(zone=zone, label="From")
        self.fields["until"] = InstantField(zone=zone, label="Until")


class EventForm(forms.Form):
    event = forms.CharField(max_length=48)


def refused(form: forms.Form, invalid: endpoints.Invalid) -> None:
    """A refusal of `endpoints` on the field it names (the form's own when it has none)."""
    name = invalid.field if invalid.field in form.fields else None
    form.add_error(name, invalid.message)


# -- the list --------------------------------------------------------------------------------

@dataclass
class Glance:
    endpoint: WebhookEndpoint
    failing: Shown | None
    last: Shown | None
    last_said: str
    off_said: str


def glances(brand, face: Face) -> list[Glance]:
    """The brand's endpoints (at most `endpoints.MOST_ENDPOINTS`) with their last attempt, in
    one query."""
    last = WebhookAttempt.objects.filter(brand=brand, endpoint=OuterRef("pk")).order_by(
        "-at", "-id")
    found = WebhookEndpoint.objects.filter(brand=brand).annotate(
        last_at=Subquery(last.values("at")[:1]),
        last_status=Subquery(last.values("status")[:1]),
        last_refused=Subquery(last.values("refused")[:1]),
    ).order_by("created", "id")[:endpoints.MOST_ENDPOINTS]
    return [Glance(each, face.at(each.failing_since), face.at(each.last_at),
                   _last_said(each), off_said(each)) for each in found]


def _last_said(endpoint) -> str:
    if endpoint.last_at is None:
        return "Nothing sent yet"
    return answered(endpoint.last_status, endpoint.last_refused)


def off_said(endpoint: WebhookEndpoint) -> str:
    if endpoint.enabled:
        return ""
    return "Off: " + WHY_OFF.get(endpoint.disabled, "it was turned off")


def answered(status: int | None, refused: bool = False) -> str:
    """An attempt in words: "Delivered: answered 200 OK", "Failed: no answer", "Not sent: the
    address is not allowed"."""
    if refused:
        return "Not sent: the address is not allowed"
    if status is None:
        return "Failed: no answer"
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    verdict = "Delivered" if 200 <= status < 300 else "Failed"
    return f"{verdict}: answered {status} {phrase}".rstrip()


# -- the log ---------------------------------------------------------------------------------

@dataclass
class Try:
    at: Shown | None
    said: str
    ok: bool
    duration_ms: int
    response: str
    error: str


@dataclass
class Logged:
    delivery: Delivery
    title: str
    summary: str
    event: str  # the record's id, or "" for a test event (which cannot be sent again)
    written: Shown | None
    state: str
    tries: list[Try] = field(default_factory=list)
    planned: list[Shown | None] = field(default_factory=list)
    again: bool = False  # a resend of an event already sent


def log(brand, deliveries: list[Delivery], face: Face) -> list[Logged]:
    """A page of an endpoint's deliveries, each with its event and its attempts, oldest
    attempt first: two queries for the page, whatever its length, each by the brand."""
    records = Record.objects.filter(brand=brand).in_bulk(
        [d.event for d in deliveries if "test" not in d.payload])
    tries: dict[str, list[Try]] = {}
    for attempt in WebhookAttempt.objects.filter(
            brand=brand, delivery__in=[d.pk for d in deliveries]).order_by("at", "id"):
        tries.setdefault(attempt.delivery_id, []).append(_try(attempt, face))
    return [_logged(delivery, records.get(delivery.event), tries.get(delivery.pk, []), face)
            for delivery in deliveries]


def _try(attempt: WebhookAttempt, face: Face) -> Try:
    ok = attempt.status is not None and 200 <= attempt.status < 300
    said = answered(attempt.status, attempt.refused)
    if attempt.refused and attempt.error:  # the guard's refusal is in words: shown as it is
        said = f"Not sent: {attempt.error.rstrip('.')}"
    return Try(face.at(attempt.at), said, ok, attempt.duration_ms, attempt.response,
               "" if attempt.refused else attempt.error)


def _logged(delivery: Delivery, record: Record | None, tries: list[Try],
            face: Face) -> Logged:
    if "test" in delivery.payload:
        test = delivery.payload["test"]
        found = Logged(delivery, title(catalogue.TEST_TYPE), test.get("summary", ""), "",
                       face.at(delivery.created), _state(delivery), tries)
    else:
        kind = record.kind if record else ""
        found = Logged(delivery, title(catalogue.type_of(kind) or "") if record else
                       "An event no longer kept",
                       (history.say(record) or "") if record else "",
                       delivery.event if record else "",
                       face.at(record.written if record else delivery.created),
                       _state(delivery), tries)
    found.planned = [face.at(at) for at in sending.planned(delivery)]
    found.again = ":again:" in delivery.idempotency_key
    return found


def _state(delivery: Delivery) -> str:
    said = STATES[delivery.state]
    if delivery.state == Delivery.State.FAILED and delivery.attempts:
        tries = f"{delivery.attempts} tr{'y' if delivery.attempts == 1 else 'ies'}"
        return f"{said}: we stopped after {tries}"
    if delivery.state == Delivery.State.FAILED:
        return f"{said}: the endpoint was off"
    return said
