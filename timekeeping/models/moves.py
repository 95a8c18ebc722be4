"""Timed moves on table rows (SPEC A1-A8): connections, rows set aside, and the audit."""

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock


class Connection(Model):
    """Where a brand's manifest tables live (a database alias) and the venue's clock (zone)."""

    id = PublicIdField(prefix="con")
    brand = models.OneToOneField(Brand, on_delete=models.CASCADE, related_name="connection")
    database = models.CharField(max_length=64, default="default",
                                help_text="The Django database alias the tables live in.")
    zone = models.CharField(max_length=64, blank=True, default="",
                            help_text="The venue's clock; empty means UTC.")
    paused = models.BooleanField(default=False, help_text="Paused: the job skips it.")
    lease_holder = models.CharField(max_length=200, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    last_run = models.DateTimeField(null=True, blank=True)
    # Backoff (issue 31, docs/operating.md): failures of its whole minute in a row, the last
    # one's error, and when the job tries it next (None: each minute).
    attempts = models.PositiveIntegerField(default=0, editable=False)
    last_error = models.TextField(blank=True, default="", editable=False)
    next_attempt = models.DateTimeField(null=True, blank=True, editable=False)
    # Parked after `brand.park_after` failures: the job no longer tries it until someone
    # retries it or gives it up (`timekeeping.moves.parking`).
    parked = models.DateTimeField(null=True, blank=True, editable=False)

    def __str__(self) -> str:
        return f"{self.brand} ({self.database})"


class SetAside(Model):
    """A due row whose timed move was refused: left alone for an hour (A8)."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+",
                              db_index=False)  # the index below leads with it
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="set_aside")
    table = models.CharField(max_length=64)
    row = models.BigIntegerField()
    rule = models.PositiveSmallIntegerField(help_text="The timed move's number, from 1.")
    code = models.CharField(max_length=200)
    until = models.DateTimeField()
    created = models.DateTimeField(default=wallclock.wall_now)
    test_clock = models.ForeignKey(
        TestClock, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
        help_text="A row of a rehearsal on this test clock; empty for a live row.")

    class Meta:
        indexes = [models.Index(fields=["brand", "connection", "table", "until"],
                                name="setaside_until")]

    def __str__(self) -> str:
        return f"{self.table} #{self.row} rule {self.rule}: {self.code}"


class RowAudit(Model):
    """Every change of a manifest table's row: who, when, before, after (A7)."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+",
                              db_index=False)  # the index below leads with it
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="audit")
    table = models.CharField(max_length=64)
    row = models.BigIntegerField()
    kind = models.CharField(max_length=32, help_text="create, update, move, timed move, "
                                                     "effect, sample, copy")
    who = models.CharField(max_length=200)
    at = models.DateTimeField()
    before = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    test_clock = models.ForeignKey(
        TestClock, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
        help_text="A row of a rehearsal on this test clock; empty for a live row.")

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["brand", "connection", "table", "row"],
                                name="audit_row")]

    def __str__(self) -> str:
        return f"{self.kind} {self.table} #{self.row} by {self.who}"


class SampleRow(Model):
    """A row written as sample data: moved like any row, never judged late, removable (A14)."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="samples")
    table = models.CharField(max_length=64)
    row = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connection", "table", "row"],
                                               name="sample_row")]

    def __str__(self) -> str:
        return f"sample {self.table} #{self.row}"


class BrandTable(Model):
    """A SQL table a brand's manifest made: which brand and manifest version made it, and
    its physical name (derived from the brand's id, so no two brands ever share one).

    The rows API and the timed-move job reach only tables registered to their brand."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="tables")
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="tables")
    name = models.CharField(max_length=64, help_text="The table's name in the manifest.")
    database = models.CharField(max_length=64)
    db_table = models.CharField(max_length=63, help_text="The table's name in the database.")
    manifest = models.ForeignKey("timekeeping.Manifest", on_delete=models.CASCADE,
                                 related_name="tables",
                                 help_text="The manifest version that made it.")
    declared_in = models.ForeignKey(
        "timekeeping.Manifest", on_delete=models.CASCADE, related_name="+", null=True,
        help_text="The last manifest version that declared it. A table the current version "
                  "no longer declares is retired: its rows are kept, readable, and no longer "
                  "written or moved.")
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "name"]
        constraints = [
            models.UniqueConstraint(fields=["database", "db_table"], name="brand_table_unique"),
            models.UniqueConstraint(fields=["brand", "name"], name="brand_table_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.db_table})"


class Rehearsal(Model):
    """A brand's rows on a test clock: copies of chosen live rows, or rows added there, kept
    in tables of their own (`moves.rehearse`), moved by the test clock's walks."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    test_clock = models.OneToOneField(TestClock, on_delete=models.CASCADE,
                                      related_name="rehearsal")
    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="+")
    tables = models.JSONField(default=list, help_text="The tables made for it, by their "
                                                      "names in the database.")
    last_run = models.DateTimeField(null=True, blank=True,
                                    help_text="The test clock's time its job last ran.")
    created = models.DateTimeField(default=wallclock.wall_now)

    def __str__(self) -> str:
        return f"rehearsal on {self.test_clock_id}"
