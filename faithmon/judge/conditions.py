"""A supported claim that leaves out its sentence's condition is ``partial``.

"Next-day delivery is free" against "Next-day delivery is free only for orders placed
before 14:00": the claim is held, but not as the chunk states it.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import Claim
from . import confidence
from . import contradiction as c
from . import text as t
from .support import Evidence


def conditioned(claim: Claim, evidence: Evidence, chunk: int | None) -> Claim | None:
    """``claim`` as ``partial`` when the chunk sentence holding it attaches a condition
    it leaves out ("... only for orders placed before 14:00"); None otherwise."""
    needle = t.normalise(t.strip_end(claim.text))
    source = next(
        (
            s
            for i, s, _, _ in evidence.sentences
            if i == chunk and (needle in t.normalise(s) or claim.quote == s)
        ),
        claim.quote,
    )
    dropped = c.dropped_condition(claim.text, source or "")
    if dropped is None:
        return None
    return replace(
        claim,
        verdict="partial",
        quote=source,
        confidence=confidence.of("condition", "partial"),
        missing=f"without the condition “{dropped}”",
    )
