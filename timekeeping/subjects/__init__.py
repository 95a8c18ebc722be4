"""Subjects: what a brand keeps dates for (a company, a person, a property). Their pages are
`timekeeping.console.subjects` and `timekeeping.console.roster`, their API
`timekeeping.api.subjects`, their command `manage.py subjects`; what they all call is here:
making a subject (`making`) and erasing its personal data (`erasing`, with `owned`,
`scrubbing` and `leftovers`)."""
