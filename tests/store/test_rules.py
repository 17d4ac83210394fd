"""One definition per rule: "unsupported" (answer level) and "supported" (claim level) are
written once in Python (``model.judgement``) and once in SQL (``store.rules``), pinned to
each other here on both backends, and no other module writes its own form. So is which
alerts a tenant-bound reader sees (``model.visible_to``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Float, String, cast, literal, select

from faithmon.model import Alert, answer_unsupported, claim_supported, visible_to
from faithmon.store import Sessions, rules
from faithmon.store import alerts as store_alerts
from faithmon.store.tables import AlertRow
from tests.store.factory import T0

ROOT = Path(__file__).resolve().parents[2]
SCORES = [None, 0.0, 0.25, 0.5, 0.999, 0.9999999, 1.0]
VERDICTS = ["supported", "unsupported", "contradicted", "partial"]


def test_sql_and_python_say_the_same(sessions: Sessions) -> None:
    with sessions() as session:
        for score in SCORES:
            sql = session.execute(
                select(rules.answer_unsupported(cast(literal(score, Float), Float)))
            ).scalar_one()
            assert bool(sql) is answer_unsupported(score), score
        for verdict in VERDICTS:
            said = cast(literal(verdict, String), String)
            supported = session.execute(select(rules.claim_supported(said))).scalar_one()
            not_supported = session.execute(select(rules.claim_not_supported(said))).scalar_one()
            assert bool(supported) is claim_supported(verdict) is not bool(not_supported)


# Segments and rules an alert can have: a tenant's, another's, none, a judge's with and
# without a tenant, a tenant value that is a JSON or SQL metacharacter.
ALERT_CASES = [
    ("faithfulness_drift", {}),
    ("faithfulness_drift", {"tenant": "acme"}),
    ("critical_drift", {"route": "billing", "tenant": "acme"}),
    ("no_data", {"route": "billing", "tenant": "globex"}),
    ("faithfulness_drift", {"route": "acme"}),
    ("judge_drift", {"judge": "offline/a"}),
    ("judge_error", {"tenant": "globex"}),
    ("faithfulness_drift", {"tenant": 'o\'brien \\ "x"'}),
]
READERS = [None, "acme", "globex", 'o\'brien \\ "x"', "nobody", ""]


def test_sql_and_python_show_a_tenant_the_same_alerts(sessions: Sessions) -> None:
    """``rules.alert_visible_to`` on stored alerts selects what ``visible_to`` says."""
    made = [Alert(rule, segment, "firing", "warning", T0, T0) for rule, segment in ALERT_CASES]
    with sessions.begin() as session:
        saved = store_alerts.save_alerts(session, made)
    with sessions() as session:
        for tenant in READERS:
            visible = rules.alert_visible_to(session, tenant, AlertRow.segment, AlertRow.rule)
            found = set(session.scalars(select(AlertRow.id).where(visible)))
            assert found == {a.id for a in saved if visible_to(a, tenant)}, tenant


# Forms of the two rules written outside their definitions.
_OWN_FORMS = re.compile(
    r"""verdict\s*[!=]=\s*["']supported["']|faithfulness\s*<\s*1\b|score\s*<\s*1\b"""
    r"|max_score\s*=\s*0\.9"
    # An alert's tenant read in SQL (``rules.alert_visible_to`` says who sees an alert).
    r"""|\.segment\[["']tenant["']\]"""
)
_DEFINITIONS = {ROOT / "faithmon/model/judgement.py", ROOT / "faithmon/store/rules.py"}


@pytest.mark.one_backend
def test_no_module_writes_its_own_form_of_the_rules() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "faithmon").rglob("*.py"))
        if path not in _DEFINITIONS
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _OWN_FORMS.search(line)
    ]
    assert found == [], "say it through model.judgement or store.rules"
