"""What the read API needs to run the drift detectors when it is not told the worker's
drift settings: the labels a judge's frozen baselines were split by."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..model import segment_from_key
from .tables import BaselineRow


def baseline_labels(session: Session, judge: str) -> tuple[str, ...]:
    """The label names in ``judge``'s frozen baseline segments (``route=billing`` → route)."""
    names: set[str] = set()
    for key in session.scalars(
        select(func.distinct(BaselineRow.segment_key)).where(BaselineRow.judge == judge)
    ):
        # A key the codec cannot read (stored before keys were escaped, with a `,` in a
        # value) names no label: better one label missing than a value taken for a name.
        names.update(segment_from_key(key) or ())
    return tuple(sorted(names))
