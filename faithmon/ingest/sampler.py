"""Samplers decide on whole records, by trace id, so every instance agrees."""

from __future__ import annotations

from ..model import Decision, RagRecord

_LOW_64 = (1 << 64) - 1


class RatioSampler:
    """Keep a share of traces, with OpenTelemetry's TraceIdRatioBased rule.

    The decision uses the low 64 bits of the trace id, as the SDK's sampler
    does, so a trace the app's sampler kept at rate r is kept here at rate r.
    A record the app asked to keep (``rag.keep(reason)``) is always kept.
    """

    def __init__(self, rate: float) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError("rate must be between 0.0 and 1.0")
        self.rate = rate
        self._bound = round(rate * (1 << 64))

    def keep(self, record: RagRecord) -> Decision:
        if record.keep:
            return Decision(True, "rule:keep")
        if self.rate >= 1.0:
            return Decision(True, "sampled")
        low = int(record.trace_id, 16) & _LOW_64
        return Decision(True, "sampled") if low < self._bound else Decision(False, "sampled_out")


class KeepAll:
    def keep(self, record: RagRecord) -> Decision:
        return Decision(True, "sampled")
