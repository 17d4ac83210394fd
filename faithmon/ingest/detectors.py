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
``detectors_secrets`` (keys, tokens, passwords); this module assembles them. Street
addresses (``addresses``) and person names (``names``) are plug-ins for now, named in
``FAITHMON_SCRUB_DETECTORS``: they cost about five times the pattern detectors.
"""

from __future__ import annotations

from .detectors_accounts import cards, ibans, ssns
from .detectors_common import Detector, Found
from .detectors_contact import emails, phone_detector
from .detectors_network import ips
from .detectors_secrets import secrets


def builtin(phone_region: str) -> list[Detector]:
    """The pattern detectors, most specific first (a card is not also a phone number)."""
    return [secrets, emails, ibans, cards, ssns, ips, phone_detector(phone_region)]


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
