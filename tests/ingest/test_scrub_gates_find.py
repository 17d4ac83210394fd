"""The gates that say where a name pattern matches (``names_gates``) give what the
pattern gives, and the tighter address, postcode and e-mail gates lose no finding."""

from __future__ import annotations

import random

from faithmon.ingest import addresses, detectors_contact, detectors_gates, names, names_gates
from faithmon.ingest.detectors_common import lowered
from faithmon.ingest.scrub import PiiScrubber

# Words that start, end or touch the patterns' matches, joined at random below.
WORDS = (
    "anna ben page Page Anna mary Smith Kowalski anne-marie marie bench , ; : = \" ' ( ) [ ] "
    "> * - _ . / @ this is i am i'm it's its hi dear thank you good morning name is c/o "
    "ask for Dr Dr. Mrs. xDr Prof customer_name: name= owner : user = contact: 12 1600 "
    "trail way St. c/ USB-C c.so v.le placed place rue via5th SW1A 1AA NR21 0AA "
    "jane.doe@example.com a@b.co x@y mailto:z@q.io user:pw@host.com 8:00"
).split(" ")
SEPARATORS = (" ", " ", "", ", ", "  ", "\n", "\t")
# Not ASCII, on a line of its own: the gates then stand aside and the patterns run.
UNGATED = "\u00a0\n"


def _texts(count: int) -> list[str]:
    rng = random.Random(20261201)
    texts = []
    for _ in range(count):
        size = rng.randint(1, 30)
        texts.append("".join(rng.choice(WORDS) + rng.choice(SEPARATORS) for _ in range(size)))
    return texts


def test_first_name_starts_are_the_patterns_matches() -> None:
    """Each start is where ``_first_name_re`` matches, and so is each comma before one."""
    pattern, commas = names._first_name_re(), names._comma_first_re()
    for text in _texts(3000):
        low = lowered(text)
        assert names_gates.first_name_starts(low, pattern) == tuple(
            hit.start(1) - 1 for hit in pattern.finditer(" " + low)
        ), text
        assert names_gates.comma_names(low, commas) == [
            (hit.start(), hit.start(1)) for hit in commas.finditer(low)
        ], text


def test_name_gates_only_skip_patterns_that_find_nothing() -> None:
    """No cue, no title, no key: the pattern they stand for finds nothing either."""
    cue, key = names._cue_re(), names._KEY_GATE
    for text in _texts(3000):
        low = lowered(text)
        if names_gates.no_cue(low):
            assert cue.search(" " + low) is None, text
        if names_gates.key_absent(low, key):
            assert key.search(low) is None, text
        if names_gates.no_title(low):
            # A lower-cased text that is not ASCII turns the gate off: the pattern runs.
            assert names._titled(text, "\u00a0") == [], text


def test_detectors_find_the_same_gated_and_ungated() -> None:
    """Names, addresses and e-mail addresses: the same findings with the gates on and off."""
    scrubber = PiiScrubber(b"gates-test-key-0123")
    for text in _texts(2000):
        gated = [tuple(f) for f in scrubber.detect(text)]
        full = [
            (f.start - len(UNGATED), f.end - len(UNGATED), f.kind, f.value)
            for f in scrubber.detect(UNGATED + text)
        ]
        assert gated == full, text


def test_emails_from_each_at_sign_are_finditers() -> None:
    """The search from each "@" yields what ``finditer`` over the whole text does."""
    for text in _texts(3000):
        assert detectors_contact._plain_emails(text) == [
            (m.start(), m.end(), "EMAIL", detectors_contact._email_value(m.group(0)))
            for m in detectors_contact._EMAIL.finditer(text)
            if not detectors_contact._URL_CREDENTIAL.search(text, max(0, m.start() - 64), m.start())
        ], text


def test_street_and_postcode_gates() -> None:
    """ "c" of "USB-C" is no "c/"; a postcode's shape is asked before its pattern."""
    assert not addresses._street_gate("plug the USB-C dock in")
    assert addresses._street_gate("c/ Mayor 10, 28013 Madrid")
    assert addresses._street_gate("12 main st. apt 4")
    assert not detectors_gates.uk_postcode("no code here 12", addresses._HAS_UK_POSTCODE)
    assert detectors_gates.uk_postcode("Mill Lane, NR21 0AA", addresses._HAS_UK_POSTCODE)
    assert detectors_gates.ssn_shape("ssn 078-05-1120")
    assert not detectors_gates.ssn_shape("order 12-34-5678")
