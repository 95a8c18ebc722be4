"""The reading doors of the authorization matrix."""

from tests.doors import Endpoint, _as, _page, _writes  # noqa: F401 - for the rows to come

DOORS: list[Endpoint] = []
