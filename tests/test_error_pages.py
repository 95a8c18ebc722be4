"""The pages a person meets when something is missing or breaks, with DEBUG off (issue 27):
plain words, a way home and to sign in, and nothing of the code behind them."""

import pytest
from django.test import Client, override_settings
from django.urls import path

from tests.words import engine_words, visible_text


def broken(request):
    raise RuntimeError("the secret inner workings: SELECT * FROM timekeeping_brand")


urlpatterns = [path("broken/", broken)]


@pytest.mark.django_db
@override_settings(DEBUG=False)
def test_a_missing_page_says_so_and_offers_home_and_sign_in():
    answer = Client().get("/no/such/page/")
    html = answer.content.decode()
    assert answer.status_code == 404
    assert "<h1>Page not found</h1>" in html
    assert 'href="/"' in html and 'href="/accounts/login/"' in html
    assert engine_words(visible_text(html)) == []


@pytest.mark.django_db
@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_broken_page_apologises_in_plain_words_without_a_trace():
    answer = Client(raise_request_exception=False).get("/broken/")
    html = answer.content.decode()
    assert answer.status_code == 500
    assert "<h1>Something went wrong on our side</h1>" in html
    assert 'href="/"' in html and 'href="/accounts/login/"' in html
    assert "Traceback" not in html and "RuntimeError" not in html and "SELECT" not in html
    assert engine_words(visible_text(html)) == []
