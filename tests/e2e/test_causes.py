"""Why answers fail, end to end: shim → OTLP → `faithmon serve` → `faithmon worker` → the
alerts, the CLI and the segments API. A re-indexed retriever that misses fires
``retrieval_drift`` on its version, and the unsupported answers behind it are put down
to retrieval; a model that strays beside good chunks is put down to generation."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import faithmon_instrumentation as fm
from tests.e2e.helpers import faithmon
from tests.timing import wait_for

pytestmark = pytest.mark.one_backend

QUESTION = "How long does standard shipping take within the EU?"
ON_TOPIC = "Standard shipping takes 3 to 5 business days within the EU."
OFF_TOPIC = "Gift cards cannot be returned. Sale items can be exchanged but not refunded."
FROM_MEMORY = "Standard shipping takes 2 business days."
STRAYED = ON_TOPIC + " Parcels are also delivered on Sundays."


@pytest.fixture
def causes_env(env: dict[str, str]) -> dict[str, str]:
    env.update({"FAITHMON_DRIFT_DIMENSIONS": "retriever_version,model"})
    return env


@pytest.fixture
def shim(server: tuple[str, subprocess.Popen[str]]) -> Iterator[None]:
    fm.setup(endpoint=server[0], service_name="e2e-causes")
    yield
    fm.shutdown()


def send(chunk: str, answer: str, version: str, model: str) -> None:
    with fm.rag_span(QUESTION, route="shipping") as rag:
        rag.record_retrieval(
            [{"id": "kb", "text": chunk, "score": 0.8}], retriever="bm25", retriever_version=version
        )
        rag.record_answer(answer, model=model)


def stored(env: dict[str, str], count: int) -> None:
    def listed() -> bool:
        records = json.loads(faithmon(env, "traces", "list", "--json", "--limit", "1000"))
        return len(records) >= count

    wait_for(listed, 60, f"the receiver to store {count} traces")


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.usefixtures("causes_env", "shim")
def test_retrieval_drift_and_the_cause_split_through_the_worker(
    causes_env: dict[str, str], server: tuple[str, subprocess.Popen[str]]
) -> None:
    env = causes_env
    for _ in range(40):
        send(ON_TOPIC, ON_TOPIC, "kb-1", "m1")
    for n in range(40):
        # The new index misses every other question; the model then answers from memory.
        send(OFF_TOPIC if n % 2 else ON_TOPIC, FROM_MEMORY if n % 2 else ON_TOPIC, "kb-2", "m1")
    for n in range(30):
        # A new model beside good chunks: it adds what no chunk says.
        send(ON_TOPIC, STRAYED if n % 2 else ON_TOPIC, "kb-1", "m2")
    assert fm.flush()
    stored(env, 110)

    faithmon(env, "worker", "--once")

    alerts = json.loads(faithmon(env, "alerts", "list", "--json"))
    firing = {(a["rule"], json.dumps(a["segment"], sort_keys=True)): a for a in alerts}
    retrieval = firing[("retrieval_drift", '{"retriever_version": "kb-2"}')]
    assert retrieval["state"] == "firing"
    assert {e["context_relevance"] < 0.5 for e in retrieval["details"]["examples"]} == {True}
    missed = firing[("faithfulness_drift", '{"retriever_version": "kb-2"}')]["details"]
    assert missed["dominant_cause"] == "retrieval" and set(missed["causes"]) == {"retrieval"}
    assert {e["cause"] for e in missed["examples"]} == {"retrieval"}
    strayed = firing[("faithfulness_drift", '{"model": "m2"}')]["details"]
    assert strayed["dominant_cause"] == "generation"
    assert not [a for a in alerts if a["rule"] == "retrieval_drift" and a is not retrieval]
    listed = faithmon(env, "alerts", "list")
    assert "mostly retrieval" in listed and "mostly generation" in listed

    # The segments API serves the worker's run: the unsupported rate split by cause.
    segments = get(server[0] + "/api/v1/segments")
    detectors = {
        (item["segment"], d["stream"]): d for item in segments["items"] for d in item["detectors"]
    }
    split = detectors[("retriever_version=kb-2", "unsupported")]
    assert split["causes"]["retrieval"] == pytest.approx(split["current_rate"], abs=1e-3)
    assert detectors[("model=m2", "unsupported")]["causes"] == {
        "generation": pytest.approx(detectors[("model=m2", "unsupported")]["current_rate"])
    }
    assert detectors[("retriever_version=kb-2", "retrieval")]["state"] == "firing"
    assert detectors[("retriever_version=kb-1", "retrieval")]["state"] == "ok"
    with urllib.request.urlopen(server[0] + "/", timeout=30) as response:
        overview = response.read().decode()
    # The overview's row of the new retriever: its unsupported rate, all of it retrieval.
    row = overview[overview.index("retriever_version=kb-2</a>") :].split("</tr>")[0]
    assert f"retrieval {split['causes']['retrieval'] * 100:.1f} pts" in row
