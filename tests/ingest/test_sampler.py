"""The sampler the receiver runs, at a sampling rate alone: it keeps a share of traces by
trace id, agreeing with OpenTelemetry's sampler."""

from __future__ import annotations

import random

import pytest
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

from faithmon.cli.wiring import sampling_policy
from faithmon.config import Settings
from faithmon.ingest.sampler import KeepAll, PolicySampler, SamplingPolicy
from faithmon.model import Chunk, Decision, RagRecord
from tests.timing import days_ago


def ratio_sampler(rate: float) -> PolicySampler:
    """The receiver's sampler, configured as by FAITHMON_SAMPLE_RATE alone."""
    settings = Settings.from_env({"FAITHMON_SAMPLE_RATE": str(rate)})
    return PolicySampler(sampling_policy(settings))


@pytest.fixture
def trace_ids() -> list[int]:
    """2,000 random 128-bit trace ids from a fixed seed."""
    rng = random.Random(20260303)
    return [rng.getrandbits(128) or 1 for _ in range(2000)]


def record(trace_id: int) -> RagRecord:
    return RagRecord(
        trace_id=f"{trace_id:032x}",
        question="q",
        answer="a",
        chunks=(Chunk(0, "text", score=0.9),),  # no keep rule applies: only the ratio
        labels={},
        started_at=days_ago(1),
    )


def test_rate_one_keeps_everything(trace_ids: list[int]) -> None:
    """At rate 1 every record is kept with reason "sampled"."""
    sampler = ratio_sampler(1.0)

    decisions = {sampler.keep(record(t)) for t in [*trace_ids[:200], (1 << 128) - 1]}

    assert decisions == {Decision(True, "sampled")}


def test_rate_zero_keeps_nothing(trace_ids: list[int]) -> None:
    """At rate 0 no record is kept, each with reason "sampled_out"."""
    sampler = ratio_sampler(0.0)

    decisions = {sampler.keep(record(t)) for t in [*trace_ids[:200], 1 << 64]}

    assert decisions == {Decision(False, "sampled_out")}


@pytest.mark.parametrize("rate", [0.25, 0.5, 0.01])
def test_decisions_match_opentelemetry(trace_ids: list[int], rate: float) -> None:
    """For each trace id the decision equals the SDK's TraceIdRatioBased decision."""
    sampler = ratio_sampler(rate)
    otel = TraceIdRatioBased(rate)

    ours = [sampler.keep(record(t)).keep for t in trace_ids]
    theirs = [otel.should_sample(None, t, "rag.request").decision.is_sampled() for t in trace_ids]

    assert ours == theirs
    kept = sum(ours)
    assert abs(kept - rate * len(trace_ids)) < 4 * (rate * len(trace_ids)) ** 0.5 + 1


def test_kept_and_dropped_reasons_at_a_quarter(trace_ids: list[int]) -> None:
    """At rate 0.25 kept records say "sampled" and dropped ones "sampled_out"."""
    sampler = ratio_sampler(0.25)

    reasons = {sampler.keep(record(t)) for t in trace_ids}

    assert reasons == {Decision(True, "sampled"), Decision(False, "sampled_out")}


@pytest.mark.parametrize("rate", [-0.01, 1.01, float("nan")])
def test_invalid_rate_raises(rate: float) -> None:
    """A rate outside [0, 1] is refused."""
    with pytest.raises(ValueError, match=r"between 0\.0 and 1\.0"):
        SamplingPolicy(rate=rate)


def test_keep_all_keeps_everything() -> None:
    """KeepAll, the in-memory twin, keeps every record as "sampled"."""
    assert KeepAll().keep(record(1)) == Decision(True, "sampled")
