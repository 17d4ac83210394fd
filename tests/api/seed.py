"""What the read API tests serve: two tenants' traffic and some with no tenant, evaluations
by two judge configurations, alerts, sentinel runs, judge usage and a block, and keys for
an operator and each tenant; and what each record should show, computed from the seed.
Apart from the seed: a trace whose answer cites its chunks, for a judge with the
contracts to score where a test needs one."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from faithmon import drift
from faithmon.api.keys import key_hash, new_key
from faithmon.jobs.drift import check_drift
from faithmon.model import (
    Alert,
    Chunk,
    Claim,
    Feedback,
    Judgement,
    PolicyFinding,
    RagRecord,
    Relevance,
    SentinelResult,
)
from faithmon.model import Usage as JudgeUsage
from faithmon.store import (
    Sessions,
    alerts,
    baselines,
    drift_runs,
    evaluations,
    records,
    sentinels,
    work,
)
from faithmon.store import keys as store_keys
from tests.timing import days_ago

JUDGE = "offline/test-a"
OTHER_JUDGE = "offline/test-b"
T0 = days_ago(2)
TENANTS = ("acme", "globex", None)
RECORDS = 90
CONFIG = drift.DriftConfig(
    dimensions=("route", "tenant"),
    threshold=4.0,
    baseline_records=20,
    baseline_days=0,
    segment_min_baseline=5,
)


@dataclass
class Seeded:
    url: str
    keys: dict[str, str]
    """Role → key: admin, reader (read, no tenant), acme, globex, acme_review, ingest."""
    prefixes: dict[str, str]
    traces: dict[str | None, list[str]] = field(default_factory=dict)
    """Tenant → its trace ids."""
    alerts: dict[str, int] = field(default_factory=dict)
    """Name → alert id."""


# Trace text in a finding, markup and a terminal escape too: every surface must show it inert.
POLICY = PolicyFinding("internal_only", "internal only \x1b[2J<b>do not share</b>")

CITED_TRACE = "c" * 32
CITED_CHUNKS = (
    "Refunds take 5 days to reach your card.",
    "Shipping is free over 40 euros.",
    "Support is open Monday to Friday.",
)
SECRET = "password=<img/src=x/onerror=window.pwned=5>"
# Markers over three chunks: the first sentence cites the shipping chunk, the quotation is
# not in the chunk it cites, the third cites both (one supports it), [7] names no chunk,
# and the last sentence leaks a secret the policy rules find.
CITED_ANSWER = (
    "Refunds take 5 days to reach your card [2]. "
    'The terms say "refunds are paid back the same day" [1]. '
    "Shipping is free over 40 euros [1][2]. "
    "Support is open Monday to Friday [7]. "
    f"Call us {SECRET} now."
)


def cited_record(labels: dict[str, str]) -> RagRecord:
    """A trace whose answer cites its chunks (see ``CITED_ANSWER``), for a judge to score."""
    return RagRecord(
        trace_id=CITED_TRACE,
        question="How long do refunds take?",
        answer=CITED_ANSWER,
        chunks=tuple(Chunk(i, text, id=f"doc-{i}") for i, text in enumerate(CITED_CHUNKS)),
        labels=labels,
        started_at=datetime.now(UTC),
    )


def tenant_of(n: int) -> str | None:
    return TENANTS[n % 3]


def make_record(n: int) -> RagRecord:
    tenant = tenant_of(n)
    owner = tenant or "shared"
    labels = {"route": ("billing", "search")[n // 3 % 2], **({"tenant": tenant} if tenant else {})}
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question=f"question {n} of {owner}",
        answer="Order A17 shipped on 3 March. It costs 40 euros.",
        chunks=(
            Chunk(0, "Order A17 shipped on 3 March.", id=f"{owner}-doc-{n % 4}", score=0.9),
            Chunk(1, "Order A17 costs 50 euros.", id=f"{owner}-faq", score=0.5),
            Chunk(2, "A chunk nobody named.", score=0.1),
        ),
        labels=labels,
        started_at=T0 + timedelta(minutes=25 * n),
        sample_reason="rule:error" if n == 3 else "sampled",
    )


def rescored(n: int) -> bool:
    """A later judge configuration rescored the record (it found every claim supported)."""
    return n % 7 == 0


MISSED_RETRIEVAL = Relevance(context_relevance=0.25, answer_relevance=0.75, cause="retrieval")
"""The relevance of the answers with a wholly unsupported claim: the chunks lacked it."""


def judgement_of(n: int) -> Judgement | None:
    """Every fourth answer contradicts the faq (critically every eighth, by the amount rule)
    while citing the wrong chunk, with an unresolved marker and a policy finding; every
    fourth has a claim the chunks do not support (every other one of them partly
    supported), those wholly unsupported blamed on retrieval (``MISSED_RETRIEVAL``); the
    rest are supported; one in ten is unscored, one in ten failed."""
    if n % 10 == 9:
        return None
    if n % 10 == 8:
        return Judgement(JUDGE, "judge_error", error="timeout", usage=JudgeUsage(calls=1))
    shipped = Claim("Order A17 shipped on 3 March.", "supported", chunk=0, quote="3 March")
    unresolved = 0
    policy: tuple[PolicyFinding, ...] = ()
    relevance = None
    if n % 4 == 0:
        critical = n % 8 == 0
        price = Claim(
            "It costs 40 euros.",
            "contradicted",
            chunk=1,
            critical=critical,
            critical_rule="amount" if critical else None,
            citations=(2,),
            citation="wrong",
        )
        shipped = replace(shipped, citations=(0,), citation="correct")
        unresolved, policy = 1, (POLICY,)
    elif n % 8 == 5:
        price = Claim("It costs 40 euros.", "partial", chunk=1, quote="costs", missing="40 euros")
    elif n % 4 == 1:
        price = Claim("It costs 40 euros.", "unsupported")
        relevance = MISSED_RETRIEVAL
    else:
        price = Claim("It costs 40 euros.", "supported", chunk=1, quote="euros")
    return Judgement(
        JUDGE,
        "ok",
        (shipped, price),
        usage=JudgeUsage(1, 120, 30),
        latency_ms=12.5,
        unresolved_citations=unresolved,
        policy=policy,
        relevance=relevance,
    )


def _alert(rule: str, segment: dict[str, str], state: str, hours: int) -> Alert:
    at = datetime.now(UTC) - timedelta(hours=hours)
    return Alert(
        rule=rule,
        segment=segment,
        state=state,  # type: ignore[arg-type]
        severity="critical" if state == "firing" else "warning",
        opened_at=at,
        updated_at=at,
        resolved_at=at if state == "resolved" else None,
        details={"current_rate": 0.4, "baseline_rate": 0.1, "records": 30},
    )


ALERTS = {
    "acme_billing": ("faithfulness_drift", {"route": "billing", "tenant": "acme"}, "firing"),
    "acme": ("critical_drift", {"tenant": "acme"}, "pending"),
    "acme_old": ("faithfulness_drift", {"tenant": "acme"}, "resolved"),
    "globex": ("faithfulness_drift", {"tenant": "globex"}, "firing"),
    "globex_search": ("no_data", {"route": "search", "tenant": "globex"}, "firing"),
    "overall": ("faithfulness_drift", {}, "pending"),
    "judge": ("judge_drift", {"judge": JUDGE}, "firing"),
}


def store_drift_run(sessions: Sessions, at: datetime | None = None) -> None:
    """What the worker's drift job stores for the read API (which never runs detectors):
    the detectors read now, without raising alerts, saved as the last run."""
    run = check_drift(sessions, JUDGE, CONFIG, dry_run=True)
    with sessions.begin() as session:
        drift_runs.save(
            session,
            JUDGE,
            at or datetime.now(UTC),
            run.baseline_ready,
            run.held_back,
            drift.summarize(run.readings, run.silent),
        )


def seed(sessions: Sessions, drift_run: bool = True) -> Seeded:
    made = [make_record(n) for n in range(RECORDS)]
    with sessions.begin() as session:
        records.save_records(session, made)
        records.save_feedback(session, [Feedback(made[0].trace_id, "thumbs_down", T0)])
    with sessions.begin() as session:
        for record_id, record in records.claim_pending(session, "seed", RECORDS, 60):
            n = int(record.trace_id, 16) - 1
            judgement = judgement_of(n)
            if judgement is not None:
                evaluations.save_evaluation(session, record_id, judgement)
            if rescored(n):
                # A later configuration rescored it: its evaluation is the newest.
                again = Judgement(OTHER_JUDGE, "ok", (Claim("All fine.", "supported", 0),))
                evaluations.save_evaluation(session, record_id, again)
    with sessions.begin() as session:
        frozen = drift.freeze(evaluations.outcomes(session, JUDGE), CONFIG)
        assert frozen is not None
        baselines.save_baselines(session, JUDGE, frozen)
    if drift_run:
        store_drift_run(sessions)
    seeded = Seeded("", {}, {})
    for record in made:
        seeded.traces.setdefault(record.labels.get("tenant"), []).append(record.trace_id)
    with sessions.begin() as session:
        for hours, (name, (rule, segment, state)) in enumerate(ALERTS.items()):
            (saved,) = alerts.save_alerts(session, [_alert(rule, segment, state, 10 - hours)])
            assert saved.id is not None
            seeded.alerts[name] = saved.id
        sentinels.add_set(session, "starter", "v1", [])
        ((set_id, *_),) = sentinels.latest_sets(session, "starter")
        result = SentinelResult(20, 10, 10, 1, 1, 0, 0.8)
        sentinels.add_run(session, set_id, JUDGE, result, 0.5, "good", T0)
        sentinels.add_run(session, set_id, OTHER_JUDGE, result, 3.0, "drift", T0)
        sentinels.distrust(session, OTHER_JUDGE, T0, "sentinels: the judge drifted")
        now = datetime.now(UTC)
        work.add_usage(session, JUDGE, JudgeUsage(3, 100, 20), now)
        work.add_usage(session, JUDGE, JudgeUsage(5, 300, 50), now - timedelta(days=1))
        work.block_judge(session, OTHER_JUDGE, "401 from the judge endpoint")
        for role, scopes, tenant in (
            ("admin", ["admin"], None),
            ("reader", ["read"], None),
            ("acme", ["read"], "acme"),
            ("globex", ["read"], "globex"),
            ("acme_review", ["read", "review"], "acme"),
            ("ingest", ["ingest"], None),
        ):
            key, prefix = new_key()
            store_keys.create_key(session, prefix, key_hash(key), scopes, tenant, name=role)
            seeded.keys[role], seeded.prefixes[role] = key, prefix
    return seeded


@dataclass(frozen=True)
class Shown:
    """What a record's list item shows: its newest evaluation (by ``judge``, if given)."""

    judge: str | None
    faithfulness: float | None
    critical: bool


def shown(n: int, judge: str | None = None) -> Shown | None:
    """None when the record has no evaluation (by ``judge``)."""
    if rescored(n) and judge in (None, OTHER_JUDGE):
        return Shown(OTHER_JUDGE, 1.0, False)
    if judge == OTHER_JUDGE:
        return None
    judgement = judgement_of(n)
    if judgement is None:
        return None
    return Shown(JUDGE, judgement.faithfulness, judgement.critical_unsupported)


def status_of(n: int) -> str:
    if rescored(n):
        return "scored"
    judgement = judgement_of(n)
    if judgement is None:
        return "pending"
    return "judge_error" if judgement.status == "judge_error" else "scored"
