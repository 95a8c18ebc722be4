"""A job's own time (S6-S11): its deadlines, the tasks members hold, the asks a party answers
by a link, and the grant a party gives for a term. Each is a row with the instants it keeps;
its timers (kinds `deadline`, `task`, `ask`, `grant`, `signal`) fire on the brand's clock."""

from datetime import timedelta

from django.db import models
from django.db.models import Q

from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock
from timekeeping.models.people import Member
from timekeeping.models.service import Job, Subject


class Deadline(Model):
    """The job's deadline (`price.within`) or one step's (`deliver.<step>.within`).

    Work time counts only while the work is the brand's: while the job waits on a party (an
    open ask) the deadline is held, and the work time used so far is kept in `used`. A
    deadline written before a clock ("5d before file") ends where the clock says, held or
    not; only its at-risk mark, three quarters of the work time, waits while it is held."""

    class State(models.TextChoices):
        OPEN = "open", "open"
        AT_RISK = "at_risk", "at risk"
        LATE = "late", "late"
        MET = "met", "met"
        CLOSED = "closed", "closed (its job ended)"

    id = PublicIdField(prefix="dln")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="deadlines")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="deadlines")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="deadlines")
    step = models.CharField(max_length=100, blank=True, default="",
                            help_text="The step it is on; empty: the job's own deadline.")
    rule = models.CharField(max_length=80, help_text="As written: '30d', '5d before file'.")
    follows = models.CharField(max_length=100, blank=True, default="",
                               help_text="The clock whose date it follows, if any.")
    started = models.DateTimeField()
    ends = models.DateTimeField(help_text="When it is late: fixed by the clock it follows, or "
                                          "projected from the work time left.")
    budget = models.DurationField(help_text="The work time from start to end.")
    used = models.DurationField(default=timedelta(0),
                                help_text="Work time counted before `running_since`.")
    running_since = models.DateTimeField(null=True, blank=True,
                                         help_text="Empty while the deadline is held.")
    held_by = models.CharField(max_length=64, blank=True, default="")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    late_price = models.CharField(max_length=40, blank=True, default="",
                                  help_text="`price.late` as written: what comes off the charge "
                                            "when the job is late.")
    settled = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["ends"]
        constraints = [models.UniqueConstraint(fields=["job", "step"], name="deadline_per_step")]
        indexes = [models.Index(fields=["brand", "state", "ends"], name="deadline_brand_open",
                                condition=Q(state__in=["open", "at_risk", "late"]))]

    def __str__(self) -> str:
        return f"{self.id} {self.rule} on {self.job_id}{' ' + self.step if self.step else ''}"

    @property
    def what(self) -> str:
        return f"step {self.step}" if self.step else "the job"


class Ask(Model):
    """A party asked for something on a job, reached by a link that works until `expires`
    (T1: expiry is data, compared on use with the operation's clock). At its first expiry it
    opens once more for the same term; the second ends the job `lapsed`."""

    class Purpose(models.TextChoices):
        STEP = "step", "a step the party takes"
        GRANT = "grant", "the grant, given again"

    class State(models.TextChoices):
        OPEN = "open", "open"
        ANSWERED = "answered", "answered"
        LAPSED = "lapsed", "lapsed"
        CLOSED = "closed", "closed (its job ended)"

    id = PublicIdField(prefix="ask")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="asks")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="asks")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="asks")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="asks")
    purpose = models.CharField(max_length=8, choices=Purpose.choices, default=Purpose.STEP)
    step = models.CharField(max_length=100, blank=True, default="")
    title = models.CharField(max_length=200)
    party = models.CharField(max_length=200, help_text="Who is asked, as people read it.")
    email = models.EmailField(blank=True, default="")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    term = models.DurationField(help_text="How long the link works each time it opens.")
    expires = models.DateTimeField()
    expiries = models.PositiveSmallIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    opened = models.DateTimeField()
    answered = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["expires"]
        indexes = [models.Index(fields=["brand", "state", "expires"], name="ask_brand_open",
                                condition=Q(state="open"))]

    def __str__(self) -> str:
        return f"{self.id} {self.title} ({self.state})"


class Grant(Model):
    """What a party allows the brand to do on a job (`scope`), for a term. Once it ends, the
    gate refuses the steps that need it (`needs_grant`) and the party is asked again."""

    class State(models.TextChoices):
        ACTIVE = "active", "active"
        ENDED = "ended", "ended"

    id = PublicIdField(prefix="grt")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="grants")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="grants")
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="grant")
    term = models.DurationField()
    ask_term = models.DurationField(help_text="How long the link asking for it again works.")
    starts = models.DateTimeField()
    ends = models.DateTimeField()
    state = models.CharField(max_length=8, choices=State.choices, default=State.ACTIVE)

    def __str__(self) -> str:
        return f"{self.id} on {self.job_id} until {self.ends:%Y-%m-%d %H:%MZ} ({self.state})"


class Task(Model):
    """A step that needs a person, in the brand's pool. A member takes it (a hold), is warned
    at three quarters of the hold, may extend it once, and at its end the task opens again."""

    class State(models.TextChoices):
        OPEN = "open", "open"
        HELD = "held", "held"
        DONE = "done", "done"
        CLOSED = "closed", "closed (its job ended)"

    id = PublicIdField(prefix="tsk")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="tasks")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="tasks")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="tasks")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="tasks")
    step = models.CharField(max_length=100)
    title = models.CharField(max_length=200)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OPEN)
    due = models.DateTimeField(null=True, blank=True,
                               help_text="When its step's deadline is late, if it has one.")
    hold = models.DurationField(help_text="How long a member holds it when they take it.")
    holder = models.ForeignKey(Member, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="tasks")
    held_since = models.DateTimeField(null=True, blank=True)
    held_until = models.DateTimeField(null=True, blank=True)
    holds = models.PositiveIntegerField(default=0, help_text="Holds taken: names each hold's "
                                                             "timers.")
    extended = models.BooleanField(default=False, help_text="This hold was extended (once).")
    opened = models.DateTimeField()
    done = models.DateTimeField(null=True, blank=True)
    offered_until = models.DateTimeField(
        null=True, blank=True, help_text="Opened in a standby season: only the members on "
                                         "standby may take it until then.")

    class Meta:
        ordering = ["due", "opened"]
        constraints = [models.UniqueConstraint(fields=["job", "step"], name="task_per_step")]
        indexes = [models.Index(fields=["brand", "state", "due"], name="task_brand_open",
                                condition=Q(state__in=["open", "held"]))]

    def __str__(self) -> str:
        return f"{self.id} {self.title} ({self.state})"


class Standby(Model):
    """A member on standby for a season (S20): offered new tasks first, and paid a retainer
    for each week of it."""

    id = PublicIdField(prefix="stb")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="standby")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="standby")
    member = models.ForeignKey(Member, on_delete=models.CASCADE, related_name="standby")
    first = models.DateField(help_text="The season's first day, in the brand's zone.")
    last = models.DateField(help_text="Its last day.")
    retainer = models.BigIntegerField(help_text="Paid for each week, in minor units.")
    currency = models.CharField(max_length=3)
    offer = models.DurationField(help_text="How long a new task is offered to it first.")
    weeks_accrued = models.PositiveIntegerField(default=0)
    created = models.DateTimeField()

    class Meta:
        ordering = ["brand", "first"]

    def __str__(self) -> str:
        return f"{self.member_id} on standby {self.first}..{self.last}"
