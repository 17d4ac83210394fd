"""What the jobs' tests share: a loopback OpenAI-compatible judge endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.openai_server import SupportingJudge
from tests.servers import serve_in_thread


@pytest.fixture
def judge_server() -> Iterator[tuple[SupportingJudge, str]]:
    """A judge that finds every sentence supported, unless ``failures`` are queued."""
    server = SupportingJudge(latency=0.01)
    with serve_in_thread(server.app) as url:
        yield server, url + "/v1"
