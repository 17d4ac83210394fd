"""A segment whose label value holds `,` `=` or `%` is named in a URL by its key,
percent-encoded as any path segment is, and the API and its page answer that segment, not
the one its unescaped text would spell (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest

from faithmon.api.app import create_app
from faithmon.api.pages.segments import segment_link
from faithmon.api.v1 import ReadOptions
from faithmon.api.v1.segments import parse_segment
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import segment_key
from faithmon.store import Sessions
from tests.api.client import call, get
from tests.servers import serve_in_thread
from tests.store.factory import (
    COMMA_TENANT,
    KEYS_CONFIG,
    KEYS_JUDGE,
    LOOKALIKE,
    PAIR,
    seed_lookalikes,
)


@pytest.fixture
def url(sessions: Sessions) -> Iterator[str]:
    seed_lookalikes(sessions)
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    reads = ReadOptions(judge=KEYS_JUDGE, drift=KEYS_CONFIG)
    with serve_in_thread(create_app(pipeline, sessions=sessions, reads=reads)) as served:
        yield served


def _series(url: str, segment: dict[str, str]) -> dict[str, object]:
    path = quote(segment_key(segment), safe="=,")
    return get(url, f"/api/v1/segments/{path}/series")  # type: ignore[no-any-return]


def test_a_series_url_answers_the_segment_its_key_names(url: str) -> None:
    """The lookalike and the pair each answer with their own labels, records and baseline."""
    for segment in (LOOKALIKE, PAIR, {"tenant": COMMA_TENANT}):
        series = _series(url, segment)
        assert series["labels"] == segment and series["segment"] == segment_key(segment)
        assert parse_segment(str(series["segment"])) == segment
        buckets = series["buckets"]
        assert isinstance(buckets, list) and sum(b["records"] for b in buckets) == 10
        baseline = series["baseline"]
        assert isinstance(baseline, dict) and baseline["source"] == "own"
        assert baseline["records"] == 10


def _trace_link(n: int) -> str:
    """The link to seeded record ``n`` (unsupported when ``n`` is even)."""
    return f'href="/traces/{n + 1:032x}"'


def test_the_segment_page_link_round_trips(url: str) -> None:
    """The link the dashboard draws for the lookalike opens the lookalike's page, with its
    unsupported answers and none of the pair's; and the pair's link opens the pair's."""
    for segment, mine, theirs in ((LOOKALIKE, 0, 4), (PAIR, 4, 0)):
        key = segment_key(segment)
        status, page, _ = call(url, segment_link(key).split('"')[1])
        assert status == 200 and f"Segment {key}" in page
        assert _trace_link(mine) in page and _trace_link(theirs) not in page
