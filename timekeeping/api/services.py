"""Manifests, subjects, jobs, steps, postponements and a subject's calendar over the API.

One view per endpoint: it validates, calls one function, serializes (STYLE). Bad input
answers 400 naming the field and the rule, and changes nothing.
"""

import secrets

from django.db import IntegrityError, transaction
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.moments import zone_of
from timekeeping import clocks, manifests
from timekeeping.api.access import brand_for, brands, kept, kept_brand, who
from timekeeping.basics import instants, wallclock
from timekeeping.clocks import gate, subject_calendar, undo
from timekeeping.models import Clock, Job, Member, Occurrence, Record, Subject, TestClock
from timekeeping.models.service import new_feed_token
from timekeeping.web.strict import StrictSerializer


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


class ManifestList(APIView):
    @extend_schema(request=dict, responses={201: ManifestOut, 400: ProblemsOut})
    def post(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
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

    @extend_schema(request=dict, responses={200: PlanOut})
    def post(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        try:
            document = _document(request)
        except manifests.ManifestInvalid as invalid:
            return Response(manifests.Plan(current=None, problems=invalid.problems).as_dict())
        return Response(manifests.plan(brand, document).as_dict())


def _document(request) -> dict:
    """The body as a manifest; a body that is no JSON object is the manifest's first
    problem, answered in the manifest's own form."""
    try:
        return request.data
    except ParseError as error:
        detail = error.detail
        if isinstance(detail, dict):
            path, said = next(iter(detail.items()))
            detail = f"{path}: {said[0] if isinstance(said, list) else said}"
        raise manifests.ManifestInvalid([manifests.Problem(
            "manifest.not_object", "$", f"a manifest is one JSON object: {detail}")]) from None


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
                  "contact_email", "owner_name"]


class SubjectList(APIView):
    @extend_schema(request=SubjectIn, responses={201: SubjectOut})
    def post(self, request):
        given = SubjectIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        brand = brand_for(request, data.pop("brand", None))
        data["test_clock"] = _test_clock(brand, data.pop("test_clock", None))
        current = manifests.current(brand)
        try:
            # The unique constraint decides: of two requests at once, one makes the subject.
            with transaction.atomic():
                subject = Subject.objects.create(
                    brand=brand, bundle=current.bundle if current else "", **data)
        except IntegrityError:
            raise ValidationError({"key": [f"the brand has a {data['kind']} {data['key']!r} "
                                           "already"]}) from None
        return Response(SubjectOut(subject).data, status=status.HTTP_201_CREATED)


class JobIn(StrictSerializer):
    service = serializers.CharField(max_length=100)
    subject = serializers.CharField(max_length=48, help_text="The subject's id (sbj_…); the "
                                    "job runs on the subject's clock.")
    period = serializers.CharField(required=False, allow_blank=True, default="", max_length=32)
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
                               by=who(request))
        except clocks.PeriodTaken as taken:
            return Response({"code": "period_taken", "detail": str(taken)},
                            status=status.HTTP_409_CONFLICT)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(JobOut(job).data, status=status.HTTP_201_CREATED)


class StepIn(StrictSerializer):
    step = serializers.CharField(max_length=100)
    items = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                  default=list, max_length=100)


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
                               items=given.validated_data["items"], by=who(request))
        return Response(StepOut(outcome).data,
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)


class PostponementIn(StrictSerializer):
    brand = serializers.CharField(required=False, max_length=48)
    through = serializers.DateField()
    to = serializers.DateField()
    where = serializers.DictField(required=False, default=dict)
    notice = serializers.CharField(max_length=500)
    test_clock = serializers.CharField(required=False, max_length=48,
                                       help_text="Move a test clock's world instead of the "
                                                 "real one.")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.DateField(source="from_date")  # a Python keyword
        return fields


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
        if brand.calendar.brands.exclude(pk__in=brands(request)).exists():
            # A notice on a calendar moves the dates of every brand on it.
            raise ValidationError({"brand": ["the brand's calendar is shared with brands you "
                                             "do not keep; an operator adds its notices"]})
        test_clock = _test_clock(brand, data.pop("test_clock", None))
        try:
            postponement, moved = clocks.add_postponement(
                calendar=brand.calendar, test_clock_id=test_clock.pk if test_clock else "",
                by=who(request), **data)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response({"id": postponement.pk, "moved": moved},
                        status=status.HTTP_201_CREATED)


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


class SubjectFeedToken(APIView):
    @extend_schema(request=None, responses=FeedOut)
    def post(self, request, subject_id: str):
        subject = kept(request, Subject.objects.all(), subject_id, "subject")
        subject_calendar.rotate_token(subject)
        return Response({"feed": _feed(subject)})


def _feed(subject: Subject) -> str:
    return f"{subject_calendar.feed_path(subject)}?token={subject.feed_token}"


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
        if not secrets.compare_digest(given, kept_token) or subject is None:
            raise Http404("no such feed")
        body = subject_calendar.feed(subject, stamp=wallclock.wall_now())
        return HttpResponse(body, content_type="text/calendar; charset=utf-8")


class OccurrenceIn(StrictSerializer):
    item = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)


class ChoiceIn(OccurrenceIn):
    choice = serializers.CharField(max_length=100)


class UndoOfferOut(serializers.Serializer):
    record = serializers.CharField(help_text="The record of the action: POST "
                                   "/api/records/{record}/undo to undo it.")
    until = serializers.DateTimeField(help_text="Until when it can be undone (15 minutes, on "
                                      "the date's own clock).")


class AcknowledgedOut(serializers.Serializer):
    acknowledged = serializers.DateTimeField()
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when it changed "
                        "nothing (acknowledged already).")


class DoneOut(serializers.Serializer):
    status = serializers.CharField()
    settled = serializers.DateTimeField()
    undo = UndoOfferOut(allow_null=True)


class ChosenOut(StepOut):
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when the step was "
                        "refused (nothing changed).")


def _undo(entry) -> dict | None:
    offered = undo.offer(entry)
    return UndoOfferOut(offered).data if offered else None


def _occurrence(request, clock_id: str, serializer) -> tuple[Occurrence, dict]:
    row = kept(request, Clock.objects.all(), clock_id, "clock")
    given = serializer(data=request.data)
    given.is_valid(raise_exception=True)
    item = given.validated_data["item"]
    found = Occurrence.objects.filter(clock=row, item=item).order_by("-seq").select_related(
        "clock", "clock__job", "clock__subject").first()
    if found is None:
        raise ValidationError({"item": [f"clock {clock_id} has no item {item!r}"]})
    return found, given.validated_data


class ClockAcknowledge(APIView):
    @extend_schema(request=OccurrenceIn, responses=AcknowledgedOut)
    def post(self, request, clock_id: str):
        occurrence, _ = _occurrence(request, clock_id, OccurrenceIn)
        entry = clocks.acknowledge(occurrence, by=who(request))
        return Response({**AcknowledgedOut(occurrence).data, "undo": _undo(entry)})


class ClockDone(APIView):
    @extend_schema(request=OccurrenceIn, responses={200: DoneOut, 409: dict})
    def post(self, request, clock_id: str):
        occurrence, _ = _occurrence(request, clock_id, OccurrenceIn)
        try:
            entry = clocks.mark_done(occurrence, by=who(request))
        except clocks.OrderRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_409_CONFLICT)
        return Response({**DoneOut(occurrence).data, "undo": _undo(entry)})


class ClockChoose(APIView):
    @extend_schema(request=ChoiceIn, responses={200: ChosenOut, 409: ChosenOut})
    def post(self, request, clock_id: str):
        occurrence, given = _occurrence(request, clock_id, ChoiceIn)
        try:
            outcome = clocks.choose(occurrence, given["choice"], by=who(request))
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        entry = Record.objects.filter(pk=outcome.record).first() if outcome.committed else None
        return Response({**StepOut(outcome).data, "undo": _undo(entry)},
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)


class AssignIn(OccurrenceIn):
    member = serializers.CharField(max_length=48, allow_blank=True,
                                   help_text="The member's id (mbr_…): one of the people of "
                                             "the clock's brand; empty: nobody.")


class AssignedOut(serializers.Serializer):
    assignee = serializers.CharField(source="assignee_id", allow_null=True)
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when it changed "
                        "nothing (assigned so already).")


class ClockAssign(APIView):
    @extend_schema(request=AssignIn, responses=AssignedOut)
    def post(self, request, clock_id: str):
        occurrence, given = _occurrence(request, clock_id, AssignIn)
        member = Member.objects.select_related("user").filter(
            pk=given["member"], brand_id=occurrence.clock.brand_id).first()
        if member is None and given["member"]:
            raise ValidationError({"member": [f"no member {given['member']!r} of the clock's "
                                              "brand"]})
        entry = None
        if occurrence.assignee_id != (member.pk if member else None):  # else: as it is already
            entry = clocks.assign(occurrence, member, by=who(request))
        return Response({**AssignedOut(occurrence).data, "undo": _undo(entry)})


class UndoOut(serializers.Serializer):
    undone = serializers.CharField(help_text="The record undone.")
    record = serializers.CharField(help_text="The undo's own record (`clock.undone`).")


class UndoProblemOut(serializers.Serializer):
    code = serializers.CharField(help_text="undo_expired, undo_already, undo_superseded, "
                                 "undo_set_in_motion or undo_not_undoable")
    message = serializers.CharField()


class RecordUndo(APIView):
    """Undo a person's action on a date (mark done, acknowledge, choose, assign) within 15
    minutes of it, on the date's own clock; the same roles as the action."""

    @extend_schema(request=None, responses={200: UndoOut, 409: UndoProblemOut})
    def post(self, request, record_id: str):
        entry = kept(request, Record.objects.all(), record_id, "record")
        try:
            done = undo.undo(entry.brand, entry.pk, by=who(request))
        except undo.UndoRefused as refused:
            return Response({"code": refused.code, "message": refused.message},
                            status=status.HTTP_409_CONFLICT)
        return Response(UndoOut({"undone": entry.pk, "record": done.pk}).data)
