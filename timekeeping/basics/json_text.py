"""JSON text written by an encoder made once (issue 32: a fired timer's record).

`json.JSONEncoder.encode` makes its C encoder anew at each call: for a record of ten keys that
was a third of writing it, for an empty object four fifths. `encoder(...)` makes the C encoder
once (`json.encoder`'s own, made as `encode` makes it) and answers what `json.dumps` with the
same `default` and `separators` writes, ASCII only. There is no circular check
(`check_circular=False`): data that holds itself raises RecursionError, not ValueError.
Where the C encoder is missing, `JSONEncoder.encode` answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii

# A text as JSON writes it, quoted, ASCII only (what `encoder` writes for a text).
quoted = encode_basestring_ascii


def encoder(default: Callable[[object], object], *, separators: tuple[str, str] = (", ", ": ")
            ) -> Callable[[object], str]:
    """A function writing data as `json.dumps(data, default=…, separators=…)` does."""
    item, key = separators
    slow = json.JSONEncoder(default=default, separators=separators, check_circular=False)
    if c_make_encoder is None:
        return slow.encode
    fast = c_make_encoder(None, default, encode_basestring_ascii, None, key, item, False, False,
                          True)

    def encode(data: object) -> str:
        if isinstance(data, str):  # a string alone is written by `encode` itself
            return slow.encode(data)
        return "".join(fast(data, 0))

    return encode
