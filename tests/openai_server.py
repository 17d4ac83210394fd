"""One loopback OpenAI-compatible chat endpoint for the tests and the benches.

``OpenAIServer`` is a Starlette app; serve it with ``tests.servers.serve_in_thread``
(the benches use ``bench/loopback.py``). It answers ``POST /v1/chat/completions``
and ``POST /<label>/v1/chat/completions``, and each request gets, in order:

1. the next ``Step`` queued with ``play()``: a scripted reply, or an HTTP error
   (failure injection);
2. else what its ``answer`` function makes of the body and the label: one of
   ``no_step`` (the default: a 500, so a test that scripted too few steps fails
   loudly), ``supporting`` (a judge that finds every sentence supported) and
   ``context_line`` (a chat model that repeats context line ``[0]``), or the
   caller's own, as ``bench/judge_cost_mock.py`` has.

Every answer waits ``latency`` seconds (plus the step's ``delay``) without blocking
the event loop, so the server holds any number of requests at once. ``requests``
keeps every body and ``load()`` the time-weighted number of requests in flight.
A request anywhere else, or one whose label the answer refuses (returns None), is
answered 404 and noted in ``stray``.

``ChatServer`` and ``SupportingJudge`` are the two set-ups the tests use by name.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Step:
    """One reply: a completion's content (or tool calls), or an HTTP error."""

    content: str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str = "stop"
    tool_calls: list[dict[str, Any]] | None = None
    usage: tuple[int, int] = (100, 20)
    """Prompt and completion tokens the reply reports."""


Answer = Callable[[dict[str, Any], str], Step | None]
"""(request body, path label) → the reply, or None for a request it does not serve."""


def reply(claims: list[dict[str, Any]], **answer: Any) -> Step:
    """The judge's JSON reply carrying ``claims`` and the answer-level fields given
    (``context_relevance``, ``answer_relevance``, ``cause``, ``abstention``)."""
    return Step(content=json.dumps({"claims": claims, **answer}))


def no_step(body: dict[str, Any], label: str) -> Step:
    return Step(status=500, error={"message": "no step"})


def supporting(body: dict[str, Any], label: str) -> Step:
    """Every sentence under ``JUDGE:`` supported by chunk 0, quoting its first 18 characters;
    the chunks and the answer wholly relevant."""
    prompt = body["messages"][-1]["content"]
    chunk = re.search(r"^\[C0\] (.+)$", prompt, flags=re.MULTILINE)
    targets = re.search(r"JUDGE: (.+)$", prompt, flags=re.MULTILINE)
    quote = chunk.group(1)[:18] if chunk else ""
    claims = [
        {
            "sentence": int(t.strip()[1:]),
            "claim": "claim",
            "chunk": 0,
            "quote": quote,
            "verdict": "supported",
        }
        for t in (targets.group(1).split(",") if targets else [])
    ]
    relevant = {
        "context_relevance": 1.0,
        "answer_relevance": 1.0,
        "cause": None,
        "abstention": None,
    }
    return Step(content=json.dumps({"claims": claims, **relevant}), usage=(50, 10))


def context_line(body: dict[str, Any], label: str) -> Step:
    """The sentence of the prompt's context line ``[0]``, as a grounded model would say it."""
    prompt = body["messages"][-1]["content"]
    match = re.search(r"^\[0\] (.+)$", prompt, flags=re.MULTILINE)
    return Step(content=match.group(1) if match else "I don't know.", usage=(20, 9))


@dataclass(frozen=True, slots=True)
class Load:
    """What the server saw since its last ``reset()``."""

    requests: int
    peak_in_flight: int
    mean_in_flight: float
    """Requests in flight, averaged over the time from the first request to the last reply."""
    first_start: float | None
    last_end: float | None

    @property
    def window(self) -> float:
        if self.first_start is None or self.last_end is None:
            return 0.0
        return self.last_end - self.first_start


_NOT_FOUND = {"error": {"message": "not found", "type": "invalid_request"}}


class OpenAIServer:
    """``/v1/chat/completions`` on loopback: scripted steps first, then ``answer``."""

    def __init__(self, answer: Answer = no_step, *, latency: float = 0.0) -> None:
        self.answer = answer
        self.latency = latency
        self.steps: deque[Step] = deque()
        # Handlers run on uvicorn's thread; the counts are read and reset from others.
        self._lock = threading.Lock()
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/{label:path}/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/{path:path}", self._stray, methods=["GET", "POST"]),
            ]
        )
        self.reset()

    def play(self, *steps: Step) -> None:
        self.steps.extend(steps)

    def reset(self) -> None:
        """Forget the requests seen and start the load count afresh."""
        with self._lock:
            self.requests: list[dict[str, Any]] = []
            self.stray: list[str] = []
            self._in_flight = 0
            self._peak = 0
            self._area = 0.0
            self._first_start: float | None = None
            self._last_end: float | None = None
            self._changed = time.monotonic()

    def load(self) -> Load:
        with self._lock:
            first, last = self._first_start, self._last_end
            window = (last - first) if first is not None and last is not None else 0.0
            return Load(
                requests=len(self.requests),
                peak_in_flight=self._peak,
                mean_in_flight=self._area / window if window > 0 else 0.0,
                first_start=first,
                last_end=last,
            )

    def _move(self, step: int) -> None:
        now = time.monotonic()
        with self._lock:
            self._area += self._in_flight * (now - self._changed)
            self._changed = now
            self._in_flight += step
            if step > 0:
                self._peak = max(self._peak, self._in_flight)
                if self._first_start is None:
                    self._first_start = now
            else:
                self._last_end = now

    async def _stray(self, request: Request) -> Response:
        with self._lock:
            self.stray.append(f"{request.method} {request.url.path}")
        return JSONResponse(_NOT_FOUND, status_code=404)

    async def _chat(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse(
                {"error": {"message": "bad JSON", "type": "invalid_request"}}, status_code=400
            )
        with self._lock:
            self.requests.append(body)
            step = self.steps.popleft() if self.steps else None
        self._move(+1)
        try:
            if step is None:
                step = self.answer(body, request.path_params.get("label", ""))
            if step is None:
                return await self._stray(request)
            if self.latency + step.delay:
                await asyncio.sleep(self.latency + step.delay)
            return self._completion(body, step)
        finally:
            self._move(-1)

    def _completion(self, body: dict[str, Any], step: Step) -> Response:
        if step.status != 200:
            error = step.error or {"message": f"scripted {step.status}", "type": "server_error"}
            return JSONResponse({"error": error}, status_code=step.status, headers=step.headers)
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        if step.tool_calls is not None:
            message["tool_calls"] = step.tool_calls
        prompt_tokens, completion_tokens = step.usage
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": str(body.get("model")),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": step.finish_reason,
                        "message": message,
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )


class ChatServer(OpenAIServer):
    """A chat model that answers with context line ``[0]``; ``requests`` keeps every body."""

    def __init__(self) -> None:
        super().__init__(context_line)


class SupportingJudge:
    """The workers' judge: every sentence supported by chunk 0, after ``latency`` seconds.

    ``requests`` counts every request, failures included. ``failures`` scripts
    errors as (status, headers, error), taken one per request before normal
    replies resume.
    """

    def __init__(self, latency: float = 0.0) -> None:
        self.failures: list[tuple[int, dict[str, str], dict[str, Any]]] = []
        self.server = OpenAIServer(self._answer, latency=latency)
        self.app = self.server.app

    @property
    def latency(self) -> float:
        return self.server.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        self.server.latency = seconds

    @property
    def requests(self) -> int:
        return len(self.server.requests)

    def _answer(self, body: dict[str, Any], label: str) -> Step:
        if self.failures:
            status, headers, error = self.failures.pop(0)
            return Step(status=status, headers=headers, error=error)
        return supporting(body, label)
