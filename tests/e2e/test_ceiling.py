"""Alerts from the first hour, on real parts: a fresh database, the shim's traces through
`faithmon serve`, `faithmon worker`, and a webhook on loopback. Long before the drift
baseline holds 2,000 scored records, a route whose answers fail half the time pages."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator

import pytest

import faithmon_instrumentation as fm
from tests.alerts.factory import SECRET, Receiver, serving
from tests.e2e.helpers import faithmon
from tests.timing import wait_for

pytestmark = pytest.mark.one_backend

CONTEXT = "Refunds are sent to the original payment method within 5 business days."
INVENTED = "Refunds reach your account within 24 hours."


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving() as found:
        yield found


@pytest.fixture
def first_day(env: dict[str, str], receiver: Receiver) -> dict[str, str]:
    env.update(
        {
            # The defaults a new user runs with: detection needs 2,000 records over 7 days.
            "FAITHMON_DRIFT_BASELINE_RECORDS": "2000",
            "FAITHMON_DRIFT_BASELINE_DAYS": "7",
            "FAITHMON_ALERT_WEBHOOK_URL": receiver.url + "/hooks/faithmon",
            "FAITHMON_ALERT_WEBHOOK_SECRET": SECRET,
        }
    )
    return env


@pytest.fixture
def shim(first_day: dict[str, str], server: tuple[str, subprocess.Popen[str]]) -> Iterator[None]:
    fm.setup(endpoint=server[0], service_name="e2e-first-day")
    yield
    fm.shutdown()


@pytest.mark.usefixtures("shim")
def test_the_ceiling_pages_before_any_baseline(
    first_day: dict[str, str], receiver: Receiver, server: tuple[str, subprocess.Popen[str]]
) -> None:
    env = first_day
    for n in range(80):
        route = ("refunds", "orders")[n % 2]
        answer = f"{CONTEXT} {INVENTED}" if route == "refunds" and n % 4 == 0 else CONTEXT
        with fm.rag_span("How long do refunds take?", route=route) as rag:
            rag.record_retrieval([{"id": "kb-1", "text": CONTEXT}], retriever="bm25")
            rag.record_answer(answer, model="m1")
    assert fm.flush()
    wait_for(
        lambda: len(json.loads(faithmon(env, "traces", "list", "--json", "--limit", "200"))) >= 80,
        60,
        "the receiver to store the traces",
    )

    faithmon(env, "worker", "--once")

    alerts = json.loads(faithmon(env, "alerts", "list", "--json"))
    ceiling = [a for a in alerts if a["rule"] == "faithfulness_ceiling"]
    assert [(a["segment"], a["state"]) for a in ceiling] == [({"route": "refunds"}, "firing")]
    assert ceiling[0]["details"]["current_rate"] == 0.5 and ceiling[0]["details"]["records"] == 40
    assert ceiling[0]["details"]["judge"]  # the judge whose scores it rests on, as drift's
    assert not [a for a in alerts if a["rule"] == "faithfulness_drift"]
    posted = [json.loads(r.body) for r in receiver.received if r.path == "/hooks/faithmon"]
    told = json.dumps(posted)
    assert "faithfulness_ceiling" in told and "refunds" in told
    assert all(r.headers.get("webhook-signature") for r in receiver.received)
    status = faithmon(env, "drift", "status")
    assert "baseline: 80 of 2,000 scored records" in status
    assert "until then the ceiling of 25% applies" in status
    # The dashboard says the same, from the worker's run: no page claims nothing is scored.
    for path in ("/", "/segments", "/alerts"):
        with urllib.request.urlopen(server[0] + path, timeout=30) as response:
            shown = response.read().decode()
        assert "baseline: 80 of 2,000 scored records, 0 of 7 days" in shown, path
        assert "No segment has scored records yet" not in shown
