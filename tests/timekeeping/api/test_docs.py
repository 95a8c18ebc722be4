"""The API describing itself: the /api/ index, Swagger UI and Redoc from static files only
(timekeeping/api/docs.py)."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from tests.timekeeping.api.pages import every


def test_the_index_names_every_list_and_the_docs_without_a_sign_in(db):
    answer = Client().get("/api/", HTTP_AUTHORIZATION="Bearer kt_wrong")
    assert answer.status_code == 200
    body = answer.json()
    assert body["subjects"] == "http://testserver/api/subjects"
    assert body["postponements"] == "http://testserver/api/owner/calendar/postponements"
    assert body["manifests"] == "http://testserver/api/brands/{brand}/manifests"
    assert (body["schema"], body["docs"], body["redoc"]) == (
        "http://testserver/api/schema/", "http://testserver/api/docs/",
        "http://testserver/api/redoc/")


def test_every_address_in_the_index_answers(reading):
    body = reading.get("anonymous", "/api/").json()
    for name, url in body.items():
        path = url.removeprefix("http://testserver").replace("{brand}", reading.brand.pk)
        if name in ("schema", "docs", "redoc"):
            assert reading.get("anonymous", path).status_code == 200, name
        elif name in ("keys", "webhooks"):
            assert reading.get("owner_a", path).status_code == 200
        elif name == "events":  # by cursor: no count
            assert reading.get("key_a", path).status_code == 200
        else:
            assert every(reading, "key_a", path), name


def _static_only(html: str) -> list[str]:
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources
    for source in sources:
        assert source.startswith("/static/drf_spectacular_sidecar/"), source
        assert finders.find(source.removeprefix("/static/")), source
    return sources


@pytest.mark.parametrize("path, wanted", [
    ("/api/docs/", "swagger-ui-bundle.js"), ("/api/redoc/", "redoc.standalone.js")])
def test_the_docs_pages_come_from_our_own_static_files(db, path, wanted):
    answer = Client().get(path)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/html")
    html = answer.content.decode()
    assert any(source.endswith(wanted) for source in _static_only(html))
    assert "http://" not in html and "https://" not in html and "//cdn" not in html
    assert "/api/schema/" in html


def test_redoc_may_fetch_nothing_from_outside(db):
    # Redoc's menu shows Redocly's logo from their CDN: the page's policy refuses it.
    policy = Client().get("/api/redoc/")["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "img-src 'self' data:" in policy


def test_swagger_ui_asks_no_outside_validator(db):
    html = Client().get("/api/docs/").content.decode()
    assert '"validatorUrl": null' in html


def test_the_schema_describes_the_key_so_authorize_works(db):
    schema = Client().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert schema["components"]["securitySchemes"]["apiKey"] == {
        "type": "http", "scheme": "bearer",
        "description": "A brand's API key (kt_…), made by its owner."}
    listing = schema["paths"]["/api/timers"]["get"]
    assert {"apiKey": []} in listing["security"]
    assert {p["name"] for p in listing["parameters"]} >= {"limit", "offset", "late", "brand"}
    page = schema["components"]["schemas"]["PaginatedTimerReadList"]
    assert set(page["properties"]) == {"count", "next", "previous", "results"}
