"""The values the scrubber bench plants in its texts: PII in many formats, and values
that must survive (order ids, dates, prices, codes, ...), each from one seeded source."""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import string
from dataclasses import dataclass
from typing import Any

import phonenumbers
from faker import Faker


@dataclass(frozen=True, slots=True)
class Value:
    """A generated value with the text that must stand around it (``Bearer ``, ``SSN ``)."""

    value: str
    variant: str
    before: str = ""
    after: str = ""


ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


class Values:
    """Every PII and distractor value, drawn from ``random`` and Faker under one seed."""

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


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0
