"""Where mail goes in development (issue 27): with no EMAIL_URL set, each email the product
sends is one line on the terminal, "email to ada@example.com — 30-day reminder: …", instead
of the whole raw message; the emails are read in full on the console's Sent emails page
(`/console/<brand>/emails/`). Any EMAIL_URL (`consolemail://` for the raw messages,
`smtp+tls://…` for real ones) replaces it."""

from __future__ import annotations

import sys
import threading

from django.core.mail.backends.base import BaseEmailBackend


class OneLineBackend(BaseEmailBackend):
    def __init__(self, *args, stream=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()

    def send_messages(self, email_messages) -> int:
        with self._lock:
            for message in email_messages:
                self.stream.write(f"email to {', '.join(message.to)} — {message.subject}\n")
            self.stream.flush()
        return len(email_messages)
