"""The evidence verifier every judge's claims pass through.

A claim's quote must be found, after normalisation, inside the chunk it cites.
A ``supported`` claim whose quote is not there becomes ``unsupported`` and is
flagged ``evidence_mismatch``; a ``contradicted`` one falls to ``unsupported``
too, since its evidence cannot be checked. A chunk index out of range is a
schema error: the reply is not trusted at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..model import Claim
from .text import normalise, strip_end

EVIDENCE_MISMATCH = "evidence_mismatch"
# A quote shorter than this proves nothing ("C" is in every chunk), unless it is
# the whole chunk or the whole claim.
MIN_QUOTE = 8


class SchemaError(ValueError):
    """A judge reply that breaks the contract (bad index, missing field)."""


def quote_found(quote: str, chunk: str, claim: str = "") -> bool:
    needle = normalise(strip_end(quote))
    haystack = normalise(chunk)
    short_but_whole = needle in (normalise(strip_end(chunk)), normalise(strip_end(claim)))
    if len(needle) < MIN_QUOTE and not short_but_whole:
        return False
    return bool(needle) and needle in haystack


def verify(claims: Iterable[Claim], chunks: Sequence[str]) -> tuple[Claim, ...]:
    checked = []
    for claim in claims:
        if claim.chunk is not None and not 0 <= claim.chunk < len(chunks):
            raise SchemaError(f"claim cites chunk {claim.chunk}, but there are {len(chunks)}")
        if claim.verdict == "unsupported":
            checked.append(claim)
            continue
        if (
            claim.chunk is None
            or not claim.quote
            or not quote_found(claim.quote, chunks[claim.chunk], claim.text)
        ):
            claim = replace(claim, verdict="unsupported", flags=(*claim.flags, EVIDENCE_MISMATCH))
        checked.append(claim)
    return tuple(checked)
