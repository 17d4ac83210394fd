"""No raw PII reaches the database, a log line or a judge request; faithfulness survives.

A corpus generated with Faker (fixed seed) embeds every pattern entity, a person's
name and a street address in support-bot questions, chunks and answers, next to values
that must stay. It goes in over OTLP to `faithmon serve` and out through the worker's
scoring job.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
from collections.abc import Sequence

import pytest
from sqlalchemy import select

import faithmon_instrumentation as fm
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Judgement
from faithmon.store import engine as store_engine
from faithmon.store.tables import Base
from tests.e2e.pii import corpus, variants

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


class RecordingJudge:
    """The offline judge, keeping every request it is given."""

    def __init__(self) -> None:
        self.inner = OfflineJudge()
        self.requests: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        self.requests.append(json.dumps([question, list(chunks), answer]))
        return self.inner.judge(question, chunks, answer)


def appears(form: str, text: str) -> bool:
    """``form`` is in ``text``; a name, surname or town as a whole word, since "Li" or
    "Tran" inside "billing" or "transport" is no leak."""
    if form not in text or not form.replace(" ", "").isalpha():
        return form in text
    return re.search(rf"(?<![^\W\d_]){re.escape(form)}(?![^\W\d_])", text) is not None


@pytest.mark.usefixtures("database_url")
def test_no_raw_pii_anywhere_and_faithfulness_survives(
    env: dict[str, str],
    server: tuple[str, subprocess.Popen[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A leak hunt over every table, every log line and every judge request finds nothing."""
    url, process = server
    records, raw_values = corpus(300)
    fm.setup(endpoint=url, service_name="privacy-app")
    trace_ids = []
    try:
        for record in records:
            with fm.rag_span(record["question"], route="billing") as rag:
                rag.record_retrieval(record["chunks"])
                rag.record_answer(record["answer"], model="m1")
                trace_ids.append(rag.trace_id)
        # Consistency: shared values keep the answer faithful; a changed one does not.
        iban, other = "DE89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32"
        chunk = f"Refunds for jane@example.com go to IBAN {iban}."
        for answer in (chunk, f"Refunds for jane@example.com go to IBAN {other}."):
            with fm.rag_span("Where do refunds go?", route="consistency") as rag:
                rag.record_retrieval([chunk])
                rag.record_answer(answer, model="m1")
        raw_values += [iban, other, "jane@example.com"]
        assert fm.flush()
    finally:
        fm.shutdown()
    process.send_signal(signal.SIGTERM)
    _, server_log = process.communicate(timeout=60)

    judge = RecordingJudge()
    engine = store_engine.make_engine(env["FAITHMON_DATABASE_URL"])
    sessions = store_engine.session_factory(engine)
    with caplog.at_level(logging.DEBUG):
        assert score_pending(sessions, judge) == len(records) + 2
    dump = []
    with engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            dump += [repr(tuple(row)) for row in connection.execute(select(table))]
        evaluations = Base.metadata.tables["evaluations"]
        record_table = Base.metadata.tables["records"]
        consistency = [
            json.loads(row.claims) if isinstance(row.claims, str) else row.claims
            for row in connection.execute(
                select(evaluations.c.claims)
                .join(record_table, record_table.c.id == evaluations.c.record_id)
                .where(record_table.c.question == "Where do refunds go?")
                .order_by(record_table.c.started_at)
            )
        ]
    engine.dispose()

    haystacks = {
        "database": "\n".join(dump),
        "server log": server_log,
        "worker log": caplog.text,
        "judge requests": "\n".join(judge.requests),
    }
    assert len(judge.requests) == len(records) + 2
    leaks = [
        (where, value)
        for value in raw_values
        for form in variants(value)
        for where, text in haystacks.items()
        if appears(form, text)
    ]
    assert leaks == []
    assert "<EMAIL_" in haystacks["database"] and "<IBAN_" in haystacks["judge requests"]
    for kind in ("PERSON", "ADDRESS"):
        assert f"<{kind}_" in haystacks["database"] and f"<{kind}_" in haystacks["judge requests"]
    assert "Order A07 of 3 March 2026 cost 12.50 euros" in haystacks["database"]
    kept, changed = consistency
    assert [c["verdict"] for c in kept] == ["supported"]
    assert [c["verdict"] for c in changed] != ["supported"]
