"""The trace list's label filter finds the same records on SQLite and PostgreSQL, whatever
the keys and values look like (PostgreSQL tests containment, SQLite each key)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import RagRecord
from faithmon.store import records as store_records
from faithmon.store.reads_traces import Cursor, TraceFilter, list_traces
from tests.store.factory import make_record

LABELS: tuple[dict[str, str], ...] = (
    {"route": "billing", "model": "llama-3-70b", "tenant": "acme"},
    {"route": "billing", "model": "gpt-4o-mini", "tenant": "globex"},
    {"route": "search", "model": "llama-3-70b"},
    {"route": "billing", "model": "llama-3-70b", "prompt.version": "v7"},
    {"route": 'say "hi"', "model": "café"},
    {"route": "", "model": "42"},
    {"route": "billing"},
)


def _record(n: int) -> RagRecord:
    return replace(make_record(n), labels=LABELS[n % len(LABELS)])


@pytest.fixture
def stored(sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    with sessions.begin() as session:
        store_records.save_records(session, [_record(n) for n in range(70)])
    return sessions


def _expected(wanted: Mapping[str, str]) -> list[str]:
    """Newest first, as the list orders them."""
    made = [_record(n) for n in range(70)]
    found = [r for r in made if all(r.labels.get(k) == v for k, v in wanted.items())]
    return [r.trace_id for r in sorted(found, key=lambda r: r.started_at, reverse=True)]


def _listed(sessions: sessionmaker[Session], wanted: Mapping[str, str]) -> list[str]:
    """Every page of the filtered list, four at a time."""
    listed: list[str] = []
    after: Cursor | None = None
    with sessions() as session:
        while True:
            page = list_traces(session, TraceFilter(labels=wanted), 4, after)
            listed += [item.trace_id for item in page.items]
            if page.next is None:
                return listed
            after = page.next


@pytest.mark.parametrize(
    "wanted",
    [
        {"route": "billing"},
        {"route": "billing", "model": "llama-3-70b"},
        {"route": "billing", "model": "llama-3-70b", "tenant": "acme"},
        {"prompt.version": "v7", "route": "billing"},
        {"route": 'say "hi"', "model": "café"},
        {"route": ""},
        {"model": "42"},
        {"model": "llama"},
        {"route": "billing", "model": "none-has-it"},
        {"tenant": "globex"},
    ],
)
def test_a_label_filter_lists_exactly_the_matching_records(
    stored: sessionmaker[Session], wanted: dict[str, str]
) -> None:
    """Every page together holds the records with all the asked labels, newest first."""
    assert _listed(stored, wanted) == _expected(wanted)
