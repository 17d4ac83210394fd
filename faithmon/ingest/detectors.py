"""PII detectors: each maps a text to the spans it finds, with a normalised value.

Normalising is what makes pseudonyms consistent: "+1 (415) 555-0100" and
"415-555-0100" are one phone number, "<Jane.Doe@Example.com>" and
"jane.doe@example.com" one address, "DE89 3704 ..." and "de89-3704..." one IBAN.

Values that look alike but must stay (order ids, dates, prices, versions,
product codes, durations, counts, CIDR ranges) are kept by checksums (cards,
IBANs), by validation (IP addresses, phone numbers) and by the words just before
a number ("order 4155550100" is an order id, "firmware 2.4.18.1" a version).

The families live in their own modules: ``detectors_contact`` (e-mail, phone),
``detectors_accounts`` (card, IBAN, SSN), ``detectors_network`` (IP) and
``detectors_secrets`` (keys, tokens, passwords); this module assembles them, with street
addresses (``addresses``) and person names (``names``) after them. Those two are on by
default (``FAITHMON_SCRUB_NAMES_ADDRESSES``) and can also be named as plug-ins in
``FAITHMON_SCRUB_DETECTORS``; their gates keep both together below the patterns' cost.
"""

from __future__ import annotations

from . import addresses, names
from .detectors_accounts import cards, ibans, ssns
from .detectors_common import Detector, Found
from .detectors_contact import emails, phone_detector
from .detectors_network import ips
from .detectors_secrets import secrets


def builtin(phone_region: str, names_and_addresses: bool = True) -> list[Detector]:
    """The pattern detectors, most specific first (a card is not also a phone number),
    then addresses and names (a house name is not a person)."""
    patterns: list[Detector] = [secrets, emails, ibans, cards, ssns, ips]
    patterns.append(phone_detector(phone_region))
    if names_and_addresses:
        patterns += [addresses.detect, names.detect]
    return patterns


__all__ = [
    "Detector",
    "Found",
    "builtin",
    "cards",
    "emails",
    "ibans",
    "ips",
    "phone_detector",
    "secrets",
    "ssns",
]
