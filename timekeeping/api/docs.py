"""The API describing itself: the `/api/` index and the Redoc page (docs/api.md).

The index needs no sign-in: it names addresses only, all of which the schema at /api/schema/
(public too) already lists, and a newcomer, or a program whose key was just revoked, should
still find the docs. It reads no credentials at all, so a wrong key does not hide it.

Swagger UI and Redoc are served from drf-spectacular-sidecar's static files, never a CDN.
drf-spectacular's Redoc page also links Google's fonts; ours keeps its head to itself.
"""

from __future__ import annotations

from django.template import engines
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.renderers import TemplateHTMLRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

# name in the index -> (URL name, what it is)
LISTS = {
    "subjects": ("subjects", "Subjects: list (GET), make (POST); one at subjects/{id}."),
    "jobs": ("jobs", "Jobs: list (GET), order (POST); one with its clocks at jobs/{id}."),
    "clocks": ("clocks", "Clocks; one with its dates at clocks/{id}."),
    "timers": ("timers", "Timers; one, and why it fired or not, at timers/{id}."),
    "schedules": ("schedules", "Schedules; one at schedules/{id}, its runs at "
                               "schedules/{id}/runs."),
    "records": ("records", "Records: what happened, oldest first."),
    "test_clocks": ("test-clocks", "Test clocks: list (GET), make (POST); advance one at "
                                   "test_clocks/{id}/advance."),
    "postponements": ("postponements", "Postponements: list (GET), add (POST)."),
    "schema": ("api-schema", "The OpenAPI schema."),
    "docs": ("api-docs", "The schema in Swagger UI: try requests with your key (Authorize)."),
    "redoc": ("api-redoc", "The schema in Redoc, for reading."),
}
PER_BRAND = {
    "manifests": ("brands/{brand}/manifests", "A brand's manifest versions: list (GET), load "
                                              "(POST); one at …/manifests/{version}."),
    "keys": ("brands/{brand}/keys", "A brand's API keys (its owner only)."),
    "events": ("brands/{brand}/events", "A brand's events, by cursor (docs/events.md)."),
    "webhooks": ("brands/{brand}/webhooks", "A brand's webhook endpoints (its owner only): "
                                            "list (GET), add (POST); one at …/webhooks/{id}."),
}


def _index_serializer() -> type[serializers.Serializer]:
    fields = {name: serializers.URLField(help_text=what) for name, (_, what) in LISTS.items()}
    fields |= {name: serializers.CharField(help_text=f"{what} A template: put a brand's id "
                                                     "for {brand}.")
               for name, (_, what) in PER_BRAND.items()}
    return type("ApiIndexOut", (serializers.Serializer,), fields)


ApiIndexOut = _index_serializer()


class ApiIndex(APIView):
    """Where everything is: each list's absolute address, the schema and its two viewers."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(operation_id="api_index", tags=["index"], responses=ApiIndexOut)
    def get(self, request):
        root = request.build_absolute_uri(reverse("api-index"))
        body = {name: request.build_absolute_uri(reverse(url_name))
                for name, (url_name, _) in LISTS.items()}
        body |= {name: root + path for name, (path, _) in PER_BRAND.items()}
        return Response(ApiIndexOut(body).data)


REDOC_PAGE = """{% extends "drf_spectacular/redoc.html" %}{% block head %}
<title>{{ title|default:"Redoc" }}</title>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0; padding: 0; }</style>
{% endblock head %}"""


class _OwnRedocHead(TemplateHTMLRenderer):
    def resolve_template(self, template_names):
        if list(template_names) == [SpectacularRedocView.template_name]:
            return engines["django"].from_string(REDOC_PAGE)
        return super().resolve_template(template_names)


# Redoc's side menu shows Redocly's logo from their CDN; the browser refuses it (the menu then
# leaves it out), and anything else from outside this site.
REDOC_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                "worker-src 'self' blob:; object-src 'none'; base-uri 'none'")


class RedocPage(SpectacularRedocView):
    """drf-spectacular's Redoc page, with nothing fetched from outside: no fonts from Google,
    no logo from Redocly."""

    renderer_classes = [_OwnRedocHead]

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Content-Security-Policy"] = REDOC_POLICY
        return response
