"""Claims as stored JSON: one shape with a version, written by ``model.claim_to_json`` and
read by ``model.claim_from_json``, which still reads every shape stored before it (on
SQLite and PostgreSQL), and a claim survives the trip whole."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import insert, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import CLAIM_VERSION, Claim, Judgement, claim_from_json, claim_to_json
from faithmon.store import evaluations, records
from faithmon.store.reads_traces import load_trace
from faithmon.store.tables import EvaluationRow, RecordRow
from tests.store.factory import make_record, stored_records

V1_TODAY = {
    # What save_evaluation wrote before the version key: asdict(Claim) as JSON, every
    # field of the Claim of the time, tuples as lists.
    "text": "It costs 40 euros.",
    "verdict": "partial",
    "chunk": 1,
    "quote": "costs",
    "critical": True,
    "flags": ["evidence_mismatch"],
    "confidence": 0.8,
    "stage": "llm",
    "rationale": "The price differs.",
    "critical_rule": "amount",
    "missing": "40 euros",
    "citations": [1, 2],
    "citation": "wrong",
}
V1_FIRST = {
    # The walking skeleton's Claim: six fields, before confidence, stage and the rest.
    "text": "Order A17 shipped.",
    "verdict": "supported",
    "chunk": 0,
    "quote": "shipped",
    "critical": False,
    "flags": [],
}
FUTURE = {
    # A newer faithmon's row: a version this code does not know, with a field it lacks.
    "v": CLAIM_VERSION + 1,
    "text": "It arrives tomorrow.",
    "verdict": "unsupported",
    "chunk": None,
    "critical": True,
    "severity": 0.9,
}
EXPECTED = (
    Claim(
        "It costs 40 euros.",
        "partial",
        chunk=1,
        quote="costs",
        critical=True,
        flags=("evidence_mismatch",),
        confidence=0.8,
        stage="llm",
        rationale="The price differs.",
        critical_rule="amount",
        missing="40 euros",
        citations=(1, 2),
        citation="wrong",
    ),
    Claim("Order A17 shipped.", "supported", chunk=0, quote="shipped"),
    Claim("It arrives tomorrow.", "unsupported", critical=True),
)


def _stored_raw(sessions: sessionmaker[Session], claims: list[dict[str, Any]]) -> int:
    """A record with one evaluation whose claims column holds ``claims`` as given."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1)])
        [record_id] = session.scalars(select(RecordRow.id)).all()
        session.execute(
            insert(EvaluationRow).values(
                record_id=record_id,
                judge="offline/old",
                status="ok",
                faithfulness=1 / 3,
                lenient=2 / 3,
                claims=claims,
                usage={"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "retries": 0},
                latency_ms=1.0,
                created_at=datetime.now(UTC),
            )
        )
        return record_id


def test_evaluations_stored_before_the_version_key_still_read(
    sessions: sessionmaker[Session],
) -> None:
    """Rows in today's unversioned shape, the first one's and a future version's with an
    unknown key all read back, through every reader of the column."""
    _stored_raw(sessions, [V1_TODAY, V1_FIRST, FUTURE])
    with sessions() as session:
        [stored] = stored_records(session)
        detail = load_trace(session, make_record(1).trace_id)
        [outcome] = evaluations.outcomes(session, "offline/old")
    assert detail is not None
    assert stored.evaluations[0].claims == EXPECTED
    assert detail.evaluations[0].judgement.claims == EXPECTED
    assert outcome.unsupported_claims == ("It costs 40 euros.", "It arrives tomorrow.")
    assert outcome.critical


def test_written_claims_carry_the_version_and_read_back_whole(
    sessions: sessionmaker[Session],
) -> None:
    """save_evaluation writes the versioned shape, and every field comes back."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1)])
        [(record_id, _)] = records.claim_pending(session, "w", 10, 60)
        evaluations.save_evaluation(session, record_id, Judgement("j", "ok", EXPECTED))
    with sessions() as session:
        raw = session.scalars(select(EvaluationRow.claims)).one()
        [stored] = stored_records(session)
    assert [c["v"] for c in raw] == [CLAIM_VERSION] * 3
    assert raw == [claim_to_json(c) for c in EXPECTED]
    assert stored.evaluations[0].claims == EXPECTED


def test_a_claim_without_text_or_verdict_is_refused() -> None:
    """Every version had both: an object without them is no stored claim."""
    with pytest.raises(ValueError, match="verdict"):
        claim_from_json({"text": "x"})


_text = st.text(max_size=20)
_maybe_text = st.none() | _text
claims = st.builds(
    Claim,
    text=_text,
    verdict=st.sampled_from(["supported", "contradicted", "unsupported", "partial"]),
    chunk=st.none() | st.integers(min_value=-(2**40), max_value=2**40),
    quote=_maybe_text,
    critical=st.booleans(),
    flags=st.lists(_text, max_size=3).map(tuple),
    confidence=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    stage=st.sampled_from([None, "offline", "llm"]),
    rationale=_maybe_text,
    critical_rule=_maybe_text,
    missing=_maybe_text,
    citations=st.lists(st.integers(min_value=0, max_value=2**31), max_size=3).map(tuple),
    citation=st.sampled_from([None, "correct", "wrong", "unresolved", "none"]),
)


@given(claims)
def test_claim_to_json_and_back_is_the_same_claim(claim: Claim) -> None:
    """Every field survives the trip through JSON text, as the store's column makes it."""
    assert claim_from_json(json.loads(json.dumps(claim_to_json(claim)))) == claim


def test_the_json_names_every_field_of_a_claim() -> None:
    """A field added to Claim and not to the serializer would be lost in the store."""
    written = claim_to_json(EXPECTED[0])
    assert set(written) == {"v", *(f.name for f in fields(Claim))}
    assert written["v"] == CLAIM_VERSION
