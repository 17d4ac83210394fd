"""The LLM judge's output ladder: how one structured reply is asked for and read.

Strict JSON schema first, then JSON mode with the schema in the prompt, then plain
text read tolerantly; the rung an endpoint refused is remembered. A reply that does
not parse or fit gets one short repair call carrying only that reply and the error.
Each request goes through the judge's one retry layer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import openai
from openai import OpenAI

from . import prompts
from .openai_calls import CallUsage, JudgeFailure, RetryLayer, parse_object
from .openai_config import OpenAIJudgeConfig
from .verify import SchemaError

_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "json mode")
Format = Literal["json_schema", "json_object", "text"]
_FORMATS: tuple[Format, ...] = ("json_schema", "json_object", "text")
T = TypeVar("T")


class Ladder:
    """Structured replies from one endpoint and model (see the module docstring)."""

    def __init__(self, client: OpenAI, config: OpenAIJudgeConfig, retries: RetryLayer) -> None:
        self._client = client
        self.config = config
        self._retries = retries
        self._format: Format = "json_schema"
        self._format_lock = threading.Lock()

    def structured(
        self,
        system: str,
        message: str,
        schema: dict[str, Any],
        name: str,
        usage: CallUsage,
        deadline: float,
        validate: Callable[[dict[str, Any]], T],
    ) -> T:
        """Ask, parse and validate; one repair call for a reply that does not parse or fit."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": message}]
        content = self._complete_with_format(messages, schema, name, usage, deadline)
        try:
            return validate(parse_object(content))
        except SchemaError as exc:  # an answer that breaks the contract is not repaired
            raise JudgeFailure(f"schema error: {exc}", False, content) from None
        except (ValueError, KeyError, TypeError, IndexError) as first_error:
            error = f"{type(first_error).__name__}: {first_error}"
        repair = [
            {"role": "system", "content": prompts.REPAIR_SYSTEM},
            {"role": "user", "content": prompts.repair_message(schema, content, error)},
        ]
        repaired = self._complete_with_format(repair, schema, name, usage, deadline)
        try:
            return validate(parse_object(repaired))
        except SchemaError as exc:
            raise JudgeFailure(f"schema error: {exc}", False, repaired) from None
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise JudgeFailure(f"unusable reply after repair: {exc}", False, content) from None

    def _complete_with_format(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        name: str,
        usage: CallUsage,
        deadline: float,
    ) -> str:
        while True:
            current = self._format
            try:
                return self._complete(messages, schema, name, current, usage, deadline)
            except JudgeFailure as failure:
                about_format = any(w in failure.cause.lower() for w in _FORMAT_WORDS)
                if (
                    failure.retryable
                    or not failure.cause.startswith("HTTP 400")
                    or not about_format
                ):
                    raise
                with self._format_lock:
                    # The endpoint refused this response_format: remember the next rung.
                    if self._format == current and current != "text":
                        self._format = _FORMATS[_FORMATS.index(current) + 1]
                    elif self._format == current:
                        raise
                continue

    def _complete(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        name: str,
        fmt: Format,
        usage: CallUsage,
        deadline: float,
    ) -> str:
        response_format: Any
        sent = list(messages)
        if fmt == "json_schema":
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif fmt == "json_object":
            response_format = {"type": "json_object"}
            sent[0] = {
                "role": "system",
                "content": messages[0]["content"]
                + "\nReply with JSON matching: "
                + json.dumps(schema),
            }
        else:
            response_format = openai.NOT_GIVEN
            sent[0] = {
                "role": "system",
                "content": messages[0]["content"]
                + "\nReply with JSON only, matching: "
                + json.dumps(schema),
            }

        def call() -> str:
            extra: dict[str, Any] = {}
            if self.config.seed is not None:
                extra["seed"] = self.config.seed
            response = self._client.chat.completions.create(
                model=self.config.model,
                messages=sent,  # type: ignore[arg-type]
                temperature=self.config.temperature,
                max_completion_tokens=self.config.max_completion_tokens,
                response_format=response_format,
                timeout=max(0.1, min(self.config.timeout, deadline - time.monotonic())),
                **extra,
            )
            usage.add(response.usage)
            if not response.choices:
                raise JudgeFailure("the reply has no choices", False)
            choice = response.choices[0]
            content = choice.message.content or ""
            if choice.finish_reason == "length":
                raise JudgeFailure("the reply was cut at the token limit", False, content)
            return content

        return self._retries.attempts(call, deadline, usage)
