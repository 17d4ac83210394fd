"""A claim as JSON: the one shape the store keeps in ``evaluations.claims`` and every JSON
output shows (``traces list|show --json``, the read API, ``faithmon score``).

The shape carries its version under ``"v"``, so a field renamed later does not make the
evaluations already stored unreadable: :func:`claim_from_json` reads each older version
by lifting it one step at a time to the current one.

Versions:

- 1: no ``"v"`` key. What faithmon wrote before the key: ``dataclasses.asdict(Claim)``
  with the fields ``Claim`` had then (``text``, ``verdict``, ``chunk``, ``quote``,
  ``critical``, ``flags``; later also ``confidence``, ``stage``, ``rationale``,
  ``critical_rule``, ``missing``, ``citations``, ``citation``). Tuples are lists.
- 2: the same names, with ``"v": 2`` and every field present.

Reading is lenient where that loses nothing: a missing optional field takes its default
and an unknown key is ignored (a newer faithmon may have added it; the fields this one
knows still read). The SQL readers of the column (``store.reads_documents``, migration
0018) name ``text``, ``verdict``, ``chunk``, ``quote`` and ``critical``: a version that
renames one of those must move them too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .judgement import Claim

CLAIM_VERSION = 2
"""The version :func:`claim_to_json` writes."""

VERSION_KEY = "v"

_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # v1 → v2 added only the version key: the names are the same, and a field missing
    # from an old row takes its default when read.
    1: lambda data: data,
}
"""Per version, the step that lifts its JSON to the next one. A version that renames or
reshapes a field adds its step here, so the rows stored before it still read."""


def claim_to_json(claim: Claim) -> dict[str, Any]:
    """Every field of ``claim`` as JSON values, with the version: what the store keeps and
    what every JSON output of a claim shows."""
    return {
        VERSION_KEY: CLAIM_VERSION,
        "text": claim.text,
        "verdict": claim.verdict,
        "chunk": claim.chunk,
        "quote": claim.quote,
        "critical": claim.critical,
        "flags": list(claim.flags),
        "confidence": claim.confidence,
        "stage": claim.stage,
        "rationale": claim.rationale,
        "critical_rule": claim.critical_rule,
        "missing": claim.missing,
        "citations": list(claim.citations),
        "citation": claim.citation,
    }


def claim_from_json(data: Mapping[str, Any]) -> Claim:
    """The claim a stored JSON object holds, of any version (see the module docstring).

    Raises ``ValueError`` when the object has no ``text`` or ``verdict``: every version
    has had both, so the object is not a stored claim."""
    version = data.get(VERSION_KEY, 1)
    current = dict(data)
    if isinstance(version, int):
        for step in range(max(version, 1), CLAIM_VERSION):
            current = _UPGRADES[step](current)
    # A version newer than this code (or not a number) is read by the names it knows:
    # new versions add fields more often than they rename them, and the known ones
    # are what this code can show.
    missing = [key for key in ("text", "verdict") if key not in current]
    if missing:
        raise ValueError(f"a stored claim has no {' or '.join(missing)}")
    confidence = current.get("confidence")
    return Claim(
        text=str(current["text"]),
        verdict=current["verdict"],
        chunk=current.get("chunk"),
        quote=current.get("quote"),
        critical=bool(current.get("critical", False)),
        flags=tuple(str(f) for f in current.get("flags") or ()),
        confidence=None if confidence is None else float(confidence),
        stage=current.get("stage"),
        rationale=current.get("rationale"),
        critical_rule=current.get("critical_rule"),
        missing=current.get("missing"),
        citations=tuple(int(c) for c in current.get("citations") or ()),
        citation=current.get("citation"),
    )
