"""The shim's example apps run as real processes against `faithmon serve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import faithmon
from tests.openai_server import ChatServer
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

EXAMPLES = Path(__file__).resolve().parents[2] / "instrumentation" / "examples"


def run_example(name: str, endpoint: str, **extra_env: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--endpoint", endpoint],
        env={**os.environ, **extra_env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)


def test_examples_are_stored_and_scored(
    env: dict[str, str], server: tuple[str, subprocess.Popen[str]]
) -> None:
    """The plain and the openai example apps produce scored, faithful records."""
    url, process = server
    chat = ChatServer()
    with serve_in_thread(chat.app) as chat_url:
        openai_out = run_example(
            "openai_app.py",
            url,
            OPENAI_BASE_URL=chat_url + "/v1",
            OPENAI_API_KEY="test-key",
            EXAMPLE_MODEL="local-model",
        )
    plain_out = run_example("plain_app.py", url)
    stop(process)

    assert openai_out.strip() == "The Team plan costs 12 euros per user per month."
    assert plain_out.splitlines() == [
        "Items can be returned within 30 days of delivery.",
        "Standard shipping takes 3 to 5 business days.",
    ]
    [request] = chat.requests
    assert request["model"] == "local-model" and request["temperature"] == 0

    faithmon(env, "worker", "--once")
    records = json.loads(faithmon(env, "traces", "list", "--json"))
    by_service = {}
    for record in records:
        by_service.setdefault(record["labels"]["service"], []).append(record)
    [priced] = by_service["openai-example"]
    assert priced["labels"]["model"] == "local-model"
    assert priced["labels"]["prompt_version"] == "p1"
    assert priced["generation"] == {"temperature": 0}
    assert [c["id"] for c in priced["chunks"]] == ["kb-7", "kb-9"]
    assert priced["faithfulness"] == 1.0
    plain = by_service["plain-example"]
    assert len(plain) == 2
    for record in plain:
        assert record["status"] == "scored" and record["faithfulness"] == 1.0
        assert len(record["chunks"]) == 1 and len(record["retrieved"]) == 2
        assert record["labels"]["retriever"] == "keyword"
