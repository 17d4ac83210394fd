"""Shared privacy-test helpers: a Faker corpus (fixed seed) full of PII, and the forms of a raw
value that must not appear anywhere."""

from __future__ import annotations

import random
import re
from typing import Any

from faker import Faker

AREA_CODES = ("212", "312", "415", "617", "646", "303")
SUFFIXES = ("Street", "St", "Ave", "Road", "Lane", "Blvd", "Drive")


def phone(rng: random.Random) -> str:
    area = rng.choice(AREA_CODES)
    exchange = rng.randint(201, 899)
    line = rng.randint(1000, 9999)
    return rng.choice(
        [f"({area}) {exchange}-{line}", f"+1 {area} {exchange} {line}", f"{area}-{exchange}-{line}"]
    )


def corpus(count: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Records with PII in question, chunks and answer, and every raw value to hunt for."""
    fake = Faker("en_US")
    fake.seed_instance(20261129)
    rng = random.Random(20261129)
    records, raw = [], []
    for n in range(count):
        values = {
            "email": fake.email(),
            "phone": phone(rng),
            "card": fake.credit_card_number(card_type=rng.choice(["visa", "mastercard", "amex"])),
            "iban": fake.iban(),
            "ssn": fake.ssn(),
            "ip": fake.ipv4_public() if n % 2 else fake.ipv6(),
            "secret": rng.choice(
                [
                    "sk-proj-" + fake.pystr(min_chars=32, max_chars=32),
                    "AKIA" + "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", k=16)),
                    "ghp_" + fake.pystr(min_chars=36, max_chars=36),
                ]
            ),
        }
        raw.extend(values.values())
        first, last = fake.first_name(), fake.last_name()
        street = f"{fake.building_number()} {fake.last_name()} {rng.choice(SUFFIXES)}"
        city = fake.city()
        address = f"{street}, {city}, {fake.state_abbr()} {fake.zipcode()}"
        raw += [f"{first} {last}", last, street, city]
        # "owner", not "holder": Faker draws the surname Holder, hunted in lower case too.
        chunk = (
            f"Account owner {values['email']} (phone {values['phone']}) pays by card "
            f"{values['card']} or from IBAN {values['iban']}. Order A{n}7 of 3 March 2026 "
            f"cost 12.50 euros and ships within 30 days. Login from {values['ip']}."
        )
        records.append(
            {
                "question": (
                    f"Hi, my name is {first} {last}. I am {values['email']}, SSN "
                    f"{values['ssn']}. Will order A{n}7 reach {address}?"
                ),
                "chunks": [
                    chunk,
                    f"Support notes: rotate key {values['secret']} after use.",
                    f"customer_name: {first} {last}; ships to {address}.",
                ],
                "answer": (
                    f"Thanks {first} {last}, we will write to {values['email']} about order "
                    f"A{n}7; it goes to {address}, and {last} signs for it."
                ),
            }
        )
    return records, raw


def variants(value: str) -> set[str]:
    """The raw value and its normalised forms, all of which must be absent."""
    found = {value, value.lower()}
    digits = re.sub(r"\D", "", value)
    if len(digits) >= 9 and not re.search(r"[a-zA-Z]", value.replace("x", "")):
        found.add(digits)
    if re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9 ]+", value):
        found.add(value.replace(" ", ""))
    return found
