"""The LLM judge's settings: one endpoint, one model, and how hard to try.

Its own module so that the judge (``openai_judge``) and the reply ladder
(``openai_ladder``) can both read it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["one_call", "two_call"]


@dataclass(frozen=True, slots=True)
class OpenAIJudgeConfig:
    model: str
    base_url: str | None = None
    api_key: str | None = None
    mode: Mode = "one_call"
    temperature: float = 0.0
    seed: int | None = 7
    timeout: float = 30.0
    """Seconds per attempt."""
    deadline: float = 120.0
    """Seconds per trace, retries and backoff included."""
    max_attempts: int = 3
    max_concurrency: int = 4
    requests_per_minute: float = 0.0
    """0 means no limit."""
    max_completion_tokens: int = 2048
    cache_entries: int = 10_000
    backoff: float = 0.5
    """Seconds before the first retry without Retry-After; doubles, with jitter."""
