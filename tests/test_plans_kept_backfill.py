"""The migration that gave jobs, subjects and subscriptions the plan they keep (S24,
timekeeping 0033) sets each existing row to its brand's plan of the moment."""

from datetime import UTC, date, datetime

import pytest

from tests.migrating import migrate, schema_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("timekeeping", "0032_stewards")]
AFTER = [("timekeeping", "0033_plans_kept")]
AT = datetime(2027, 1, 4, 9, tzinfo=UTC)


@pytest.fixture
def before():
    with schema_at(BEFORE) as apps:
        yield apps


def test_existing_work_keeps_the_plan_its_brand_is_on_when_it_migrates(before):
    model = lambda name: before.get_model("timekeeping", name).objects  # noqa: E731
    for slug, plan in (("small", "free"), ("grown", "launch")):
        brand = model("Brand").create(name=slug, slug=slug, plan=plan)
        subject = model("Subject").create(brand=brand, kind="k", key=slug, name="S")
        model("Job").create(brand=brand, subject=subject, service="books", bundle="b",
                            opened=AT)
        model("Subscription").create(brand=brand, subject=subject, service="plan",
                                     bundle="b", anchor=date(2027, 1, 1), opened=AT)
    after = migrate(AFTER)
    for name in ("Subject", "Job", "Subscription"):
        kept = after.get_model("timekeeping", name).objects.values_list("brand__slug", "plan")
        assert sorted(kept) == [("grown", "launch"), ("small", "free")]
