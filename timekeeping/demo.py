"""The demo world that `make demo` loads. Idempotent: loading twice changes nothing new.

Later features add their own examples here, each in its own function called by `demo_load`.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction

from timekeeping import clock, delays
from timekeeping.models import Brand

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "keeping-time-demo"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    brand: Brand


@transaction.atomic
def demo_load() -> DemoLogin:
    """Create (or find) the demo login and the demo brand it owns."""
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    # The demo's password is printed by `make demo`; set it each time so it stays true.
    user.set_password(DEMO_PASSWORD)
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["password", "is_staff", "is_superuser"])
    brand, _ = Brand.objects.get_or_create(
        slug="demo", defaults={"name": "Demo brand", "owner": user}
    )
    demo_delays(brand)
    return DemoLogin(username=DEMO_USERNAME, password=DEMO_PASSWORD, brand=brand)


def demo_delays(brand: Brand) -> None:
    """Delays that fire while the demo runs: a note each minute for the next ten minutes.

    Keyed by the minute they are owed, so loading twice in one minute arms nothing new, and
    each later `make demo` arms a fresh set.
    """
    now = clock.wall_now().replace(second=0, microsecond=0)
    for minutes in range(1, 11):
        at = now + timedelta(minutes=minutes)
        delays.delay("timekeeping.note", {"demo": f"a note owed at {at:%H:%M}Z"}, brand=brand,
                     at=at, key=f"demo:note:{at:%Y-%m-%dT%H:%M}", owner="demo")
