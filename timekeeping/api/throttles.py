"""The API's throttle (issue 31, docs/api.md#throttling): requests counted per API key, per
signed-in person (the browser's calls) and per address for callers with neither, each at its
rate of THROTTLE_RATES (`key`, `user`, `anon`). Past it DRF answers 429 with Retry-After.

A wrong API key counts against its address's anonymous rate too (`ApiKeyAuthentication`), so
keys cannot be guessed at full speed."""

from __future__ import annotations

from timekeeping.api.access import key_of
from timekeeping.web.throttle import Rate, address_of


class PerCaller(Rate):
    """One count per caller: its key, else its person, else its address (`Rate` counts
    `ident`)."""

    def allow_request(self, request, view) -> bool:
        self.scope, self.ident = _caller(request)
        return super().allow_request(request, view)


def _caller(request) -> tuple[str, str]:
    """(scope, ident): the scope names the rate, "key", "user" or "anon"."""
    key = key_of(request)
    if key is not None:
        scope, ident = "key", str(key.pk)
    elif request.user.is_authenticated:
        scope, ident = "user", str(request.user.pk)
    else:
        scope, ident = "anon", address_of(request)
    return scope, ident


THROTTLED = {
    "description": "Too many requests from this caller (its key, else its person, else its "
                   "address) in the last minute: wait the seconds Retry-After says.",
    "headers": {"Retry-After": {"description": "Seconds until the next request is counted.",
                                "schema": {"type": "integer", "minimum": 0}}},
    "content": {"application/json": {"schema": {
        "type": "object", "required": ["detail"],
        "properties": {"detail": {"type": "string"}}}}},
}


def documented(result, generator, request, public):
    """drf-spectacular's postprocessing hook (the settings' POSTPROCESSING_HOOKS): every
    operation of the API may answer 429, as the throttle above does."""
    for path in result.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault("429", THROTTLED)
    return result
