"""A stranger's URL answers 404 in the browser, as the matrix says: brand B's owner opening
brand A's console, and a customer opening a subject that is not theirs (of their own brand or
of another)."""

import pytest
from playwright.sync_api import expect

from timekeeping.models import Subject

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


def test_brand_bs_owner_gets_404_from_brand_as_console(page, live_server, world, sign_in, look):
    sign_in(page, "owner_b", "pw")
    for path in (f"/console/{world.brand.pk}/",
                 f"/console/{world.brand.pk}/subjects/{world.subject.pk}/"):
        answer = page.goto(f"{live_server.url}{path}")
        assert answer.status == 404, path
        expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
    look("not-found-console")
    look.assert_accessible()


def test_a_customer_gets_404_from_a_subject_not_theirs(page, live_server, world, sign_in, look):
    neighbour = Subject.objects.create(brand=world.brand, kind="taxpayer", key="2",
                                       name="The neighbour")
    elsewhere = Subject.objects.create(brand=world.other, kind="taxpayer", key="3",
                                       name="Brand B's taxpayer")
    sign_in(page, "customer_a", "pw")
    for subject in (neighbour, elsewhere):
        answer = page.goto(f"{live_server.url}/portal/subjects/{subject.pk}/")
        assert answer.status == 404, subject.name
        expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
        expect(page.locator("body")).not_to_contain_text(subject.name)
    look("not-found-portal")
    look.assert_accessible()
