"""Automations (SPEC A7, issue 30; docs/timed-moves.md, "Automations"): a manifest's rules that
hear a change (a row entering a state, a date missed, an ask expired) and do one thing in the
same transaction (an email, a webhook, a move of a linked row, a task), checked with the
manifest (`check`), run as records are made (`hearing`), done by `acting`, said by `words`."""


def register() -> None:
    """What the package wires, called by `TimekeepingConfig.ready` after the webhooks' own
    (a rule's webhook joins the deliveries the event already has): the rules hear each record
    as it is made (`hearing.hear`), and a preview of the timed moves says which rules a move
    would set off (`words.previewed`)."""
    from timekeeping.automations import hearing, words
    from timekeeping.moves import operate
    from timekeeping.timers import records

    records.listen(hearing.hear)
    operate.tell_with(words.previewed)
