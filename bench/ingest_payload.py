"""The ingest bench's payload: help-centre RAG traces written by the shim, about a third
of their chunks holding an e-mail address or a phone number, encoded before timing into
ExportTraceServiceRequest bodies of 100 traces."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from common import by_trace, encode_bodies
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import faithmon_instrumentation as fm

SERVICE = "northwind-help"
SEED = 11
TRACES_PER_REQUEST = 100
SPANS_PER_TRACE = 3
CHUNKS = 10
CHUNK_BYTES = 1024
# The knowledge-base chunks repeated chunks are drawn from: fewer than the scrubber's
# cache holds, as a help centre's most cited articles would be.
SHARED_CHUNKS = 500
# Share of chunks that hold an e-mail address or a phone number.
PII_SHARE = 0.3


_FIRST = "anna ben chloe david emma felix grace hugo iris jonas karen liam mia noah".split()
_LAST = "schmidt martin rossi novak jansen silva keller dubois berg costa weber ward".split()
_DOMAINS = ("northwind.example", "acme.example", "mail.example.org", "globex.example.com")
_CITIES = "Lisbon Hamburg Lyon Turin Gdansk Utrecht Leeds Porto Graz Malmo Bilbao Cork".split()
_PRODUCTS = (
    "standing desk",
    "noise-cancelling headset",
    "espresso grinder",
    "trail backpack",
    "USB-C dock",
    "linen duvet cover",
    "cast-iron skillet",
    "e-reader",
    "office chair",
    "rain jacket",
)
_SECTIONS = ("billing", "shipping", "returns", "account", "warranty")
_TENANTS = ("acme", "globex", "initech", "umbrella", "hooli")
_MODELS = ("northwind-llm-1.0", "northwind-llm-1.1")

_SENTENCES: dict[str, tuple[str, ...]] = {
    "billing": (
        "Invoices for order {order} are issued on the {day} business day of the month.",
        "The Team plan costs {amount} euros per user per month, billed in {city}.",
        "Annual billing saves {percent} percent against paying month by month.",
        "Failed card payments are retried after {days} days, then the account is paused.",
        "A refund of {amount} euros reaches the original payment method within {days} days.",
        "VAT is shown on every invoice; customers in {city} see it in local currency.",
        "Credit notes for the {product} are listed on the Billing page under Adjustments.",
    ),
    "shipping": (
        "Standard shipping to {city} takes {days} to {days2} business days.",
        "Express orders placed before {hour}:00 leave the warehouse the same day.",
        "Every parcel gets a tracking number once it leaves the {city} warehouse.",
        "Orders over {amount} euros ship for free; smaller ones pay a flat fee.",
        "Bulky items such as the {product} travel by freight and need a delivery slot.",
        "Tracking updates for order {order} appear within {hours} hours of dispatch.",
        "Parcels that cannot be delivered wait {days} days at the local depot in {city}.",
    ),
    "returns": (
        "Items can be returned within {days} days of delivery if unused.",
        "Return labels are free for customers in {city} and most of the EU.",
        "The warehouse inspects returned items within {days} business days.",
        "Refunds for the {product} are issued once inspection is complete.",
        "Sale items can be exchanged but not refunded; gift cards cannot be returned.",
        "Return order {order} by dropping the parcel at any post office.",
        "A restocking fee of {percent} percent applies to opened electronics.",
    ),
    "account": (
        "Two-factor authentication can be turned on from the Security tab.",
        "Team owners can invite up to {count} members on the Team plan.",
        "Password reset links expire after {hours} hours for your safety.",
        "Accounts inactive for {days} months are archived but not deleted.",
        "The audit log keeps {count} days of sign-in history for each workspace.",
        "Single sign-on is available for workspaces based in {city} and elsewhere.",
    ),
    "warranty": (
        "The {product} carries a {count}-month warranty from the delivery date.",
        "Warranty claims need the order number, such as {order}, and a photo.",
        "Repairs are handled by our service partner in {city} within {days} days.",
        "Accidental damage to the {product} is not covered by the standard warranty.",
        "Extended cover adds {count} months for {amount} euros.",
    ),
}

_QUESTIONS = (
    "How long does a refund for order {order} take?",
    "When will my {product} arrive in {city}?",
    "Can I return the {product} after {days} days?",
    "Why was my card charged {amount} euros twice?",
    "How do I add {count} people to my team?",
    "Is the {product} still under warranty?",
    "Where is my parcel for order {order}?",
    "What does express shipping to {city} cost?",
)


def _fill(template: str, rng: random.Random) -> str:
    days = rng.randint(2, 30)
    return template.format(
        order=f"NW-{rng.randint(100000, 999999)}",
        day=rng.choice(("first", "second", "third", "last")),
        amount=f"{rng.randint(5, 900)}.{rng.randint(0, 99):02d}",
        percent=rng.randint(5, 25),
        days=days,
        days2=days + rng.randint(1, 4),
        hours=rng.randint(2, 72),
        hour=rng.randint(10, 16),
        count=rng.randint(3, 50),
        city=rng.choice(_CITIES),
        product=rng.choice(_PRODUCTS),
    )


def _email(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}{rng.randint(1, 99)}@{rng.choice(_DOMAINS)}"


def _phone(rng: random.Random) -> str:
    return rng.choice(
        (
            f"+44 20 7946 0{rng.randint(100, 999)}",
            f"(415) 555-01{rng.randint(10, 99)}",
            f"+1 646 555 {rng.randint(1000, 9999)}",
            f"+33 1 42 68 {rng.randint(10, 99)} {rng.randint(10, 99)}",
        )
    )


_CONTACT_EMAIL = "Questions about this go to"
_CONTACT_PHONE = "For urgent cases call"


def _contact(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{_CONTACT_EMAIL} {_email(rng)}, answered within one business day."
    return f"{_CONTACT_PHONE} {_phone(rng)} between 8:00 and 18:00 on weekdays."


def _chunk_text(section: str, rng: random.Random) -> str:
    sentences = [_fill(rng.choice(_SENTENCES[section]), rng) for _ in range(3)]
    if rng.random() < PII_SHARE:
        sentences.insert(rng.randint(0, len(sentences)), _contact(rng))
    body = " ".join(sentences)
    while len(body) < CHUNK_BYTES - 60:
        other = rng.choice(_SECTIONS)
        body += " " + _fill(rng.choice(_SENTENCES[other]), rng)
    return body


@dataclass(frozen=True, slots=True)
class Trace:
    question: str
    route: str
    tenant: str
    chunks: list[dict[str, object]]
    answer: str
    model: str


def _trace(rng: random.Random, shared: list[tuple[str, str]], repeat: float) -> Trace:
    route = rng.choice(_SECTIONS)
    question = _fill(rng.choice(_QUESTIONS), rng)
    if rng.random() < 0.1:
        question += f" My e-mail is {_email(rng)}."
    chunks: list[dict[str, object]] = []
    for i in range(CHUNKS):
        if shared and rng.random() < repeat:
            doc, text = rng.choice(shared)  # a knowledge-base chunk other traces cite too
        else:
            doc = f"kb-{route}-{rng.randint(1, 5000)}"
            text = _chunk_text(route if i < 6 else rng.choice(_SECTIONS), rng)
        chunks.append(
            {
                "id": doc,
                "text": text,
                "score": round(0.95 - i * 0.05 - rng.random() * 0.02, 4),
                "metadata": {"source": f"help-centre/{route}", "updated": f"2026-{i % 12 + 1:02d}"},
            }
        )
    top = str(chunks[0]["text"]).split(". ")
    answer = ". ".join(top[: rng.randint(1, 3)]).rstrip(".") + "."
    return Trace(question, route, rng.choice(_TENANTS), chunks, answer, rng.choice(_MODELS))


@dataclass(frozen=True, slots=True)
class Payload:
    bodies: list[bytes]
    traces: int
    spans: int
    chunk_bytes: float
    pii_chunks: int

    @property
    def body_bytes(self) -> int:
        return sum(len(b) for b in self.bodies)


def make_payload(requests: int, repeat: float = 0.0) -> Payload:
    """``requests`` OTLP bodies of TRACES_PER_REQUEST shim traces each; with ``repeat``,
    that share of chunks is drawn from SHARED_CHUNKS chunks that recur across traces."""
    rng = random.Random(SEED)
    shared = [
        (f"kb-shared-{n}", _chunk_text(_SECTIONS[n % len(_SECTIONS)], rng))
        for n in range(SHARED_CHUNKS if repeat else 0)
    ]
    traces = [_trace(rng, shared, repeat) for _ in range(requests * TRACES_PER_REQUEST)]
    exporter = InMemorySpanExporter()
    fm.setup(service_name=SERVICE, processors=[SimpleSpanProcessor(exporter)], export=False)
    try:
        for t in traces:
            with fm.rag_span(t.question, route=t.route, tenant=t.tenant) as rag:
                rag.record_retrieval(t.chunks, retriever="bench-kb", retriever_version="v3")
                rag.record_answer(t.answer, model=t.model, temperature=0.2)
    finally:
        fm.shutdown()
    spans = exporter.get_finished_spans()
    grouped = by_trace(spans)
    if len(grouped) != len(traces) or len(spans) != len(traces) * SPANS_PER_TRACE:
        raise RuntimeError(
            f"expected {len(traces)} traces, got {len(grouped)} ({len(spans)} spans)"
        )
    texts = [str(c["text"]) for t in traces for c in t.chunks]
    return Payload(
        bodies=encode_bodies(grouped, TRACES_PER_REQUEST),
        traces=len(traces),
        spans=len(spans),
        chunk_bytes=statistics.mean(len(s.encode()) for s in texts),
        pii_chunks=sum(_CONTACT_EMAIL in s or _CONTACT_PHONE in s for s in texts),
    )
