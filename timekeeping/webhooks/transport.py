"""Sending one webhook: an HTTP POST to an address the guard has checked, and nothing else.

    post(url, body, headers, ...)   check the URL, resolve and check every address, connect to
                                    the first checked address itself, send, read the answer

The connection goes to the address the guard checked, never to a name resolved again: a name
whose answer changes between the check and the connection (DNS rebinding) cannot lead us
inside. For https the certificate is still verified against the URL's host, and that host is
sent as SNI and as the Host header. Redirects are never followed: a 3xx is answered as it is,
since following one would reach an address nobody checked. One deadline bounds the whole
exchange (resolution, which the system resolver bounds itself, aside), and at most 64 KB of
the answer is read.
"""

from __future__ import annotations

import functools
import http.client
import io
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from timekeeping.webhooks import guard

MAX_BODY = 64 * 1024
MAX_RETRY_AFTER = timedelta(hours=24)
DEFAULT_HEADERS = {"Content-Type": "application/json", "User-Agent": "KeepingTime-Webhooks/1"}
OURS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # names lowercased; repeated headers joined with ", "
    body: bytes  # at most MAX_BODY: the rest is never read
    duration_ms: int
    address: str  # the address connected to

    def retry_after(self, now: datetime) -> timedelta | None:
        """How long the receiver asks us to wait (Retry-After: seconds or an HTTP date, read
        against the aware `now`); None when it does not say, or says it unreadably. Never
        negative, at most 24 hours."""
        value = self.headers.get("retry-after", "").strip()
        if not value:
            return None
        if value.isascii() and value.isdigit():
            wait = MAX_RETRY_AFTER if len(value) > 6 else timedelta(seconds=int(value))
        else:
            when = _http_date(value)
            if when is None:
                return None
            wait = when - now
        return min(max(wait, timedelta(0)), MAX_RETRY_AFTER)


def _http_date(value: str) -> datetime | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    # An HTTP date is always GMT; a "-0000" zone is read as naive.
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def post(url: str, body: bytes, headers: dict[str, str], *,
         resolver: Callable[..., list] = socket.getaddrinfo,
         connect_timeout: float = 5, total_timeout: float = 15) -> Response:
    """POST `body` to a webhook's `url`. Steps:

    1. check the URL (guard.checked_target) with the operator's exceptions (settings_allow);
    2. resolve its host and check every address (guard.resolve), once;
    3. connect to the first checked address, within connect_timeout and the deadline;
    4. send the request, the Host header and SNI being the URL's host;
    5. read the status, the headers and at most 64 KB of the body, before the deadline.

    Raises guard.Refused before any connection; OSError, TimeoutError, ssl.SSLError and
    http.client.HTTPException as the exchange fails. A 3xx is answered, not followed.
    """
    started = time.monotonic()
    deadline = started + total_timeout
    allow_http, allow_hosts = guard.settings_allow()
    target = guard.checked_target(url, allow_http=allow_http, allow_hosts=allow_hosts)
    address = guard.resolve(target.host, target.port, allow_hosts=allow_hosts,
                            resolver=resolver)[0]
    connection = _connection(target, address, timeout=min(connect_timeout, _left(deadline)))
    try:
        connection.response_class = functools.partial(_DeadlineResponse, deadline=deadline)
        _send(connection, target, body, headers, deadline)
        status, answer, read = _receive(connection)
    finally:
        connection.close()
    duration_ms = int((time.monotonic() - started) * 1000)
    return Response(status, answer, read, duration_ms, address)


def _connection(target: guard.Target, address: str, *, timeout: float) -> Pinned:
    kind = _PinnedSecure if target.scheme == "https" else _Pinned
    return kind(target.host, target.port, address=address, timeout=timeout)


def _send(connection: Pinned, target: guard.Target, body: bytes, headers: dict[str, str],
          deadline: float) -> None:
    connection.connect()
    connection.sock.settimeout(_left(deadline))
    connection.putrequest("POST", target.path, skip_host=True, skip_accept_encoding=True)
    connection.putheader("Host", target.host_header)
    given = {name.lower() for name in headers}
    for name, value in DEFAULT_HEADERS.items():
        if name.lower() not in given:
            connection.putheader(name, value)
    for name, value in headers.items():
        if name.lower() not in OURS:
            connection.putheader(name, value)
    connection.putheader("Content-Length", str(len(body)))
    connection.putheader("Connection", "close")
    connection.endheaders(body)


def _receive(connection: Pinned) -> tuple[int, dict[str, str], bytes]:
    response = connection.getresponse()
    headers: dict[str, str] = {}
    for name, value in response.getheaders():
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    body = b""
    while len(body) < MAX_BODY:
        chunk = response.read(MAX_BODY - len(body))
        if not chunk:
            break
        body += chunk
    return response.status, headers, body


def _left(deadline: float) -> float:
    """The seconds left before the deadline; TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("The webhook's receiver took too long to answer.")
    return left


def _open(address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to the checked address, never to a name resolved again."""
    sock = socket.create_connection((address, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to the URL's host that connects to one checked address."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = _open(self.address, self.port, self.timeout)


class _PinnedSecure(http.client.HTTPSConnection):
    """An HTTPS connection to one checked address; the certificate is verified against the
    URL's host, which is also sent as SNI."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = _open(self.address, self.port, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


Pinned = _Pinned | _PinnedSecure


class _DeadlineResponse(http.client.HTTPResponse):
    """A response whose every read from the socket waits only for what is left of the
    deadline: a receiver dripping one byte at a time cannot hold us past it."""

    def __init__(self, sock: socket.socket, *args, deadline: float, **kwargs) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # the socket's own reader; ours replaces it
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        # The socket's raw reader keeps it open for us after the connection lets it go (as
        # http.client's own reader does when the receiver closes the connection).
        self._sock, self._raw, self._deadline = sock, sock.makefile("rb", buffering=0), deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()
