"""What the API bench asks: each request, and its baseline, a plain SELECT of the same rows
through the same engine (SQL written out per dialect, nothing of faithmon's queries)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from api_store import JUDGE
from sqlalchemy import TextClause, bindparam, text

from faithmon.store.tables import UTCDateTime

LIST_GOAL_MS = 50.0
OVERVIEW_GOAL_MS = 200.0

_ROWS = (
    "SELECT r.id, r.trace_id, r.started_at, r.status, r.labels, r.question, "
    "e.judge, e.faithfulness, e.lenient, e.claims "
    "FROM records r LEFT JOIN evaluations e ON e.record_id = r.id"
)
_PAGE = " ORDER BY r.started_at DESC, r.id DESC LIMIT 51"
_OUTCOMES = (
    "FROM records r JOIN evaluations e ON e.record_id = r.id "
    "WHERE e.judge = :judge AND e.status = 'ok'"
)


@dataclass(frozen=True, slots=True)
class Probe:
    """One figure: GET ``paths`` (cycled) against ``baseline`` with ``params`` (cycled)."""

    name: str
    paths: Sequence[str]
    baseline_name: str
    baseline: TextClause
    params: Sequence[dict[str, Any]] = field(default_factory=lambda: [{}])
    goal_ms: float | None = None

    def path(self, n: int) -> str:
        return self.paths[n % len(self.paths)]

    def values(self, n: int) -> dict[str, Any]:
        return self.params[n % len(self.params)]


def _critical(postgresql: bool) -> str:
    """A critical claim that is not supported, in the shown evaluation."""
    if postgresql:
        found = " OR ".join(
            f"""e.claims @> '[{{"critical": true, "verdict": "{v}"}}]'"""
            for v in ("unsupported", "contradicted")
        )
    else:
        found = (
            "EXISTS (SELECT 1 FROM json_each(e.claims) c "
            "WHERE json_extract(c.value, '$.critical') = 1 "
            "AND json_extract(c.value, '$.verdict') != 'supported')"
        )
    return f"e.faithfulness < 1 AND ({found})"


def _timed(statement: str) -> TextClause:
    return text(statement).bindparams(
        bindparam("since", type_=UTCDateTime()), bindparam("until", type_=UTCDateTime())
    )


def probes(
    dialect: str, trace_ids: Sequence[str], newest: datetime, details: int = 200
) -> list[Probe]:
    postgresql = dialect == "postgresql"
    label = "r.labels ->> 'route'" if postgresql else "json_extract(r.labels, '$.route')"
    since, until = newest - timedelta(days=2), newest - timedelta(days=1)
    window = urlencode({"since": since.isoformat(), "until": until.isoformat()})
    hour = "date_trunc('hour', r.started_at)" if postgresql else "substr(r.started_at, 1, 13)"
    if postgresql:
        chunk_ids = (
            "SELECT DISTINCT r.id, r.started_at, c.value ->> 'id' AS doc, e.faithfulness AS score "
            "FROM records r LEFT JOIN evaluations e ON e.record_id = r.id "
            "CROSS JOIN LATERAL jsonb_array_elements(r.chunks) AS c(value)"
        )
    else:
        chunk_ids = (
            "SELECT DISTINCT r.id, r.started_at, json_extract(c.value, '$.id') AS doc, "
            "e.faithfulness AS score "
            "FROM records r LEFT JOIN evaluations e ON e.record_id = r.id, json_each(r.chunks) c"
        )
    picked = random.Random(15).sample(list(trace_ids), min(details, len(trace_ids)))
    newest_50 = "SELECT newest 50"
    return [
        Probe(
            "traces?limit=50",
            ["/api/v1/traces?limit=50"],
            newest_50,
            text(_ROWS + _PAGE),
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces?label=route:billing",
            ["/api/v1/traces?limit=50&label=route:billing"],
            newest_50 + " WHERE route",
            text(f"{_ROWS} WHERE {label} = 'billing'{_PAGE}"),
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces?label=tenant:globex",
            ["/api/v1/traces?limit=50&label=tenant:globex"],
            newest_50 + " WHERE tenant",
            text(f"{_ROWS} WHERE r.tenant = 'globex'{_PAGE}"),
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces?since&until (a day)",
            [f"/api/v1/traces?limit=50&{window}"],
            newest_50 + " WHERE started_at",
            _timed(f"{_ROWS} WHERE r.started_at >= :since AND r.started_at < :until{_PAGE}"),
            [{"since": since, "until": until}],
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces?max_score=0.5",
            ["/api/v1/traces?limit=50&max_score=0.5"],
            newest_50 + " WHERE score ≤ 0.5",
            text(f"{_ROWS} WHERE e.faithfulness <= 0.5{_PAGE}"),
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces?critical=true",
            ["/api/v1/traces?limit=50&critical=true"],
            newest_50 + " WHERE critical",
            text(f"{_ROWS} WHERE {_critical(postgresql)}{_PAGE}"),
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "traces/{id}",
            [f"/api/v1/traces/{t}" for t in picked],
            "SELECT one by trace_id",
            text(
                "SELECT r.*, e.* FROM records r LEFT JOIN evaluations e ON e.record_id = r.id "
                "WHERE r.trace_id = :trace_id"
            ),
            [{"trace_id": t} for t in picked],
            goal_ms=LIST_GOAL_MS,
        ),
        Probe(
            "segments",
            ["/api/v1/segments"],
            "SELECT the stored drift run",
            text("SELECT summary FROM drift_runs WHERE judge = :judge"),
            [{"judge": JUDGE}],
        ),
        Probe(
            "documents",
            ["/api/v1/documents"],
            "GROUP BY chunk id",
            text(
                "SELECT d.doc, count(*), count(d.score), "
                "sum(CASE WHEN d.score < 1 THEN 1 ELSE 0 END), max(d.started_at) "
                f"FROM ({chunk_ids}) d WHERE d.doc IS NOT NULL GROUP BY d.doc"
            ),
        ),
        Probe(
            "overview page /",
            ["/"],
            "GROUP BY hour",
            text(
                f"SELECT {hour}, count(*), sum(CASE WHEN e.faithfulness < 1 THEN 1 ELSE 0 END) "
                f"{_OUTCOMES} GROUP BY 1"
            ),
            [{"judge": JUDGE}],
            goal_ms=OVERVIEW_GOAL_MS,
        ),
    ]
