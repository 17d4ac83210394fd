"""Where the alert sinks may send: URLs checked at start, addresses at every connection.

Alerts carry segment labels and example claims, so a sink URL is a way out of the
process, and a mistyped or hostile one must not become a side door:

- ``http`` and ``https`` only, with a host and no user name or password in the
  URL; :func:`check_url` says so when the sinks are built, i.e. when the worker
  starts.
- Link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata
  endpoints are refused unless ``allow_link_local``: a metadata service answers
  anyone on the host with credentials. Loopback and private addresses (10/8,
  192.168/16, cluster DNS names) stay allowed: Alertmanager usually lives inside
  the cluster.
- A host name is resolved when its socket is opened and refused if *any* address
  it resolves to is refused; the socket then connects to exactly those addresses,
  so a name that answers differently the second time (DNS rebinding) cannot slip
  past a check made earlier.
- Redirects are never followed (:func:`opener` installs no redirect handler), so
  a 3xx cannot send the alert on to a host nobody checked; it is a failed delivery.

Through a proxy from the environment (``HTTPS_PROXY``), the socket goes to the
proxy, whose address is checked; the target is then checked by name and literal
address only, as the proxy resolves it.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import socket
import ssl
import urllib.request
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_HOSTS = frozenset({"metadata.google.internal"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, Azure, GCP, Oracle, DigitalOcean, OpenStack
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
# IPv6 forms that reach an IPv4 address: NAT64's well-known prefix routes
# 64:ff9b::a9fe:a9fe to 169.254.169.254 on IPv6-only networks.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
SCHEMES = ("http", "https")


class RefusedDestination(ValueError):
    """A sink URL, or an address it leads to, that faithmon will not send to."""


class RefusedAddress(RefusedDestination):
    """A link-local or metadata destination: sendable only when explicitly allowed."""


def _as_ipv4(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def refusal(address: IPAddress) -> str | None:
    """Why ``address`` is refused without ``allow_link_local``, or None."""
    address = _as_ipv4(address)
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_link_local:
        return "a link-local address"
    return None


def _literal(host: str) -> IPAddress | None:
    """The address ``host`` spells, without asking DNS; None for a name."""
    try:
        return ipaddress.ip_address(host.partition("%")[0])  # fe80::1%eth0 has a zone
    except ValueError:
        pass
    try:
        # The resolver also reads legacy IPv4 spellings (2852039166, 0xa9.0xfe.0xa9.0xfe,
        # 169.254.43518); inet_aton reads them alike, and never asks DNS.
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, UnicodeError):
        return None


def check_host(host: str, allow_link_local: bool = False) -> None:
    """Raise :class:`RefusedAddress` if a sink may not send to ``host`` (an SMTP relay,
    or a URL's host): a cloud metadata name or a link-local address, however spelled."""
    if allow_link_local:
        return
    if host.rstrip(".").lower() in METADATA_HOSTS:
        raise RefusedAddress(f"{host} is a cloud metadata host")
    address = _literal(host)
    reason = refusal(address) if address is not None else None
    if reason is not None:
        raise RefusedAddress(f"{host} is {reason}")


def check_url(url: str, allow_link_local: bool = False) -> None:
    """Raise :class:`RefusedDestination` if a sink may not send to ``url``.

    Messages name the problem and at most the host: a Slack or webhook URL's path
    is itself a secret and must not reach the logs.
    """
    if any(c.isspace() or not c.isprintable() for c in url):
        raise RefusedDestination("the URL contains spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- parsing the port is what raises on a bad one
    except ValueError as exc:
        raise RefusedDestination(f"not a URL ({exc})") from None
    if parts.scheme.lower() not in SCHEMES:
        scheme = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        raise RefusedDestination(f"{scheme}; only http and https URLs are allowed")
    if not parts.hostname:
        raise RefusedDestination("the URL has no host")
    if parts.username is not None or parts.password is not None:
        # urllib cannot use them, and "user@host" is a classic way to disguise a host.
        raise RefusedDestination("user names and passwords in the URL are not supported")
    check_host(parts.hostname, allow_link_local)


def resolve(host: str, port: int, allow_link_local: bool = False) -> list[Any]:
    """``getaddrinfo`` for a TCP connection, refused if any address is refused."""
    check_host(host, allow_link_local)
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not allow_link_local:
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).partition("%")[0])
            reason = refusal(address)
            if reason is not None:
                raise RefusedAddress(f"{host} resolves to {address}, {reason}")
    return infos


def open_checked(
    address: tuple[str, int],
    timeout: float | None = None,
    source_address: tuple[str, int] | None = None,
    *,
    allow_link_local: bool = False,
) -> socket.socket:
    """``socket.create_connection``, connecting only to the addresses just checked."""
    host, port = address
    last: OSError | None = None
    for family, kind, proto, _, sockaddr in resolve(host, port, allow_link_local):
        sock = socket.socket(family, kind, proto)
        try:
            if isinstance(timeout, int | float):  # not http.client's "default" sentinel
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        return sock
    raise last if last is not None else OSError(f"{host} resolves to no address")


class _CheckedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, *, allow_link_local: bool, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        # http.client opens its socket through this hook, so the check applies to
        # the address actually connected to, whatever urllib made of the URL.
        self._create_connection = functools.partial(open_checked, allow_link_local=allow_link_local)


class _CheckedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, *, allow_link_local: bool, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._create_connection = functools.partial(open_checked, allow_link_local=allow_link_local)


class _CheckedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, allow_link_local: bool) -> None:
        super().__init__()
        self._allow = allow_link_local

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_CheckedHTTPConnection, allow_link_local=self._allow)
        return self.do_open(connection, req)


class _CheckedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, allow_link_local: bool) -> None:
        super().__init__()
        self._allow = allow_link_local
        self._tls = ssl.create_default_context()

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_CheckedHTTPSConnection, allow_link_local=self._allow)
        return self.do_open(connection, req, context=self._tls)


def opener(allow_link_local: bool = False) -> urllib.request.OpenerDirector:
    """An opener for http and https only, with checked sockets and no redirects.

    Built by hand rather than with ``build_opener``, which would add a redirect
    handler and the file, ftp and data schemes.
    """
    director = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        _CheckedHTTPHandler(allow_link_local),
        _CheckedHTTPSHandler(allow_link_local),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        director.add_handler(handler)
    return director
