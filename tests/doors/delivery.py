"""The delivery doors of the authorization matrix: the members' portal under /delivery/.

A delivery page answers a brand's members: owner_a (whose membership is made on their first
visit), staff_a (a manager of A) and viewer_a; owner_b reaches the page as B's member, and
sees none of A. Everyone else signed in hears 404. A control on A's task or date answers A's
owner and manager (302, sent back with a message; a JSON body finds the form empty, which is
said in words too), 403 to A's viewer, and 404 to everyone else; a caller with no session
(anonymous, an API key) is sent to sign in.

The world (tests/world.py) gives `{task}`, A's `prepare` task, and `{date}`, A's
refund-window date assigned to staff_a. The task's doors run take, extend, release, done in
that order; the date's mark done comes after the others, as it settles the date, and its
assign last of all.
"""

from tests.doors import Endpoint
from tests.world import ACTORS


def _member(staff: int, viewer: int) -> dict[str, int]:
    """A delivery door: A's manager hears `staff`, A's viewer `viewer`; other people 404; no
    session, 302."""
    return {**dict.fromkeys(ACTORS, 404), "owner_a": staff, "staff_a": staff,
            "viewer_a": viewer, "owner_b": 404 if viewer == 403 else staff,
            "anonymous": 302, "key_a": 302, "key_b": 302}


DOORS = [
    Endpoint("delivery home", "get", "/delivery/", _member(200, 200)),
    *[Endpoint(f"delivery task {verb}", "post", f"/delivery/tasks/{{task}}/{verb}",
               _member(302, 403)) for verb in ("take", "extend", "release", "done")],
    *[Endpoint(f"delivery date {verb}", "post", f"/delivery/dates/{{date}}/{verb}",
               _member(302, 403)) for verb in ("acknowledge", "choose")],
    # Asked first: the page that asks (the matrix's JSON body says no yes).
    Endpoint("delivery date done", "post", "/delivery/dates/{date}/done", _member(200, 403)),
    # The withdraw form names its subject in the body, which the matrix leaves empty: B's owner,
    # a member of B, is sent back with the form's error like A's people.
    Endpoint("delivery withdraw", "post", "/delivery/withdraw",
             {**_member(302, 403), "owner_b": 302}),
    # Undo (issue 27): the world's record is its job's opening, no action: not found for A's
    # people who act (as for strangers); a viewer may not act.
    Endpoint("delivery undo", "post", "/delivery/records/{record}/undo", _member(404, 403)),
    # Last: the empty form assigns the date to nobody, so it is no longer staff_a's.
    Endpoint("delivery date assign", "post", "/delivery/dates/{date}/assign",
             _member(302, 403)),
]
