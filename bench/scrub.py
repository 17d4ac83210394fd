"""Scrubber bench: recall, precision and throughput of faithmon's PII scrubber against Presidio.

Run from the repository root::

    python bench/scrub.py                 # about 2,000 texts, 5 runs: a minute or two
    python bench/scrub.py --quick         # about 200 texts, 3 runs: a few seconds
    python bench/scrub.py --presidio /tmp/presidio-venv/bin/python

One corpus, generated with Faker and ``random`` under a fixed seed, feeds both
scrubbers: support-bot texts, each with 0-3 PII values at known character
offsets (EMAIL, PHONE, CARD, IBAN, SSN, IP, SECRET) among values that must
survive (order ids, dates, prices, versions, product codes, gift codes, ...).

- Recall of a type: the share of its values whose every character lies inside a
  detected span (of any type), so that no part of the value is left.
- Precision: 1 - the share of distractors that any detected span touches. The
  count of detections that touch no labelled PII at all ("false scrubs") is
  given too.
- Throughput: texts/s and MB/s (UTF-8) of full scrubbing. faithmon: ``scrub_text``
  on every text with a fresh ``PiiScrubber`` per pass over texts that are all
  distinct, so its cache never hits (cache cold). Presidio: ``analyze`` +
  ``anonymize`` with its pattern recognizers and the no-op NLP engine, in its own
  venv (``bench/_presidio_worker.py``), passes taken in turn with faithmon's.

Goals (from the issue): recall >= 0.95 on every type, precision >= 0.98 and at
least 20 times Presidio's throughput. The table says whether each is met; the
script exits 0 either way. Results go to ``bench/results/scrub.json``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ipaddress
import json
import os
import platform
import random
import re
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import phonenumbers
from faker import Faker

from faithmon.ingest.scrub import PiiScrubber

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "scrub.json"
WORKER = HERE / "_presidio_worker.py"
DEFAULT_PRESIDIO = "/tmp/presidio-venv/bin/python"
SEED = 20261201
# A fixed key: the bench measures scrubbing, it protects nothing.
KEY = b"faithmon-bench-scrub-key"

KINDS = ("EMAIL", "PHONE", "CARD", "IBAN", "SSN", "IP", "SECRET")
PRESIDIO_KINDS = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "US_SSN": "SSN",
    "IP_ADDRESS": "IP",
}
RECALL_GOAL = 0.95
PRECISION_GOAL = 0.98
SPEED_GOAL = 20.0
# Examples of misses and false scrubs kept in the JSON, per format or type.
EXAMPLES = 8


@dataclass(frozen=True, slots=True)
class Sizes:
    texts: int
    repetitions: int


QUICK = Sizes(texts=200, repetitions=3)
FULL = Sizes(texts=2000, repetitions=5)


# The corpus.


@dataclass(frozen=True, slots=True)
class Label:
    start: int
    end: int
    kind: str
    variant: str
    """The format of a PII value (``us-paren`` for a phone number); a distractor's value."""


@dataclass(slots=True)
class Item:
    text: str
    pii: list[Label] = field(default_factory=list)
    distractors: list[Label] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Value:
    """A generated value with the text that must stand around it (``Bearer ``, ``SSN ``)."""

    value: str
    variant: str
    before: str = ""
    after: str = ""


ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


class Generator:
    """Labelled support-bot texts; every value and format drawn from one seed."""

    US_AREAS = ("212", "312", "415", "617", "646", "303", "206", "512", "305", "702")
    PHONE_REGIONS = ("GB", "DE", "FR", "IN", "AU", "BR", "JP", "NL", "ES", "MX")
    IBAN_LOCALES = ("en_GB", "de_DE", "fr_FR", "nl_NL", "es_ES", "it_IT", "pl_PL")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.bank_fakers = []
        for n, locale in enumerate(self.IBAN_LOCALES):
            fake = Faker(locale)
            fake.seed_instance(seed + n + 1)
            self.bank_fakers.append(fake)
        self.pii: dict[str, Callable[[], Value]] = {
            "EMAIL": self.email,
            "PHONE": self.phone,
            "CARD": self.card,
            "IBAN": self.iban,
            "SSN": self.ssn,
            "IP": self.ip,
            "SECRET": self.secret,
        }
        self.distractor: dict[str, Callable[[], Value]] = {
            "order_id": self.order_id,
            "order_number": self.phone_like_number,
            "ticket": self.phone_like_number,
            "date": self.date,
            "price": self.price,
            "percent": self.percent,
            "version": self.version,
            "firmware": self.firmware,
            "product": self.product,
            "duration": self.duration,
            "count": self.count,
            "gift": self.gift_code,
            "uuid": self.uuid,
            "sha": self.sha,
            "time": self.time,
            "tracking": self.tracking,
            "invoice": self.invoice,
        }

    def token(self, alphabet: str, length: int) -> str:
        return "".join(self.rng.choices(alphabet, k=length))

    # PII values.

    def email(self) -> Value:
        fake, rng = self.fake, self.rng
        style = rng.choice(["plain", "free", "company", "mixed-case", "plus"])
        if style == "plain":
            return Value(fake.email(), style)
        if style == "free":
            return Value(fake.free_email(), style)
        if style == "company":
            return Value(fake.company_email(), style)
        first, last = fake.first_name(), fake.last_name()
        if style == "mixed-case":
            return Value(f"{first}.{last}@{fake.domain_name().capitalize()}", style)
        tag = rng.choice(["orders", "billing", "support", "2026"])
        return Value(f"{first.lower()}+{tag}@{fake.free_email_domain()}", style)

    def _valid_us(self) -> phonenumbers.PhoneNumber:
        while True:
            national = (
                f"{self.rng.choice(self.US_AREAS)}"
                f"{self.rng.randint(201, 899)}{self.rng.randint(0, 9999):04d}"
            )
            number = phonenumbers.parse(national, "US")
            if phonenumbers.is_valid_number(number):
                return number

    def phone(self) -> Value:
        rng = self.rng
        if rng.random() < 0.55:
            digits = str(self._valid_us().national_number)
            area, exchange, line = digits[:3], digits[3:6], digits[6:]
            variant, text = rng.choice(
                [
                    ("us-paren", f"({area}) {exchange}-{line}"),
                    ("us-dash", f"{area}-{exchange}-{line}"),
                    ("us-dot", f"{area}.{exchange}.{line}"),
                    ("us-plus1-spaced", f"+1 {area} {exchange} {line}"),
                    ("us-plus1-dashed", f"+1-{area}-{exchange}-{line}"),
                    ("us-e164", f"+1{area}{exchange}{line}"),
                ]
            )
            return Value(text, variant)
        region = rng.choice(self.PHONE_REGIONS)
        kind = rng.choice(
            [phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]
        )
        example = phonenumbers.example_number_for_type(region, kind) or phonenumbers.example_number(
            region
        )
        if example is None:
            raise RuntimeError(f"phonenumbers has no example number for {region}")
        national = str(example.national_number)
        while True:
            candidate = national[:-4] + f"{rng.randint(0, 9999):04d}"
            number = phonenumbers.parse(f"+{example.country_code}{candidate}", None)
            if phonenumbers.is_valid_number(number):
                break
        if rng.random() < 0.7:
            style = phonenumbers.PhoneNumberFormat.INTERNATIONAL
            variant = f"intl-{region}"
        else:
            style = phonenumbers.PhoneNumberFormat.E164
            variant = f"e164-{region}"
        return Value(phonenumbers.format_number(number, style), variant)

    def card(self) -> Value:
        rng, fake = self.rng, self.fake
        brand = rng.choice(["visa", "mastercard", "mastercard-2", "amex"])
        if brand == "mastercard-2":
            while not (number := fake.credit_card_number(card_type="mastercard")).startswith("2"):
                pass
        elif brand == "mastercard":
            while not (number := fake.credit_card_number(card_type="mastercard")).startswith("5"):
                pass
        else:
            number = fake.credit_card_number(card_type="visa16" if brand == "visa" else "amex")
        groups = (
            [number[:4], number[4:10], number[10:]]
            if len(number) == 15
            else [number[i : i + 4] for i in range(0, len(number), 4)]
        )
        layout = rng.choice(["spaced", "dashed", "compact"])
        joined = {"spaced": " ".join(groups), "dashed": "-".join(groups), "compact": number}
        return Value(joined[layout], f"{brand}-{layout}")

    def iban(self) -> Value:
        fake = self.rng.choice(self.bank_fakers)
        compact = str(fake.iban())
        if self.rng.random() < 0.5:
            return Value(compact, f"{compact[:2]}-compact")
        spaced = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
        return Value(spaced, f"{compact[:2]}-spaced")

    def ssn(self) -> Value:
        value = str(self.fake.ssn())
        if self.rng.random() < 0.25:
            return Value(value.replace("-", ""), "bare", before=self.rng.choice(["SSN ", "SSN: "]))
        before = self.rng.choice(["SSN ", "SSN: ", "social security number ", ""])
        return Value(value, "dashed" if before else "dashed-no-label", before=before)

    def ip(self) -> Value:
        rng, fake = self.rng, self.fake
        style = rng.choice(["ipv4", "ipv4", "ipv6", "ipv6-compressed"])
        if style == "ipv4":
            return Value(fake.ipv4_public(), style)
        groups = str(fake.ipv6()).split(":")
        if style == "ipv6-compressed":
            start = rng.randint(1, 4)
            for i in range(start, start + rng.randint(2, 3)):
                groups[i] = "0"
            return Value(ipaddress.IPv6Address(":".join(groups)).compressed, style)
        return Value(":".join(groups), style)

    def _jwt(self) -> str:
        def part(payload: dict[str, Any]) -> str:
            raw = json.dumps(payload, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        header = part({"alg": self.rng.choice(["HS256", "RS256"]), "typ": "JWT"})
        claims = part(
            {
                "sub": str(self.rng.randint(10**6, 10**9)),
                "name": self.fake.name(),
                "iat": self.rng.randint(1_700_000_000, 1_800_000_000),
            }
        )
        return f"{header}.{claims}.{self.token(B64URL, 43)}"

    def secret(self) -> Value:
        rng = self.rng
        style = rng.choice(
            ["sk-proj", "sk-legacy", "stripe", "aws", "github", "jwt", "bearer", "url-userinfo"]
        )
        before = rng.choice(["key ", "token ", "the key ", ""])
        if style == "sk-proj":
            value = "sk-proj-" + self.token(B64URL, rng.randint(40, 64))
        elif style == "sk-legacy":
            value = "sk-" + self.token(ALNUM, 48)
        elif style == "stripe":
            value = f"sk_{rng.choice(['live', 'test'])}_" + self.token(ALNUM, rng.randint(24, 32))
        elif style == "aws":
            value = "AKIA" + self.token(string.ascii_uppercase + "234567", 16)
        elif style == "github":
            value = "ghp_" + self.token(ALNUM, 36)
        elif style == "jwt":
            value = self._jwt()
        elif style == "bearer":
            token = self.token(ALNUM + "._-", rng.randint(24, 40))
            return Value(token, style, before="Authorization: Bearer ")
        else:
            scheme, host = rng.choice(
                [
                    ("postgres", "db.internal:5432/orders"),
                    ("mysql", "mysql.internal:3306/shop"),
                    ("https", "files.northwind.example/export"),
                    ("redis", "cache.internal:6379/0"),
                    ("amqp", "queue.internal:5672/"),
                ]
            )
            user = str(self.fake.user_name())
            password = self.token(ALNUM + "-_.!~*", rng.randint(10, 18))
            return Value(f"{user}:{password}", style, before=f"{scheme}://", after=f"@{host}")
        return Value(value, style, before=before)

    # Values that must survive.

    def order_id(self) -> Value:
        return Value(f"{self.rng.choice('ABCDEFGHKMNPRSTWXZ')}{self.rng.randint(1, 9999)}", "")

    def phone_like_number(self) -> Value:
        """Ten digits that would be a valid US number, but stand after "order" or "ticket"."""
        return Value(str(self._valid_us().national_number), "")

    def date(self) -> Value:
        moment = self.fake.date_between(start_date="-2y", end_date="+1y")
        return Value(
            self.rng.choice(
                [
                    f"{moment.day} {moment:%B %Y}",
                    moment.isoformat(),
                    f"{moment:%B} {moment.day}, {moment.year}",
                    f"{moment:%m/%d/%Y}",
                ]
            ),
            "",
        )

    def price(self) -> Value:
        amount = self.rng.randint(1, 250_000) / 100
        return Value(
            self.rng.choice(
                [f"${amount:,.2f}", f"{amount:.2f} euros", f"€{amount:,.2f}", f"USD {amount:.0f}"]
            ),
            "",
        )

    def percent(self) -> Value:
        return Value(
            self.rng.choice([f"{self.rng.randint(1, 90)}%", f"{self.rng.randint(1, 99)}.5%"]), ""
        )

    def version(self) -> Value:
        major, minor, patch = (self.rng.randint(0, 20) for _ in range(3))
        return Value(self.rng.choice([f"{major}.{minor}.{patch}", f"v{major}.{minor}.{patch}"]), "")

    def firmware(self) -> Value:
        """A four-part version: it would be an IP address but for the word before it."""
        parts = [self.rng.randint(1, 20), self.rng.randint(0, 20), self.rng.randint(0, 40)]
        return Value(".".join(str(p) for p in [*parts, self.rng.randint(0, 255)]), "")

    def product(self) -> Value:
        letters = self.token(string.ascii_uppercase, self.rng.randint(2, 3))
        return Value(
            self.rng.choice(
                [
                    f"SKU-{self.rng.randint(1000, 9999)}-{self.rng.choice('ABCDEFG')}",
                    f"{letters}-{self.rng.randint(100, 9999)}",
                    f"{letters}{self.rng.randint(10, 99)}-{self.rng.randint(1000, 9999)}",
                ]
            ),
            "",
        )

    def duration(self) -> Value:
        n = self.rng.choice([2, 3, 5, 7, 10, 14, 30, 45, 60, 90])
        return Value(
            self.rng.choice(
                [f"{n} days", f"{n} business days", f"{n * 2} hours", f"{n}-day", f"{n} weeks"]
            ),
            "",
        )

    def count(self) -> Value:
        n = self.rng.randint(2, 5000)
        return Value(self.rng.choice([f"{n} items", f"{n:,} times", f"{n} loyalty points"]), "")

    def gift_code(self) -> Value:
        """Sixteen digits with a card's first digit that fail the Luhn check."""
        while True:
            digits = str(self.rng.choice([4, 5, 3, 6, 1, 9])) + self.token(string.digits, 15)
            if not _luhn(digits):
                break
        groups = [digits[i : i + 4] for i in range(0, 16, 4)]
        return Value(self.rng.choice([" ".join(groups), "-".join(groups), digits]), "")

    def uuid(self) -> Value:
        return Value(str(self.fake.uuid4()), "")

    def sha(self) -> Value:
        return Value(self.token("0123456789abcdef", self.rng.choice([7, 12, 40])), "")

    def time(self) -> Value:
        hour, minute = self.rng.randint(0, 23), self.rng.choice([0, 15, 30, 45, 5, 50])
        return Value(
            self.rng.choice(
                [
                    f"{hour:02d}:{minute:02d}",
                    f"{hour:02d}:{minute:02d}:{self.rng.randint(0, 59):02d}",
                    f"{hour % 12 or 12}:{minute:02d} {'am' if hour < 12 else 'pm'}",
                ]
            ),
            "",
        )

    def tracking(self) -> Value:
        return Value("1Z" + self.token(string.ascii_uppercase + string.digits, 16), "")

    def invoice(self) -> Value:
        return Value(f"#{self.rng.randint(2024, 2026)}-{self.rng.randint(1, 9999):04d}", "")

    # Texts.

    def item(self) -> Item:
        rng = self.rng
        item = Item("")
        parts: list[str] = []
        position = 0

        def add(text: str) -> None:
            nonlocal position
            parts.append(text)
            position += len(text)

        def fill(template: str, kind: str = "", pii: Value | None = None) -> None:
            for piece in re.split(r"(\{[^}]*\})", template):
                if piece == "{P}":
                    assert pii is not None
                    add(pii.before)
                    item.pii.append(Label(position, position + len(pii.value), kind, pii.variant))
                    add(pii.value)
                    add(pii.after)
                elif piece.startswith("{d:"):
                    name = piece[3:-1]
                    value = self.distractor[name]()
                    item.distractors.append(
                        Label(position, position + len(value.value), name, value.value)
                    )
                    add(value.value)
                else:
                    add(piece)

        add(rng.choice(OPENERS))
        kinds = rng.choices(KINDS, k=rng.choices([0, 1, 2, 3], weights=[2, 4, 3, 2])[0])
        sentences = [*kinds, *[""] * rng.randint(1, 3)]  # "": a sentence of distractors only
        rng.shuffle(sentences)
        for n, kind in enumerate(sentences):
            if n:
                add(" ")
            if kind:
                fill(rng.choice(PII_TEMPLATES[kind]), kind, self.pii[kind]())
            else:
                fill(rng.choice(DISTRACTOR_TEMPLATES))
        item.text = "".join(parts)
        return item

    def corpus(self, count: int) -> list[Item]:
        items: list[Item] = []
        seen: set[str] = set()
        while len(items) < count:
            item = self.item()
            if item.text not in seen:  # distinct texts: the scrubber's cache never hits
                seen.add(item.text)
                items.append(item)
        return items


OPENERS = (
    "",
    "Hi, ",
    "Hello team, ",
    "Customer wrote: ",
    "Agent note: ",
    "From the knowledge base: ",
    "Thanks for contacting Northwind support. ",
)

# {P} is the PII value (with the words its generator puts around it); {d:name} a distractor.
PII_TEMPLATES: dict[str, tuple[str, ...]] = {
    "EMAIL": (
        "Please send the receipt for order {d:order_id} to {P}.",
        "My email is {P} and I ordered on {d:date}.",
        "Customer {P} asked why invoice {d:invoice} shows {d:price}.",
        "We will write to {P} within {d:duration}.",
    ),
    "PHONE": (
        "You can reach me at {P} after {d:time}.",
        "Our courier will call {P} on {d:date}.",
        "Phone: {P}. Order {d:order_id} is still pending.",
        "Please call me back on {P}, I have {d:count} in the basket.",
    ),
    "CARD": (
        "I paid {d:price} with card {P}.",
        "The charge on {P} failed twice on {d:date}.",
        "Card on file: {P}, gift code {d:gift} did not apply.",
        "Refund {d:percent} of the total to {P}.",
    ),
    "IBAN": (
        "Please send the refund to IBAN {P}.",
        "Our new account is {P}, effective {d:date}.",
        "Transfer {d:price} to {P} within {d:duration}.",
        "IBAN: {P} (reference {d:invoice}).",
    ),
    "SSN": (
        "For the tax form my {P} is correct.",
        "Verified identity with {P} on {d:date}.",
        "The applicant gave {P} and asked about order {d:order_id}.",
        "Please update my record, {P}, before {d:time}.",
    ),
    "IP": (
        "Login attempts came from {P} at {d:time}.",
        "The webhook source address was {P}.",
        "Block {P}: it sent {d:count} in an hour.",
        "Device {d:product} on firmware {d:firmware} connected from {P}.",
    ),
    "SECRET": (
        "I accidentally pasted {P} in the chat, please delete it.",
        "Our integration fails with {P} since version {d:version}.",
        "Rotate {P} after the incident on {d:date}.",
        "Config line: {P} (commit {d:sha}).",
    ),
}

DISTRACTOR_TEMPLATES = (
    "Order {d:order_id} shipped on {d:date} and should arrive within {d:duration}.",
    "Your order {d:order_number} is on its way.",
    "Ticket #{d:ticket} was escalated at {d:time}.",
    "The total was {d:price} including {d:percent} tax.",
    "Please update to version {d:version} first.",
    "The router runs firmware {d:firmware} since {d:date}.",
    "Product code {d:product} comes in {d:count}.",
    "Gift code {d:gift} cannot be combined with other offers.",
    "Request id {d:uuid} failed at {d:time}.",
    "Commit {d:sha} fixed the sync bug in {d:version}.",
    "The desk opens at {d:time} and closes at {d:time}.",
    "Tracking number {d:tracking} was updated on {d:date}.",
    "Refunds take {d:duration} and returns are accepted for {d:duration}.",
    "Invoice {d:invoice} is due {d:date}; a discount of {d:percent} applies.",
    "You have {d:count} and {d:price} of store credit left.",
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Scoring.

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Score:
    recall: dict[str, tuple[int, int]]
    """kind → (values fully covered, values)."""
    variants: dict[str, tuple[int, int]]
    """``KIND/variant`` → (values fully covered, values)."""
    distractors_touched: int
    distractors: int
    false_scrubs: int
    detections: int
    misses: list[dict[str, Any]]
    touched: list[dict[str, Any]]
    strays: list[dict[str, Any]]

    @property
    def precision(self) -> float:
        return 1 - self.distractors_touched / self.distractors

    def as_json(self) -> dict[str, Any]:
        return {
            "recall": {
                k: {"covered": c, "values": n, "recall": c / n if n else None}
                for k, (c, n) in self.recall.items()
            },
            "recall_by_format": {
                k: {"covered": c, "values": n, "recall": c / n}
                for k, (c, n) in self.variants.items()
            },
            "precision": self.precision,
            "distractors_touched": self.distractors_touched,
            "distractors_touched_by_kind": dict(
                Counter(t["distractor"] for t in self.touched).most_common()
            ),
            "distractors": self.distractors,
            "false_scrubs": self.false_scrubs,
            "detections": self.detections,
            "missed_examples": _some(self.misses, "format"),
            "touched_distractor_examples": _some(self.touched, "distractor"),
            "false_scrub_examples": _some(self.strays, "kind"),
        }


def _some(examples: Sequence[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The first ``EXAMPLES`` examples of each value of ``key``."""
    seen: Counter[str] = Counter()
    kept = []
    for example in examples:
        seen[example[key]] += 1
        if seen[example[key]] <= EXAMPLES:
            kept.append(example)
    return kept


def _covered(start: int, end: int, spans: Sequence[Span]) -> bool:
    """Whether the union of ``spans`` covers every character of [start, end)."""
    cursor = start
    for s, e, _ in sorted(spans):
        if s > cursor:
            break
        cursor = max(cursor, e)
        if cursor >= end:
            return True
    return cursor >= end


def _overlaps(start: int, end: int, span: Span) -> bool:
    return span[0] < end and span[1] > start


def _context(text: str, start: int, end: int) -> str:
    return text[max(0, start - 30) : start] + "⟦" + text[start:end] + "⟧" + text[end : end + 30]


def score(items: Sequence[Item], detections: Sequence[Sequence[Span]]) -> Score:
    recall: Counter[str] = Counter()
    total: Counter[str] = Counter()
    variant_hits: Counter[str] = Counter()
    variant_total: Counter[str] = Counter()
    touched = distractors = strays = count = 0
    misses: list[dict[str, Any]] = []
    touched_examples: list[dict[str, Any]] = []
    stray_examples: list[dict[str, Any]] = []
    for item, spans in zip(items, detections, strict=True):
        text = item.text
        for label in item.pii:
            key = f"{label.kind}/{label.variant}"
            total[label.kind] += 1
            variant_total[key] += 1
            if _covered(label.start, label.end, spans):
                recall[label.kind] += 1
                variant_hits[key] += 1
            else:
                misses.append(
                    {
                        "kind": label.kind,
                        "format": label.variant,
                        "value": text[label.start : label.end],
                        "found": [
                            [text[s:e], k]
                            for s, e, k in spans
                            if _overlaps(label.start, label.end, (s, e, k))
                        ],
                        "context": _context(text, label.start, label.end),
                    }
                )
        for label in item.distractors:
            distractors += 1
            hits = [span for span in spans if _overlaps(label.start, label.end, span)]
            if hits:
                touched += 1
                touched_examples.append(
                    {
                        "distractor": label.kind,
                        "value": label.variant,
                        "found": [[text[s:e], k] for s, e, k in hits],
                        "context": _context(text, label.start, label.end),
                    }
                )
        for span in spans:
            count += 1
            if not any(_overlaps(label.start, label.end, span) for label in item.pii):
                strays += 1
                stray_examples.append(
                    {
                        "kind": span[2],
                        "found": text[span[0] : span[1]],
                        "context": _context(text, span[0], span[1]),
                    }
                )
    return Score(
        recall={k: (recall[k], total[k]) for k in KINDS},
        variants={k: (variant_hits[k], variant_total[k]) for k in sorted(variant_total)},
        distractors_touched=touched,
        distractors=distractors,
        false_scrubs=strays,
        detections=count,
        misses=misses,
        touched=touched_examples,
        strays=stray_examples,
    )


# The two scrubbers.


def faithmon_detections(texts: Sequence[str]) -> list[list[Span]]:
    scrubber = PiiScrubber(KEY, scope="global")
    return [[(f.start, f.end, f.kind) for f in scrubber.detect(text)] for text in texts]


def faithmon_pass(texts: Sequence[str]) -> float:
    """Seconds to scrub every text once with a fresh scrubber (all texts distinct: cache cold)."""
    scrubber = PiiScrubber(KEY, scope="global")
    started = time.perf_counter()
    for text in texts:
        scrubber.scrub_text(text)
    return time.perf_counter() - started


def faithmon_warm_pass(texts: Sequence[str]) -> float:
    """Seconds for a second pass over the same texts with the same scrubber: every text cached."""
    scrubber = PiiScrubber(KEY, scope="global")
    for text in texts:
        scrubber.scrub_text(text)
    started = time.perf_counter()
    for text in texts:
        scrubber.scrub_text(text)
    return time.perf_counter() - started


class Presidio:
    """``bench/_presidio_worker.py`` in Presidio's venv, spoken to in JSON lines."""

    def __init__(self, python: str) -> None:
        env = dict(os.environ)
        # tldextract: no fetch of the public-suffix list, use the snapshot it ships.
        env["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""
        env["TLDEXTRACT_CACHE"] = str(Path(tempfile.gettempdir()) / "faithmon-bench-tldextract")
        env.pop("PYTHONPATH", None)
        self.process = subprocess.Popen(
            [python, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Presidio worker stopped (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def load(self, texts: Sequence[str], nlp: str) -> tuple[list[list[Span]], float]:
        answer = self.ask(
            {"cmd": "load", "texts": list(texts), "entities": list(PRESIDIO_KINDS), "nlp": nlp}
        )
        detections = [
            [(s, e, PRESIDIO_KINDS.get(kind, kind)) for s, e, kind, _ in found]
            for found in answer["detections"]
        ]
        return detections, float(answer["setup_seconds"])

    def timed_pass(self) -> float:
        return float(self.ask({"cmd": "time"})["seconds"])

    def close(self) -> None:
        """Ask the worker to stop; end it if it does not within 30 s."""
        assert self.process.stdin is not None
        if self.process.poll() is None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# Output.


def number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def table(rows: Sequence[Sequence[str]], titles: Sequence[str], right: Sequence[bool]) -> list[str]:
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    return [line(titles), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def fraction(hit: int, total: int) -> str:
    return f"{hit / total:.3f}" if total else "–"


def status(met: bool) -> str:
    return "goal met" if met else "goal missed"


@dataclass(frozen=True, slots=True)
class System:
    name: str
    score: Score
    seconds: tuple[float, ...]
    covers: frozenset[str]
    """The PII kinds it has a recognizer for."""

    def texts_per_second(self, count: int) -> float:
        return count / statistics.median(self.seconds)


def render(
    header: str, ours: System, others: Sequence[System], count: int, megabytes: float
) -> tuple[str, dict[str, bool]]:
    baseline = others[0]
    titles = ("figure", ours.name, *(o.name for o in others), "ratio", "goal", "status")
    right = (False, True, *(True for _ in others), True, False, False)
    rows: list[list[str]] = []
    goals: dict[str, bool] = {}
    for kind in KINDS:
        hit, total = ours.score.recall[kind]
        cells = [
            fraction(*o.score.recall[kind]) if kind in o.covers else "n/a (no recognizer)"
            for o in others
        ]
        met = total > 0 and hit / total >= RECALL_GOAL
        goals[f"recall {kind}"] = met
        rows.append(
            [
                f"recall {kind} (n={total:,})",
                fraction(hit, total),
                *cells,
                "",
                f"≥ {RECALL_GOAL}",
                status(met),
            ]
        )

    def precision(system: System) -> str:
        s = system.score
        return f"{s.precision:.3f} ({s.distractors_touched} scrubbed)"

    met = ours.score.precision >= PRECISION_GOAL
    goals["precision"] = met
    rows.append(
        [
            f"precision (distractors, n={ours.score.distractors:,})",
            precision(ours),
            *(precision(o) for o in others),
            "",
            f"≥ {PRECISION_GOAL}",
            status(met),
        ]
    )
    rows.append(
        [
            "false scrubs (detections on no PII)",
            f"{ours.score.false_scrubs} of {ours.score.detections:,}",
            *(f"{o.score.false_scrubs} of {o.score.detections:,}" for o in others),
            "",
            "",
            "",
        ]
    )
    ours_tps = ours.texts_per_second(count)
    base_tps = baseline.texts_per_second(count)
    speed = ours_tps / base_tps
    goals["throughput"] = speed >= SPEED_GOAL
    rows.append(
        [
            "throughput, texts/s (faithmon cache cold)",
            number(ours_tps),
            *(number(o.texts_per_second(count)) for o in others),
            f"{speed:.1f}x",
            f"≥ {SPEED_GOAL:.0f}x",
            status(speed >= SPEED_GOAL),
        ]
    )
    rows.append(
        [
            "throughput, MB/s (UTF-8)",
            number(ours_tps * megabytes / count),
            *(number(o.texts_per_second(count) * megabytes / count) for o in others),
            f"{speed:.1f}x",
            "",
            "",
        ]
    )
    return "\n".join([header, "", *table(rows, titles, right)]), goals


def format_rows(ours: System, others: Sequence[System]) -> list[str]:
    """Recall by format, for the formats where some scrubber misses a value."""
    rows = []
    for key, (hit, total) in ours.score.variants.items():
        kind = key.split("/")[0]
        theirs = [
            o.score.variants.get(key, (0, total)) if kind in o.covers else None for o in others
        ]
        if hit == total and all(t is None or t[0] == total for t in theirs):
            continue
        rows.append(
            [
                f"{key} (n={total})",
                fraction(hit, total),
                *("n/a" if t is None else fraction(*t) for t in theirs),
            ]
        )
    if not rows:
        return []
    titles = ("recall by format (only formats below 1.000)", ours.name, *(o.name for o in others))
    return ["", *table(rows, titles, (False, True, *(True for _ in others)))]


def examples(score: Score, per_kind: int = 3) -> list[str]:
    """faithmon's misses and touched distractors, a few of each type."""
    out: list[str] = []
    shown: Counter[str] = Counter()
    for miss in score.misses:
        if shown[miss["kind"]] < per_kind:
            shown[miss["kind"]] += 1
            found = ", ".join(f"{v!r} as {k}" for v, k in miss["found"]) or "nothing"
            out.append(
                f"  missed {miss['kind']} ({miss['format']}): {miss['context']!r}; found {found}"
            )
    for hit in score.touched:
        if shown["d:" + hit["distractor"]] < per_kind:
            shown["d:" + hit["distractor"]] += 1
            found = ", ".join(f"{v!r} as {k}" for v, k in hit["found"])
            out.append(
                f"  scrubbed {hit['distractor']} {hit['value']!r}: {hit['context']!r} ({found})"
            )
    for stray in score.strays:
        if shown["s:" + stray["kind"]] < per_kind:
            shown["s:" + stray["kind"]] += 1
            out.append(f"  false scrub {stray['kind']} {stray['found']!r}: {stray['context']!r}")
    return ["", "faithmon's misses and false scrubs (a few of each type):", *out] if out else []


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="about 200 texts, 3 runs")
    parser.add_argument(
        "--presidio",
        default=DEFAULT_PRESIDIO,
        metavar="PYTHON",
        help=f"the Python of a venv with presidio-analyzer and presidio-anonymizer "
        f"(default {DEFAULT_PRESIDIO})",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if not Path(args.presidio).exists():
        parser.error(
            f"{args.presidio} not found: make a venv with "
            "`python3 -m venv /tmp/presidio-venv && /tmp/presidio-venv/bin/pip install "
            "presidio-analyzer presidio-anonymizer`, or pass --presidio"
        )

    started = time.perf_counter()
    items = Generator(SEED).corpus(sizes.texts)
    texts = [item.text for item in items]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    pii_count = sum(len(item.pii) for item in items)
    distractor_count = sum(len(item.distractors) for item in items)

    ours_detections = faithmon_detections(texts)
    presidio = Presidio(args.presidio)
    notes: list[str] = []
    try:
        probe = presidio.ask({"cmd": "probe"})
        presidio_detections, setup = presidio.load(texts, "no_op")
        faithmon_pass(texts)  # warm-up, as Presidio's load pass is
        ours_seconds: list[float] = []
        presidio_seconds: list[float] = []
        for _ in range(sizes.repetitions):
            ours_seconds.append(faithmon_pass(texts))
            presidio_seconds.append(presidio.timed_pass())
        warm = statistics.median(faithmon_warm_pass(texts) for _ in range(sizes.repetitions))
    finally:
        presidio.close()

    ours = System("faithmon", score(items, ours_detections), tuple(ours_seconds), frozenset(KINDS))
    presidio_name = f"Presidio {probe['presidio_analyzer']} patterns"
    covered = frozenset(PRESIDIO_KINDS.values())
    others = [
        System(
            presidio_name,
            score(items, presidio_detections),
            tuple(presidio_seconds),
            covered,
        )
    ]
    spacy_models: list[str] = probe["spacy_models"]
    spacy_seconds: list[float] = []
    if spacy_models:
        with_spacy = Presidio(args.presidio)
        try:
            spacy_detections, _ = with_spacy.load(texts, spacy_models[0])
            spacy_seconds = [with_spacy.timed_pass() for _ in range(sizes.repetitions)]
        finally:
            with_spacy.close()
        others.append(
            System(
                f"Presidio + {spacy_models[0]}",
                score(items, spacy_detections),
                tuple(spacy_seconds),
                covered,
            )
        )
    else:
        notes.append(
            "Presidio + spaCy: no official spaCy English model (en_core_web_sm/md/lg/trf) is "
            "installed in Presidio's venv, and none installs from PyPI under that name: "
            "no row for it."
        )
    elapsed = time.perf_counter() - started

    header = (
        f"faithmon scrub bench ({'quick' if args.quick else 'full'}): Python "
        f"{platform.python_version()} on {platform.machine()}, {len(texts):,} texts "
        f"({megabytes:.2f} MB), {pii_count:,} PII values, {distractor_count:,} distractors, "
        f"seed {SEED}, median of {sizes.repetitions} runs, {elapsed:.1f}s in all"
    )
    rendered, goals = render(header, ours, others, len(texts), megabytes)
    notes = [
        "recall = share of values with every character inside a detected span; precision = 1 - "
        "share of distractors any span touches",
        f"ratio = faithmon / {presidio_name} (the baseline, measured in the same run, "
        "runs taken in turn); texts are all distinct and each faithmon run uses a fresh "
        "PiiScrubber, so its cache never hits",
        f"faithmon with its cache warm (same texts again): {number(len(texts) / warm)} texts/s",
        f"Presidio: analyze + anonymize, entities {', '.join(PRESIDIO_KINDS)}, no-op NLP "
        f"engine (no model), score threshold 0; engine setup {setup:.1f}s not timed",
        *notes,
    ]
    print(rendered)
    print("\n" + "\n".join(notes))
    for line in format_rows(ours, others):
        print(line)
    for line in examples(ours.score):
        print(line)
    missed = [name for name, met in goals.items() if not met]
    print("\nall goals met" if not missed else f"\ngoals missed: {', '.join(missed)}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "seconds": elapsed,
        "seed": SEED,
        "corpus": {
            "texts": len(texts),
            "megabytes": megabytes,
            "pii_values": pii_count,
            "distractors": distractor_count,
        },
        "versions": {k: v for k, v in probe.items() if k != "spacy_models"},
        "spacy_models": spacy_models,
        "goals": {
            "recall": RECALL_GOAL,
            "precision": PRECISION_GOAL,
            "throughput_ratio": SPEED_GOAL,
            "met": goals,
        },
        "systems": [
            {
                "name": system.name,
                "texts_per_second": system.texts_per_second(len(texts)),
                "megabytes_per_second": system.texts_per_second(len(texts))
                * megabytes
                / len(texts),
                "seconds_per_pass": list(system.seconds),
                **system.score.as_json(),
            }
            for system in (ours, *others)
        ],
        "faithmon_warm_cache_texts_per_second": len(texts) / warm,
        "throughput_ratio": ours.texts_per_second(len(texts))
        / others[0].texts_per_second(len(texts)),
        "presidio_setup_seconds": setup,
        "notes": notes,
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        shown = RESULTS.relative_to(Path.cwd())
    except ValueError:
        shown = RESULTS
    print(f"\nwrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
