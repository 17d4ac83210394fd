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
    # A place word as the surname, after a strong cue or a known first name.
    ("Hi, my name is Andrew Hall. Is my order late?", "Andrew Hall"),
    ("Thanks Carolyn Lane, we will write.", "Carolyn Lane"),
    ("Thanks Dwayne Hall, we will write.", "Dwayne Hall"),
    ("customer_name: Dwayne Hall; ships to you", "Dwayne Hall"),
    ('{"customer_name": "Brittany Park", "plan": "pro"}', "Brittany Park"),
    ('{"customer_name": "Jordan Lane"}', "Jordan Lane"),
    ("Dr. Emily Church confirmed it.", "Emily Church"),
    ("this is Andrew Hall, hi", "Andrew Hall"),
    ("Meet Andrew Hall at noon.", "Andrew Hall"),
    # An everyday word as the surname, at the end of its clause.
    ("Hi, my name is Julie May.", "Julie May"),
    ("Thanks Julie May, we will write.", "Julie May"),
    # A particle first or last is a name ("Ben", "Le"), between two words it is not.
    ("Thanks Ben Smith, bye", "Ben Smith"),
    ("Hi, my name is Anna Le.", "Anna Le"),
]


@pytest.mark.parametrize(("text", "value"), PERSONS)
def test_person_is_found_whole(scrubber: PiiScrubber, text: str, value: str) -> None:
    """Each name form lies wholly inside one PERSON span and leaves the scrubbed text:
    no word of it stays raw but a particle between two ("van der")."""
    assert _covered(scrubber, text, value, "PERSON")
    scrubbed = scrubber.scrub_text(text)
    assert value not in scrubbed
    assert "<PERSON_" in scrubbed
    kept = set(re.findall(r"[^\W\d_]+", value)) & set(re.findall(r"[^\W\d_]+", scrubbed))
    assert kept <= {"van", "der", "Dr", "Ms", "Prof", "Mr"}, kept


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
    # Place words after a first name or a cue that stay places.
    "Tickets for the Albert Hall go on sale in May.",
    "Pick it up at the Andrew Hall store.",
    "Andrew Hall Museum opens at 9.",
    "Hi Washington Street store team",
    "Thanks, Main Street Bakery!",
    "Ask for Victoria Park staff",
    "its Jordan Park, not ours",
    "Mill Lane is closed",
    "Dr. Smith Clinic is open",
    '{"name": "Victoria Park"}',
    "Thanks Acme Inc, great work",
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


def test_everyday_word_after_a_name_is_kept() -> None:
    """ "May" after a name but opening the next clause is the verb, not a surname."""
    scrubbed = PiiScrubber(KEY).scrub_text("Dear Anna May I ask about the refund?")
    assert scrubbed.endswith(" May I ask about the refund?")
    assert "Anna" not in scrubbed


@pytest.mark.parametrize(
    ("name", "alone"),
    [
        ("Heather Dean", "Dean"),
        ("Tom Frank", "Frank"),
        ("Julie May", "May"),
        ("Ann Miles", "Miles"),
        ("Rosa Chase", "Chase"),
        ("Kim Lee", "Lee"),
        ("Amy Heath", "Heath"),
        ("Wei Li", "Li"),
        ("Andrew Hall", "Hall"),
        ("Carolyn Lane", "Lane"),
    ],
)
def test_a_common_or_short_surname_alone_keeps_its_token(name: str, alone: str) -> None:
    """A surname that is also a first name, a word, a place word or two letters long,
    repeated alone and capitalised in the record, is the same person's: same token."""
    record = make_record(
        question=f"Hi, my name is {name}. Where is my parcel?",
        chunks=(f"customer_name: {name}; ships Monday.",),
        answer=f"Thanks {name}, it ships Monday, and {alone} signs for it.",
    )
    scrubbed = PiiScrubber(KEY)(record)
    texts = [scrubbed.question, scrubbed.answer, scrubbed.chunks[0].text]
    assert not any(re.search(rf"\b{alone}\b", text) for text in texts)
    assert scrubbed.question.endswith(". Where is my parcel?")  # the sentence ended the name
    surname = re.findall(r"<PERSON_[0-9a-f]{8}>", scrubbed.question)[-1]
    assert scrubbed.answer.endswith(f", and {surname} signs for it.")


def test_lower_case_words_stay_unless_the_name_was_written_so() -> None:
    """A capitalised name makes its capitalised words names elsewhere, not the everyday
    lower-case ones ("frank", "may", "will"); a name written in lower case makes its
    lower-case words names too, but never a function word ("I will")."""
    scrubber = PiiScrubber(KEY)
    capitalised = scrubber(
        make_record(
            question="Hi, my name is Will Frank May. To be frank, it may take a week.",
            answer="Thanks, Frank: we will write, and the refund may follow.",
        )
    )
    assert capitalised.question.endswith("To be frank, it may take a week.")
    assert capitalised.answer.startswith("Thanks, <PERSON_")
    assert capitalised.answer.endswith(": we will write, and the refund may follow.")
    lower = scrubber(
        make_record(
            question="hi its will smith again, my card was declined",
            answer="sorry smith, we will look into it",
        )
    )
    assert "smith" not in lower.question + lower.answer
    assert lower.answer.startswith("sorry <PERSON_")
    assert lower.answer.endswith(", we will look into it")
