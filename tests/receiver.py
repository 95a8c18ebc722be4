"""A receiver on loopback (127.0.0.1) that keeps each request it was sent and answers from a
script: the statuses it gives in turn (the last one repeats), and headers to add."""

import functools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Receiver:
    def __init__(self):
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.statuses = [204]
        self.headers: dict[str, str] = {}
        self.url = ""

    def answer(self) -> int:
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_HTTP = True
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(got.answer())
            for name, value in got.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got.url = f"http://127.0.0.1:{server.server_port}/hooks"
    yield got
    server.shutdown()
    server.server_close()


def resolve_into_a_private_network(monkeypatch) -> list[str]:
    """Every name the webhook sender resolves now leads to 10.1.2.3 (a stub resolver: nothing
    is asked of DNS), and any connection made fails the test: the guard must refuse first.
    Returns the names asked, as they are asked."""
    from timekeeping.webhooks import sending

    asked: list[str] = []

    def resolver(host, port, *args, **kwargs):
        asked.append(host)
        return [(2, 1, 6, "", ("10.1.2.3", port))]

    def no_connection(*args, **kwargs):
        raise AssertionError("a refused address was connected to")

    monkeypatch.setattr(sending.transport, "post",
                        functools.partial(sending.transport.post, resolver=resolver))
    monkeypatch.setattr("socket.create_connection", no_connection)
    return asked
