"""The sampling policy: filters, keep rules, floors, ratio and rate limits, in that order."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from faithmon.ingest.sampler import PolicySampler, SamplingPolicy, ratio_keeps
from faithmon.model import Chunk, RagRecord

T0 = datetime(2026, 11, 29, 10, 15, tzinfo=UTC)


def record(n: int, **changes: object) -> RagRecord:
    base = RagRecord(
        trace_id=f"{random.Random(n).getrandbits(128):032x}",
        question="q",
        answer="a",
        chunks=(Chunk(0, "c", score=0.8),),
        labels={"service": "bot", "route": "billing"},
        started_at=T0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_filters_come_first() -> None:
    """Include and exclude filters drop a record before any rule can keep it."""
    sampler = PolicySampler(
        SamplingPolicy(include=(("route", "billing"),), exclude=(("tenant", "internal"),))
    )
    assert sampler.keep(record(1)).reason == "sampled"
    other = record(2, labels={"route": "returns"}, keep="app")
    assert sampler.keep(other).reason == "filtered"
    internal = record(3, labels={"route": "billing", "tenant": "internal"})
    assert sampler.keep(internal).reason == "filtered"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"keep": "canary"}, "rule:app"),
        ({"chunks": ()}, "rule:empty_retrieval"),
        ({"error": True}, "rule:error"),
        ({"labels": {"route": "billing", "feedback": "thumbs_down"}}, "rule:negative_feedback"),
        ({"chunks": (Chunk(0, "c", score=0.1),)}, "rule:low_retrieval_score"),
    ],
)
def test_keep_rules_beat_the_ratio(changes: dict[str, object], reason: str) -> None:
    """At rate 0 a record matching a keep-always rule is still kept, with its rule."""
    sampler = PolicySampler(SamplingPolicy(rate=0.0, low_score=0.3))
    decision = sampler.keep(record(4, **changes))
    assert decision.keep and decision.reason == reason
    assert sampler.keep(record(4)).reason == "sampled_out"


def test_segment_minimum_keeps_quiet_segments_visible() -> None:
    """The first records of a segment each hour are kept whatever the rate."""
    sampler = PolicySampler(SamplingPolicy(rate=0.0, minimum_per_hour=2))
    reasons = [sampler.keep(record(n)).reason for n in range(4)]
    assert reasons == ["rule:minimum", "rule:minimum", "sampled_out", "sampled_out"]
    later = record(9, started_at=T0.replace(hour=11))
    assert sampler.keep(later).reason == "rule:minimum"
    other_segment = record(10, labels={"service": "bot", "route": "returns"})
    assert sampler.keep(other_segment).segment == {"service": "bot", "route": "returns"}


def test_rate_limit_is_a_token_bucket_per_segment() -> None:
    """A busy segment is capped per second; another segment has its own bucket."""
    clock = Clock()
    sampler = PolicySampler(SamplingPolicy(rate_limit=2.0), clock=clock)
    reasons = [sampler.keep(record(n)).reason for n in range(4)]
    assert reasons == ["sampled", "sampled", "rate_limited", "rate_limited"]
    other = record(5, labels={"service": "bot", "route": "returns"})
    assert sampler.keep(other).reason == "sampled"
    clock.now += 0.5
    assert sampler.keep(record(6)).reason == "sampled"
    assert sampler.keep(record(7)).reason == "rate_limited"


def test_tracestate_threshold_rule_agrees_with_upstream() -> None:
    """With ot=th:, the kept traces are exactly those whose randomness clears our threshold."""
    rng = random.Random(3)
    for _ in range(500):
        trace_id = f"{rng.getrandbits(128):032x}"
        randomness = int(trace_id, 16) & ((1 << 56) - 1)
        state = "ot=th:c"  # upstream kept 25% (threshold 0xc0000000000000)
        expected = randomness >= round(0.75 * (1 << 56))
        assert ratio_keeps(trace_id, 0.25, state) == expected
    explicit = "ot=th:8;rv:ffffffffffffff,vendor=x"
    assert ratio_keeps("0" * 32, 0.01, explicit)


def test_unknown_keep_rule_is_refused() -> None:
    """A typo in the keep rules is an error, not a silently missing rule."""
    with pytest.raises(ValueError, match="unknown keep rules: sometimes"):
        SamplingPolicy(keep_rules=frozenset({"sometimes"}))
