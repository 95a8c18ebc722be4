"""The history names who acted as a reader would: a person by name, an API key as a program."""

import pytest

from timekeeping.clocks.history import person


@pytest.mark.parametrize(("recorded", "read"), [
    ("user 7 (ana)", "ana"),
    ("user 12 (grace (front desk))", "grace (front desk)"),
    ("key key_01HX (billing sync)", "a program (billing sync)"),
    ("due rule", "due rule"),
    ("then file", "then file"),
])
def test_a_recorded_actor_reads_as_a_name(recorded, read):
    assert person(recorded) == read
