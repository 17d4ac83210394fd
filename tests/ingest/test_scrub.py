"""PiiScrubber: keyed, consistent placeholders for e-mail addresses and phone numbers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from faithmon.ingest.scrub import PiiScrubber
from faithmon.model import Chunk, RagRecord

KEY = b"0123456789abcdef-test-key"
PLACEHOLDER = re.compile(r"<(EMAIL|PHONE)_[0-9a-f]{8}>")
EMAIL = re.compile(r"<EMAIL_[0-9a-f]{8}>")
PHONE = re.compile(r"<PHONE_[0-9a-f]{8}>")


@pytest.fixture
def scrubber() -> PiiScrubber:
    """A scrubber with a fixed test key."""
    return PiiScrubber(KEY)


def make_record(
    question: str = "",
    answer: str = "",
    chunks: tuple[str, ...] = (),
    metadata: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
) -> RagRecord:
    return RagRecord(
        trace_id="0" * 31 + "1",
        question=question,
        answer=answer,
        chunks=tuple(Chunk(i, text, metadata=metadata or {}) for i, text in enumerate(chunks)),
        labels=labels or {},
        started_at=datetime(2026, 3, 3, tzinfo=UTC),
    )


def texts(value: Any) -> Iterator[str]:
    """Every string inside a record, including metadata keys and values and labels."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, RagRecord):
        yield from texts(value.question)
        yield from texts(value.answer)
        yield from texts(value.labels)
        for chunk in value.chunks:
            yield from texts(chunk.text)
            yield from texts(chunk.metadata)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from texts(key)
            yield from texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from texts(item)


def test_email_and_phone_become_placeholders(scrubber: PiiScrubber) -> None:
    """An e-mail address and a phone number are replaced by typed, keyed placeholders."""
    text = scrubber.scrub_text("Write to help@northwind.example or call +44 20 7946 0958.")

    assert re.fullmatch(r"Write to <EMAIL_[0-9a-f]{8}> or call <PHONE_[0-9a-f]{8}>\.", text)


def test_same_value_in_chunk_and_answer_gets_same_placeholder(scrubber: PiiScrubber) -> None:
    """A value repeated from chunk to answer keeps one placeholder, so a judge can match it."""
    record = make_record(
        question="How do I reach billing?",
        chunks=("Mail billing@northwind.example or call +44 20 7946 0958.",),
        answer="Use billing@northwind.example or +44 20 7946 0958.",
    )

    scrubbed = scrubber(record)

    chunk = scrubbed.chunks[0].text
    assert EMAIL.findall(chunk) == EMAIL.findall(scrubbed.answer)
    assert PHONE.findall(chunk) == PHONE.findall(scrubbed.answer)
    assert len(EMAIL.findall(chunk)) == 1
    assert len(PHONE.findall(chunk)) == 1


def test_phone_in_two_formats_gets_one_placeholder(scrubber: PiiScrubber) -> None:
    """A phone number written with and without spaces maps to the same placeholder."""
    record = make_record(chunks=("Call +44 20 7946 0958.",), answer="Dial +442079460958 today.")

    scrubbed = scrubber(record)

    chunk_phones = PHONE.findall(scrubbed.chunks[0].text)
    assert len(chunk_phones) == 1
    assert PHONE.findall(scrubbed.answer) == chunk_phones


def test_email_case_does_not_change_the_placeholder(scrubber: PiiScrubber) -> None:
    """E-mail addresses that differ only in case get the same placeholder."""
    upper = scrubber.scrub_text("Jane.Doe@Example.COM")
    lower = scrubber.scrub_text("jane.doe@example.com")

    assert upper == lower
    assert EMAIL.fullmatch(upper)


def test_different_values_get_different_placeholders(scrubber: PiiScrubber) -> None:
    """Two different addresses or two different numbers never share a placeholder."""
    text = scrubber.scrub_text(
        "a@northwind.example, b@northwind.example, +44 20 7946 0958, +44 20 7946 0959"
    )

    emails = EMAIL.findall(text)
    phones = PHONE.findall(text)
    assert len(emails) == 2 and emails[0] != emails[1]
    assert len(phones) == 2 and phones[0] != phones[1]


def test_a_different_key_gives_different_placeholders(scrubber: PiiScrubber) -> None:
    """Placeholders depend on the key, so another deployment's pseudonyms do not match."""
    other = PiiScrubber(b"another-key-of-16+bytes")
    text = "jane@example.com +44 20 7946 0958"

    mine = PLACEHOLDER.findall(scrubber.scrub_text(text))
    assert scrubber.scrub_text(text) != other.scrub_text(text)
    assert mine == PLACEHOLDER.findall(other.scrub_text(text)) == ["EMAIL", "PHONE"]


@pytest.mark.parametrize(
    "text",
    [
        "Order A17 shipped.",
        "See order 1234567890 for details.",
        "It shipped on 3 March 2026.",
        "The plan costs 12.50 euros.",
        "Upgrade to version 2.4.18 first.",
        "Open from 8:00 to 18:00, updates within 24 hours.",
    ],
)
def test_ordinary_numbers_survive(scrubber: PiiScrubber, text: str) -> None:
    """Order ids, dates, prices, versions and times are not mistaken for PII."""
    assert scrubber.scrub_text(text) == text


def test_no_raw_value_remains_anywhere(scrubber: PiiScrubber) -> None:
    """Question, answer, chunk text, chunk metadata and labels are all scrubbed."""
    record = make_record(
        question="Is jane.doe@example.com on order A17?",
        answer="Yes; call Jane on +44 20 7946 0958 about order A17.",
        chunks=(
            "Order A17 belongs to Jane.Doe@Example.com, phone +442079460958.",
            "Escalations: ops@northwind.example.",
        ),
        metadata={
            "author": "kb-editor@northwind.example",
            "contacts": {"phones": ["+44 20 7946 0958", "(415) 555-2671"]},
            "page": 3,
        },
        labels={"tenant": "acme", "owner": "owner@acme.example"},
    )

    scrubbed = scrubber(record)

    raw = [
        "jane.doe@example.com",
        "kb-editor@northwind.example",
        "ops@northwind.example",
        "owner@acme.example",
        "7946",
        "0958",
        "555",
        "2671",
    ]
    everything = list(texts(scrubbed))
    for value in raw:
        assert not any(value in text.lower() for text in everything), value
    assert "A17" in scrubbed.answer
    assert scrubbed.labels["tenant"] == "acme"
    assert scrubbed.chunks[0].metadata["page"] == 3
    assert PLACEHOLDER.fullmatch(scrubbed.labels["owner"])
    assert scrubbed.trace_id == record.trace_id


def test_national_numbers_follow_the_phone_region() -> None:
    """A number without country code is read in the configured region and keyed as E.164."""
    british = PiiScrubber(KEY, phone_region="GB")

    national = british.scrub_text("020 7946 0958")
    assert PHONE.fullmatch(national)
    assert british.scrub_text("+44 20 7946 0958") == national
    assert PiiScrubber(KEY).scrub_text("(415) 555-2671") == british.scrub_text("+1 415 555 2671")


def test_short_key_is_refused() -> None:
    """A key shorter than 16 bytes raises ValueError."""
    with pytest.raises(ValueError, match="16 bytes"):
        PiiScrubber(b"too-short")


def test_metadata_keys_are_scrubbed_like_values(scrubber: PiiScrubber) -> None:
    """A key holding PII, at any depth, gets the pseudonym its value would get."""
    record = replace(
        make_record(
            answer="Ask jane.doe@example.com.",
            chunks=("Owners are listed in the metadata.",),
            metadata={
                "jane.doe@example.com": "owner",
                "reviewers": {"+44 20 7946 0958": {"ops@northwind.example": True}},
                "pages": [{"Jane.Doe@Example.com": 3, 7: "an int key stays"}],
                "page": 3,
            },
        ),
        generation={"temperature": 0.2, "user:jane.doe@example.com": {"seed": 1}},
    )

    scrubbed = scrubber(record)

    [placeholder] = EMAIL.findall(scrubbed.answer)
    metadata = scrubbed.chunks[0].metadata
    assert metadata[placeholder] == "owner"
    assert metadata["pages"] == [{placeholder: 3, 7: "an int key stays"}]
    assert metadata["page"] == 3
    [(phone, inner)] = metadata["reviewers"].items()
    assert PHONE.fullmatch(phone)
    assert [EMAIL.fullmatch(key) is not None for key in inner] == [True]
    assert scrubbed.generation == {"temperature": 0.2, f"user:{placeholder}": {"seed": 1}}
    everything = [*texts(scrubbed), *texts(dict(scrubbed.generation))]
    for raw in ("jane.doe@example.com", "ops@northwind.example", "7946"):
        assert not any(raw in text.lower() for text in everything), raw


def test_label_keys_are_scrubbed(scrubber: PiiScrubber) -> None:
    """A label whose name holds PII is renamed to its pseudonym; other names stay."""
    record = make_record(
        question="Is owner@acme.example here?",
        labels={"tenant": "acme", "owner@acme.example": "yes"},
    )

    scrubbed = scrubber(record)

    [placeholder] = scrubber.scrub_labels({"owner@acme.example": ""})
    assert scrubbed.labels == {"tenant": "acme", placeholder: "yes"}
    assert "owner@acme.example" not in str(scrubbed.labels)


def test_scrub_labels_matches_the_records_labels(scrubber: PiiScrubber) -> None:
    """scrub_labels gives exactly the labels the record is stored with."""
    labels = {"service": "support", "tenant": "jane.doe@example.com", "+44 20 7946 0958": "x"}
    record = make_record(labels=labels)

    scrubbed = scrubber.scrub_labels(labels)

    assert scrubbed == dict(scrubber(record).labels)
    assert scrubbed["service"] == "support" and EMAIL.fullmatch(scrubbed["tenant"])
    assert not any("jane" in text or "7946" in text for text in texts(scrubbed))


@pytest.mark.parametrize("scope", ["record", "tenant", "global"])
def test_scrub_labels_without_a_scope_is_stable_across_records(scope: str) -> None:
    """Left without a scope id, label pseudonyms are the global scope's: equal for equal
    labels whatever record they came with, so counts per segment add up."""
    scrubber = PiiScrubber(KEY, scope=scope)  # type: ignore[arg-type]
    labels = {"route": "owner@acme.example", "owner@acme.example": "1"}

    first, second = scrubber.scrub_labels(labels), scrubber.scrub_labels(dict(labels))

    assert first == second
    assert first == dict(PiiScrubber(KEY, scope="global")(make_record(labels=labels)).labels)
    assert "owner@acme.example" not in str(first)


@pytest.mark.parametrize("scope", ["record", "tenant", "global"])
def test_a_label_holding_pii_names_one_segment_across_records(scope: str) -> None:
    """An e-mail in service.name gets one pseudonym in every record's labels, whatever
    the scope of the texts: a segment stays one segment, not one per record."""
    scrubber = PiiScrubber(KEY, scope=scope)  # type: ignore[arg-type]
    records = [
        replace(
            make_record(labels={"service": "ops@acme.example", "tenant": t}), trace_id=f"{n:032x}"
        )
        for n, t in enumerate(("acme", "acme", "globex"))
    ]
    services = {scrubber(record).labels["service"] for record in records}
    assert len(services) == 1 and EMAIL.fullmatch(next(iter(services)))
