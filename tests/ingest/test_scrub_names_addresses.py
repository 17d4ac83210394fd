"""PERSON and ADDRESS detectors, run through the scrubber as extra detectors."""

from __future__ import annotations

import re

import pytest

from faithmon.ingest import addresses, names
from faithmon.ingest.scrub import PiiScrubber

from .test_scrub import KEY, make_record

TOKEN = re.compile(r"<(PERSON|ADDRESS)_[0-9a-f]{8}>")


@pytest.fixture
def scrubber() -> PiiScrubber:
    """A scrubber with both detectors, addresses first (a house name is not a person)."""
    return PiiScrubber(KEY, extra_detectors=[addresses.detect, names.detect])


def _covered(scrubber: PiiScrubber, text: str, value: str, kind: str) -> bool:
    start = text.index(value)
    return any(
        f.kind == kind and f.start <= start and start + len(value) <= f.end
        for f in scrubber.detect(text)
    )


PERSONS = [
    ("hi its john smith again, my order is late", "john smith"),
    ("Anne-Marie O'Neill called about the refund.", "Anne-Marie O'Neill"),
    ("José Álvarez wrote in twice.", "José Álvarez"),
    ("Laura van der Berg asked for a callback.", "Laura van der Berg"),
    ("Please ask Dr. Okonkwo Adeyemi to confirm.", "Okonkwo Adeyemi"),
    ("Ms Xiomara Quispe approved it.", "Xiomara Quispe"),
    ("Prof. Hanna Lindqvist will attend.", "Hanna Lindqvist"),
    ("hello Xiomara, your parcel shipped", "Xiomara"),
    ("Thanks Priya, that fixed it.", "Priya"),
    ("Dear Mr. Okafor, your refund is on its way.", "Okafor"),
    ("Kind regards,\nMarta Kowalczyk\nNorthwind Support", "Marta Kowalczyk"),
    ("Best,\nTomasz Zieliński", "Tomasz Zieliński"),
    ("Ticket escalated to Priya Shah and Tom Weber.", "Priya Shah"),
    ("Ticket escalated to Priya Shah and Tom Weber.", "Tom Weber"),
    ("cc Priya Shah, Xiomara Quispe and Ode Balogun", "Ode Balogun"),
    ('{"customer_name": "Olu Adebayo", "plan": "pro"}', "Olu Adebayo"),
    ('{"full_name": "Keanu Ortiz-Reyes"}', "Keanu Ortiz-Reyes"),
    ('{"agent": "Ingrid Solberg", "contact": "Bao Tran"}', "Ingrid Solberg"),
    ('{"agent": "Ingrid Solberg", "contact": "Bao Tran"}', "Bao Tran"),
    ("name=Zara Holloway status=open", "Zara Holloway"),
    ("Grace Hopper reported the bug.", "Grace Hopper"),
    ("will smith here, card declined", "will smith"),
    ("Kowalski, Anna (account owner)", "Kowalski, Anna"),
    ("Hans-Jürgen Weiß rief an.", "Hans-Jürgen Weiß"),
]


@pytest.mark.parametrize(("text", "value"), PERSONS)
def test_person_is_found_whole(scrubber: PiiScrubber, text: str, value: str) -> None:
    """Each name form lies wholly inside one PERSON span and leaves the scrubbed text."""
    assert _covered(scrubber, text, value, "PERSON")
    scrubbed = scrubber.scrub_text(text)
    assert value not in scrubbed
    assert "<PERSON_" in scrubbed


ADDRESSES = [
    "1600 Pennsylvania Ave NW, Washington, DC 20500",
    "42 elm st apt 4b, springfield, il 62704",
    "123 Main Street, Suite 200, Austin, TX 78701-1234",
    "500 W. 5th Blvd #12, Dallas, TX 75201",
    "9 Oak Ct.",
    "PO Box 4410, Boulder, CO 80306",
    "10 Downing Street, London SW1A 2AA",
    "Rose Cottage, Mill Lane, Little Snoring, NR21 0AA",
    "flat 2, 9 st john's rd, manchester m16 7gh",
    "12 rue de la Paix, 75002 Paris",
    "5 bis, avenue Foch, 75116 Paris",
    "Hauptstraße 5, 10115 Berlin",
    "Berliner Str. 12, 10713 Berlin",
    "goethestr. 21, 60313 frankfurt am main",
    "Calle Mayor 10, 28013 Madrid",
    "C/ Mayor 10, 28013 Madrid",
    "Avda. de la Constitución 4, 41004 Sevilla",
    "Via Roma 15, 00184 Roma",
    "via roma 15, 00184 roma",
    "Damrak 1, 1012 LG Amsterdam",
    "Prinsengracht 263-267, 1016 GV Amsterdam",
    "Dorpsstraat 4, 3581 AB Utrecht",
]


@pytest.mark.parametrize("value", ADDRESSES)
def test_address_is_found_whole(scrubber: PiiScrubber, value: str) -> None:
    """Each address form, inside a sentence, lies wholly inside one ADDRESS span, which
    becomes a token per part (street, then each word after it) and nothing else."""
    text = f"Please ship it to {value} by Friday."
    assert _covered(scrubber, text, value, "ADDRESS")
    scrubbed = scrubber.scrub_text(text)
    assert re.fullmatch(
        r"Please ship it to <ADDRESS_[0-9a-f]{8}>(?:[ ,;#]*<ADDRESS_[0-9a-f]{8}>)* by Friday\.",
        scrubbed,
    ), scrubbed


KEPT = [
    "Pick it up at the Washington Street store.",
    "The Main Street branch opens at 9:30 on Monday.",
    "It costs $12.99 a month, or €120 a year.",
    "Order 12345 Main St was a typo, see ticket 4417.",
    "Upgrade to version 2.4 Way before May 5.",
    "at 10:30 Drive safely!",
    "sent via email 2 times",
    "during 5 minutes the iPad 10 froze",
    "we have 2 place settings left",
    "12 items in the Washington Street store",
    "you will park the car in April",
    "may I ask about the grace period of 30 days?",
    "Will the Pro Max ship on Tuesday?",
    "Meet at Victoria Station, then Jordan Park.",
    "Hi Team, thanks for the help!",
    "Best,\nNorthwind Support",
    "mail Marco.Rossi@Posta.Example.it today",
    "Authorization: Basic ZmFrZXVzZXI6ZmFrZXBhc3N3b3Jk",
    '{"product_name": "Premium Plan", "name": "Washington Street store"}',
    "The Sunny Valley Bakery on Rose Street is closed in June.",
]


@pytest.mark.parametrize("text", KEPT)
def test_distractor_is_not_a_person_or_address(scrubber: PiiScrubber, text: str) -> None:
    """Places, businesses, products, prices, ids, versions, times and common words stay."""
    assert not TOKEN.search(scrubber.scrub_text(text))


def test_other_pii_keeps_its_span(scrubber: PiiScrubber) -> None:
    """A name inside an e-mail address is left to the e-mail detector."""
    text = "Reach Marco.Rossi@posta.example.it now"
    assert [f.kind for f in scrubber.detect(text)] == ["EMAIL"]


def test_same_name_and_address_in_question_and_answer_share_tokens(
    scrubber: PiiScrubber,
) -> None:
    """A name or address repeated from question to answer, in another case, keeps its token."""
    record = make_record(
        question="hi its priya shah, is my parcel going to 12 rue de la Paix, 75002 Paris?",
        chunks=("Parcels ship within 2 days.",),
        answer="Yes Priya Shah, it goes to 12 Rue de la Paix, 75002 PARIS tomorrow.",
    )
    scrubbed = scrubber(record)
    assert "priya" not in scrubbed.question.lower()
    assert "paix" not in scrubbed.answer.lower()
    question = TOKEN.findall(scrubbed.question)
    assert question == ["PERSON", "PERSON", "ADDRESS", "ADDRESS", "ADDRESS"]
    assert re.findall(r"<[A-Z]+_[0-9a-f]{8}>", scrubbed.question) == re.findall(
        r"<[A-Z]+_[0-9a-f]{8}>", scrubbed.answer
    )
    assert scrubbed.chunks[0].text == "Parcels ship within 2 days."


def test_different_names_get_different_tokens(scrubber: PiiScrubber) -> None:
    """Two people get two pseudonyms (one per name word), so a judge can tell them apart."""
    text = scrubber.scrub_text("escalated to Priya Shah and Tom Weber")
    tokens = re.findall(r"<PERSON_[0-9a-f]{8}>", text)
    assert len(tokens) == 4 and len(set(tokens)) == 4


def test_a_name_part_alone_keeps_its_token(scrubber: PiiScrubber) -> None:
    """A surname or town quoted alone elsewhere in the record (or with "'s") gets the token
    it has in the full name or address, so the judge still sees the same value."""
    record = make_record(
        question="Did Mr. Weber's parcel reach Springfield?",
        chunks=("Tom Weber, 42 Elm St, Springfield, IL 62704, ordered a lamp.",),
        answer="Yes, Weber got it in Springfield.",
    )
    scrubbed = scrubber(record)
    assert "Weber" not in scrubbed.question + scrubbed.answer
    assert "Springfield" not in scrubbed.question + scrubbed.answer
    chunk = re.findall(r"<[A-Z]+_[0-9a-f]{8}>", scrubbed.chunks[0].text)
    weber, springfield = chunk[1], chunk[3]
    assert scrubbed.question == f"Did Mr. {weber}'s parcel reach {springfield}?"
    assert scrubbed.answer == f"Yes, {weber} got it in {springfield}."


def test_scrubbing_is_idempotent(scrubber: PiiScrubber) -> None:
    """Placeholders are not detected again."""
    once = scrubber.scrub_text("Dear Ms Quispe, we ship to 10 Downing Street, London SW1A 2AA.")
    assert scrubber.scrub_text(once) == once
