"""Where a webhook may go: the guard against server-side request forgery (SSRF).

A webhook's address is typed by a customer, and the product then makes a request to it from
inside our network. Without this guard an address such as http://169.254.169.254/ would read
the cloud's metadata service (its credentials), and http://10.0.0.5/ a private service. Two
checks, at two times:

    check_url(url, ...)          when an endpoint is made or changed: the address's form, and a
                                 host written as an address (in any spelling) in a refused range
    resolve(host, port, ...)     when a webhook is sent: every address the name resolves to is
                                 checked, and the transport connects to one of those addresses
                                 itself, so the name cannot point elsewhere in between (DNS
                                 rebinding)

An operator lets a host through with WEBHOOK_ALLOW_HOSTS (a name or an address; e.g. a receiver
on the same machine in development) and allows plain http:// with WEBHOOK_ALLOW_HTTP.

IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4)
are judged by the IPv4 address they carry; the local-use NAT64 prefix 64:ff9b:1::/48 and Teredo
2001::/32 are refused outright (the first leads into a private network by definition, the
second hides its address and tunnels through a relay).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, urlsplit

from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL = 2000
DEFAULT_PORTS = {"http": 80, "https": 443}
LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
UNSAFE = re.compile(r"[\x00-\x20\x7f]")  # whitespace and control characters: never in a URL

_net = ipaddress.ip_network

# Asked first: a metadata service hands out the cloud's credentials; it deserves its own words.
METADATA = frozenset(ipaddress.ip_address(each) for each in (
    "169.254.169.254", "fd00:ec2::254", "100.100.100.200",
))
LOOPBACK = "this server itself (a loopback address)"
UNSPECIFIED = "unspecified, not the address of any machine"
# Properties of `ipaddress` that mean what they say for both families, asked after NETWORKS.
PROPERTIES = (
    ("is_link_local", "a link-local address (reachable only on the local network)"),
    ("is_multicast", "a multicast address"),
    ("is_site_local", "a site-local address (a private network)"),
    ("is_reserved", "reserved, not on the public internet"),
)
PRIVATE = "on a private network"
DOCUMENTATION = "reserved for documentation examples"
# Named ranges, where a property is missing or too broad to say why (`is_private` covers the
# documentation ranges too; `is_global` is False for 100.64.0.0/10 but `is_private` is not True).
NETWORKS = tuple((_net(network), reason) for network, reason in (
    ("10.0.0.0/8", PRIVATE),
    ("172.16.0.0/12", PRIVATE),
    ("192.168.0.0/16", PRIVATE),
    ("fc00::/7", PRIVATE),
    ("100.64.0.0/10", "on a carrier-grade NAT network (shared address space)"),
    ("0.0.0.0/8", "reserved for this network, not the address of any machine"),
    ("255.255.255.255/32", "the broadcast address"),
    ("192.0.0.0/24", "reserved for protocol assignments"),
    ("198.18.0.0/15", "reserved for network benchmarking"),
    ("192.0.2.0/24", DOCUMENTATION),
    ("198.51.100.0/24", DOCUMENTATION),
    ("203.0.113.0/24", DOCUMENTATION),
    ("2001:db8::/32", DOCUMENTATION),
    ("3fff::/20", DOCUMENTATION),
    ("100::/64", "reserved for discarding traffic"),
    ("64:ff9b:1::/48", "a local NAT64 address, which leads into a private network"),
    ("2001::/32", "a Teredo tunnel address"),
))
NOT_GLOBAL = "not on the public internet"
# IPv6 prefixes whose last 32 bits are an IPv4 address (mapped and 6to4 have properties).
CARRY_LAST_32 = (_net("::/96"), _net("64:ff9b::/96"))


class Refused(Exception):
    """A webhook address refused, in words a business owner understands."""

    field = "url"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code  # stable: "url.scheme", "url.address_refused", ...
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Target:
    """Where a checked URL leads: the host in ASCII, lowercased, without brackets."""

    scheme: str
    host: str
    port: int
    path: str  # the path and query, never empty; the fragment is never sent

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def refused_reason(address: Address) -> str | None:
    """Why webhooks may not reach `address`, as words after "is"; None when they may."""
    if address in METADATA:
        return "a cloud provider's metadata service"
    if address.is_loopback:
        return LOOPBACK
    if address.is_unspecified:
        return UNSPECIFIED
    carried = _carried_ipv4(address)
    if carried is not None:
        reason = refused_reason(carried)
        return reason and f"an IPv6 form of {carried} ({reason})"
    for network, reason in NETWORKS:
        if address.version == network.version and address in network:
            return reason
    for name, reason in PROPERTIES:
        if getattr(address, name, False):
            return reason
    return None if address.is_global else NOT_GLOBAL


def _carried_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and would reach, if it carries one."""
    if address.version == 4:
        return None
    carried = address.ipv4_mapped or address.sixtofour
    if carried is None and any(address in network for network in CARRY_LAST_32):
        carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return carried


def check_url(url: str, *, allow_http: bool, allow_hosts: frozenset[str]) -> None:
    """Refuse a webhook address when an endpoint is made or changed (raises `Refused`)."""
    checked_target(url, allow_http=allow_http, allow_hosts=allow_hosts)


def checked_target(url: str, *, allow_http: bool, allow_hosts: frozenset[str]) -> Target:
    """`check_url`, answering where the URL leads. Steps: its form, its scheme, its host and
    port, then a host written as an address is checked against the refused ranges."""
    target = _target(url, allow_http=allow_http)
    address = literal_address(target.host)
    if _allowed(target.host, address, allow_hosts):
        return target
    if target.host.removesuffix(".").split(".")[-1] == "localhost":
        raise Refused("url.host", f"The host {target.host} is this server itself, "
                                  "which webhooks may not reach.")
    if address is not None:
        reason = refused_reason(address)
        if reason:
            raise Refused("url.address_refused", f"The address {_spelled(target.host, address)} "
                                                 f"is {reason}, which webhooks may not reach.")
    return target


def _spelled(host: str, address: Address) -> str:
    """The host as the customer wrote it, and the address it means when that differs."""
    return host if address.version == 6 or host == str(address) else f"{host} (that is, {address})"


def _target(url: str, *, allow_http: bool) -> Target:
    if len(url) > MAX_URL:
        raise Refused("url.too_long", f"The address is longer than {MAX_URL} characters.")
    if UNSAFE.search(url):
        raise Refused("url.invalid", "The address has a space or a control character in it.")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise Refused("url.invalid", "This is not a web address we can read.") from None
    scheme = parts.scheme.lower()
    _check_scheme(scheme, allow_http=allow_http)
    if "@" in parts.netloc:
        raise Refused("url.credentials", "Take the user name and password out of the address; "
                                         "webhooks may not carry them there.")
    host = _ascii_host(parts.hostname or "")
    port = _port(parts)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # The request line is ASCII: a letter such as ü in the path goes percent-encoded.
    path = "".join(each if each.isascii() else quote(each) for each in path)
    return Target(scheme, host, port or DEFAULT_PORTS[scheme], path)


def _port(parts: SplitResult) -> int | None:
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise Refused("url.port", "The port must be a number from 1 to 65535.")
    return port


def _check_scheme(scheme: str, *, allow_http: bool) -> None:
    if scheme not in DEFAULT_PORTS:
        raise Refused("url.scheme", "A webhook address starts with https://"
                                    + (f", not {scheme}://." if scheme else "."))
    if scheme == "http" and not allow_http:
        raise Refused("url.http", "A webhook address must start with https://: this server "
                                  "sends nothing over plain http://, which is unprotected.")


def _ascii_host(host: str) -> str:
    """The host as it goes on the wire: an IPv6 address, or a name in ASCII (an international
    name in its IDNA form, which may spell an address: fullwidth digits become 127.0.0.1)."""
    if not host:
        raise Refused("url.host", "The address names no host (such as hooks.example.com).")
    if ":" in host:
        if isinstance(literal_address(host), ipaddress.IPv6Address):
            return host
        raise Refused("url.host", f"The host {host} is not a name or an address.")
    try:
        name = host.encode("idna").decode("ascii").lower() if not host.isascii() else host
    except ValueError:
        raise Refused("url.host", f"The host {host} is not a name or an address.") from None
    labels = name.removesuffix(".").split(".")
    if len(name) > 253 or not all(LABEL.fullmatch(label) for label in labels):
        raise Refused("url.host", f"The host {host} is not a name or an address.")
    return name


def literal_address(host: str) -> Address | None:
    """The address a host spells, in any form the system's resolver reads as an address
    (127.0.0.1, 2130706433, 0177.0.0.1, 127.1, 0x7f.1, an IPv6 address); None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def resolve(host: str, port: int, *, allow_hosts: frozenset[str],
            resolver: Callable[..., list] = socket.getaddrinfo) -> list[str]:
    """Resolve `host` at send time and check EVERY address it resolves to (one private address
    among public ones refuses the whole name: which one a client picks is not ours to say).
    Answers the checked addresses in the resolver's order, without repeats."""
    try:
        answers = resolver(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(_address(answer) for answer in answers))
    except (OSError, ValueError) as error:  # socket.gaierror is an OSError; IDNA a ValueError
        raise Refused("url.resolve_failed",
                      f"The name {host} could not be found ({error}).") from error
    if not addresses:
        raise Refused("url.resolve_failed", f"The name {host} has no address.")
    for address in addresses:
        reason = None if _allowed(host, address, allow_hosts) else refused_reason(address)
        if reason:
            raise Refused("url.address_refused",
                          f"The name {host} leads to the address {address}, which is {reason}; "
                          "webhooks may not reach it.")
    return [str(address) for address in addresses]


def _address(answer: tuple) -> Address:
    """The address of one getaddrinfo answer: (family, type, proto, canonname, sockaddr)."""
    return ipaddress.ip_address(answer[4][0])


def _allowed(host: str, address: Address | None, allow_hosts: frozenset[str]) -> bool:
    """An operator's exception: the host's name, or the address itself, is on the list."""
    allowed = {_normal(each) for each in allow_hosts}
    return _normal(host) in allowed or (address is not None and str(address) in allowed)


def _normal(host: str) -> str:
    """A host as the allow list compares it: lowercased, an address in its canonical form."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def settings_allow() -> tuple[bool, frozenset[str]]:
    """The operator's exceptions, read now: (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_HOSTS)."""
    hosts = settings.WEBHOOK_ALLOW_HOSTS
    if isinstance(hosts, str):  # a string would be read as its letters
        raise TypeError("WEBHOOK_ALLOW_HOSTS is a list of hosts, not a string.")
    return bool(settings.WEBHOOK_ALLOW_HTTP), frozenset(_normal(each) for each in hosts)
