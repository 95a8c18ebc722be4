"""Where a webhook may go (timekeeping.webhooks.guard) and how it is sent
(timekeeping.webhooks.transport). Traffic goes only to a receiver on loopback; every other
address is answered by a stub resolver and refused before any connection."""

from __future__ import annotations

import ipaddress
import socket
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from timekeeping.webhooks import guard, transport
from timekeeping.webhooks.guard import Refused, check_url, refused_reason, resolve
from timekeeping.webhooks.transport import Response, post

NOBODY = frozenset()

REFUSED = [  # (address, a word of the reason)
    ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("::1", "loopback"),
    ("10.0.0.5", "private"), ("172.16.0.1", "private"), ("172.31.255.254", "private"),
    ("192.168.1.1", "private"), ("fc00::1", "private"), ("fd12:3456::1", "private"),
    ("169.254.1.1", "link-local"), ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade"), ("100.127.255.254", "carrier-grade"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("0.1.2.3", "reserved"), ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"), ("::", "unspecified"),
    ("192.0.0.8", "protocol"), ("198.18.0.1", "benchmarking"), ("198.19.255.1", "benchmarking"),
    ("192.0.2.1", "documentation"), ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"), ("2001:db8::1", "documentation"),
    ("169.254.169.254", "metadata"), ("fd00:ec2::254", "metadata"),
    ("100.100.100.200", "metadata"), ("fec0::1", "site-local"),
    ("::ffff:10.0.0.1", "private"), ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:169.254.169.254", "metadata"), ("::10.0.0.1", "private"),
    ("64:ff9b::a00:1", "private"), ("64:ff9b:1::808:808", "NAT64"),
    ("2002:a00:1::1", "private"), ("2002:7f00:1::1", "loopback"), ("2001::1", "Teredo"),
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111",
          "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]


def _url(address: str, scheme: str = "https") -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{scheme}://{host}/hook"


def _refused(url: str, **allowing) -> Refused:
    with pytest.raises(Refused) as caught:
        check_url(url, allow_http=allowing.get("allow_http", False),
                  allow_hosts=allowing.get("allow_hosts", NOBODY))
    assert caught.value.field == "url"
    assert str(caught.value) == caught.value.message
    return caught.value


def stub(*answers: str, calls: list | None = None):
    """A resolver answering getaddrinfo-shaped tuples, one answer (addresses separated by
    spaces) per call, the last repeating; it records each call in `calls`."""
    calls = [] if calls is None else calls

    def resolver(host, port, *args, **kwargs):
        calls.append((host, port))
        answer = answers[min(len(calls), len(answers)) - 1]
        return [(socket.AF_INET6 if ":" in each else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (each, port)) for each in answer.split()]
    return resolver


# The ranges.

@pytest.mark.parametrize(("address", "word"), REFUSED, ids=[each for each, _ in REFUSED])
def test_it_refuses_every_range_with_a_reason(address, word):
    reason = refused_reason(ipaddress.ip_address(address))
    assert reason is not None and word.lower() in reason.lower()


@pytest.mark.parametrize("address", PUBLIC)
def test_it_allows_a_public_address(address):
    assert refused_reason(ipaddress.ip_address(address)) is None


# check_url, when an endpoint is made or changed.

@pytest.mark.parametrize(("address", "word"), REFUSED, ids=[each for each, _ in REFUSED])
def test_it_refuses_a_url_whose_host_is_an_address_in_a_refused_range(address, word):
    refusal = _refused(_url(address))
    assert refusal.code == "url.address_refused"
    assert "which webhooks may not reach" in refusal.message


def test_it_says_the_address_in_words():
    refusal = _refused("https://10.0.0.5/hook")
    assert refusal.message == ("The address 10.0.0.5 is on a private network, "
                               "which webhooks may not reach.")


@pytest.mark.parametrize("url", ["https://[::ffff:10.0.0.1]/", "https://[::ffff:169.254.169.254]/",
                                 "https://[::1]:8443/", "https://[fe80::1%25eth0]/"])
def test_it_refuses_a_bracketed_ipv6_address_and_its_ipv4_mapped_forms(url):
    assert _refused(url).code == "url.address_refused"


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "127.1", "0x7f.1", "0x7f000001",
                                  "127.000.000.001", "017700000001", "１２７．０．０．１"])
def test_it_refuses_odd_spellings_of_the_loopback_address(host):
    refusal = _refused(f"https://{host}/hook")
    assert refusal.code == "url.address_refused"
    assert "127.0.0.1" in refusal.message


@pytest.mark.parametrize("url", ["ftp://hooks.example.com/", "file:///etc/passwd",
                                 "gopher://hooks.example.com:70/", "javascript:alert(1)",
                                 "hooks.example.com/hook", "//hooks.example.com/hook"])
def test_it_refuses_a_scheme_other_than_http_and_https(url):
    assert _refused(url, allow_http=True).code == "url.scheme"


def test_it_refuses_plain_http_unless_the_operator_allows_it():
    assert _refused("http://hooks.example.com/").code == "url.http"
    # An allowed host does not allow http: only WEBHOOK_ALLOW_HTTP does.
    allowed = frozenset({"hooks.example.com"})
    assert _refused("http://hooks.example.com/", allow_hosts=allowed).code == "url.http"
    check_url("http://hooks.example.com/", allow_http=True, allow_hosts=NOBODY)


@pytest.mark.parametrize("url", ["https://user:secret@hooks.example.com/",
                                 "https://user@hooks.example.com/", "https://:pw@hooks.example.com/"])
def test_it_refuses_credentials_in_the_url(url):
    assert _refused(url).code == "url.credentials"


@pytest.mark.parametrize("port", ["0", "65536", "99999", "http", "-1"])
def test_it_refuses_a_port_outside_one_to_65535(port):
    assert _refused(f"https://hooks.example.com:{port}/").code == "url.port"


def test_it_refuses_a_url_too_long_without_a_host_or_with_a_space():
    assert _refused("https://hooks.example.com/" + "a" * 2000).code == "url.too_long"
    assert _refused("https:///hook").code == "url.host"
    assert _refused("https://hooks.example.com/a b").code == "url.invalid"
    assert _refused("https://[::1/").code == "url.invalid"
    assert _refused("https://localhost:8000/").code == "url.host"


def test_it_accepts_an_ordinary_https_hostname():
    check_url("https://hooks.example.com/in?brand=7", allow_http=False, allow_hosts=NOBODY)
    target = guard.checked_target("https://Bücher.example:8443/Grüße?a=1#top",
                                  allow_http=False, allow_hosts=NOBODY)
    assert target == guard.Target("https", "xn--bcher-kva.example", 8443, "/Gr%C3%BC%C3%9Fe?a=1")
    assert target.host_header == "xn--bcher-kva.example:8443"


@pytest.mark.parametrize("url", PUBLIC)
def test_it_accepts_a_public_address(url):
    check_url(_url(url), allow_http=False, allow_hosts=NOBODY)


def test_it_accepts_an_allowed_host_written_as_an_address_or_a_name():
    check_url("http://127.0.0.1:8000/", allow_http=True, allow_hosts=frozenset({"127.0.0.1"}))
    check_url("https://[::1]/", allow_http=False, allow_hosts=frozenset({"[::1]"}))
    check_url("https://[0:0::1]/", allow_http=False, allow_hosts=frozenset({"::1"}))
    check_url("https://127.1/", allow_http=False, allow_hosts=frozenset({"127.0.0.1"}))
    check_url("https://LocalHost/", allow_http=False, allow_hosts=frozenset({"localhost"}))


# resolve, when a webhook is sent.

@pytest.mark.parametrize(("address", "word"), REFUSED, ids=[each for each, _ in REFUSED])
def test_it_refuses_a_name_resolving_to_a_refused_address(address, word):
    with pytest.raises(Refused) as caught:
        resolve("hooks.example.com", 443, allow_hosts=NOBODY, resolver=stub(address))
    assert caught.value.code == "url.address_refused"
    assert str(ipaddress.ip_address(address)) in caught.value.message


def test_it_refuses_a_name_with_one_private_address_among_public_ones():
    resolver = stub("93.184.215.14 10.0.0.7")
    with pytest.raises(Refused, match="10.0.0.7"):
        resolve("hooks.example.com", 443, allow_hosts=NOBODY, resolver=resolver)


def test_it_answers_every_checked_address_in_order_once():
    resolver = stub("93.184.215.14 2606:4700::1 93.184.215.14")
    checked = resolve("hooks.example.com", 443, allow_hosts=NOBODY, resolver=resolver)
    assert checked == ["93.184.215.14", "2606:4700::1"]


def test_it_lets_an_allowed_host_resolve_to_a_private_address():
    resolver = stub("10.0.0.7 127.0.0.1")
    allowed = frozenset({"hooks.internal"})
    assert resolve("Hooks.Internal", 80, allow_hosts=allowed, resolver=resolver) == [
        "10.0.0.7", "127.0.0.1"]
    # An address on the list is allowed whatever name leads to it; the others are not.
    with pytest.raises(Refused, match="10.0.0.7"):
        resolve("elsewhere.example", 80, allow_hosts=frozenset({"127.0.0.1"}), resolver=resolver)


def test_it_refuses_a_name_that_does_not_resolve():
    def failing(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(Refused) as caught:
        resolve("nowhere.example", 443, allow_hosts=NOBODY, resolver=failing)
    assert caught.value.code == "url.resolve_failed"
    with pytest.raises(Refused, match="no address"):
        resolve("nowhere.example", 443, allow_hosts=NOBODY, resolver=lambda *a, **k: [])


def test_it_reads_the_operators_exceptions_when_asked(settings):
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOW_HOSTS = ["Hooks.Internal", "[::1]"]
    assert guard.settings_allow() == (True, frozenset({"hooks.internal", "::1"}))
    settings.WEBHOOK_ALLOW_HOSTS = "hooks.internal"
    with pytest.raises(TypeError):
        guard.settings_allow()


# post, against a receiver on loopback only.

class Receiver(BaseHTTPRequestHandler):
    """Answers by path: /ok, /big (200 KB), /redirect (to a private address), /silent (waits
    until the test ends)."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.server.seen.append((self.path, self.headers, self.rfile.read(length)))
        if self.path == "/silent":
            self.server.release.wait(30)
            return
        status, headers, body = self.answers[self.path]
        try:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client stops reading a big body: as it should
            pass

    answers = {
        "/ok": (200, {"Content-Type": "application/json", "Retry-After": "30"}, b'{"ok": true}'),
        "/big": (200, {}, b"x" * 200_000),
        "/redirect": (302, {"Location": "http://10.0.0.1/"}, b""),
    }

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_HTTP = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.seen, server.release = [], threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def connections(monkeypatch):
    """Every address a socket connects to, through the real socket.create_connection."""
    made, real = [], socket.create_connection

    def recording(address, *args, **kwargs):
        made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recording)
    return made


def _at(server, path: str, host: str = "127.0.0.1", scheme: str = "http") -> str:
    return f"{scheme}://{host}:{server.server_address[1]}{path}"


def test_it_posts_and_reads_the_answer(receiver, connections):
    response = post(_at(receiver, "/ok"), b'{"event": "due"}', {"X-Signature": "abc"})
    assert (response.status, response.body) == (200, b'{"ok": true}')
    assert response.headers["content-type"] == "application/json"
    assert response.address == "127.0.0.1" and response.duration_ms >= 0
    [(path, headers, body)] = receiver.seen
    assert (path, body) == ("/ok", b'{"event": "due"}')
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"] == "KeepingTime-Webhooks/1"
    assert headers["X-Signature"] == "abc"
    assert headers["Host"] == f"127.0.0.1:{receiver.server_address[1]}"
    assert connections == [("127.0.0.1", receiver.server_address[1])]


def test_it_keeps_the_callers_content_type_and_user_agent(receiver):
    post(_at(receiver, "/ok"), b"a=1", {"content-type": "text/plain", "User-Agent": "Mine/2"})
    [(_, headers, _)] = receiver.seen
    assert (headers["Content-Type"], headers["User-Agent"]) == ("text/plain", "Mine/2")


def test_it_reads_no_more_than_64_kb_of_the_answer(receiver):
    response = post(_at(receiver, "/big"), b"{}", {})
    assert response.body == b"x" * 65536


def test_it_answers_a_redirect_as_it_is_and_does_not_follow_it(receiver, connections):
    calls = []
    resolver = stub("127.0.0.1", calls=calls)
    response = post(_at(receiver, "/redirect"), b"{}", {}, resolver=resolver)
    assert response.status == 302
    assert response.headers["location"] == "http://10.0.0.1/"
    assert [path for path, _, _ in receiver.seen] == ["/redirect"]
    assert calls == [("127.0.0.1", receiver.server_address[1])]
    assert connections == [("127.0.0.1", receiver.server_address[1])]


def test_it_gives_up_on_a_receiver_that_does_not_answer_in_time(receiver):
    with pytest.raises(TimeoutError):
        post(_at(receiver, "/silent"), b"{}", {}, total_timeout=0.5)
    assert [path for path, _, _ in receiver.seen] == ["/silent"]


def test_it_connects_to_the_address_it_checked_whatever_the_name_answers_next(receiver):
    calls = []
    resolver = stub("127.0.0.1", "10.0.0.1", calls=calls)  # DNS rebinding
    response = post(_at(receiver, "/ok", host="hooks.example"), b"{}", {}, resolver=resolver)
    assert response.status == 200 and response.address == "127.0.0.1"
    assert calls == [("hooks.example", receiver.server_address[1])]
    [(_, headers, _)] = receiver.seen
    assert headers["Host"] == f"hooks.example:{receiver.server_address[1]}"


def test_it_refuses_a_private_address_before_any_connection(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_HOSTS, settings.WEBHOOK_ALLOW_HTTP = [], False

    def no_connection(*args, **kwargs):
        pytest.fail("a socket connected to a refused address")

    monkeypatch.setattr(socket, "create_connection", no_connection)
    with pytest.raises(Refused) as caught:
        post("https://hooks.example/in", b"{}", {}, resolver=stub("10.0.0.1"))
    assert caught.value.code == "url.address_refused"
    with pytest.raises(Refused):
        post("https://169.254.169.254/latest/meta-data/", b"{}", {}, resolver=stub("8.8.8.8"))


def test_it_verifies_https_against_the_urls_host_on_the_checked_address(receiver, monkeypatch):
    wrapped = []

    class Context:  # stands for ssl's: the receiver speaks plain HTTP
        verify_mode, check_hostname = transport.ssl.CERT_REQUIRED, True

        def wrap_socket(self, sock, server_hostname):
            wrapped.append((sock.getpeername()[0], server_hostname))
            return sock

    monkeypatch.setattr(transport.ssl, "create_default_context", Context)
    url = _at(receiver, "/ok", host="hooks.example", scheme="https")
    response = post(url, b"{}", {}, resolver=stub("127.0.0.1"))
    assert response.status == 200
    assert wrapped == [("127.0.0.1", "hooks.example")]


def test_it_speaks_tls_for_https(receiver):
    url = _at(receiver, "/ok", scheme="https")  # the receiver answers plain HTTP
    with pytest.raises(transport.ssl.SSLError):
        post(url, b"{}", {})


# Retry-After.

NOW = datetime(2028, 3, 1, 12, tzinfo=UTC)


def _retry(value: str | None) -> timedelta | None:
    headers = {} if value is None else {"retry-after": value}
    return Response(503, headers, b"", 5, "127.0.0.1").retry_after(NOW)


def test_it_reads_retry_after_in_seconds_or_as_a_date():
    assert _retry("120") == timedelta(seconds=120)
    assert _retry(format_datetime(NOW + timedelta(minutes=3), usegmt=True)) == timedelta(minutes=3)
    assert _retry("Wed, 01 Mar 2028 12:00:30 -0000") == timedelta(seconds=30)
    assert _retry(format_datetime(NOW - timedelta(hours=1), usegmt=True)) == timedelta(0)


def test_it_reads_no_retry_after_from_garbage_or_nothing():
    for value in (None, "", "soon", "-5", "1.5", "٣", "Mon, 99 Foo 2028"):
        assert _retry(value) is None, value


def test_it_caps_retry_after_at_a_day():
    assert _retry("100000") == timedelta(hours=24)
    assert _retry("9" * 5000) == timedelta(hours=24)
    assert _retry("Fri, 01 Mar 2030 12:00:00 GMT") == timedelta(hours=24)


# Whatever is typed.

@hypothesis_settings(max_examples=300, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=200),
                 st.builds("{}{}".format, st.sampled_from(["http://", "https://", "https://["]),
                           st.text(max_size=80))),
       st.booleans())
def test_it_refuses_anything_only_with_refused(text, allow_http):
    try:
        target = guard.checked_target(text, allow_http=allow_http, allow_hosts=NOBODY)
    except Refused as refusal:
        assert refusal.code.startswith("url.") and refusal.message
        return
    address = guard.literal_address(target.host)
    assert address is None or refused_reason(address) is None


def _spellings(address) -> list[str]:
    if address.version == 6:
        return [f"[{address}]", f"[{address.exploded}]"]
    number = int(address)
    return [str(address), str(number), hex(number), ".".join(f"0{part:o}" for part in
                                                              address.packed)]


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.one_of(st.ip_addresses(), st.sampled_from([ipaddress.ip_address(each)
                                                     for each, _ in REFUSED])))
def test_it_never_accepts_a_refused_address_in_any_spelling(address):
    for host in _spellings(address):
        url = f"https://{host}:8443/hook"
        if refused_reason(address) is None:
            check_url(url, allow_http=False, allow_hosts=NOBODY)
        else:
            with pytest.raises(Refused):
                check_url(url, allow_http=False, allow_hosts=NOBODY)
