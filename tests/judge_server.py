"""A loopback OpenAI-compatible judge that supports every sentence it is asked about."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


class SupportingJudge:
    """Answers each JUDGE sentence as supported by chunk 0, after ``latency`` seconds.

    ``status`` scripts failures: a list of (status, headers) consumed one per request
    before normal replies resume.
    """

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.requests = 0
        self.failures: list[tuple[int, dict[str, str], dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests += 1
            failure = self.failures.pop(0) if self.failures else None
        if self.latency:
            await asyncio.sleep(self.latency)
        if failure is not None:
            status, headers, error = failure
            return JSONResponse({"error": error}, status_code=status, headers=headers)
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
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps({"claims": claims})},
                    }
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            }
        )
