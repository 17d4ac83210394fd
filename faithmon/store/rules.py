"""The domain rules in SQL, beside their Python forms in ``model.judgement`` and
``model.alerts``: one pair each, pinned to each other by a test
(``tests/store/test_rules.py``).

A query that asks whether an answer is unsupported or a claim is not supported says it
through these, never with its own ``< 1`` or ``!= 'supported'``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, not_, or_, true
from sqlalchemy.orm import Session

from ..model import FULLY_SUPPORTED, JUDGE_RULES
from ._dialect import json_text


def answer_unsupported(strict: Any) -> ColumnElement[bool]:
    """``model.answer_unsupported`` on a stored strict score column (NULL: not scored)."""
    return and_(strict.is_not(None), strict < FULLY_SUPPORTED)


def claim_supported(verdict: Any) -> ColumnElement[bool]:
    """``model.claim_supported`` on a verdict column or JSON text."""
    supported: ColumnElement[bool] = verdict == "supported"
    return supported


def claim_not_supported(verdict: Any) -> ColumnElement[bool]:
    return not_(claim_supported(verdict))


def alert_visible_to(
    session: Session, tenant: str | None, segment: Any, rule: Any
) -> ColumnElement[bool]:
    """``model.visible_to`` on an alert's stored segment (JSON) and rule columns: its
    segment names ``tenant``, or it is about the judge; every alert for no tenant."""
    if tenant is None:
        return true()
    return or_(json_text(session, segment, "tenant") == tenant, rule.in_(sorted(JUDGE_RULES)))
