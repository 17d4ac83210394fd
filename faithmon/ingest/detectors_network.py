"""IP addresses: IPv4, IPv6 (also in brackets and IPv4-mapped), never CIDR ranges."""

from __future__ import annotations

import ipaddress
import re

from .detectors_common import Found, bounded, preceded_by_identifier_word

_IPV4 = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
# An address may end a clause ("block 2001:db8::1: it ..."): a colon then a non-hex
# character does not continue it.
_IPV6 = re.compile(r"[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:]*")
# An IPv6 address ending in a dotted quad ("::ffff:10.1.2.3").
_IPV6_V4 = re.compile(r"[0-9A-Fa-f:]*:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")


def _is_range(text: str, end: int) -> bool:
    """A ``/24`` after the address makes it a CIDR range, which names no host."""
    return text[end : end + 1] == "/" and text[end + 1 : end + 2].isdigit()


def _v6_value(address: ipaddress.IPv6Address) -> str:
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else str(address)


def ips(text: str) -> list[Found]:
    found = []
    for match in _IPV4.finditer(text):
        start, end = match.start(), match.end()
        if not bounded(text, start, end, ".") and not (
            bounded(text, start, end) and text[end] == "." and not text[end + 1 : end + 2].isdigit()
        ):
            continue  # part of a longer dotted number (a version), unless a full stop ends it
        if _is_range(text, end) or preceded_by_identifier_word(text, start):
            continue
        try:
            address = ipaddress.IPv4Address(match.group(0))
        except ValueError:
            continue
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
            found.append(Found(match.start(), match.end(), "IP", _v6_value(mapped)))
    for match in _IPV6.finditer(text):
        if not bounded(text, match.start(), match.end()):
            continue
        raw = match.group(0)
        if raw.endswith(":") and not raw.endswith("::"):
            raw = raw[:-1]  # the colon ends the clause, not the address
        if raw.count(":") < 2 or (raw.replace(":", "").isdigit() and "::" not in raw):
            continue  # times such as 14:00:59
        if _is_range(text, match.start() + len(raw)):
            continue
        try:
            address6 = ipaddress.IPv6Address(raw)
        except ValueError:
            continue
        found.append(Found(match.start(), match.start() + len(raw), "IP", _v6_value(address6)))
    return found
