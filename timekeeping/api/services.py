"""Manifests, subjects, jobs, steps, postponements and a subject's calendar over the API.

One view per endpoint: it validates, calls one function, serializes (STYLE). Bad input
answers 400 naming the field and the rule, and changes nothing.
"""

import secrets
from datetime import date

from django.http import Http404, HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.models import Postponement
from calendars.moments import zone_of
from timekeeping import clock, clocks, gate, manifests, subject_calendar
from timekeeping.api.access import brand_for, kept
from timekeeping.models import Job, Subject, TestClock, brands_kept_by
from timekeeping.models.service import new_feed_token


class ManifestOut(serializers.Serializer):
    id = serializers.CharField()
    version = serializers.IntegerField()
    bundle = serializers.CharField()


class ManifestList(APIView):
    @extend_schema(request=dict, responses={201: ManifestOut})
    def post(self, request, brand_id: str):
        brand = brands_kept_by(request.user).filter(pk=brand_id).first()
        if brand is None:
            raise NotFound(f"brand: no brand {brand_id!r} that you keep")
        try:
            version = manifests.load(brand, request.data)
        except manifests.ManifestInvalid as invalid:
            return Response({"problems": [p.as_dict() for p in invalid.problems]},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(ManifestOut(version).data, status=status.HTTP_201_CREATED)


class SubjectIn(serializers.Serializer):
    brand = serializers.CharField(required=False)
    kind = serializers.CharField(max_length=64)
    key = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=200)
    zone = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    input = serializers.DictField(required=False, default=dict)
    contact_email = serializers.EmailField(required=False, allow_blank=True, default="")
    owner_name = serializers.CharField(required=False, allow_blank=True, default="")
    test_clock = serializers.CharField(required=False, help_text="Make it in a test clock's "
                                       "world: its jobs and dates run on that clock.")

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
                  "contact_email", "owner_name"]


class SubjectList(APIView):
    @extend_schema(request=SubjectIn, responses={201: SubjectOut})
    def post(self, request):
        given = SubjectIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        brand = brand_for(request, data.pop("brand", None))
        data["test_clock"] = _test_clock(brand, data.pop("test_clock", None))
        if Subject.objects.filter(brand=brand, kind=data["kind"], key=data["key"],
                                  test_clock=data["test_clock"]).exists():
            raise ValidationError({"key": [f"the brand has a {data['kind']} {data['key']!r} "
                                           "already"]})
        current = manifests.current(brand)
        subject = Subject.objects.create(brand=brand, bundle=current.bundle if current else "",
                                         **data)
        return Response(SubjectOut(subject).data, status=status.HTTP_201_CREATED)


class JobIn(serializers.Serializer):
    service = serializers.CharField()
    subject = serializers.CharField(help_text="The subject's id (sbj_…); the job runs on the "
                                    "subject's clock.")
    period = serializers.CharField(required=False, allow_blank=True, default="")
    input = serializers.DictField(required=False, default=dict)


class JobOut(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "brand", "subject", "service", "period", "input", "state", "bundle",
                  "opened", "test_clock"]


class JobList(APIView):
    @extend_schema(request=JobIn, responses={201: JobOut})
    def post(self, request):
        given = JobIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        subject = kept(request, Subject.objects.select_related("brand", "test_clock"),
                       data["subject"], "subject")
        try:
            job = clocks.order(brand=subject.brand, service=data["service"], subject=subject,
                               period=data["period"], input=data["input"],
                               by=f"api {request.user.pk}")
        except clocks.PeriodTaken as taken:
            return Response({"code": "period_taken", "detail": str(taken)},
                            status=status.HTTP_409_CONFLICT)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(JobOut(job).data, status=status.HTTP_201_CREATED)


class StepIn(serializers.Serializer):
    step = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class StepOut(serializers.Serializer):
    committed = serializers.BooleanField()
    step = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField())
    code = serializers.CharField()
    reason = serializers.CharField()
    satisfied = serializers.ListField(child=serializers.CharField())
    moved = serializers.ListField(child=serializers.CharField())
    said = serializers.CharField(source="describe")


class JobSteps(APIView):
    @extend_schema(request=StepIn, responses={200: StepOut, 409: StepOut})
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.all(), job_id, "job")
        given = StepIn(data=request.data)
        given.is_valid(raise_exception=True)
        outcome = gate.propose(job=job, step=given.validated_data["step"],
                               items=given.validated_data["items"], by=f"api {request.user.pk}")
        return Response(StepOut(outcome).data,
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)


class PostponementIn(serializers.Serializer):
    brand = serializers.CharField(required=False)
    through = serializers.DateField()
    to = serializers.DateField()
    where = serializers.DictField(required=False, default=dict)
    notice = serializers.CharField(max_length=500)
    test_clock = serializers.CharField(required=False, help_text="Move a test clock's world "
                                       "instead of the real one.")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.DateField(source="from_date")  # a Python keyword
        return fields

    def validate(self, data):
        if data["through"] < data["from_date"]:
            raise ValidationError({"through": ["'through' is on or after 'from'"]})
        return data


class PostponementOut(serializers.Serializer):
    id = serializers.IntegerField()
    moved = serializers.ListField(child=serializers.CharField())


class Postponements(APIView):
    @extend_schema(request=PostponementIn, responses={201: PostponementOut})
    def post(self, request):
        given = PostponementIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        brand = brand_for(request, data.pop("brand", None))
        if brand.calendar_id is None:
            raise ValidationError({"brand": ["the brand has no calendar; load a manifest "
                                             "with a calendar section first"]})
        data["test_clock"] = getattr(_test_clock(brand, data.pop("test_clock", None)), "pk", "")
        postponement = Postponement.objects.create(calendar=brand.calendar, **data)
        moved = clocks.postpone(brand, postponement)
        return Response({"id": postponement.pk, "moved": moved},
                        status=status.HTTP_201_CREATED)


class CalendarLineOut(serializers.Serializer):
    date = serializers.DateField()
    what = serializers.CharField()
    kind = serializers.CharField()
    answers_for = serializers.CharField()
    status = serializers.CharField()
    uid = serializers.CharField()


class SubjectCalendar(APIView):
    @extend_schema(responses=CalendarLineOut(many=True))
    def get(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        found = subject_calendar.lines(subject, start=_date(request, "from"),
                                       end=_date(request, "to"))
        return Response({"subject": subject.pk, "test_clock": subject.test_clock_id,
                         "zone": subject_calendar.zone_of_subject(subject),
                         "feed": f"{subject_calendar.feed_path(subject)}?token="
                                 f"{subject.feed_token}",
                         "dates": CalendarLineOut(found, many=True).data})


class SubjectFeedToken(APIView):
    @extend_schema(request=None, responses={200: dict})
    def post(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        subject.feed_token = new_feed_token()
        subject.save(update_fields=["feed_token"])
        return Response({"feed": f"{subject_calendar.feed_path(subject)}?token="
                                 f"{subject.feed_token}"})


def _test_clock(brand, clock_id: str | None) -> TestClock | None:
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
        return date.fromisoformat(text)
    except ValueError:
        raise ValidationError({name: [f"{text!r} is not a date written YYYY-MM-DD"]}) from None


class SubjectFeed(APIView):
    """The iCalendar feed. Calendar apps cannot sign in, so the URL carries the subject's
    secret token; a wrong token answers 404, as an unknown subject does."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(exclude=True)
    def get(self, request, subject_id: str):
        subject = Subject.objects.filter(pk=subject_id).first()
        token = request.query_params.get("token", "")
        if subject is None or not secrets.compare_digest(token, subject.feed_token):
            raise Http404("no such feed")
        body = subject_calendar.feed(subject, stamp=clock.wall_now())
        return HttpResponse(body, content_type="text/calendar; charset=utf-8")


class OccurrenceIn(serializers.Serializer):
    item = serializers.CharField(required=False, allow_blank=True, default="")


class ChoiceIn(OccurrenceIn):
    choice = serializers.CharField()


def _occurrence(request, clock_id: str, item: str):
    from timekeeping.models import Clock, Occurrence

    row = kept(request, Clock.objects.all(), clock_id, "clock")
    found = Occurrence.objects.filter(clock=row, item=item).order_by("-seq").select_related(
        "clock", "clock__job", "clock__subject").first()
    if found is None:
        raise ValidationError({"item": [f"clock {clock_id} has no item {item!r}"]})
    return found


class ClockAcknowledge(APIView):
    @extend_schema(request=OccurrenceIn, responses={200: dict})
    def post(self, request, clock_id: str):
        given = OccurrenceIn(data=request.data)
        given.is_valid(raise_exception=True)
        occurrence = _occurrence(request, clock_id, given.validated_data["item"])
        clocks.acknowledge(occurrence, by=f"api {request.user.pk}")
        return Response({"acknowledged": occurrence.acknowledged})


class ClockDone(APIView):
    @extend_schema(request=OccurrenceIn, responses={200: dict})
    def post(self, request, clock_id: str):
        given = OccurrenceIn(data=request.data)
        given.is_valid(raise_exception=True)
        occurrence = _occurrence(request, clock_id, given.validated_data["item"])
        try:
            clocks.mark_done(occurrence, by=f"api {request.user.pk}")
        except clocks.OrderRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_409_CONFLICT)
        return Response({"status": occurrence.status, "settled": occurrence.settled})


class ClockChoose(APIView):
    @extend_schema(request=ChoiceIn, responses={200: StepOut, 409: StepOut})
    def post(self, request, clock_id: str):
        given = ChoiceIn(data=request.data)
        given.is_valid(raise_exception=True)
        occurrence = _occurrence(request, clock_id, given.validated_data["item"])
        try:
            outcome = clocks.choose(occurrence, given.validated_data["choice"],
                                    by=f"api {request.user.pk}")
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(StepOut(outcome).data,
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)
