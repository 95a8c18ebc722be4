"""The portal doors of the authorization matrix: the customer portal, the sign-in pages and an
invitation's link.

A portal page answers A's customer (customer_a, a customer of A's subject) and 404 to every
other signed-in person, whatever their role at A; a caller with no session (anonymous, an API
key) is sent to sign in. The world's `{clock}` is A's filing clock, which the brand answers
for (owner `of_record`): its customer sees it and may not act on it (403)."""

from tests.doors import EVERYONE_200, Endpoint
from tests.world import ACTORS
from timekeeping.recurring import plans


def _cancelled(world) -> dict:
    """A's plan cancelled at its cycle's end, before the caller asks."""
    plans.cancel_at_cycle_end(world.subscription, by="the world")
    return {}


NO_SUCH_INVITATION = "NoSuchInvitation" + "0" * 27  # an invitation token's length, unknown


def _customer(answer: int) -> dict[str, int]:
    """A portal door: A's customer hears `answer`; other people 404; no session, 302."""
    return {**dict.fromkeys(ACTORS, 404), "customer_a": answer, "anonymous": 302, "key_a": 302,
            "key_b": 302}


DOORS = [
    Endpoint("portal subject", "get", "/portal/subjects/{subject}/", _customer(200)),
    Endpoint("portal subject, older history", "get", "/portal/subjects/{subject}/",
             _customer(200), query="before=2100-01-01T00:00:00Z"),
    Endpoint("portal calendar download", "get", "/portal/subjects/{subject}/calendar.ics",
             _customer(200)),
    Endpoint("portal acknowledge, the brand's date", "post",
             "/portal/clocks/{clock}/acknowledge", _customer(403), body={"item": "US"}),
    Endpoint("portal mark done, the brand's date", "post", "/portal/clocks/{clock}/done",
             _customer(403), body={"item": "US"}),
    Endpoint("portal choose, the brand's date", "post", "/portal/clocks/{clock}/choose",
             _customer(403), body={"item": "US", "choice": "file"}),
    Endpoint("portal acknowledge, their own date", "post",
             "/portal/clocks/{buyer_clock}/acknowledge", _customer(302), body={"item": ""}),
    Endpoint("invitation, no such link", "get", f"/accounts/invitations/{NO_SUCH_INVITATION}/",
             dict.fromkeys(ACTORS, 404)),
    Endpoint("invitation accept, no such link", "post",
             f"/accounts/invitations/{NO_SUCH_INVITATION}/", dict.fromkeys(ACTORS, 404)),
    Endpoint("password reset", "get", "/accounts/password_reset/", EVERYONE_200),
    Endpoint("password reset, asked", "post", "/accounts/password_reset/", EVERYONE_200,
             body={"email": "nobody@example.test"}),  # a JSON body: the form says what is missing
    Endpoint("password reset sent", "get", "/accounts/password_reset/done/", EVERYONE_200),
    Endpoint("password reset link, wrong", "get", "/accounts/reset/MQ/wrong-token/",
             EVERYONE_200),
    Endpoint("password reset complete", "get", "/accounts/reset/done/", EVERYONE_200),
    Endpoint("portal cancel a plan at its cycle's end", "post",
             "/portal/plans/{subscription}/cancel", _customer(302),
             body=lambda w, n: _cancelled(w)),  # cancelled: nothing to ask
    # Each caller finds the plan cancelled: A's customer resumes it (and is sent back).
    Endpoint("portal resume a plan", "post", "/portal/plans/{subscription}/resume",
             _customer(302), body=lambda w, n: _cancelled(w)),
    # S16: the world's manifest (the demo's tax manifest) has a steward service, and the
    # matrix posts no form saying yes, so A's customer is asked first (200) and nothing is
    # ordered; everyone else finds no such subject.
    Endpoint("portal keep these dates with us", "post", "/portal/subjects/{subject}/keep",
             _customer(200)),
    Endpoint("portal ask page", "get", "/portal/asks/{ask}/", _customer(200)),
    # Undo (issue 27): the world's record is its job's opening on A's subject, no action: not
    # found for A's customer, as for everyone else.
    Endpoint("portal undo", "post", "/portal/records/{record}/undo", _customer(404)),
    # Last: it gives the subject a new feed token, which the feed doors above already used.
    Endpoint("portal new feed link", "post", "/portal/subjects/{subject}/calendar/token",
             _customer(200)),  # asked first
]
