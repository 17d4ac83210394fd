"""The formats real traffic holds: each is fully replaced, and look-alikes survive."""

from __future__ import annotations

import re

import pytest

from faithmon.ingest.scrub import PiiScrubber

KEY = b"format-tests-key-0123456789abcdef"
PLACEHOLDER = r"<{kind}_[0-9a-f]{{8}}>"
ANY_PLACEHOLDER = re.compile(r"<[A-Z]+_[0-9a-f]{8}>")

# (text, the value that must vanish, kind, phone region)
FORMATS = [
    ("Mail <JANE@Example.org> today.", "JANE@Example.org", "EMAIL", "US"),
    ("Click mailto:jane.roe@example.org now.", "jane.roe@example.org", "EMAIL", "US"),
    (
        "Reach Ops.Team@Mail.EU.Northwind.co.uk soon.",
        "Ops.Team@Mail.EU.Northwind.co.uk",
        "EMAIL",
        "US",
    ),
    ("Write to josé.garcía@correo.es please.", "josé.garcía@correo.es", "EMAIL", "US"),
    ("Write to müller@bücher.de please.", "müller@bücher.de", "EMAIL", "US"),
    ("Write to 用户@例子.广告 please.", "用户@例子.广告", "EMAIL", "US"),
    ("It is jane dot roe at gmail dot com, ok?", "jane dot roe at gmail dot com", "EMAIL", "US"),
    ("It is jane [at] example [dot] org, ok?", "jane [at] example [dot] org", "EMAIL", "US"),
    ("It is jane(at)example(dot)org, ok?", "jane(at)example(dot)org", "EMAIL", "US"),
    (
        "Mail me at jane dot roe at gmail dot com, thx.",
        "jane dot roe at gmail dot com",
        "EMAIL",
        "US",
    ),
    ("Dial tel:+1-415-555-0132 now.", "+1-415-555-0132", "PHONE", "US"),
    ("Fax tel:+442079460000. 12.5% off.", "+442079460000", "PHONE", "US"),
    ("Backup number 201.555.0199 works.", "201.555.0199", "PHONE", "US"),
    ("Call (+44) 20 7946 0958 today.", "(+44) 20 7946 0958", "PHONE", "US"),
    ("Call 415-555-0132 x204 today.", "415-555-0132 x204", "PHONE", "US"),
    ("Call (415) 555-0132 ext. 12 today.", "(415) 555-0132 ext. 12", "PHONE", "US"),
    ("Call +44 (0)20 7946 0958 today.", "+44 (0)20 7946 0958", "PHONE", "US"),
    ("Call 0044 20 7946 0958 today.", "0044 20 7946 0958", "PHONE", "US"),
    ("Call 011 44 20 7946 0958 today.", "011 44 20 7946 0958", "PHONE", "US"),
    ("Call 415.555.0132 today.", "415.555.0132", "PHONE", "US"),
    ("Call 020 7946 0958 today.", "020 7946 0958", "PHONE", "GB"),
    ("Appelez le 01 42 68 53 00 demain.", "01 42 68 53 00", "PHONE", "FR"),
    ("Rufen Sie 030 12345678 an.", "030 12345678", "PHONE", "DE"),
    ("Llame al 912 345 678 hoy.", "912 345 678", "PHONE", "ES"),
    ("Chiami lo 06 1234 5678 oggi.", "06 1234 5678", "PHONE", "IT"),
    ("Bel 020 123 4567 vandaag.", "020 123 4567", "PHONE", "NL"),
    # European national numbers with the default region (US): written as national
    # numbers are (a trunk 0, groups of digits), or after a word such as "call".
    ("Call 020 7946 0958 today.", "020 7946 0958", "PHONE", "US"),
    ("UK mobile 07700 900123 please.", "07700 900123", "PHONE", "US"),
    ("Appelez le 01 42 68 53 00 demain.", "01 42 68 53 00", "PHONE", "US"),
    ("Mon portable : 06.12.34.56.78.", "06.12.34.56.78", "PHONE", "US"),
    ("Rufen Sie 030 12345678 an.", "030 12345678", "PHONE", "US"),
    ("Zentrale (030) 1234567, bitte.", "(030) 1234567", "PHONE", "US"),
    ("Handy 0151/23456789 bitte.", "0151/23456789", "PHONE", "US"),
    ("Llame al 912 345 678 hoy.", "912 345 678", "PHONE", "US"),
    ("Chiami lo 02 1234 5678 oggi.", "02 1234 5678", "PHONE", "US"),
    ("Bel ons op 020-123 4567 vandaag.", "020-123 4567", "PHONE", "US"),
    ("Tel. 0612345678 (mobiel).", "0612345678", "PHONE", "US"),
    ("Bureau 01 42 68 53 00 ext. 12 aussi.", "01 42 68 53 00 ext. 12", "PHONE", "US"),
    ("Appelez tel:0142685300 demain.", "0142685300", "PHONE", "US"),
    ("Card 4111 1111 1111 1111 on file.", "4111 1111 1111 1111", "CARD", "US"),
    ("Card 4111-1111-1111-1111 on file.", "4111-1111-1111-1111", "CARD", "US"),
    ("Card 4111.1111.1111.1111 on file.", "4111.1111.1111.1111", "CARD", "US"),
    ("Card 6011/1111/1111/1117 on file.", "6011/1111/1111/1117", "CARD", "US"),
    ("Card 2223_0031_2200_3222 on file.", "2223_0031_2200_3222", "CARD", "US"),
    ("Card 3530 1113-3330 0000 on file.", "3530 1113-3330 0000", "CARD", "US"),
    ('{"card": "4111111111111111", "n": 1}', "4111111111111111", "CARD", "US"),
    ('{"card":5555555555554444}', "5555555555554444", "CARD", "US"),
    ("Pay to de89 3704 0044 0532 0130 00 please.", "de89 3704 0044 0532 0130 00", "IBAN", "US"),
    ("Pay to DE89-3704-0044-0532-0130-00 please.", "DE89-3704-0044-0532-0130-00", "IBAN", "US"),
    ("Pay to GB82.WEST.1234.5698.7654.32 please.", "GB82.WEST.1234.5698.7654.32", "IBAN", "US"),
    ("Pay to gb82west12345698765432 please.", "gb82west12345698765432", "IBAN", "US"),
    ("Her SSN 123 45 6780 is on file.", "123 45 6780", "SSN", "US"),
    ("Her ssn: 123456780 is on file.", "123456780", "SSN", "US"),
    ("Social Security No. 123-45-6780 is on file.", "123-45-6780", "SSN", "US"),
    ("Connect to 10.1.2.3:8080 now.", "10.1.2.3", "IP", "US"),
    ("Connect to [2001:4860:4860::8888]:443 now.", "2001:4860:4860::8888", "IP", "US"),
    ("Peer ::ffff:10.1.2.3 connected.", "::ffff:10.1.2.3", "IP", "US"),
    ("Use postgres://app:s3cr3t@db.internal:5432/app now.", "app:s3cr3t", "SECRET", "US"),
    (
        "Use Server=db;User Id=sa;Password=Hunter2!x;Database=app now.",
        "Hunter2!x",
        "SECRET",
        "US",
    ),
    ("Use jdbc:mysql://db/app?user=sa&password=Hunter2x now.", "Hunter2x", "SECRET", "US"),
    ("Header Authorization: Basic dXNlcjpwYXNz sent.", "dXNlcjpwYXNz", "SECRET", "US"),
    (
        "Header Authorization: Bearer abcDEF1234567890ghiJKL sent.",
        "abcDEF1234567890ghiJKL",
        "SECRET",
        "US",
    ),
    ("AWS ASIAIOSFODNN7EXAMPLE leaked.", "ASIAIOSFODNN7EXAMPLE", "SECRET", "US"),
    ("Key AIzaSyA" + "b1" * 16 + " leaked.", "AIzaSyA" + "b1" * 16, "SECRET", "US"),
    ("Token gho_" + "a1" * 18 + " leaked.", "gho_" + "a1" * 18, "SECRET", "US"),
    ("Token ghs_" + "a1" * 18 + " leaked.", "ghs_" + "a1" * 18, "SECRET", "US"),
    (
        "Token github_pat_11ABCDEFG0abcdefghijklmn_xyz leaked.",
        "github_pat_11ABCDEFG0abcdefghijklmn_xyz",
        "SECRET",
        "US",
    ),
    ("Slack xoxp-123456789012-abcdefghij leaked.", "xoxp-123456789012-abcdefghij", "SECRET", "US"),
    (
        "Stripe rk_live_4eC39HqLyjWDarjtT1zdp7dc leaked.",
        "rk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "SECRET",
        "US",
    ),
    (
        "Stripe pk_live_4eC39HqLyjWDarjtT1zdp7dc leaked.",
        "pk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "SECRET",
        "US",
    ),
    (
        "OpenAI sk-abcdefghijklmnopqrstuvwxyz123456 leaked.",
        "sk-abcdefghijklmnopqrstuvwxyz123456",
        "SECRET",
        "US",
    ),
    (
        "Anthropic sk-ant-api03-abcdefghijklmnopqrstuvwx leaked.",
        "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "SECRET",
        "US",
    ),
    (
        "HF hf_abcdefghijklmnopqrstuvwxyzABCDEFGH leaked.",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "SECRET",
        "US",
    ),
    (
        "Twilio SK" + "0123456789abcdef" * 2 + " leaked.",
        "SK" + "0123456789abcdef" * 2,
        "SECRET",
        "US",
    ),
    (
        "SendGrid SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG leaked.",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "SECRET",
        "US",
    ),
    ("GitLab glpat-abcdefghij0123456789 leaked.", "glpat-abcdefghij0123456789", "SECRET", "US"),
]


@pytest.mark.parametrize(
    ("text", "value", "kind", "region"),
    FORMATS,
    ids=[f"{f[2]}{i}" for i, f in enumerate(FORMATS)],
)
def test_each_format_is_replaced(text: str, value: str, kind: str, region: str) -> None:
    """The whole value gives way to one placeholder of its kind; the text around it stays."""
    scrubbed = PiiScrubber(KEY, phone_region=region, scope="global").scrub_text(text)
    prefix, suffix = text.split(value)
    assert re.fullmatch(
        re.escape(prefix) + PLACEHOLDER.format(kind=kind) + re.escape(suffix), scrubbed
    )


DISTRACTORS = [
    "Upgrade from 1.2.3 to v10.4.1 tonight.",
    "See ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2.",
    "Cited as doi:10.1038/nphys1170 and https://doi.org/10.1016/j.cell.2020.01.001.",
    "Allow 192.0.2.0/24, 10.0.0.0/8 and 2001:db8::/32 only.",
    "Hosts are 198.51.100.x and 203.0.113.x in the docs.",
    # Documentation addresses (RFC 5737, RFC 3849) name no host: kept, in every form.
    "Examples: 192.0.2.44, 198.51.100.7:8080, (203.0.113.250) and 203.0.113.9.",
    "Peers ::ffff:203.0.113.9, [2001:db8::1]:443 and 2001:db8:85a3::8a2e:370:7334.",
    "It failed with 0x80070005 and then 0xC0000005.",
    "Started 2026-12-01T10:00:00Z, done at 10:30:15.",
    "Invoice INV-2024-00123 and ticket #A17-4421 are open.",
    "It costs $1,299.00 or 12.50 EUR, 15% off.",
    "Our SLA is 99.95% uptime, 99.9% for the free tier.",
    "Paid with the card ending in 4242.",
    "Due on 01/12/2026, 12.01.2026 or 2026/12/01.",
    "Logged at 2026-02-01 13:45:00 UTC.",
    "Order number 4155550132 and order #2015550199 shipped.",
    "Look at the dot com bubble of 2000.",
    "A basic understanding of Authorization headers helps.",
    "Set timeout=30 and retries=3 in the config.",
    # Shaped like European national numbers, but labelled as identifiers.
    "Order 0142685300 shipped and invoice 0151-2345-6789 is due.",
    "Ticket 030 12345678 was merged into case 020 7946 0958.",
]

# Valid national numbers of some European country, but undivided with no word such as
# "call" before them, or one digit apart (an ISBN): only the home region reads them.
NOT_FOREIGN_PHONES = [
    "See 0-306-40615-2 on page 4; it cost 0.99 on 01.02.2026.",
    "The run took 0612345678 microseconds.",
]


@pytest.mark.parametrize("region", ["US", "GB", "DE"])
@pytest.mark.parametrize("text", DISTRACTORS)
def test_distractors_survive(text: str, region: str) -> None:
    """Versions, ISBNs, DOIs, ranges, codes, times, ids, prices, SLAs and dates stay."""
    assert PiiScrubber(KEY, phone_region=region, scope="global").scrub_text(text) == text


@pytest.mark.parametrize("text", NOT_FOREIGN_PHONES)
def test_foreign_numbers_need_their_shape_or_a_cue(text: str) -> None:
    """The fallback regions take a number only as it is written there, or after a cue."""
    assert PiiScrubber(KEY, phone_region="US", scope="global").scrub_text(text) == text


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Mail <JANE@x.org>.", "Mail jane@x.org."),
        ("Mail mailto:Jane.Roe@Gmail.com.", "Mail jane dot roe at gmail dot com."),
        ("Mail JOSÉ@correo.es.", "Mail josé@correo.es."),
        ("Call 0044 20 7946 0958.", "Call +44 (0)20 7946 0958."),
        ("Call tel:+14155550132.", "Call 415.555.0132."),
        ("Card 4111.1111.1111.1111.", "Card 4111111111111111."),
        ("IBAN de89-3704-0044-0532-0130-00.", "IBAN DE89370400440532013000."),
        ("SSN 123 45 6780.", "SSN 123-45-6780."),
        ("Peer ::ffff:10.1.2.3.", "Peer 10.1.2.3."),
    ],
)
def test_one_value_written_two_ways_gets_one_placeholder(first: str, second: str) -> None:
    """Case, separators and prefixes are normalised away, so a judge can still match values."""
    scrubber = PiiScrubber(KEY, scope="global")
    first_tokens = ANY_PLACEHOLDER.findall(scrubber.scrub_text(first))
    assert len(first_tokens) == 1
    assert first_tokens == ANY_PLACEHOLDER.findall(scrubber.scrub_text(second))


def test_extensions_tell_lines_apart() -> None:
    """Two extensions of one switchboard are two different numbers."""
    scrubber = PiiScrubber(KEY, scope="global")
    assert scrubber.scrub_text("415-555-0132 x204") != scrubber.scrub_text("415-555-0132 x205")


def test_two_ibans_in_a_row_are_both_found() -> None:
    """A match that runs on from one IBAN into the next does not hide the second."""
    text = "Use IT60.X054.2811.1010.0000.0123.456 e NL91ABNA0417164300."
    scrubbed = PiiScrubber(KEY, scope="global").scrub_text(text)
    assert re.fullmatch(r"Use <IBAN_[0-9a-f]{8}> e <IBAN_[0-9a-f]{8}>\.", scrubbed)
