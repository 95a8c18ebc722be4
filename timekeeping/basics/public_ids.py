"""Public ids: a short prefix naming the kind of thing, an underscore, and random base62.

Every model that people or the API refer to uses one as its primary key (`brd_…`, `tc_…`,
`tmr_…`). Sixteen base62 characters carry about 95 bits, so a new id never repeats one ever
issued, deleted or not; the primary key's unique constraint turns the impossible collision into
an error instead of an overwrite. An explicit id may be given (the demo uses the seed's own
short ids), and it must carry the model's prefix.
"""

import os
import re
import threading

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.deconstruct import deconstructible

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_LENGTH = 16
ID_PATTERN = re.compile(r"^[a-z]+_[0-9A-Za-z]{1,40}$")
# Each byte of the OS's random source below 248 (four times 62) names a digit, the byte modulo
# 62, so each digit is as likely as any other; a byte from 248 up is passed by. As a
# translation table, so the bytes become digits in C, not a Python loop (issue 32: 2.5 µs an
# id, each timer, record and delivery a tick writes has one; now under 1 µs).
_DIGIT_OF_BYTE = bytes(ord(BASE62[byte % 62]) if byte < 248 else 0 for byte in range(256))
_PASSED_BY = bytes(range(248, 256))
# Digits are drawn a block at a time and handed out in order, each once (issue 32: a call to
# the OS's random source for every id was the product's largest single cost in firing real
# work). Under a lock, so two threads never take the same digits; a process forked from this
# one starts with none of them (`_forget`), so parent and child never hand out the same.
_BLOCK = 4096  # bytes a draw: some 250 ids
_lock = threading.Lock()
_pool, _at = "", 0


def new_id(prefix: str) -> str:
    """`prefix`, an underscore and 16 random base62 digits: 95 bits from the OS's random
    source (62**16 > 2**95)."""
    global _pool, _at  # noqa: PLW0603 - the digits drawn ahead, this module's own
    with _lock:
        while len(_pool) - _at < RANDOM_LENGTH:
            _pool, _at = _pool[_at:] + _drawn(), 0
        at = _at
        _at += RANDOM_LENGTH
        digits = _pool[at:at + RANDOM_LENGTH]
    return f"{prefix}_{digits}"


def _drawn() -> str:
    """A block of the OS's random bytes as digits, those from 248 up passed by (fewer than 16
    digits once in a very long while: `new_id` draws again)."""
    return os.urandom(_BLOCK).translate(_DIGIT_OF_BYTE, _PASSED_BY).decode()


def _forget() -> None:
    """In a process just forked: none of the parent's digits, and a lock of its own."""
    global _pool, _at, _lock  # noqa: PLW0603
    _pool, _at, _lock = "", 0, threading.Lock()


os.register_at_fork(after_in_child=_forget)


@deconstructible
class PublicId:
    """A default for a public id field: call it to get a fresh id with the prefix."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def __call__(self) -> str:
        return new_id(self.prefix)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicId) and other.prefix == self.prefix

    def __hash__(self) -> int:
        return hash(self.prefix)


@deconstructible
class PrefixValidator:
    def __init__(self, prefix: str):
        self.prefix = prefix

    def __call__(self, value: str) -> None:
        if not value.startswith(f"{self.prefix}_") or not ID_PATTERN.match(value):
            raise ValidationError(
                f"An id here is '{self.prefix}_' followed by letters and digits; got {value!r}.",
                code="invalid_id",
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrefixValidator) and other.prefix == self.prefix


class PublicIdField(models.CharField):
    """A primary key made of a prefix and random base62 (see the module's docstring)."""

    def __init__(self, prefix: str, **kwargs):
        self.prefix = prefix
        kwargs.setdefault("max_length", 48)
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("editable", False)
        kwargs["default"] = PublicId(prefix)
        kwargs["validators"] = [PrefixValidator(prefix)]
        super().__init__(**kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("default", None)
        kwargs.pop("validators", None)
        kwargs["prefix"] = self.prefix
        return name, path, args, kwargs
