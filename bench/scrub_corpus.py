"""The scrubber bench's two corpora: support-bot texts generated from one seed, each with
0-3 PII values at known character offsets among values that must survive, and a
hand-written fixture (``bench/data/scrub_handwritten.jsonl``) in formats the generator
does not produce."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scrub_values import Value, Values

GENERATED_KINDS = ("EMAIL", "PHONE", "CARD", "IBAN", "SSN", "IP", "SECRET")
"""The PII families the generator plants (and pattern families: a checksum or format)."""
NAME_KINDS = ("PERSON", "ADDRESS")
"""Families only the hand-written corpus holds, which no pattern alone can find."""
KINDS = GENERATED_KINDS + NAME_KINDS
HANDWRITTEN = Path(__file__).resolve().parent / "data" / "scrub_handwritten.jsonl"


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


class Generator(Values):
    """Labelled support-bot texts; every value and format drawn from one seed."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
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
        kinds = rng.choices(GENERATED_KINDS, k=rng.choices([0, 1, 2, 3], weights=[2, 4, 3, 2])[0])
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


def load_handwritten(path: Path = HANDWRITTEN) -> list[Item]:
    """The hand-written corpus: one JSON object a line, offsets computed here.

    Each line is ``{"text": ..., "pii": [[value, FAMILY, format], ...],
    "distractors": [[value, family], ...]}``:

    - ``text``: one support-bot text (chat turn, e-mail, log line, JSON payload ...).
    - ``pii``: each labelled value as its exact substring of ``text``, its family (one
      of ``KINDS``) and a free-form format tag (``angle``, ``tel-uri``, ``uk-house-name``,
      ...); the tag may be left out (it is then ``hand``).
    - ``distractors``: values that must never be scrubbed, as exact substring and
      family (``version``, ``isbn``, ``doc_ip``, ``card_last4``, ``place``, ...).

    Offsets: the labels of a line, PII and distractors together, are placed longest
    first, each at the first occurrence of its substring (left to right) that overlaps
    no label placed before it. So a value repeated in a text is listed once per
    occurrence, and a short distractor (``4242``) that also occurs inside a longer
    labelled value (a card number) lands on its own occurrence. A substring that cannot
    be placed, or an unknown family, raises ``ValueError`` naming the line.
    """
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        entry = json.loads(line)
        text: str = entry["text"]
        wanted = [
            (str(v[0]), str(v[1]), str(v[2]) if len(v) > 2 else "hand", True) for v in entry["pii"]
        ]
        wanted += [(str(v[0]), str(v[1]), str(v[0]), False) for v in entry["distractors"]]
        taken: list[tuple[int, int]] = []
        item = Item(text)
        for value, kind, variant, is_pii in sorted(wanted, key=lambda w: -len(w[0])):
            if is_pii and kind not in KINDS:
                raise ValueError(f"{path.name}:{number}: unknown PII family {kind!r}")
            start = _free_occurrence(text, value, taken)
            if start < 0:
                raise ValueError(f"{path.name}:{number}: {value!r} is not (again) in the text")
            taken.append((start, start + len(value)))
            label = Label(start, start + len(value), kind, variant)
            (item.pii if is_pii else item.distractors).append(label)
        item.pii.sort(key=lambda label: label.start)
        item.distractors.sort(key=lambda label: label.start)
        items.append(item)
    return items


def _free_occurrence(text: str, value: str, taken: Sequence[tuple[int, int]]) -> int:
    """The first index of ``value`` in ``text`` that overlaps none of ``taken``, or -1."""
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        if not any(s < end and e > start for s, e in taken):
            return start
        start = text.find(value, start + 1)
    return -1


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
