"""A sample RAG app: a help-centre knowledge base, a keyword retriever, a scripted model.

Everything is deterministic given a seed and needs no network. Model
``northwind-llm-1.0`` copies sentences from the top chunk (and now and then adds
a harmless unsupported remark); ``northwind-llm-1.1`` also invents facts. Retriever
``kb-2026.12``, a re-indexed knowledge base, returns another topic's chunks for part of
the shipping questions; a model given chunks that miss the question often answers from
what it remembers instead.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import faithmon_instrumentation as fm

SERVICE = "northwind-help"
RETRIEVER = "keyword"
RETRIEVER_VERSION = "kb-2026.11"
NEW_RETRIEVER_VERSION = "kb-2026.12"
NEW_RETRIEVER_ROUTE = "shipping"
OFF_TOPIC_SHARE = 0.7
"""Of the questions the new retriever serves, those it answers with another topic's chunks."""
OFF_TOPIC_DOCS = ("billing/invoices", "returns/exceptions")
STABLE_MODEL = "northwind-llm-1.0"
NEW_MODEL = "northwind-llm-1.1"
TENANTS = ("acme", "globex", "initech")

DOCS: dict[str, tuple[str, str]] = {
    "billing/invoices": (
        "billing",
        "Invoices are issued on the first business day of each month. "
        "You can download every invoice from the Billing page.",
    ),
    "billing/refunds": (
        "billing",
        "Refunds are sent to the original payment method within 5 "
        "business days. Questions about refunds go to billing@northwind.example.",
    ),
    "billing/plans": (
        "billing",
        "The Team plan costs 12 euros per user per month. Annual billing saves 15 percent.",
    ),
    "billing/failed-payments": (
        "billing",
        "Failed card payments are retried after 3 days. "
        "After three failed attempts the account is paused.",
    ),
    "shipping/times": (
        "shipping",
        "Standard shipping takes 3 to 5 business days within the EU. "
        "Express shipping arrives the next business day when ordered before 14:00.",
    ),
    "shipping/tracking": (
        "shipping",
        "Every parcel gets a tracking number by e-mail once it "
        "leaves the warehouse. Tracking updates appear within 24 hours.",
    ),
    "shipping/fees": (
        "shipping",
        "Orders over 50 euros ship for free. Smaller orders pay a flat shipping fee of 4.90 euros.",
    ),
    "shipping/courier": (
        "shipping",
        "For delivery problems call the courier desk at "
        "+44 20 7946 0958. The desk is open from 8:00 to 18:00 on weekdays.",
    ),
    "returns/window": (
        "returns",
        "Items can be returned within 30 days of delivery. "
        "Returned items must be unused and in their original packaging.",
    ),
    "returns/labels": (
        "returns",
        "Return labels are free for customers in the EU. "
        "Print the label from the Orders page and drop the parcel at a post office.",
    ),
    "returns/inspection": (
        "returns",
        "Refunds for returns are issued once the warehouse has "
        "inspected the item. Inspection takes up to 2 business days.",
    ),
    "returns/exceptions": (
        "returns",
        "Sale items can be exchanged but not refunded. Gift cards cannot be returned.",
    ),
}

QUESTIONS: dict[str, tuple[str, ...]] = {
    "billing": (
        "When are invoices issued each month?",
        "Where can I download my invoice?",
        "How long do refunds take to reach my payment method?",
        "How much does the Team plan cost per user?",
        "What happens when my card payment fails?",
        "I am {email}; how many days until my refund arrives on my payment method?",
    ),
    "shipping": (
        "How long does standard shipping take within the EU?",
        "When does express shipping arrive?",
        "How do I get a tracking number for my parcel?",
        "Which orders ship for free?",
        "Who do I call about delivery problems with the courier?",
        "Call me on {phone} please: how long does standard shipping take?",
    ),
    "returns": (
        "How many days do I have to return items after delivery?",
        "Are return labels free in the EU?",
        "When are refunds for returns issued after inspection?",
        "Can sale items be refunded?",
        "Can gift cards be returned?",
    ),
}
OUT_OF_SCOPE = ("What is the weather like in Lisbon today?", "Tell me a joke about penguins.")
EMAILS = ("jane.doe@example.com", "Tom.Berg@example.org", "li.wei@example.net")
PHONES = ("+44 20 7946 0123", "+1 212 555 0147", "+49 30 901820")

FILLER = "Our support team is happy to help with anything else."
INVENTED = {
    "billing": (
        "Refunds usually reach your account within 24 hours.",
        "The Team plan includes a free month for every new user.",
    ),
    "shipping": (
        "Express shipping is free for every order.",
        "Parcels are always delivered on Saturdays as well.",
    ),
    "returns": (
        "Items can be returned within 90 days, even when used.",
        "Gift cards can be refunded to any bank account.",
    ),
}
REMEMBERED = {
    # What a model says from memory when its chunks miss the question: plausible, and
    # in no chunk it was given.
    "billing": ("Invoices are e-mailed on the 15th of each month.",),
    "shipping": (
        "Standard shipping takes 2 business days.",
        "Express orders placed before noon arrive the same day.",
        "Tracking numbers are sent by text message.",
    ),
    "returns": ("Returns are accepted within 14 days.",),
}

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the and or of to in on for is are do does i my me how what when where "
    "which who can per each about with please am until".split()
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


@dataclass(frozen=True, slots=True)
class Request:
    question: str
    route: str
    tenant: str
    model: str
    retriever_version: str = RETRIEVER_VERSION


def _chunk(doc_id: str, score: float) -> dict[str, object]:
    return {
        "id": doc_id,
        "text": DOCS[doc_id][1],
        "score": round(score, 3),
        "metadata": {"source": "help-centre"},
    }


def retrieve(
    question: str, k: int = 2, version: str = RETRIEVER_VERSION, rng: random.Random | None = None
) -> list[dict[str, object]]:
    """Keyword overlap over the knowledge base; nothing when nothing overlaps. The new
    version's index sends part of its questions to another topic's chunks."""
    if version == NEW_RETRIEVER_VERSION and rng is not None and rng.random() < OFF_TOPIC_SHARE:
        return [_chunk(doc_id, 0.5) for doc_id in OFF_TOPIC_DOCS[:k]]
    asked = _words(question)
    scored = []
    for doc_id, (_, text) in DOCS.items():
        overlap = len(asked & _words(text))
        if overlap:
            scored.append((overlap / len(asked), doc_id))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [_chunk(doc_id, score) for score, doc_id in scored[:k]]


def _off_topic(request: Request, chunks: list[dict[str, object]]) -> bool:
    """What the scripted model 'notices': none of its chunks is of the question's topic."""
    return all(DOCS[str(c["id"])][0] != request.route for c in chunks)


def generate(request: Request, chunks: list[dict[str, object]], rng: random.Random) -> str:
    if not chunks:
        return "I'm sorry, I can't find that in our help centre."
    missed = request.retriever_version == NEW_RETRIEVER_VERSION and _off_topic(request, chunks)
    if missed and rng.random() < 0.8:
        # The chunks miss the question: the model fills the gap from memory. (Only behind
        # the new index, so the traffic of earlier stories draws the same numbers.)
        return rng.choice(REMEMBERED[request.route])
    top = str(chunks[0]["text"])
    first, _, rest = top.partition(". ")
    # The model cites its sources; the new one sometimes names the wrong chunk.
    cite = 2 if request.model == NEW_MODEL and len(chunks) > 1 and rng.random() < 0.3 else 1
    sentences = [f"{first.rstrip('.')} [{cite}]."]
    if rest and rng.random() < 0.5:
        sentences.append(f"{rest.rstrip('.')} [1].")
    if request.model == NEW_MODEL and rng.random() < 0.6:
        sentences.append(rng.choice(INVENTED[request.route]))
    elif rng.random() < 0.04:
        sentences.append(FILLER)
    return " ".join(sentences)


def make_request(
    rng: random.Random, new_model_share: float, new_retriever_share: float = 0.0
) -> Request:
    route = rng.choice(tuple(QUESTIONS))
    if rng.random() < 0.03:
        question = rng.choice(OUT_OF_SCOPE)
    else:
        question = rng.choice(QUESTIONS[route]).format(
            email=rng.choice(EMAILS), phone=rng.choice(PHONES)
        )
    model = NEW_MODEL if rng.random() < new_model_share else STABLE_MODEL
    version = RETRIEVER_VERSION
    if new_retriever_share and route == NEW_RETRIEVER_ROUTE and rng.random() < new_retriever_share:
        version = NEW_RETRIEVER_VERSION
    return Request(question, route, rng.choice(TENANTS), model, version)


def handle(request: Request, rng: random.Random) -> str:
    """Serve one request, instrumented with faithmon's shim."""
    with fm.rag_span(request.question, route=request.route, tenant=request.tenant) as rag:
        chunks = retrieve(request.question, version=request.retriever_version, rng=rng)
        rag.record_retrieval(
            chunks, retriever=RETRIEVER, retriever_version=request.retriever_version
        )
        answer = generate(request, chunks, rng)
        rag.record_answer(answer, model=request.model)
    return answer
