"""A job's own time in the API (S6-S11, S16, T1): read a job's deadlines, asks, tasks and
grant; end a job; take, extend, release and finish a task; read and answer a party's link.

The task actions are a person's: a member of the task's brand (an API key is no member, and
hears 403). A party's link is its own key: `GET /api/links/{token}` serves its expiry to the
client (T1) and `POST` answers it, with 410 once it has stopped working.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import clocks
from timekeeping.api.access import kept, kept_brand, key_of, who
from timekeeping.jobs import asks, lifecycle, repairs, standby, tasks
from timekeeping.jobs.common import now_of
from timekeeping.models import Ask, Deadline, Grant, Job, Member, Standby, Task, TestClock
from timekeeping.recurring import charges, guarantees
from timekeeping.specs.jobs import parse_span
from timekeeping.web.strict import StrictSerializer


class DeadlineOut(serializers.ModelSerializer):
    class Meta:
        model = Deadline
        fields = ["id", "step", "rule", "follows", "state", "started", "ends", "budget", "used",
                  "running_since", "held_by", "late_price", "settled"]


class AskOut(serializers.ModelSerializer):
    works = serializers.SerializerMethodField(help_text="Whether the link works now (T1).")

    class Meta:
        model = Ask
        fields = ["id", "purpose", "step", "title", "party", "state", "opened", "expires",
                  "expiries", "answered", "works"]

    def get_works(self, ask: Ask) -> bool:
        return asks.judge(ask, now_of(ask.job)) is None


class TaskOut(serializers.ModelSerializer):
    holder = serializers.CharField(source="holder_id", allow_null=True)

    class Meta:
        model = Task
        fields = ["id", "job", "step", "title", "state", "due", "hold", "holder", "held_since",
                  "held_until", "extended", "opened", "done"]


class GrantOut(serializers.ModelSerializer):
    class Meta:
        model = Grant
        fields = ["id", "state", "starts", "ends", "term"]


class WorkOut(serializers.Serializer):
    deadlines = DeadlineOut(many=True)
    asks = AskOut(many=True)
    tasks = TaskOut(many=True)
    grant = GrantOut(allow_null=True)


class JobWork(APIView):
    @extend_schema(responses=WorkOut, summary="A job's own time: deadlines, asks, tasks, grant")
    def get(self, request, job_id: str):
        job = kept(request, Job.objects.select_related("test_clock"), job_id, "job")
        return Response(WorkOut({
            "deadlines": list(job.deadlines.all()), "tasks": list(job.tasks.all()),
            "asks": [ask for ask in job.asks.select_related("job__brand", "job__test_clock")],
            "grant": Grant.objects.filter(job=job).first()}).data)


class EndIn(StrictSerializer):
    facts = serializers.DictField(required=False, default=dict,
                                  help_text="What the work found, joined to the job's input; "
                                            "the subject keeps those its Service names in "
                                            "`subject.keeps`.")


class EndedOut(serializers.Serializer):
    id = serializers.CharField()
    state = serializers.CharField()
    ended = serializers.DateTimeField(allow_null=True)


class JobEnd(APIView):
    @extend_schema(request=EndIn, responses={200: EndedOut, 409: dict},
                   summary="End a job: its dates that live on the subject stay open")
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.select_related("subject", "test_clock"), job_id, "job")
        # A JSON body is optional: a POST with none ends the job with no facts.
        sent = request.content_type.startswith("application/json")
        given = EndIn(data=request.data if sent else {})
        given.is_valid(raise_exception=True)
        try:
            lifecycle.end(job, by=who(request), facts=given.validated_data["facts"])
        except clocks.OrderRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_409_CONFLICT)
        job.refresh_from_db()
        return Response(EndedOut(job).data)


def _member(request, task: Task) -> Member:
    if key_of(request) is not None:
        raise PermissionDenied("a task is taken by a person: an API key is no member")
    member = tasks.member_of(task.brand_id, request.user)
    if member is None:
        raise PermissionDenied("only a member of the brand takes its tasks")
    return member


class TaskAction(APIView):
    action = ""

    @extend_schema(request=None, responses={200: TaskOut, 409: dict})
    def post(self, request, task_id: str):
        task = kept(request, Task.objects.select_related("job"), task_id, "task")
        member = _member(request, task)
        try:
            if self.action == "done":
                tasks.finish(task, member)
            else:
                getattr(tasks, self.action)(task, member)
        except tasks.TaskRefused as refused:
            return Response({"code": refused.code, "detail": refused.message},
                            status=status.HTTP_409_CONFLICT)
        task.refresh_from_db()
        return Response(TaskOut(task).data)


class LinkOut(serializers.Serializer):
    title = serializers.CharField()
    party = serializers.CharField()
    state = serializers.CharField()
    expires = serializers.DateTimeField()
    works = serializers.BooleanField()
    refused = serializers.CharField(allow_null=True)


def _link(token: str) -> Ask:
    found = asks.by_token(token)
    if found is None:
        raise Http404("no such link")
    return found


def _link_out(ask: Ask) -> dict:
    refused = asks.judge(ask, now_of(ask.job))
    return LinkOut({"title": ask.title, "party": ask.party, "state": ask.state,
                    "expires": ask.expires, "works": refused is None,
                    "refused": refused.code if refused else None}).data


class Link(APIView):
    """A party's link, by its key: no sign-in."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(responses=LinkOut, auth=[], summary="A party's link: until when it works")
    def get(self, request, token: str):
        return Response(_link_out(_link(token)))

    @extend_schema(request=None, responses={200: LinkOut, 409: dict, 410: dict}, auth=[],
                   summary="Answer a party's link")
    def post(self, request, token: str):
        found = _link(token)
        try:
            asks.answer(token)
        except asks.AskRefused as refused:
            code = status.HTTP_410_GONE if refused.code == "link_expired" else \
                status.HTTP_409_CONFLICT
            return Response({"code": refused.code, "detail": refused.message,
                             "expired": refused.moment}, status=code)
        found.refresh_from_db()
        return Response(_link_out(found))


class JobSendBack(APIView):
    @extend_schema(request=None, responses={200: EndedOut, 409: dict},
                   summary="Send delivered work back inside its acceptance window")
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.select_related("subject", "test_clock"), job_id, "job")
        try:
            job = charges.send_back(job, by=who(request))
        except clocks.OrderRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_409_CONFLICT)
        return Response({"id": job.pk, "state": job.state, "ended": None})


class PenaltyIn(StrictSerializer):
    clock = serializers.CharField(max_length=100, help_text="The clock's name (\"file\").")
    amount = serializers.IntegerField(min_value=1, max_value=10**12,
                                      help_text="The penalty, in minor units.")
    currency = serializers.RegexField(r"^[A-Z]{3}$", help_text="Three capital letters.")
    notice = serializers.CharField(max_length=100, help_text="The penalty notice (\"CP161\").")
    item = serializers.CharField(max_length=64, required=False, default="",
                                 help_text="The item the notice is for (\"US\"), when the "
                                           "clock was missed for several.")


class CreditOut(serializers.Serializer):
    clock = serializers.CharField()
    item = serializers.CharField(help_text="The item of the date missed, if any.")
    notice = serializers.CharField()
    penalty = serializers.IntegerField()
    covered = serializers.IntegerField(help_text="What the promise covers of the penalty, "
                                                 "before its cap: 0 before `after` is done, "
                                                 "less the held share with `excludes: held`.")
    credited = serializers.IntegerField()
    left = serializers.IntegerField()
    currency = serializers.CharField()
    why = serializers.CharField(help_text="What was credited and why not more, in words.")


class JobPenalties(APIView):
    @extend_schema(request=PenaltyIn, responses={201: CreditOut},
                   summary="A penalty notice for a guaranteed date: credited up to the cap")
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.select_related("subject", "test_clock", "brand"),
                   job_id, "job")
        given = PenaltyIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            said = guarantees.credit(job=job, by=who(request), **given.validated_data)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(CreditOut(said).data, status=status.HTTP_201_CREATED)


class RejectionIn(StrictSerializer):
    step = serializers.CharField(max_length=100, help_text="The step whose filing was "
                                                           "rejected (\"file\").")
    items = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                  default=list, max_length=100,
                                  help_text="The items rejected; all it kept when left out.")
    code = serializers.CharField(max_length=64, help_text="Why, as the receiving side said it "
                                                          "(\"math\").")


class RejectionOut(serializers.Serializer):
    step = serializers.CharField()
    code = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField())
    closes = serializers.DateTimeField(help_text="The repair window closes: resubmitted "
                                                 "before, the first filing time is kept.")
    first_filed = serializers.CharField()


class JobRejections(APIView):
    @extend_schema(request=RejectionIn, responses={201: RejectionOut},
                   summary="A filing was rejected: its dates open again, in a repair window")
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.all(), job_id, "job")
        given = RejectionIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            said = repairs.reject(job, by=who(request), **given.validated_data)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(RejectionOut(said).data, status=status.HTTP_201_CREATED)


class StandbyIn(StrictSerializer):
    member = serializers.CharField(max_length=48, help_text="The member on standby (mbr_…).")
    first = serializers.DateField(help_text="The season's first day, in the brand's zone.")
    last = serializers.DateField(help_text="Its last day.")
    retainer = serializers.IntegerField(min_value=0, max_value=standby.RETAINER_MAX,
                                        help_text="Paid for each week, in minor units.")
    currency = serializers.RegexField(r"^[A-Z]{3}$", help_text="Three capital letters.")
    offer = serializers.CharField(max_length=16, default="4h",
                                  help_text="How long a new task is offered to it first "
                                            "(\"4h\", at most a week).")
    test_clock = serializers.CharField(max_length=48, required=False,
                                       help_text="A season in a test clock's world.")


class StandbyOut(serializers.ModelSerializer):
    class Meta:
        model = Standby
        fields = ["id", "brand", "member", "first", "last", "retainer", "currency", "offer",
                  "weeks_accrued", "test_clock", "created"]


class StandbyListOut(serializers.Serializer):
    seasons = StandbyOut(many=True)


class BrandStandby(APIView):
    @extend_schema(responses=StandbyListOut, summary="The brand's standby seasons")
    def get(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        return Response({"seasons": StandbyOut(brand.standby.all()[:200], many=True).data})

    @extend_schema(request=StandbyIn, responses={201: StandbyOut},
                   summary="Put a member on standby for a season")
    def post(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        given = StandbyIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        member = Member.objects.filter(pk=data["member"], brand=brand).first()
        if member is None:
            raise ValidationError({"member": [f"no member {data['member']!r} of {brand.pk}"]})
        test_clock = None
        if "test_clock" in data:
            test_clock = TestClock.objects.filter(pk=data["test_clock"], brand=brand).first()
            if test_clock is None:
                raise ValidationError({"test_clock": [f"no test clock {data['test_clock']!r} "
                                                      f"of {brand.pk}"]})
        offer = parse_span(data["offer"])
        if offer is None:
            raise ValidationError({"offer": ["a span written <n>d, <n>h or <n>m"]})
        try:
            made = standby.start(brand=brand, member=member, first=data["first"],
                                 last=data["last"], retainer=data["retainer"],
                                 currency=data["currency"], offer=offer.length(),
                                 test_clock=test_clock, by=who(request))
        except standby.StandbyRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(StandbyOut(made).data, status=status.HTTP_201_CREATED)
