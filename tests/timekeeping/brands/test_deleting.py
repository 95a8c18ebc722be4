"""Deleting a brand from the console, with 30 days to bring it back (issue 31, item 4)."""

import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from timekeeping.basics import wallclock
from timekeeping.brands import archives
from timekeeping.models import (
    Brand,
    BrandArchive,
    BrandTable,
    Member,
    Record,
    Subject,
    Timer,
)
from timekeeping.tick import housekeeping

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


@pytest.fixture(autouse=True)
def demo(settings):
    settings.DEBUG = True
    call_command("demo", stdout=io.StringIO())


@pytest.fixture
def venue():
    return Brand.objects.get(slug="demo-venue")


@pytest.fixture
def owner(client, venue):
    client.force_login(venue.owner)
    return client


def counts(brand_id: str) -> tuple[int, int, int]:
    return (Timer.objects.filter(brand_id=brand_id).count(),
            Record.objects.filter(brand_id=brand_id).count(),
            Subject.objects.filter(brand_id=brand_id).count())


def test_the_owner_deletes_the_brand_after_typing_its_name_and_brings_it_back(owner, venue):
    before = counts(venue.pk)
    tables = list(BrandTable.objects.filter(brand=venue).values_list("db_table", flat=True))
    page = owner.get(f"/console/{venue.pk}/leave/")
    assert page.status_code == 200
    assert "For 30 days, until" in page.content.decode()

    wrong = owner.post(f"/console/{venue.pk}/leave/delete", {"name": "Demo"})
    assert wrong.status_code == 400
    assert "That is not the brand&#x27;s name. Type Demo venue exactly" in wrong.content.decode()
    assert Brand.objects.filter(pk=venue.pk).exists() and counts(venue.pk) == before

    gone = owner.post(f"/console/{venue.pk}/leave/delete", {"name": "Demo venue"}, follow=True)
    assert gone.redirect_chain[-1][0] == "/console/deleted/"
    text = gone.content.decode()
    assert "Demo venue is deleted." in text and "Bring Demo venue back" in text
    assert not Brand.objects.filter(pk=venue.pk).exists()
    assert counts(venue.pk) == (0, 0, 0)
    assert not set(tables) & set(connection.introspection.table_names())
    assert owner.get(f"/console/{venue.pk}/").status_code == 404
    # Its owner keeps no other brand: the console sends them to what they can bring back.
    assert owner.get("/console/").url == "/console/deleted/"

    archive = BrandArchive.objects.get(brand_id=venue.pk)
    back = owner.post(f"/console/deleted/{archive.pk}/undo", follow=True)
    assert back.redirect_chain[-1][0] == f"/console/{venue.pk}/"
    assert "Demo venue is back." in back.content.decode()
    assert counts(venue.pk) == before
    assert set(tables) <= set(connection.introspection.table_names())
    assert not BrandArchive.objects.exists()
    assert owner.get(f"/console/{venue.pk}/moves/").status_code == 200


def test_the_download_is_the_brands_whole_data_as_one_json_file(owner, venue):
    answer = owner.get(f"/console/{venue.pk}/leave/export")
    assert answer.status_code == 200 and answer.streaming
    assert answer["Content-Disposition"].startswith('attachment; filename="demo-venue-')
    document = json.loads(b"".join(answer.streaming_content))
    assert document["brand"] == venue.pk and document["format"] == "keeping-time brand"
    sections = {section["section"] for section in document["sections"]}
    assert {"timekeeping.subject", "timekeeping.timer", "table"} <= sections


def test_only_an_owner_deletes_and_only_its_owners_bring_it_back(client, venue):
    manager = get_user_model().objects.create_user("mgr", "mgr@example.com", "pw-mgr-1234")
    Member.objects.create(brand=venue, user=manager, role=Member.Role.MANAGER)
    client.force_login(manager)
    assert client.get(f"/console/{venue.pk}/leave/").status_code == 403
    assert client.get(f"/console/{venue.pk}/leave/export").status_code == 403
    assert client.post(f"/console/{venue.pk}/leave/delete",
                       {"name": "Demo venue"}).status_code == 403
    assert Brand.objects.filter(pk=venue.pk).exists()
    archive = archives.delete(venue, by=venue.owner, now=wallclock.wall_now())
    # The manager was one of the brand's people, not an owner: nothing to bring back.
    assert client.post(f"/console/deleted/{archive.pk}/undo").status_code == 404
    assert "No deleted brand can be brought back." in client.get("/console/deleted/"
                                                                 ).content.decode()
    assert BrandArchive.objects.filter(pk=archive.pk).exists()


def test_after_30_days_the_archive_and_the_accounts_only_it_had_are_gone(venue):
    now = wallclock.wall_now()
    archive = archives.delete(venue, by=venue.owner, now=now)
    assert get_user_model().objects.filter(username="venue").exists()
    early = housekeeping.run(now=now + timedelta(days=29), holder="test")
    assert early.ran and BrandArchive.objects.filter(pk=archive.pk).exists()
    late = housekeeping.run(now=now + timedelta(days=30, hours=2), holder="test")
    assert late.deleted.get("deleted brands past their 30 days") == 1
    assert not BrandArchive.objects.exists()
    assert not get_user_model().objects.filter(username="venue").exists()
    assert get_user_model().objects.filter(username="demo").exists()  # owns other brands


def test_undo_is_refused_after_30_days_or_when_its_short_name_was_taken(venue):
    now = wallclock.wall_now()
    archive = archives.delete(venue, by=venue.owner, now=now)
    with pytest.raises(archives.UndoRefused, match="30 days to undo are over"):
        archives.undo(archive, now=now + timedelta(days=31))
    Brand.objects.create(name="Someone else", slug="demo-venue")
    with pytest.raises(archives.UndoRefused, match="taken its short name"):
        archives.undo(archive, now=now)
    assert BrandArchive.objects.filter(pk=archive.pk).exists()


def test_the_commands_delete_list_and_bring_back(venue):
    out = io.StringIO()
    call_command("brand", "delete", "demo-venue", "--as", "venue", stdout=out)
    assert "deleted Demo venue" in out.getvalue()
    archive = BrandArchive.objects.get()
    listed = io.StringIO()
    call_command("brand", "deleted", stdout=listed)
    assert archive.pk in listed.getvalue()
    back = io.StringIO()
    call_command("brand", "undo", archive.pk, stdout=back)
    assert back.getvalue().startswith("brought back Demo venue")
    assert Brand.objects.filter(slug="demo-venue").exists()
