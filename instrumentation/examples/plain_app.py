"""A plain-Python RAG app instrumented with faithmon_instrumentation.

    python instrumentation/examples/plain_app.py --endpoint http://127.0.0.1:4318

Retrieval and generation are ordinary functions; two decorators and one
``rag_span`` are all the instrumentation it needs.
"""

from __future__ import annotations

import argparse
import re

import faithmon_instrumentation as fm

DOCS = {
    "returns": "Items can be returned within 30 days of delivery.",
    "shipping": "Standard shipping takes 3 to 5 business days.",
    "refunds": "Refunds reach the original payment method within 5 business days.",
}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@fm.retriever(name="keyword", version="2026-11")
def retrieve(question: str) -> list[dict[str, object]]:
    asked = _words(question)
    ranked = sorted(DOCS.items(), key=lambda item: -len(asked & _words(item[1])))
    return [{"id": doc_id, "text": text} for doc_id, text in ranked[:2]]


@fm.generator(model="template-v1")
def generate(question: str, chunks: list[dict[str, object]]) -> str:
    return str(chunks[0]["text"]) if chunks else "I don't know."


def answer(question: str, route: str) -> str:
    with fm.rag_span(question, route=route, tenant="example") as rag:
        chunks = retrieve(question)
        rag.record_context(chunks[:1])  # only the top chunk goes into the prompt
        return generate(question, chunks[:1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", default=None, help="faithmon serve (OTLP/HTTP) base URL")
    args = parser.parse_args()
    fm.setup(endpoint=args.endpoint, service_name="plain-example")
    for question, route in [
        ("How many days do I have to return items?", "returns"),
        ("How long does standard shipping take?", "shipping"),
    ]:
        print(answer(question, route))
    fm.flush()


if __name__ == "__main__":
    main()
