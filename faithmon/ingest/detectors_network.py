"""IP addresses: IPv4, IPv6 (also in brackets and IPv4-mapped), never CIDR ranges.

Addresses in the documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
RFC 5737; 2001:db8::/32, RFC 3849) are left as they are: no host on any network has one,
so they name nobody, and runbooks and examples quoted in chunks are full of them.
"""

from __future__ import annotations

import ipaddress
import re

from .detectors_common import Found, bounded, preceded_by_identifier_word
from .detectors_gates import numeric

_IPV4 = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
# An address may end a clause ("block 2001:db8::1: it ..."): a colon then a non-hex
# character does not continue it.
_IPV6 = re.compile(r"[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:]*")
# What every ``_IPV6`` match holds; it starts with a literal, which ``re`` skips to.
_TWO_COLONS = re.compile(r":[0-9A-Fa-f]*:")
# An IPv6 address ending in a dotted quad ("::ffff:10.1.2.3").
_IPV6_V4 = re.compile(r"[0-9A-Fa-f:]*:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")


_DOCUMENTATION = tuple(
    ipaddress.ip_network(net)
    for net in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


def documentation(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """An address from a documentation range (an IPv4-mapped one too)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in net for net in _DOCUMENTATION)


def _is_range(text: str, end: int) -> bool:
    """A ``/24`` after the address makes it a CIDR range, which names no host."""
    return text[end : end + 1] == "/" and text[end + 1 : end + 2].isdigit()


def _v6_value(address: ipaddress.IPv6Address) -> str:
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else str(address)


def ips(text: str) -> list[Found]:
    found = []
    for match in _IPV4.finditer(text) if numeric(text) else ():
        start, end = match.start(), match.end()
        if not bounded(text, start, end, ".") and not (
            bounded(text, start, end)
            and text[end : end + 1] == "."
            and not text[end + 1 : end + 2].isdigit()
        ):
            continue  # part of a longer dotted number (a version), unless a full stop ends it
        if _is_range(text, end) or preceded_by_identifier_word(text, start):
            continue
        try:
            address = ipaddress.IPv4Address(match.group(0))
        except ValueError:
            continue
        if not documentation(address):
            found.append(Found(start, end, "IP", str(address)))
    if text.count(":") < 2:
        return found
    if "::" in text and "." in text:  # an embedded IPv4 address follows "::ffff:" or "64:ff9b::"
        for match in _IPV6_V4.finditer(text):
            end = match.end()
            if not bounded(text, match.start(), end) or _is_range(text, end):
                continue
            if text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit():
                continue  # a longer dotted number
            try:
                mapped = ipaddress.IPv6Address(match.group(0))
            except ValueError:
                continue
            if not documentation(mapped):
                found.append(Found(match.start(), match.end(), "IP", _v6_value(mapped)))
    for match in _IPV6.finditer(text) if _TWO_COLONS.search(text) else ():
        if not bounded(text, match.start(), match.end()):
            continue
        raw = match.group(0)
        if raw.endswith(":") and not raw.endswith("::"):
            raw = raw[:-1]  # the colon ends the clause, not the address
        if raw.count(":") < 2 or (raw.replace(":", "").isdigit() and "::" not in raw):
            continue  # times such as 14:00:59
        end = match.start() + len(raw)
        if _is_range(text, end) or (
            text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit()
        ):
            continue  # a range, or the head of an embedded IPv4 address (taken above)
        try:
            address6 = ipaddress.IPv6Address(raw)
        except ValueError:
            continue
        if documentation(address6):
            continue
        found.append(Found(match.start(), end, "IP", _v6_value(address6)))
    return found
