"""`basics.json_text`: an encoder made once writes what `json.dumps` writes."""

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from hypothesis import given
from hypothesis import strategies as st

from timekeeping.basics import json_text

DJANGO = DjangoJSONEncoder().default
# Every character, lone surrogates among them, and those JSON escapes.
TEXT = st.characters(exclude_categories=[]) | st.sampled_from("\ud800\udfff\"\\\x00\u2028é")
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text(alphabet=TEXT))
KEYS = st.text(alphabet=TEXT, max_size=8) | st.integers() | st.booleans()
DATA = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)
OTHERS = (st.datetimes(timezones=st.just(UTC)) | st.decimals(allow_nan=False)
          | st.timedeltas(max_value=timedelta(days=999)))


@given(DATA)
def test_it_writes_what_json_dumps_writes(data):
    assert json_text.encoder(DJANGO)(data) == json.dumps(data, default=DJANGO)
    assert (json_text.encoder(str, separators=(",", ":"))(data)
            == json.dumps(data, default=str, separators=(",", ":")))


@given(st.dictionaries(st.text(max_size=8), OTHERS, max_size=4))
def test_it_writes_what_its_default_makes_of_other_values(data):
    assert json_text.encoder(DJANGO)(data) == json.dumps(data, default=DJANGO)


def test_it_refuses_what_its_default_refuses_and_writes_again_after():
    encode = json_text.encoder(DJANGO)
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        encode({"tags": {"a", "b"}})
    held = {"at": datetime(2027, 3, 28, 1, 30, tzinfo=UTC), "n": Decimal("1.10")}
    assert encode(held) == '{"at": "2027-03-28T01:30:00Z", "n": "1.10"}'


def test_data_that_holds_itself_is_refused():
    looped: dict = {}
    looped["self"] = looped
    with pytest.raises(RecursionError):
        json_text.encoder(DJANGO)(looped)
