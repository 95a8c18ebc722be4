"""Outgoing webhooks: where they may go, how they are sent, and what they carry."""
