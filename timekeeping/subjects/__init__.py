"""Subjects: what a brand keeps dates for (a company, a person, a property). Their pages are
`timekeeping.console.subjects` and `timekeeping.console.roster`, their API
`timekeeping.api.subjects`; what both call is here."""
