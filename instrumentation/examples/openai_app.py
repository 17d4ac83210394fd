"""A RAG app that calls an OpenAI-compatible chat endpoint with the ``openai`` client.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=... \\
        python instrumentation/examples/openai_app.py --endpoint http://127.0.0.1:4318

``@generator`` reads the answer from the chat completion the function returns;
the app needs the ``openai`` package besides faithmon-instrumentation.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

import faithmon_instrumentation as fm

MODEL = os.environ.get("EXAMPLE_MODEL", "gpt-4o-mini")
KNOWLEDGE = [
    {"id": "kb-7", "text": "The Team plan costs 12 euros per user per month.", "score": 0.92},
    {"id": "kb-9", "text": "Annual billing saves 15 percent.", "score": 0.71},
]
client = AsyncOpenAI()


@fm.retriever(name="static", version="1")
async def retrieve(question: str) -> list[dict[str, object]]:
    return KNOWLEDGE


@fm.generator(model=MODEL, temperature=0)
async def generate(question: str, chunks: list[dict[str, object]]) -> ChatCompletion:
    context = "\n".join(f"[{i}] {c['text']}" for i, c in enumerate(chunks))
    return await client.chat.completions.create(
        model=MODEL,
        temperature=0,
        messages=[
            {"role": "system", "content": "Answer only from the numbered context."},
            {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"},
        ],
    )


async def answer(question: str) -> str:
    async with fm.rag_span(question, route="pricing", prompt_version="p1"):
        chunks = await retrieve(question)
        completion = await generate(question, chunks)
        return completion.choices[0].message.content or ""


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", default=None, help="faithmon serve (OTLP/HTTP) base URL")
    args = parser.parse_args()
    fm.setup(endpoint=args.endpoint, service_name="openai-example")
    print(await answer("How much does the Team plan cost?"))
    await client.close()
    fm.flush()


if __name__ == "__main__":
    asyncio.run(main())
