"""Automations (issue 30, A7): a manifest's rules that hear a change (a row entering a state, a
date missed, an ask expired) and act on it in the same transaction."""
