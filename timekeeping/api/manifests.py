"""A brand's manifests over the API: load one (POST), plan one without loading it (what would
change, and what stays), list the versions and read one with its document (docs/api.md).

One view per endpoint: it validates, calls one function, serializes (STYLE). Bad input
answers 400 naming the field and the rule, and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import manifests
from timekeeping.api.access import kept_brand, owned, who
from timekeeping.api.queries import Listing
from timekeeping.models import Manifest
from timekeeping.web.strict import StrictJSONParser


class ProblemOut(serializers.Serializer):
    code = serializers.CharField()
    path = serializers.CharField()
    message = serializers.CharField()


class ProblemsOut(serializers.Serializer):
    problems = ProblemOut(many=True)


class ChangeOut(serializers.Serializer):
    action = serializers.ChoiceField(["added", "changed", "renamed", "removed"])
    what = serializers.ChoiceField(["service", "step", "clock", "table", "column", "schedule",
                                    "calendar", "settings"])
    path = serializers.CharField(help_text="Where in the manifest, e.g. $.services.tax.")
    uses = serializers.ListField(child=serializers.CharField(), required=False,
                                 help_text="A removal: what still uses it here.")
    stated = serializers.BooleanField(required=False,
                                      help_text="A removal the document names in `removes`.")
    was = serializers.CharField(required=False, help_text="A rename: the old path.")


class StayingOut(serializers.Serializer):
    jobs = serializers.IntegerField(help_text="Open jobs that keep an older version.")
    subscriptions = serializers.IntegerField()
    subjects = serializers.IntegerField()
    last_owed = serializers.DateTimeField(allow_null=True, help_text="When the last armed "
                                          "timer of an older version is owed.")


class PlanOut(serializers.Serializer):
    current_version = serializers.IntegerField(allow_null=True)
    bundle = serializers.CharField(help_text="The bundle a load would keep; empty when the "
                                   "document has problems.")
    unchanged = serializers.BooleanField(help_text="The document is the current version.")
    loadable = serializers.BooleanField(help_text="No problems: a load would be accepted.")
    changes = ChangeOut(many=True)
    problems = ProblemOut(many=True)
    staying = StayingOut()


class ManifestOut(serializers.Serializer):
    id = serializers.CharField()
    version = serializers.IntegerField()
    bundle = serializers.CharField()
    plan = PlanOut(help_text="The plan the load applied.")


@dataclass(frozen=True)
class Unreadable:
    """A body that is no manifest (not JSON, not one object, a NUL…), in words."""

    detail: str


class ManifestParser(StrictJSONParser):
    """The strict body, but a body it refuses is kept as `Unreadable` instead of raised: a
    session's CSRF check reads the body before the view, and a refusal raised there would
    answer in the API's general form, not the manifest's (`{"problems": […]}`)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError as error:
            detail = error.detail
            if isinstance(detail, dict):
                path, said = next(iter(detail.items()))
                detail = f"{path}: {said[0] if isinstance(said, list) else said}"
            return Unreadable(str(detail))


def _document(request) -> dict:
    """The body as a manifest; a body that is no JSON object is the manifest's first
    problem, answered in the manifest's own form."""
    data = request.data
    if isinstance(data, Unreadable):
        raise manifests.ManifestInvalid([manifests.Problem(
            "manifest.not_object", "$", f"a manifest is one JSON object: {data.detail}")])
    return data


class ManifestList(APIView):
    parser_classes = [ManifestParser]

    @extend_schema(request=dict, responses={201: ManifestOut, 400: ProblemsOut},
                   description="Load a manifest: the brand's owner only, signed in (a manager "
                               "or a key hears 403 and may plan the load).")
    def post(self, request, brand_id: str):
        # One rule with the console (docs/security.md): only the brand's owner loads a
        # manifest, which changes every date the brand keeps; a manager or a key plans one.
        brand = owned(request, brand_id)
        try:
            applied = manifests.apply(brand, _document(request), by=who(request))
        except manifests.ManifestInvalid as invalid:
            return Response({"problems": [p.as_dict() for p in invalid.problems]},
                            status=status.HTTP_400_BAD_REQUEST)
        version = applied.version
        return Response({"id": version.id, "version": version.version,
                         "bundle": version.bundle, "plan": applied.plan.as_dict()},
                        status=status.HTTP_201_CREATED)


class ManifestPlan(APIView):
    """What loading the body as the brand's manifest would change: changes, the removals in
    use and whether `removes` states them, what stays on older versions. Stores nothing."""

    parser_classes = [ManifestParser]

    @extend_schema(request=dict, responses={200: PlanOut})
    def post(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        try:
            document = _document(request)
        except manifests.ManifestInvalid as invalid:
            return Response(manifests.Plan(current=None, problems=invalid.problems).as_dict())
        return Response(manifests.plan(brand, document).as_dict())


class ManifestVersionRead(serializers.ModelSerializer):
    class Meta:
        model = Manifest
        fields = ["id", "version", "bundle", "created"]


class ManifestDocumentRead(ManifestVersionRead):
    class Meta(ManifestVersionRead.Meta):
        fields = [*ManifestVersionRead.Meta.fields, "document"]


@extend_schema_view(get=extend_schema(
    description="The brand's manifest versions, the latest first (without their documents)."))
class Manifests(Listing, ManifestList):
    # POST (load a manifest) is ManifestList's, unchanged; GET lists.
    serializer_class = ManifestVersionRead

    def scoped(self) -> QuerySet:
        brand = kept_brand(self.request, self.kwargs["brand_id"])
        return Manifest.objects.filter(brand=brand).order_by("-version")


class ManifestDetail(APIView):
    """One version of the brand's manifest, with its document."""

    @extend_schema(responses=ManifestDocumentRead)
    def get(self, request, brand_id: str, version: int):
        brand = kept_brand(request, brand_id)
        found = Manifest.objects.filter(brand=brand, version=version).first()
        if found is None:
            raise NotFound(f"manifest: the brand has no version {version}")
        return Response(ManifestDocumentRead(found).data)
