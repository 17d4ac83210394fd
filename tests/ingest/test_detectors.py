"""PII detectors: every entity type is found, every distractor survives, values normalise."""

from __future__ import annotations

import re

import pytest

from faithmon.ingest import addresses, names
from faithmon.ingest.detectors import Detector, Found
from faithmon.ingest.scrub import PiiScrubber
from faithmon.model import Chunk, RagRecord
from tests.timing import days_ago

KEY = b"detector-tests-key-0123456789"


@pytest.fixture
def scrubber() -> PiiScrubber:
    return PiiScrubber(KEY, phone_region="US", scope="global")


FOUND = [
    ("Write to jane.doe@example.com today.", "jane.doe@example.com", "EMAIL"),
    ("Call +44 20 7946 0958 now.", "+44 20 7946 0958", "PHONE"),
    ("Call (415) 555-0132 now.", "(415) 555-0132", "PHONE"),
    ("Card 4111 1111 1111 1111 on file.", "4111 1111 1111 1111", "CARD"),
    ("Card 2223-0031-2200-3222 on file.", "2223-0031-2200-3222", "CARD"),
    ("Amex 378282246310005 on file.", "378282246310005", "CARD"),
    ("Pay to DE89 3704 0044 0532 0130 00 please.", "DE89 3704 0044 0532 0130 00", "IBAN"),
    ("Pay to GB82WEST12345698765432 please.", "GB82WEST12345698765432", "IBAN"),
    ("SSN 123-45-6780 on the form.", "123-45-6780", "SSN"),
    ("Her SSN: 123456780 is on file.", "123456780", "SSN"),
    # Not from the documentation ranges, which name no host and are kept (below).
    ("From 81.2.69.142 at noon.", "81.2.69.142", "IP"),
    ("From 2a02:c7f:1234::8a2e:370:7334 at noon.", "2a02:c7f:1234::8a2e:370:7334", "IP"),
    (
        "Key sk-proj-abcdefghijklmnopqrstuvwx1234 leaked.",
        "sk-proj-abcdefghijklmnopqrstuvwx1234",
        "SECRET",
    ),
    ("Key sk_live_4eC39HqLyjWDarjtT1zdp7dc leaked.", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "SECRET"),
    ("AWS AKIAIOSFODNN7EXAMPLE leaked.", "AKIAIOSFODNN7EXAMPLE", "SECRET"),
    ("Token ghp_" + "a1" * 18 + " leaked.", "ghp_" + "a1" * 18, "SECRET"),
    ("Slack xoxb-123456789012-abcdefghij leaked.", "xoxb-123456789012-abcdefghij", "SECRET"),
    (
        "JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N leaked.",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
        "SECRET",
    ),
    (
        "Header Authorization: Bearer abcDEF1234567890ghiJKL sent.",
        "abcDEF1234567890ghiJKL",
        "SECRET",
    ),
    ("Use postgres://admin:s3cr3t@db.internal/app to connect.", "admin:s3cr3t", "SECRET"),
]


@pytest.mark.parametrize(
    ("text", "value", "kind"), FOUND, ids=[f[2] + str(i) for i, f in enumerate(FOUND)]
)
def test_each_entity_is_replaced(scrubber: PiiScrubber, text: str, value: str, kind: str) -> None:
    """The value is gone and a placeholder of its kind stands where it was."""
    scrubbed = scrubber.scrub_text(text)
    assert value not in scrubbed
    prefix, suffix = text.split(value)
    assert scrubbed.startswith(prefix) and scrubbed.endswith(suffix)
    placeholder = scrubbed[len(prefix) : len(scrubbed) - len(suffix)]
    assert placeholder.startswith(f"<{kind}_") and placeholder.endswith(">")


DISTRACTORS = [
    "Order A17 shipped on 3 March 2026.",
    "Your order 4155550132 is on its way.",
    "Tracking number 1Z999AA10123456784 updated.",
    "Invoice #2026-0042 is due 2026-03-31.",
    "The price is 12.50 euros, or $1,299.00 with tax.",
    "Discounts of 15% apply; 3 of 4 items qualify.",
    "Update to version 2.4.18 or firmware 2.4.18.1 first.",
    "Product code SKU-4471-B comes in 2 sizes.",
    "Returns are accepted for 30 days; refunds take 5 business days.",
    "Gift code 1234 5678 9012 3456 cannot be combined.",
    "Request id 550e8400-e29b-41d4-a716-446655440000 failed.",
    "Commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 fixed it.",
    "The desk opens at 14:00 and closes at 18:30:00.",
    "Call volume rose 1,024 times in 2025.",
]


@pytest.mark.parametrize("text", DISTRACTORS)
def test_distractors_survive(scrubber: PiiScrubber, text: str) -> None:
    """Ids, dates, prices, versions, codes, durations and counts are left alone."""
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Call +1 (415) 555-0132.", "Call 415-555-0132."),
        ("Mail Jane.Doe@Example.com.", "Mail jane.doe@example.com."),
        ("IBAN DE89 3704 0044 0532 0130 00.", "IBAN DE89370400440532013000."),
        ("Card 4111-1111-1111-1111.", "Card 4111 1111 1111 1111."),
    ],
)
def test_one_value_written_two_ways_gets_one_placeholder(
    scrubber: PiiScrubber, first: str, second: str
) -> None:
    """Normalisation makes reformatted values match, so faithfulness survives scrubbing."""
    assert scrubber.scrub_text(first) == scrubber.scrub_text(second)


def test_different_values_get_different_placeholders(scrubber: PiiScrubber) -> None:
    """Two account numbers never share a placeholder."""
    first = scrubber.scrub_text("IBAN DE89 3704 0044 0532 0130 00")
    second = scrubber.scrub_text("IBAN GB82 WEST 1234 5698 7654 32")
    assert first != second


def _question_of(scrubber: PiiScrubber, trace_id: str, tenant: str) -> str:
    record = RagRecord(
        trace_id=trace_id,
        question="Mail jane.doe@example.com",
        answer="Done.",
        chunks=(Chunk(0, "Mail goes out daily."),),
        labels={"tenant": tenant},
        started_at=days_ago(1),
    )
    return scrubber(record).question


def test_scope_decides_whether_records_link() -> None:
    """Record scope keys each trace apart; tenant scope links a tenant's traces; global
    scope links equal values everywhere: the same address in two records of two tenants."""
    per_record = PiiScrubber(KEY, scope="record")
    assert _question_of(per_record, "a" * 32, "acme") != _question_of(per_record, "b" * 32, "acme")
    assert _question_of(per_record, "a" * 32, "acme") == _question_of(per_record, "a" * 32, "acme")
    per_tenant = PiiScrubber(KEY, scope="tenant")
    assert _question_of(per_tenant, "a" * 32, "acme") == _question_of(per_tenant, "b" * 32, "acme")
    assert _question_of(per_tenant, "a" * 32, "acme") != _question_of(per_tenant, "a" * 32, "zeta")
    linked = PiiScrubber(KEY, scope="global")
    first = _question_of(linked, "a" * 32, "acme")
    assert first == _question_of(linked, "b" * 32, "zeta")
    assert re.fullmatch(r"Mail <EMAIL_[0-9a-f]{8}>", first)
    with pytest.raises(ValueError, match="scope must be one of"):
        PiiScrubber(KEY, scope="planet")  # type: ignore[arg-type]


def test_extra_detectors_plug_in() -> None:
    """A detector from a plug-in (a stand-in for an NER model) takes part like the others."""

    def accounts(text: str) -> list[Found]:
        start = text.find("ACME-42")
        return [] if start < 0 else [Found(start, start + 7, "CUSTOMER", "acme-42")]

    scrubber = PiiScrubber(KEY, scope="global", extra_detectors=[accounts])
    assert re.fullmatch(r"Ask <CUSTOMER_[0-9a-f]{8}>\.", scrubber.scrub_text("Ask ACME-42."))


def _spans(*spans: tuple[str, str]) -> list[Detector]:
    """One plug-in per (substring, kind): each finds its substring wherever it occurs."""

    def finder(value: str, kind: str) -> Detector:
        def find(text: str) -> list[Found]:
            return [
                Found(m.start(), m.end(), kind, value) for m in re.finditer(re.escape(value), text)
            ]

        return find

    return [finder(value, kind) for value, kind in spans]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("Ask alpha beta gamma now.", (("alpha beta", "AAA"), ("beta gamma", "BBB"))),
        ("Ask alpha beta gamma now.", (("alpha beta gamma", "AAA"), ("beta", "BBB"))),
        ("Ask alpha beta gamma now.", (("beta gamma", "BBB"), ("alpha beta", "AAA"))),
        (
            "Ask alpha beta gamma delta now.",
            (("alpha beta", "AAA"), ("beta gamma", "BBB"), ("gamma delta", "CCC")),
        ),
    ],
)
def test_overlapping_findings_merge_into_one(text: str, spans: tuple[tuple[str, str], ...]) -> None:
    """Spans that overlap become one placeholder over their union: no fragment stays raw."""
    scrubber = PiiScrubber(
        KEY, scope="global", names_and_addresses=False, extra_detectors=_spans(*spans)
    )
    scrubbed = scrubber.scrub_text(text)
    assert re.fullmatch(r"Ask <[A-Z]+_[0-9a-f]{8}> now\.", scrubbed), scrubbed
    assert scrubbed.startswith("Ask <AAA_")  # the earlier span's kind
    # The union is keyed on its own text, so it repeats consistently.
    assert scrubber.scrub_text(text + " " + text).split(" now. ")[0] + " now." == scrubbed


def test_names_and_addresses_are_on_by_default_and_can_be_turned_off() -> None:
    """The PERSON and ADDRESS detectors are built in; ``names_and_addresses=False`` drops them,
    and naming them as plug-ins as well (the old setting) runs them once."""
    text = "Dr. Priya Shah lives at 42 Elm Street, Springfield, IL 62704."
    on = PiiScrubber(KEY, scope="global").scrub_text(text)
    tokens = r"(?:<ADDRESS_[0-9a-f]{8}>,? )+<ADDRESS_[0-9a-f]{8}>"
    assert re.fullmatch(
        rf"Dr\. <PERSON_[0-9a-f]{{8}}> <PERSON_[0-9a-f]{{8}}> lives at {tokens}\.", on
    )
    assert PiiScrubber(KEY, scope="global", names_and_addresses=False).scrub_text(text) == text
    twice = PiiScrubber(KEY, scope="global", extra_detectors=[addresses.detect, names.detect])
    assert twice.scrub_text(text) == on


@pytest.mark.parametrize(
    "address", ["e7b6:1efe:7ab7:1c62:c3b:5d7b:bc21:cb78", "b713:43d8:f306::95db:675a:c133"]
)
def test_ipv6_ending_a_clause_is_found(scrubber: PiiScrubber, address: str) -> None:
    """An address followed by a colon and a space is still an address."""
    scrubbed = scrubber.scrub_text(f"Block {address}: it sent 3 requests.")
    assert address not in scrubbed and scrubbed.startswith("Block <IP_")


@pytest.mark.parametrize(
    "text",
    ["Update firmware 13.10.36.38 tonight.", "Id 4f604829-4623-4fcf-a7d2-600793915831 failed."],
)
def test_versions_and_uuids_are_not_phones_or_cards(scrubber: PiiScrubber, text: str) -> None:
    """Dotted versions and the tails of UUIDs stay as they are."""
    assert scrubber.scrub_text(text) == text


def test_the_scrubber_pickles_for_worker_processes() -> None:
    """Ingest may send the scrubber to worker processes: a pickled copy scrubs alike."""
    import pickle

    scrubber = PiiScrubber(KEY, scope="global")
    text = "Dr. Priya Shah, 42 Elm St, Springfield, IL 62704; call 020 7946 0958."
    copy = pickle.loads(pickle.dumps(scrubber))
    assert copy.scrub_text(text) == scrubber.scrub_text(text) != text


@pytest.mark.parametrize("text", ["see .10.0.0.1", "version 2.10.0.0.1", "10.0.0.1"])
def test_an_address_at_the_end_of_a_text_is_read_safely(text: str) -> None:
    """A dotted number that ends the text is judged without reading past its end."""
    from faithmon.ingest.detectors_network import ips

    found = ips(text)
    assert [text[f.start : f.end] for f in found] == (["10.0.0.1"] if text == "10.0.0.1" else [])
