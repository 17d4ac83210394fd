"""Segment keys: one codec makes them and reads them back, so a label value holding a
comma, an equals sign or a percent sign names its own segment, in Python and in every
store table keyed by it (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Claim, Judgement, SamplingTally, segment_from_key, segment_key
from faithmon.store import baselines, metrics, reads_segments, sampling
from faithmon.store.report import load_report
from faithmon.store.tables import SegmentMetricsRow
from tests.store.factory import COMMA_TENANT, KEYS_JUDGE, LOOKALIKE, PAIR, seed_lookalikes
from tests.timing import days_ago

JUDGE = KEYS_JUDGE
T0 = days_ago(2)


def test_plain_segments_keep_the_keys_they_always_had() -> None:
    """Keys already stored (names and values without `,` `=` `%`) are unchanged."""
    assert segment_key({"tenant": "acme", "route": "billing"}) == "route=billing,tenant=acme"
    assert segment_key({}) == ""
    assert segment_from_key("route=billing,tenant=acme") == {"route": "billing", "tenant": "acme"}
    assert segment_from_key("") == {}


def test_a_value_that_reads_like_two_labels_is_its_own_segment() -> None:
    """The collision the naive join made: two segments, two keys."""
    assert segment_key(LOOKALIKE) != segment_key(PAIR)
    assert segment_key(LOOKALIKE) == "route=a%2Ctenant%3Dacme"
    assert segment_from_key(segment_key(LOOKALIKE)) == LOOKALIKE
    assert segment_from_key(segment_key(PAIR)) == PAIR


@pytest.mark.parametrize(
    "segment",
    [
        {"route": "a,b"},
        {"route": "x=y", "tenant": "t"},
        {"route": "100%", "model": "%2C"},
        {"route": "%25,=%3D"},
        {"na=me,": "v"},
        {"route": "caf\u00e9 \u2013 \u65e5\u672c", "tenant": "\U0001f600"},
        {"route": ""},
    ],
)
def test_keys_read_back_as_the_segment_they_name(segment: dict[str, str]) -> None:
    key = segment_key(segment)
    assert segment_from_key(key) == segment
    assert segment_key(segment_from_key(key) or {}) == key


@pytest.mark.parametrize("key", ["route", "=x", "route=a,route=b", "route=a,", ",route=a"])
def test_text_no_segment_makes_is_refused(key: str) -> None:
    assert segment_from_key(key) is None


def test_escapes_are_read_in_either_case_and_a_stray_percent_as_itself() -> None:
    """Percent-encoding's hex is case-free; a `%` no escape follows (a key stored before
    keys were escaped, such as `route=100%`) is read as written."""
    assert segment_from_key("route=a%2cb%3d") == {"route": "a,b="}
    assert segment_from_key("route=100%") == {"route": "100%"}
    assert segment_from_key("route=50%2") == {"route": "50%2"}


def test_baselines_are_keyed_and_read_back_by_the_codec(sessions: sessionmaker[Session]) -> None:
    """The lookalike and the pair get a baseline each, and the label names read back from
    the keys are the labels' own (no `tenant` from a value, no ` inc.`)."""
    seed_lookalikes(sessions)
    with sessions() as session:
        frozen = baselines.load_baselines(session, JUDGE)
        assert frozen is not None
        assert {segment_key(LOOKALIKE), segment_key(PAIR)} <= set(frozen.segments)
        assert frozen.segments[segment_key(LOOKALIKE)].records == 10
        assert frozen.segments[segment_key(PAIR)].records == 10
        assert reads_segments.baseline_labels(session, JUDGE) == ("route", "tenant")


def test_the_report_charts_a_tenant_whose_name_holds_a_comma(
    sessions: sessionmaker[Session],
) -> None:
    """Its partition is charted against its own baseline, for everyone and for itself."""
    seed_lookalikes(sessions)
    mine = {"tenant": COMMA_TENANT}
    with sessions() as session:
        everyone = load_report(session, JUDGE)
        own = load_report(session, JUDGE, tenant=COMMA_TENANT)
    [charted] = [s for s in everyone.series if dict(s.segment) == mine]
    assert charted.baseline == (10, 5) and charted.baseline_source == "own"
    overall = own.series[0]
    assert dict(overall.segment) == mine and overall.baseline == (10, 5)
    assert set(own.baselines) == {segment_key(mine), segment_key({**mine, "route": "b"})}


def test_sampling_counts_keep_the_lookalike_apart(sessions: sessionmaker[Session]) -> None:
    """The counts are unique per (hour, key, reason): two segments, two rows."""
    hour = T0.replace(minute=0, second=0, microsecond=0)
    with sessions.begin() as session:
        sampling.save_sampling(
            session,
            [SamplingTally(hour, LOOKALIKE, "sampled", 3), SamplingTally(hour, PAIR, "sampled", 4)],
            [],
        )
    with sessions() as session:
        counted = {segment_key(t.segment): t.count for t in sampling.sampling_counts(session)}
    assert counted == {segment_key(LOOKALIKE): 3, segment_key(PAIR): 4}


def test_metrics_add_a_row_keyed_before_escaping_to_its_segments(
    sessions: sessionmaker[Session],
) -> None:
    """A counter row stored under the unescaped key (`route=a,b`) and the row now kept under
    `route=a%2Cb` are one segment on /metrics: one series, both counts."""
    segment = {"route": "a,b"}
    with sessions.begin() as session:
        session.add(
            SegmentMetricsRow(
                segment_key="route=a,b",
                segment=segment,
                judge=JUDGE,
                evaluations=2,
                scored=2,
                unsupported=1,
                critical_unsupported=0,
                judge_errors=0,
                faithfulness_sum=1.5,
                buckets=[0, 1, 1, 1, 1, 2],
            )
        )
    judged = Judgement(JUDGE, "ok", (Claim("fine", "supported", chunk=0, quote="x"),))
    with sessions.begin() as session:
        metrics.count_evaluations(session, [(segment, judged)], ("route",))
    with sessions() as session:
        rows = [r for r in metrics.snapshot(session)["segments"] if r["segment"] == segment]
    assert len(rows) == 1
    assert (rows[0]["evaluations"], rows[0]["unsupported"]) == (3, 1)
    assert rows[0]["buckets"] == [0, 1, 1, 1, 1, 3]
