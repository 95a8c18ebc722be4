"""Subjects over the API: make one (POST), list and read them, erase one (its owner), and a
subject's calendar: its dates ahead as lines, and its iCalendar feed with the feed's secret
token (docs/api.md).

Lists are scoped to the caller's brands, filtered and paginated as `timekeeping.api.queries`
says; a detail of another brand answers 404 exactly as a missing one (`access.kept`).
"""

from __future__ import annotations

import secrets

from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.moments import zone_of
from timekeeping.api import queries
from timekeeping.api.access import brand_for, brands, kept, owner_only, who
from timekeeping.api.queries import Listing
from timekeeping.basics import instants, wallclock
from timekeeping.clocks import OrderRefused, subject_calendar
from timekeeping.models import Subject, TestClock
from timekeeping.models.service import new_feed_token
from timekeeping.subjects import erasing, making
from timekeeping.web.strict import StrictSerializer


class SubjectIn(StrictSerializer):
    brand = serializers.CharField(required=False, max_length=48)
    kind = serializers.CharField(max_length=64)
    key = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=200)
    zone = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    input = serializers.DictField(required=False, default=dict)
    contact_email = serializers.EmailField(required=False, allow_blank=True, default="",
                                           max_length=254)
    owner_name = serializers.CharField(required=False, allow_blank=True, default="",
                                       max_length=200)
    test_clock = serializers.CharField(required=False, max_length=48,
                                       help_text="Make it in a test clock's world: its jobs "
                                                 "and dates run on that clock.")

    def validate_zone(self, value):
        if value:
            try:
                zone_of(value)
            except ValueError:
                raise serializers.ValidationError(
                    f"{value!r} is not an IANA time zone (for example America/New_York)"
                ) from None
        return value


class SubjectOut(serializers.ModelSerializer):
    class Meta:
        model = Subject
        fields = ["id", "brand", "test_clock", "kind", "key", "name", "zone", "input",
                  "contact_email", "owner_name", "plan", "erased"]


class SubjectList(APIView):
    @extend_schema(request=SubjectIn, responses={201: SubjectOut})
    def post(self, request):
        given = SubjectIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        brand = brand_for(request, data.pop("brand", None))
        data["test_clock"] = test_clock_of(brand, data.pop("test_clock", None))
        try:
            subject = making.make(brand, **data)
        except making.SubjectTaken as taken:
            raise ValidationError({"key": [str(taken)]}) from None
        return Response(SubjectOut(subject).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(
    description="The subjects of the brands you keep, by brand and name."))
class Subjects(Listing, SubjectList):
    # POST (make a subject) is SubjectList's, unchanged; GET lists.
    serializer_class = SubjectOut
    filters = (
        queries.brand_filter(),
        queries.text("kind", "kind", max_length=64, description="Only subjects of this kind."),
        queries.search("q", ("name", "key"), description="Subjects whose name or key holds "
                                                          "this text, in any case."),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return Subject.objects.filter(brand__in=brands(self.request)).order_by(
            "brand_id", "name", "id")


class SubjectDetail(APIView):
    """A subject, with the fields it was made with."""

    @extend_schema(responses=SubjectOut)
    def get(self, request, subject_id: str):
        return Response(SubjectOut(kept(request, Subject.objects.all(), subject_id,
                                        "subject")).data)


class CalendarLineOut(serializers.Serializer):
    date = serializers.DateField()
    what = serializers.CharField()
    kind = serializers.CharField()
    answers_for = serializers.CharField()
    status = serializers.CharField()
    uid = serializers.CharField()


class SubjectCalendarOut(serializers.Serializer):
    subject = serializers.CharField()
    test_clock = serializers.CharField(allow_null=True)
    zone = serializers.CharField()
    feed = serializers.CharField(help_text="The iCalendar feed's path, with its secret token.")
    dates = CalendarLineOut(many=True)


SPAN_PARAMS = [
    OpenApiParameter(name, OpenApiTypes.DATE, description=f"{what} (YYYY-MM-DD, within "
                     f"{instants.SPAN})") for name, what in
    (("from", "the first day listed; default: today on the subject's clock"),
     ("to", "the last day listed; default: everything ahead"))]


class SubjectCalendar(APIView):
    @extend_schema(parameters=SPAN_PARAMS, responses=SubjectCalendarOut)
    def get(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        found = subject_calendar.lines(subject, start=_date(request, "from"),
                                       end=_date(request, "to"))
        return Response(SubjectCalendarOut({
            "subject": subject.pk, "test_clock": subject.test_clock_id,
            "zone": subject_calendar.zone_of_subject(subject), "feed": _feed(subject),
            "dates": found}).data)


class FeedOut(serializers.Serializer):
    feed = serializers.CharField()


class RefusedOut(serializers.Serializer):
    code = serializers.CharField()
    detail = serializers.CharField()


class SubjectFeedToken(APIView):
    @extend_schema(request=None, responses={200: FeedOut, 409: RefusedOut})
    def post(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        try:
            subject_calendar.rotate_token(subject)
        except OrderRefused as refused:  # an erased subject has no feed
            return Response({"code": refused.code, "detail": str(refused)},
                            status=status.HTTP_409_CONFLICT)
        return Response({"feed": _feed(subject)})


class ErasedOut(serializers.Serializer):
    subject = serializers.CharField(source="subject.pk")
    erased = serializers.DateTimeField(source="at")
    jobs = serializers.IntegerField(help_text="Open jobs cancelled.")
    plans = serializers.IntegerField(help_text="Live plans (subscriptions) ended.")
    dates = serializers.IntegerField(help_text="Open or missed dates closed.")
    timers = serializers.IntegerField(help_text="Live timers ended.")
    invitations = serializers.IntegerField(help_text="Invitations deleted.")
    customers = serializers.IntegerField(help_text="Customers' links to it removed.")
    accounts = serializers.IntegerField(help_text="Customer accounts deleted, left with no "
                                                  "subject.")
    emails = serializers.IntegerField(help_text="Unsent emails about it dropped.")
    records = serializers.IntegerField(help_text="Records rewritten without its personal "
                                                 "data.")


class SubjectErase(APIView):
    @extend_schema(request=None, responses={200: ErasedOut, 409: RefusedOut},
                   summary="Erase a subject's personal data, keeping its anonymous record",
                   description="The brand's owner only, signed in (a manager, a viewer or a key "
                               "hears 403). Cannot be undone: docs/operating.md, \"Erasing a "
                               "subject\". A subject erased already answers 409 "
                               "`subject_erased`.")
    def post(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        owner_only(request, subject.brand)
        try:
            erased = erasing.erase(subject, by=who(request))
        except erasing.SubjectErased as already:
            return Response({"code": "subject_erased", "detail": str(already)},
                            status=status.HTTP_409_CONFLICT)
        return Response(ErasedOut(erased).data)


def _feed(subject: Subject) -> str:
    return f"{subject_calendar.feed_path(subject)}?token={subject.feed_token}"


def test_clock_of(brand, clock_id: str | None) -> TestClock | None:
    if not clock_id:
        return None
    found = TestClock.objects.filter(pk=clock_id, brand=brand).first()
    if found is None:
        raise ValidationError({"test_clock": [f"no test clock {clock_id!r} of the brand"]})
    return found


def _date(request, name: str):
    text = request.query_params.get(name)
    if not text:
        return None
    try:
        return instants.parse_date(text, field=name)
    except ValueError as error:
        raise ValidationError({name: [str(error).removeprefix(f"{name}: ")]}) from None


class SubjectFeed(APIView):
    """The iCalendar feed. Calendar apps cannot sign in, so the URL carries the subject's
    secret token; a wrong token answers 404, as an unknown subject does. Tokens compare in
    constant time, as bytes."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(exclude=True)
    def get(self, request, subject_id: str):
        subject = Subject.objects.filter(pk=subject_id).first()
        given = request.query_params.get("token", "").encode("utf-8", "replace")
        kept_token = (subject.feed_token if subject else new_feed_token()).encode()
        if not secrets.compare_digest(given, kept_token) or subject is None or subject.erased:
            raise Http404("no such feed")
        body = subject_calendar.feed(subject, stamp=wallclock.wall_now())
        return HttpResponse(body, content_type="text/calendar; charset=utf-8")
