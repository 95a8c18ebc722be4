"""The doors of the authorization matrix (tests/test_authorization.py): each area keeps its
own list (`api`, `console`, `portal`, `reading`); the helpers here say what each caller hears.

Callers (tests/world.py ACTORS): owner_a, staff_a (a manager of A), viewer_a, customer_a (a
customer of A's subject), owner_b, nobody (signed in, of no brand), anonymous, key_a, key_b.
"""

from dataclasses import dataclass

from tests.world import ACTORS


@dataclass(frozen=True)
class Endpoint:
    """One door: how to ask it as actor number n, and what each actor hears."""

    name: str
    method: str
    path: str  # {brand} {subject} {job} {clock} {test_clock} {key} {order} {code} {delivery}
    # {parked}: a timer of A's parked after its failures; {erasable}: a subject of A's to erase;
    # {schedule}: a schedule of A's, parked
    expect: dict[str, int]
    body: object = None  # a dict, or a function of (world, n) -> dict
    query: str = ""


def _as(staff: int, strangers: int, anonymous: int = 401, owner: int | None = None,
        key_a: int | None = None, key_b: int | None = None,
        viewer: int | None = None) -> dict[str, int]:
    """What each caller hears: staff (a manager of A) and, by default, the owner, the viewer
    and A's key hear `staff`; strangers (B's owner and key, a person of no brand, A's customer,
    who uses the portal and not the API) hear `strangers`."""
    return {"owner_a": owner or staff, "staff_a": staff, "owner_b": strangers,
            "nobody": strangers, "anonymous": anonymous, "key_a": key_a or staff,
            "key_b": key_b or strangers, "viewer_a": viewer or staff,
            "customer_a": strangers}


def _writes(staff: int, strangers: int, **others) -> dict[str, int]:
    """A door that changes things: a viewer of A hears 403."""
    return _as(staff, strangers, viewer=others.pop("viewer", 403), **others)


EVERYONE_200 = dict.fromkeys(ACTORS, 200)


def _page(people: int, strangers: int, **others) -> dict[str, int]:
    """A console page: A's people hear `people`; strangers `strangers`; a caller with no
    session (anonymous, an API key) is sent to sign in."""
    return {**_as(people, strangers, anonymous=302, key_a=302, key_b=302), **others}
