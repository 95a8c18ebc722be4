"""The ledger's tables (DESIGN decision 10): accounts, balanced postings, and holds.

Amounts are integers in minor units with a currency code, never floats. Only
`money/ledger.py` writes here. `money` never imports `timekeeping`: what a posting is for is
a reference string its caller chooses, and the brand whose books it is (every row carries
it, DESIGN "Scale") is the brand's id, given by the caller.
"""

from django.db import models


def _brand(related_name: str) -> models.ForeignKey:
    # PROTECT, as the ledger's own relations: a brand with books is not deleted under them.
    return models.ForeignKey("timekeeping.Brand", on_delete=models.PROTECT,
                             related_name=related_name)


class Account(models.Model):
    brand = _brand("accounts")
    key = models.CharField(max_length=200, unique=True)
    currency = models.CharField(max_length=3)
    floor = models.BigIntegerField(null=True, blank=True,
                                   help_text="The lowest balance allowed (minor units); "
                                             "empty: no floor.")

    def __str__(self) -> str:
        return f"{self.key} ({self.currency})"


class Posting(models.Model):
    brand = _brand("postings")
    kind = models.CharField(max_length=32)
    reference = models.CharField(max_length=300, db_index=True)
    currency = models.CharField(max_length=3)
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class Entry(models.Model):
    brand = _brand("entries")
    posting = models.ForeignKey(Posting, on_delete=models.PROTECT, related_name="entries")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries")
    amount = models.BigIntegerField(help_text="Minor units; positive in, negative out.")

    def __str__(self) -> str:
        return f"{self.account.key} {self.amount:+d}"


class Hold(models.Model):
    """Money held for something until a moment: taken, given back, or still held."""

    class State(models.TextChoices):
        HELD = "held", "held"
        TAKEN = "taken", "taken"
        GIVEN_BACK = "given_back", "given back"

    brand = _brand("holds")
    reference = models.CharField(max_length=300, unique=True)
    payer = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="holds")
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    state = models.CharField(max_length=12, choices=State.choices, default=State.HELD)
    until = models.DateTimeField(help_text="When it is given back if nobody finishes it.")
    retry_after = models.DateTimeField(null=True, blank=True)
    last_refusal = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        # A brand's held holds by their moment: what the timed-move job gives back.
        indexes = [models.Index(fields=["brand", "until"], condition=models.Q(state="held"),
                                name="hold_held_until")]

    def __str__(self) -> str:
        return f"{self.reference}: {self.amount} {self.currency} {self.state}"
