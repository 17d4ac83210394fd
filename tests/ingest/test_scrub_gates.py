"""The detectors' gates (``detectors_gates``, ``names_gates``) skip patterns, never findings.

The gates only judge ASCII texts: one with a non-ASCII character in front runs every
pattern in full. So each text must give the same findings (shifted) both ways.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faithmon.ingest import detectors_gates as gates
from faithmon.ingest.scrub import PiiScrubber

HANDWRITTEN = Path(__file__).parents[2] / "bench" / "data" / "scrub_handwritten.jsonl"
# Not ASCII, and on a line of its own so that a sign-off or greeting still starts one.
UNGATED = "\u00a0\n"
TEXTS = [
    "Standard shipping to Lyon takes 3 to 5 business days. For urgent cases call "
    "(415) 555-0134 between 8:00 and 18:00 on weekdays. Invoices for order NW-123456 are "
    "issued on the first business day; the Team plan costs 16.07 euros per user.",
    "Card 4111 1111 1111 1111, SSN 123 45 6789, social security 078-05-1120, IBAN "
    "de89 3704 0044 0532 0130 00, host 10.20.30.40:8080 and [2001:4860::8888].",
    "Authorization: Bearer abcdefghijklmnop1234 and basic dXNlcjpwYXNz; "
    "postgres://app:hunter2@db.internal/x; api_key=sk-proj-abcdefghijklmnopqrstuv12",
    "Send it to Hauptstraße 5, 10115 Berlin or Damrak 1, 1012 LG Amsterdam, or "
    "12 rue de la Paix, 75002 Paris, or Calle Mayor 10, 28013 Madrid.",
    "hi its john smith again, the parcel for 1600 Pennsylvania Ave NW, Washington, DC "
    "20500 never came.\nKind regards,\nAnna Kowalski",
    "escalated to Priya Shah and Tom Weber; customer_name: Dr. Heather Dean",
    "Lists of numbers such as 12-34-5678-90 or 1.2.3.4.5 and ISBN 978-0-306-40615-7.",
]


def _texts() -> list[str]:
    lines = HANDWRITTEN.read_text(encoding="utf-8").splitlines()
    return TEXTS + [json.loads(line)["text"] for line in lines if line.strip()]


@pytest.mark.parametrize("names_and_addresses", [True, False])
def test_gated_findings_equal_the_full_patterns(names_and_addresses: bool) -> None:
    scrubber = PiiScrubber(b"gates-test-key-0123", names_and_addresses=names_and_addresses)
    compared = 0
    for text in _texts():
        if not text.isascii():
            continue
        gated = [tuple(f) for f in scrubber.detect(text)]
        full = [
            (f.start - len(UNGATED), f.end - len(UNGATED), f.kind, f.value)
            for f in scrubber.detect(UNGATED + text)
        ]
        assert gated == full, text
        compared += 1
    assert compared > 100


def test_the_fixed_texts_hold_findings_of_every_kind() -> None:
    kinds = {f.kind for text in TEXTS for f in PiiScrubber(b"gates-test-key-0123").detect(text)}
    assert kinds == {"PHONE", "CARD", "SSN", "IBAN", "IP", "SECRET", "ADDRESS", "PERSON"}


def test_numeric_gate() -> None:
    assert gates.numeric("call 415.555.0134")
    assert gates.numeric("ip 8.8.8.8")
    assert not gates.numeric("order NW-123456 costs 16.07 euros at 8:00")
    # ``\d`` matches digits of other scripts: such a text is never gated.
    assert gates.numeric("call ٤١٥٥٥٥٠١٣٤")


def test_iban_gate() -> None:
    assert gates.iban_start("pay to de89370400440532013000")
    assert not gates.iban_start("write to anna.novak53@example.com")
    assert gates.iban_start("pay to дe89370400440532013000")


def test_letter_runs_and_first_runs() -> None:
    assert gates.letter_runs("it's c/o anne-marie, 12th") == frozenset(
        {b"it", b"s", b"c", b"o", b"anne", b"marie", b"th"}
    )
    assert gates.letter_runs("josé") is None
    assert gates.first_runs(frozenset({"anne-marie", "o'neill", "josé"})) == {b"anne", b"o"}


def test_word_before_number() -> None:
    test = gates.word_before_number(["straat", "str.", "straße"])
    assert test("keizersgracht en damstraat 12")
    assert test("goethestr., 4")
    assert not test("the straat is 12 km away")
    assert test("hauptstraße 5")  # not ASCII: never gated
