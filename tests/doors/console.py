"""The console doors of the authorization matrix (docs/console.md).

A brand's people read every page (the owner alone the API keys; a viewer not the sent
emails); a viewer's post answers 403;
strangers (another brand's owner, a person of no brand, a customer) hear 404, for another
brand's id exactly as for a missing one; a caller with no session is sent to sign in.

The matrix posts a JSON body, which a console form does not read: a control asked so finds its
form empty, and answers as it does to any bad form: a control sends the person back with the
error in a message (302), a form page shows the page with the error (400).
"""

from tests.doors import Endpoint, _page, _writes
from timekeeping.models import Member

READ = _page(200, 404)
CONTROL = _page(302, 404, viewer_a=403)  # sent back with a message
FORM = _page(400, 404, viewer_a=403)  # the page again, with the error
OWNER_READ = _page(403, 404, owner_a=200)
OWNER_FORM = _page(403, 404, owner_a=400)
OWNER_CONTROL = _page(403, 404, owner_a=302)

DOORS: list[Endpoint] = [
    Endpoint("console at risk", "get", "/console/{brand}/", READ),
    # Test mode on (kept in the session: the next door turns it off again).
    Endpoint("console in test mode", "get", "/console/{brand}/", READ,
             query="test={test_clock}&risk=2"),
    Endpoint("console test mode off", "get", "/console/{brand}/", READ, query="test=off"),
    Endpoint("console what a miss costs", "get", "/console/{brand}/help/money", READ),
    # The person's own choice of zone, for every page: anyone signed in sets their own.
    Endpoint("zone switch (every page)", "post", "/zone", _page(302, 302)),
    Endpoint("console settle what needs attention", "post", "/console/{brand}/attention/settle",
             CONTROL),
    *[Endpoint(f"console {verb}", "post", f"/console/{{brand}}/clocks/{{clock}}/{verb}",
               CONTROL) for verb in ("done", "choose", "acknowledge", "assign")],
    Endpoint("console why", "get", "/console/{brand}/why", READ, query="q={clock}"),
    Endpoint("console subjects", "get", "/console/{brand}/subjects/", READ,
             query="q=S&kind=taxpayer&page=1"),
    Endpoint("console subject", "get", "/console/{brand}/subjects/{subject}/", READ),
    Endpoint("console end a job", "post",
             "/console/{brand}/subjects/{subject}/jobs/{ending}/end", CONTROL),
    Endpoint("console record a payment", "post",
             "/console/{brand}/subjects/{subject}/plans/{subscription}/pay", CONTROL,
             body={"amount": "1.00"}),
    # Asked first: the page that asks (the matrix's JSON body says no yes).
    Endpoint("console subject feed link", "post", "/console/{brand}/subjects/{subject}/feed",
             _page(200, 404, viewer_a=403)),
    Endpoint("console subject invite", "post", "/console/{brand}/subjects/{subject}/invite",
             FORM),
    # The owner's alone; asked first: the page that asks (the matrix's JSON body says no yes).
    Endpoint("console subject erase", "post", "/console/{brand}/subjects/{erasable}/erase",
             _page(403, 404, owner_a=200)),
    Endpoint("console schedules", "get", "/console/{brand}/schedules/", READ),
    Endpoint("console schedule steer", "post", "/console/{brand}/schedules/act", CONTROL),
    Endpoint("console timed moves", "get", "/console/{brand}/moves/", READ),
    Endpoint("console connection steer", "post", "/console/{brand}/moves/act", CONTROL),
    # The timed moves of a test world (kept in the session: the door after turns it off).
    Endpoint("console timed moves in test mode", "get", "/console/{brand}/moves/", READ,
             query="test={test_clock}"),
    Endpoint("console timed moves live again", "get", "/console/{brand}/moves/", READ,
             query="test=off"),
    Endpoint("console rehearse rows", "post", "/console/{brand}/moves/rehearse", CONTROL),
    Endpoint("console rehearsal remove", "post", "/console/{brand}/moves/rehearse/remove",
             CONTROL),
    Endpoint("console postponements", "get", "/console/{brand}/postponements/", READ),
    Endpoint("console postponement add", "post", "/console/{brand}/postponements/add", FORM),
    Endpoint("console standby", "get", "/console/{brand}/standby/", READ),
    Endpoint("console standby add", "post", "/console/{brand}/standby/add", FORM),
    Endpoint("console test clocks", "get", "/console/{brand}/test-clocks/", READ),
    Endpoint("console test clock add", "post", "/console/{brand}/test-clocks/add", FORM),
    Endpoint("console test clock", "get", "/console/{brand}/test-clocks/{test_clock}/", READ),
    Endpoint("console test clock advance", "post",
             "/console/{brand}/test-clocks/{test_clock}/advance", FORM),
    # Each of the brand's people chooses their own digest: a viewer's post is theirs to make.
    Endpoint("console digest", "get", "/console/{brand}/digest", READ),
    Endpoint("console digest save", "post", "/console/{brand}/digest", _page(400, 404)),
    Endpoint("console settings", "get", "/console/{brand}/settings", READ),
    Endpoint("console plan", "get", "/console/{brand}/plan/", READ),
    Endpoint("console plan change", "post", "/console/{brand}/plan/change", OWNER_FORM),
    # The emails name the brand's customers: its owner and managers read them.
    Endpoint("console sent emails", "get", "/console/{brand}/emails/",
             _page(200, 404, viewer_a=403),
             query="page=1"),
    Endpoint("console keys", "get", "/console/{brand}/keys/", OWNER_READ),
    Endpoint("console key make", "post", "/console/{brand}/keys/add", OWNER_FORM),
    Endpoint("console key revoke", "post", "/console/{brand}/keys/{key}/revoke",
             _page(403, 404, owner_a=302)),
    Endpoint("console manifests", "get", "/console/{brand}/manifests/", READ),
    Endpoint("console manifest check", "post", "/console/{brand}/manifests/check", FORM),
    Endpoint("console manifest load", "post", "/console/{brand}/manifests/load", OWNER_FORM),
    # Webhooks (issue 30): the owner's alone, as the API keys. The world's endpoint is off:
    # "on" comes before "off", which leaves it off for the doors after.
    Endpoint("console webhooks", "get", "/console/{brand}/webhooks/", OWNER_READ),
    Endpoint("console webhook add (the form)", "get", "/console/{brand}/webhooks/add",
             OWNER_READ),
    Endpoint("console webhook add", "post", "/console/{brand}/webhooks/add", OWNER_FORM),
    Endpoint("console webhook", "get", "/console/{brand}/webhooks/{webhook}/", OWNER_READ,
             query="page=1"),
    Endpoint("console webhook change", "post", "/console/{brand}/webhooks/{webhook}/change",
             OWNER_FORM),
    Endpoint("console webhook test event", "post", "/console/{brand}/webhooks/{webhook}/test",
             OWNER_CONTROL),
    # No event named: sent back with why.
    Endpoint("console webhook resend", "post", "/console/{brand}/webhooks/{webhook}/resend",
             OWNER_CONTROL),
    # The new secret is on the answer's page.
    Endpoint("console webhook new secret", "post",
             "/console/{brand}/webhooks/{webhook}/rotate", _page(403, 404, owner_a=200)),
    Endpoint("console webhook on", "post", "/console/{brand}/webhooks/{webhook}/on",
             OWNER_CONTROL),
    Endpoint("console webhook off", "post", "/console/{brand}/webhooks/{webhook}/off",
             OWNER_CONTROL),
    Endpoint("console webhook replay", "post", "/console/{brand}/webhooks/{webhook}/replay",
             OWNER_FORM),
    # Asked first: the page that asks (the matrix's JSON body says no yes).
    Endpoint("console webhook remove", "post", "/console/{brand}/webhooks/{webhook}/remove",
             _page(403, 404, owner_a=200)),
    Endpoint("console how webhooks work", "get", "/console/{brand}/help/webhooks", READ),
    # A brand's data as a whole (issue 31): the owner's alone. The matrix's body names no
    # brand, so the delete form answers with its error and deletes nothing.
    Endpoint("console download or delete", "get", "/console/{brand}/leave/", OWNER_READ),
    Endpoint("console download the brand's data", "get", "/console/{brand}/leave/export",
             OWNER_READ),
    Endpoint("console delete the brand", "post", "/console/{brand}/leave/delete", OWNER_FORM),
    # Each person's own list of the brands they may bring back (none here).
    Endpoint("console deleted brands", "get", "/console/deleted/", _page(200, 200)),
    Endpoint("console bring a deleted brand back", "post",
             "/console/deleted/arc_Missing0000000000/undo", _page(404, 404)),
    # The API's door to the console's assign control (one function behind both).
    Endpoint("clock assign", "post", "/api/clocks/{clock}/assign", _writes(200, 404),
             body=lambda w, n: {"item": "US", "member": Member.objects.get(
                 brand=w.brand, role=Member.Role.MANAGER).pk}),
    # Undo (issue 27): the world's record is its job's opening, no action: not found for A's
    # people who may act (as for strangers); a viewer may not act.
    Endpoint("console undo", "post", "/console/{brand}/records/{record}/undo",
             _page(404, 404, viewer_a=403)),
]
