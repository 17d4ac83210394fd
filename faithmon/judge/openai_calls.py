"""Calls to an OpenAI-compatible endpoint: failures and their classes, usage, pacing, retries.

Retryable: 408, 429 (but exhausted quota), 5xx, timeouts and connection errors; the
rest fails at once. Replies that are not clean JSON are read tolerantly here too.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import openai

from ..model import Usage

T = TypeVar("T")


class JudgeFailure(Exception):
    """A call that failed for good, or ran out of attempts; carries the cause."""

    def __init__(self, cause: str, retryable: bool, raw: str | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retryable = retryable
        self.raw = raw


class CallUsage:
    """Calls, tokens and retries of one trace's judging."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.retries = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        if usage is not None:
            self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)

    def frozen(self) -> Usage:
        return Usage(self.calls, self.prompt_tokens, self.completion_tokens, self.retries)


class RateLimiter:
    """Spaces requests evenly to stay under a requests-per-minute budget."""

    def __init__(self, per_minute: float) -> None:
        self._interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self._interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            time.sleep(start - now)


def retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def classify(error: Exception) -> tuple[bool, str]:
    """(retryable, cause) for an exception raised by the openai client."""
    if isinstance(error, openai.APITimeoutError):
        return True, "timeout"
    if isinstance(error, openai.APIConnectionError):
        return True, f"connection error: {error}"
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        code = getattr(error, "code", None) or ""
        if status == 429 and "insufficient_quota" in f"{code} {error.message}":
            return False, "insufficient_quota: the account has no quota left"
        retryable = status in (408, 429) or status >= 500
        return retryable, f"HTTP {status}: {error.message}"[:300]
    return False, f"{type(error).__name__}: {error}"[:300]


def parse_object(content: str) -> dict[str, Any]:
    parsed = tolerant_json(content)
    if not isinstance(parsed, dict):
        raise ValueError("the reply is not a JSON object")
    return parsed


def tolerant_json(content: str) -> Any:
    """JSON, or the object between the first '{' and the last '}', trailing commas cut."""
    try:
        return json.loads(content)
    except ValueError:
        pass
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    candidate = re.sub(r",\s*([}\]])", r"\1", content[start : end + 1])
    return json.loads(candidate)


class RetryLayer:
    """The judge's one retry layer (the client's own is off): bounded attempts with jittered
    backoff honouring Retry-After, within the trace's deadline, a rate limit and a number of
    calls in flight."""

    def __init__(
        self,
        max_attempts: int,
        backoff: float,
        limiter: RateLimiter,
        slots: threading.BoundedSemaphore,
    ) -> None:
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._limiter = limiter
        self._slots = slots

    def attempts(self, call: Callable[[], T], deadline: float, usage: CallUsage) -> T:
        cause = "no attempt made"
        for attempt in range(self._max_attempts):
            if time.monotonic() >= deadline:
                raise JudgeFailure(f"deadline passed after: {cause}", True)
            self._limiter.wait()
            with self._slots:
                try:
                    return call()
                except JudgeFailure:
                    raise
                except openai.OpenAIError as error:
                    retryable, cause = classify(error)
                    if not retryable:
                        raise JudgeFailure(cause, False) from None
                    wait = retry_after(error) if isinstance(error, openai.APIStatusError) else None
            if wait is None:
                wait = min(8.0, self._backoff * 2**attempt) * random.uniform(0.8, 1.2)
            if attempt + 1 < self._max_attempts:
                remaining = deadline - time.monotonic()
                if wait >= remaining:
                    raise JudgeFailure(f"deadline too near to retry after: {cause}", True)
                usage.retries += 1
                time.sleep(wait)
        raise JudgeFailure(f"{self._max_attempts} attempts failed; last: {cause}", True)
