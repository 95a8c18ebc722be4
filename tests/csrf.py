"""Pages compared for what they say: CSRF tokens are masked afresh on every answer."""

import re

_TOKEN = re.compile(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"&]+')


def unmasked(page: str) -> str:
    """The page with its CSRF tokens blanked."""
    return _TOKEN.sub(r"\1<token>", page)
