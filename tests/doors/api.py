"""The API's doors (issue 10), and the pages that came with it."""

from tests.doors import EVERYONE_200, Endpoint, _as, _writes
from tests.world import ACTORS, manifest, parked_connection
from timekeeping.models import Member, Record
from timekeeping.recurring import plans
from timekeeping.tick import test_clocks


def _manager(world) -> str:
    return Member.objects.get(brand=world.brand, user__username="staff_a").pk

def _event(world) -> str:
    """An event of A's: its job's opening."""
    return Record.objects.get(kind="job.opened", job=world.job.pk).pk


def _walked(world, body: dict) -> dict:
    """Each caller finds the test clock ready: the advance the last one asked for is walked
    first, as the tick would."""
    walk = test_clocks.walking(world.test_clock)
    if walk is not None:
        test_clocks.drive(walk)
    return body


def _cancelled(world) -> dict:
    """Each caller finds A's plan cancelled at its cycle's end, so a writer's resume has
    something to undo; it is left cancelled for the doors after it."""
    plans.cancel_at_cycle_end(world.subscription, by="the world")
    return {}


DOORS = [
    Endpoint("home page", "get", "/", dict.fromkeys(ACTORS, 302)),
    Endpoint("console", "get", "/console/", {**_as(302, 404, anonymous=302), "key_a": 302,
                                             "key_b": 302, "owner_b": 302}),
    Endpoint("console home", "get", "/console/{brand}/",
             {**_as(200, 404, anonymous=302), "key_a": 302, "key_b": 302}),
    Endpoint("portal", "get", "/portal/", {**dict.fromkeys(ACTORS, 404), "customer_a": 200,
                                           "anonymous": 302, "key_a": 302, "key_b": 302}),
    Endpoint("sign-in page", "get", "/accounts/login/", EVERYONE_200),
    Endpoint("admin", "get", "/admin/", dict.fromkeys(ACTORS, 302)),
    Endpoint("api schema", "get", "/api/schema/", EVERYONE_200),
    Endpoint("feed", "get", "/subjects/{subject}/calendar.ics", EVERYONE_200,
             query="token={token}"),
    Endpoint("feed, wrong token", "get", "/subjects/{subject}/calendar.ics",
             dict.fromkeys(ACTORS, 404), query="token=wrong"),
    Endpoint("test clock create", "post", "/api/test_clocks", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "name": f"t{n}",
                                "frozen_time": "2027-01-01T00:00:00Z"}),
    Endpoint("test clock read", "get", "/api/test_clocks/{test_clock}", _as(200, 404)),
    Endpoint("test clock advance", "post", "/api/test_clocks/{test_clock}/advance",
             _writes(202, 404), body=lambda w, n: _walked(w, {"to": f"2026-12-{2 + n:02d}"
                                                                  "T00:00:00Z"})),
    Endpoint("test clock trace", "get", "/api/test_clocks/{test_clock}/trace", _as(200, 404)),
    # A rehearsal on the test clock: copies of A's live orders (each caller its own).
    Endpoint("test clock rows copy", "post", "/api/test_clocks/{test_clock}/rows",
             _writes(201, 404), body=lambda w, n: {"table": "orders", "ids": [w.orders[n]]}),
    Endpoint("test clock rows", "get", "/api/test_clocks/{test_clock}/rows", _as(200, 404)),
    Endpoint("test clock moves", "get", "/api/test_clocks/{test_clock}/moves", _as(200, 404)),
    Endpoint("test clock rows remove", "delete", "/api/test_clocks/{test_clock}/rows",
             _writes(200, 404)),
    # The owner's alone, as in the console (one rule: tests/test_authorization.py ONE_RULE);
    # a manager or a key plans one (the next door).
    Endpoint("manifest load", "post", "/api/brands/{brand}/manifests",
             _writes(403, 404, owner=201), body=lambda w, n: manifest()),
    Endpoint("manifest plan", "post", "/api/brands/{brand}/manifests/plan", _writes(200, 404),
             body=lambda w, n: manifest()),
    Endpoint("brand plan read", "get", "/api/brands/{brand}/plan", _as(200, 404),
             query="to=free"),
    Endpoint("brand plan change", "post", "/api/brands/{brand}/plan",
             _writes(403, 404, owner=200), body={"plan": "team"}),
    Endpoint("keys list", "get", "/api/brands/{brand}/keys", _as(403, 404, owner=200)),
    Endpoint("key create", "post", "/api/brands/{brand}/keys", _writes(403, 404, owner=201),
             body={"name": "a program"}),
    Endpoint("delivery dismiss", "post", "/api/brands/{brand}/deliveries/{delivery}/dismiss",
             _writes(200, 404), body={"reason": "the address is wrong"}),
    # A parked timer of A's (issue 31), parked again before each caller asks.
    Endpoint("timer retry now", "post", "/api/timers/{parked}/retry", _writes(200, 404)),
    Endpoint("timer give up", "post", "/api/timers/{parked}/give-up", _writes(200, 404)),
    # A's connection, its timed moves parked (issue 31), parked again before each caller asks.
    Endpoint("connection read", "get", "/api/brands/{brand}/connection", _as(200, 404)),
    Endpoint("connection retry now", "post", "/api/brands/{brand}/connection/retry",
             _writes(200, 404), body=parked_connection),
    Endpoint("connection give up", "post", "/api/brands/{brand}/connection/give-up",
             _writes(200, 404), body=parked_connection),
    # A schedule of A's, parked (issue 31), parked again before each caller asks.
    Endpoint("schedule retry now", "post", "/api/schedules/{schedule}/retry",
             _writes(200, 404)),
    Endpoint("schedule give up", "post", "/api/schedules/{schedule}/give-up",
             _writes(200, 404)),
    Endpoint("key revoke", "post", "/api/brands/{brand}/keys/{key}/revoke",
             _writes(403, 404, owner=200)),
    Endpoint("subject create", "post", "/api/subjects", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "kind": "taxpayer", "key": f"k{n}",
                                "name": "S"}),
    Endpoint("subject calendar", "get", "/api/subjects/{subject}/calendar", _as(200, 404)),
    Endpoint("feed token", "post", "/api/subjects/{subject}/calendar/token", _writes(200, 404)),
    # The owner's alone, as in the console (ONE_RULE); a key owns nothing (403). A's owner asks
    # first and erases {erasable}; the brand's others hear 403 before anything is read of it.
    Endpoint("subject erase", "post", "/api/subjects/{erasable}/erase",
             _writes(403, 404, owner=200)),
    Endpoint("job order", "post", "/api/jobs", _writes(201, 404),
             body=lambda w, n: {"service": "annual-return", "subject": w.subject.pk,
                                "period": str(2030 + n),
                                "input": {"jurisdictions": ["US"]}}),
    Endpoint("job step", "post", "/api/jobs/{job}/steps", _writes(200, 404),
             body={"step": "extend", "items": ["US"]}),
    # Nothing of A's job is filed yet, so a rejection is refused naming `items`.
    Endpoint("job rejection", "post", "/api/jobs/{job}/rejections", _writes(400, 404),
             body={"step": "file", "code": "math"}),
    Endpoint("clock acknowledge", "post", "/api/clocks/{clock}/acknowledge", _writes(200, 404),
             body={"item": "US"}),
    Endpoint("clock choose", "post", "/api/clocks/{clock}/choose", _writes(200, 404),
             body={"item": "US-NY", "choice": "extend"}),
    Endpoint("clock done", "post", "/api/clocks/{clock}/done", _writes(200, 404),
             body=lambda w, n: {"item": ["US", "US-CA", "-", "-", "-", "US-NJ", "-", "-", "-"][n]}),
    Endpoint("rows list", "get", "/api/tables/orders/rows", _as(200, 404),
             query="brand={brand}"),
    Endpoint("row create", "post", "/api/tables/orders/rows", _writes(201, 404),
             query="brand={brand}",
             body={"customer": "Ines", "pickup_at": "2030-01-01T12:00:00Z"}),
    Endpoint("row read", "get", "/api/tables/orders/rows/{order}", _as(200, 404),
             query="brand={brand}"),
    Endpoint("row update", "patch", "/api/tables/orders/rows/{order}", _writes(200, 404),
             query="brand={brand}", body={"customer": "Rui"}),
    Endpoint("row move", "post", "/api/tables/orders/rows/{order}/move", _writes(200, 404),
             query="brand={brand}", body={"to": "confirmed"}),
    Endpoint("public move", "post", "/api/public/{brand}/tables/tickets/links/{code}/move",
             EVERYONE_200, body={"to": "checked_in"}),
    Endpoint("public move, wrong code", "post",
             "/api/public/{brand}/tables/tickets/links/Wrong0000000/move",
             dict.fromkeys(ACTORS, 404), body={"to": "checked_in"}),
    Endpoint("postponement", "post", "/api/owner/calendar/postponements", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "from": "2031-01-01",
                                "through": "2031-01-02", "to": "2031-01-05",
                                "notice": f"notice {n}"}),
    # A job's own time (docs/jobs.md). Each caller ends a job of its own ({ending}). A task is
    # a person's: A's owner takes it first (a membership is made for them) and holds it, so A's
    # manager then hears 409 (task_held, task_not_held); keys are no members (403).
    Endpoint("job work", "get", "/api/jobs/{job}/work", _as(200, 404)),
    Endpoint("job end", "post", "/api/jobs/{ending}/end", _writes(200, 404)),
    Endpoint("job penalty", "post", "/api/jobs/{job}/penalties", _writes(201, 404),
             body=lambda w, n: {"clock": "file", "amount": 100, "currency": "USD",
                                "notice": f"N{n}"}),
    # The world's service has no charge, so no acceptance window: a send-back is a conflict.
    Endpoint("job send back", "post", "/api/jobs/{ending}/send_back", _writes(409, 404)),
    Endpoint("task take", "post", "/api/tasks/{task}/take", _writes(409, 404, owner=200,
                                                                     key_a=403)),
    Endpoint("task extend", "post", "/api/tasks/{task}/extend",
             _writes(409, 404, owner=200, key_a=403)),
    Endpoint("task release", "post", "/api/tasks/{task}/release",
             _writes(409, 404, owner=200, key_a=403)),
    Endpoint("task done, not held", "post", "/api/tasks/{task}/done",
             _writes(409, 404, key_a=403)),
    # A party's link is its own key: everyone reads it; the first answer commits its step.
    Endpoint("link read", "get", "/api/links/{link}", EVERYONE_200),
    Endpoint("link answer", "post", "/api/links/{link}",
             {**dict.fromkeys(ACTORS, 409), "owner_a": 200}),
    Endpoint("link page", "get", "/ask/{link}/", EVERYONE_200),
    # Plans (docs/recurring.md): A's subject is on A's plan already, so subscribing it again
    # is refused naming the field (400); the stranger hears 404 for the subject.
    # Standby seasons (docs/jobs.md): each caller puts A's manager on standby for its own days.
    Endpoint("standby list", "get", "/api/brands/{brand}/standby", _as(200, 404)),
    Endpoint("standby season", "post", "/api/brands/{brand}/standby", _writes(201, 404),
             body=lambda w, n: {"member": _manager(w), "first": f"2031-{n + 1:02d}-01",
                                "last": f"2031-{n + 1:02d}-20", "retainer": 20000,
                                "currency": "USD"}),
    Endpoint("subscribe", "post", "/api/subscriptions", _writes(400, 404),
             body=lambda w, n: {"subject": w.subject.pk, "service": "tax-plan"}),
    Endpoint("subscription", "get", "/api/subscriptions/{subscription}", _as(200, 404)),
    Endpoint("subscription cancel", "post", "/api/subscriptions/{subscription}/cancel",
             _writes(200, 404)),
    Endpoint("subscription resume", "post", "/api/subscriptions/{subscription}/resume",
             _writes(200, 404), body=lambda w, n: _cancelled(w)),
    Endpoint("subscription payment", "post", "/api/subscriptions/{subscription}/payments",
             _writes(201, 404), body={"amount": 100, "currency": "USD"}),
    # Outcomes (docs/money.md): each caller pays its own invoice of A's outcome (collected
    # each), then reverses it inside its window; recording a won outcome lost is refused.
    Endpoint("outcome", "get", "/api/outcomes/{outcome}", _as(200, 404)),
    Endpoint("outcome payment", "post", "/api/outcomes/{outcome}/payments", _writes(201, 404),
             body=lambda w, n: {"amount": 10000, "currency": "USD", "method": "bank",
                                "invoice": f"I{n}"}),
    Endpoint("outcome reversal", "post", "/api/outcomes/{outcome}/reversals",
             _writes(201, 404), body=lambda w, n: {"invoice": f"I{n}", "why": "refund"}),
    Endpoint("outcome lost", "post", "/api/outcomes/{outcome}/lost", _writes(400, 404),
             body={"why": "claim denied"}),
    Endpoint("subject event", "post", "/api/subjects/{subject}/events", _writes(201, 404),
             body=lambda w, n: {"event": "notice.received", "key": f"N{n}",
                                "input": {"reply_by": "2031-03-14"}}),
    Endpoint("link, wrong key", "get", "/api/links/Wrong0000000000000000", dict.fromkeys(
        ACTORS, 404)),
    # Webhooks (issue 30): a brand's endpoints are its owner's (a key owns nothing: 403);
    # its events are read by everyone who keeps it. {webhook} is the doors' endpoint of A's
    # (tests/world.py), found by its description (so no door here changes that), turned on by
    # "enable" and made again, off, after the owner removes it (last of these doors).
    Endpoint("events list", "get", "/api/brands/{brand}/events", _as(200, 404)),
    Endpoint("webhooks list", "get", "/api/brands/{brand}/webhooks", _as(403, 404, owner=200)),
    Endpoint("webhook create", "post", "/api/brands/{brand}/webhooks",
             _writes(403, 404, owner=201),
             body=lambda w, n: {"url": f"https://hooks.example.test/{n}", "types": ["job.opened"],
                                "description": "our ledger"}),
    Endpoint("webhook read", "get", "/api/brands/{brand}/webhooks/{webhook}",
             _as(403, 404, owner=200)),
    Endpoint("webhook change", "patch", "/api/brands/{brand}/webhooks/{webhook}",
             _writes(403, 404, owner=200), body={"types": ["date.missed", "date.at_risk"]}),
    Endpoint("webhook log", "get", "/api/brands/{brand}/webhooks/{webhook}/deliveries",
             _as(403, 404, owner=200)),
    Endpoint("webhook rotate", "post", "/api/brands/{brand}/webhooks/{webhook}/rotate",
             _writes(403, 404, owner=200)),
    Endpoint("webhook disable", "post", "/api/brands/{brand}/webhooks/{webhook}/disable",
             _writes(403, 404, owner=200)),
    Endpoint("webhook enable", "post", "/api/brands/{brand}/webhooks/{webhook}/enable",
             _writes(403, 404, owner=200)),
    Endpoint("webhook test", "post", "/api/brands/{brand}/webhooks/{webhook}/test",
             _writes(403, 404, owner=202)),
    Endpoint("webhook replay", "post", "/api/brands/{brand}/webhooks/{webhook}/replay",
             _writes(403, 404, owner=200), body={"since": "2026-11-30T00:00:00+01:00",
                                                 "until": "2026-12-02T00:00:00+01:00"}),
    Endpoint("webhook resend", "post", "/api/brands/{brand}/webhooks/{webhook}/resend",
             _writes(403, 404, owner=202), body=lambda w, n: {"event": _event(w)}),
    Endpoint("webhook remove", "delete", "/api/brands/{brand}/webhooks/{webhook}",
             _writes(403, 404, owner=204)),
    # Undo (issue 27): the world's record is its job's opening, which is no action: A's
    # people who may act hear 409 (undo_not_undoable), a viewer 403, strangers 404.
    Endpoint("record undo", "post", "/api/records/{record}/undo", _writes(409, 404)),
]
