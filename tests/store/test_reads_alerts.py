"""The alert lists pages and reports show, filtered and cut in the database on SQLite and
PostgreSQL: a tenant's and the judge's alerts, every open one, then the newest resolved."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Alert, AlertState
from faithmon.store import alerts as store_alerts
from faithmon.store.reads_alerts import shown_alerts
from faithmon.store.report import load_report
from tests.fetched import rows_fetched
from tests.timing import days_ago

JUDGE = "offline/a"
OTHERS = 300


def _alert(rule: str, segment: dict[str, str], state: AlertState, n: int) -> Alert:
    at = days_ago(400) + timedelta(days=n)
    return Alert(
        rule=rule,
        segment=segment,
        state=state,
        severity="warning",
        opened_at=at,
        updated_at=at,
        resolved_at=at if state == "resolved" else None,
    )


def _store(sessions: sessionmaker[Session]) -> dict[str, list[int]]:
    """An acme alert open since long ago, five resolved ones and a judge's, then 300
    resolved globex alerts and one open: name → ids, in the order stored."""
    made = {
        "acme_open": [_alert("faithfulness_drift", {"tenant": "acme"}, "firing", 0)],
        "acme_resolved": [
            _alert("faithfulness_drift", {"route": f"r{n}", "tenant": "acme"}, "resolved", n)
            for n in range(1, 6)
        ],
        "judge": [_alert("judge_drift", {"judge": JUDGE}, "resolved", 6)],
        "globex_resolved": [
            _alert("faithfulness_drift", {"route": f"r{n}", "tenant": "globex"}, "resolved", n)
            for n in range(7, 7 + OTHERS)
        ],
        "globex_open": [_alert("no_data", {"tenant": "globex"}, "pending", 7 + OTHERS)],
    }
    ids: dict[str, list[int]] = {}
    with sessions.begin() as session:
        for name, alerts in made.items():
            ids[name] = [a.id for a in store_alerts.save_alerts(session, alerts) if a.id]
    return ids


def test_open_alerts_come_first_then_the_newest_resolved(sessions: sessionmaker[Session]) -> None:
    """An alert open for a year is shown however many resolved ones came after it; the
    rest of the limit goes to the newest resolved, all oldest first."""
    ids = _store(sessions)
    with sessions() as session:
        acme = [a.id for a in shown_alerts(session, "acme", limit=4)]
        everyone = [a.id for a in shown_alerts(session, None, limit=3)]
        segment = {"route": "r2", "tenant": "acme"}
        own = [a.id for a in shown_alerts(session, "acme", segment)]
        foreign = shown_alerts(session, "globex", segment)
        judge = [a.id for a in shown_alerts(session, "globex", {"judge": JUDGE})]
    assert acme == [*ids["acme_open"], *ids["acme_resolved"][-2:], *ids["judge"]]
    assert everyone == [*ids["acme_open"], ids["globex_resolved"][-1], *ids["globex_open"]]
    assert own == [ids["acme_resolved"][1]]
    assert foreign == ()
    assert judge == ids["judge"]


def test_a_tenants_report_fetches_its_alerts_only(sessions: sessionmaker[Session]) -> None:
    """A tenant's report (the dashboard's overview and alert page) fetches its tenant's and
    the judge's alerts, not the 300 of another tenant to drop them in Python."""
    ids = _store(sessions)
    engine = sessions.kw["bind"]
    with rows_fetched(engine, "alerts") as counts, sessions() as session:
        data = load_report(session, JUDGE, tenant="acme")
    mine = [*ids["acme_open"], *ids["acme_resolved"], *ids["judge"]]
    assert [a.id for a in data.alerts] == mine
    assert sum(counts) == len(mine), counts
