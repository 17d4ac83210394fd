"""One definition per rule: "unsupported" (answer level) and "supported" (claim level) are
written once in Python (``model.judgement``) and once in SQL (``store.rules``), pinned to
each other here on both backends, and no other module writes its own form."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Float, String, cast, literal, select

from faithmon.model import answer_unsupported, claim_supported
from faithmon.store import Sessions, rules

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


# Forms of the two rules written outside their definitions.
_OWN_FORMS = re.compile(
    r"""verdict\s*[!=]=\s*["']supported["']|faithfulness\s*<\s*1\b|score\s*<\s*1\b"""
    r"|max_score\s*=\s*0\.9"
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
