"""Digests (issue 27): a person's daily or weekly email of one brand's dates at risk and what
changed, in their zone, written to the outbox by the tick's digests phase once per period.

    periods   when a digest is due: the period's key and instant, in the digest's zone (pure)
    choose    a person's choice saved (`digest_set`), and turned off by an unsubscribe link
    content   what one digest says, for an owner or a member, as text and HTML
    send      the tick's phase: the digests due, each claimed once and written to the outbox
    tokens    the signed unsubscribe link (no sign-in needed)

docs/digests.md says how it reads to people and how exactly-once holds.
"""
