"""A small OpenAI-compatible chat endpoint for tests: answers from the prompt's context."""

from __future__ import annotations

import re
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class ChatServer:
    """Answers with the sentence of context line ``[0]``; keeps every request it got."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        prompt = body["messages"][-1]["content"]
        match = re.search(r"^\[0\] (.+)$", prompt, flags=re.MULTILINE)
        content = match.group(1) if match else "I don't know."
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
            }
        )
