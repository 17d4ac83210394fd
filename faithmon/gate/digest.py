"""The dataset's version: a digest of what its cases ask, not of the answers under test.

Ids, questions, contexts, minimums and flags (``critical``, ``expected``) are the
dataset; the responses are what a release changes. So two runs with one digest judged
the same questions against the same bars, and a baseline from another digest is a
comparison with another test (``--baseline`` refuses it unless told otherwise). The
order of the lines does not count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from .cases import Case


def dataset_digest(cases: Sequence[Case]) -> str:
    """16 hex characters of SHA-256 over the cases' inputs, sorted by id."""
    inputs = sorted(
        (
            {
                "id": case.id,
                "question": case.question,
                "contexts": list(case.contexts),
                "minimum": case.minimum,
                "critical": case.critical,
                "expected": case.expected,
            }
            for case in cases
        ),
        key=lambda item: str(item["id"]),
    )
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
