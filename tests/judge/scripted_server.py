"""An OpenAI-compatible chat endpoint on loopback that plays a script, one step per request."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Step:
    """One scripted reply: content of a completion, or an HTTP error."""

    content: str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str = "stop"


def reply(claims: list[dict[str, Any]]) -> Step:
    return Step(content=json.dumps({"claims": claims}))


class ScriptedServer:
    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    def play(self, *steps: Step) -> None:
        self.steps.extend(steps)

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        step = (
            self.steps.popleft() if self.steps else Step(status=500, error={"message": "no step"})
        )
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.status != 200:
            error = step.error or {"message": f"scripted {step.status}", "type": "server_error"}
            return JSONResponse({"error": error}, status_code=step.status, headers=step.headers)
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": step.finish_reason,
                        "message": {"role": "assistant", "content": step.content},
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        )
