"""The judge cost bench's mock model: schema-valid replies to any judge's request, each
request logged under the judge and sample its path names, with a prompt-token estimate
that is the same for every judge.

It answers through ``tests/openai_server.py``'s ``OpenAIServer``: clients use the base
URL ``http://127.0.0.1:PORT/<judge>/<sample>/v1``.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge_cost_samples import Sample

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.openai_server import OpenAIServer, Step

QUOTE_CHARS = 20

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_LABEL = re.compile(r"(?P<judge>[a-z]+)/(?P<sample>[A-Za-z0-9_-]+)")
_TARGET = re.compile(r"^JUDGE:\s*(.+)$", re.MULTILINE)
_ANSWER_LINE = re.compile(r"^\[S(\d+)\] (.*)$", re.MULTILINE)
_CHUNK0 = re.compile(r"\[C0\] (.+)")


def split_sentences(text: str) -> list[str]:
    """The mock's own plain splitter (the peers' LLM would extract statements instead)."""
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def message_text(message: dict[str, Any]) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def prompt_chars(body: dict[str, Any]) -> int:
    """Characters the estimator counts: all message texts, response_format and tools."""
    chars = sum(len(message_text(m)) for m in body.get("messages", []) if isinstance(m, dict))
    for key in ("response_format", "tools"):
        if body.get(key) is not None:
            chars += len(compact(body[key]))
    return chars


def estimate_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _first_schema(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that looks like a JSON schema (JSON mode prompts)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("properties"), dict):
            return value
    return None


def request_schema(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The reply schema the request asks for, and where it was found."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema")
        if isinstance(schema, dict):
            return schema, "response_format"
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        parameters = tools[0].get("function", {}).get("parameters")
        if isinstance(parameters, dict):
            return parameters, "tools"
    for message in body.get("messages", []):
        if isinstance(message, dict):
            found = _first_schema(message_text(message))
            if found is not None:
                return found, "prompt"
    return None, "none"


@dataclass(slots=True)
class _Context:
    """What the mock fills the schema with for one request."""

    answer_sentences: list[str]
    context_sentences: list[str]
    targets: list[tuple[int, str]]
    """faithmon's sentences to judge: (index, sentence)."""
    quote: str


def _context(body: dict[str, Any], sample: Sample | None) -> _Context:
    text = "\n".join(message_text(m) for m in body.get("messages", []) if isinstance(m, dict))
    if sample is not None:
        answer = split_sentences(sample.answer)
        context = [s for chunk in sample.chunks for s in split_sentences(chunk)]
        quote = sample.chunks[0][:QUOTE_CHARS]
    else:
        answer = split_sentences(text)[-3:]
        context = split_sentences(text)[:3]
        quote = ""
    found = _CHUNK0.search(text)
    if found:
        quote = found.group(1)[:QUOTE_CHARS]
    lines = {int(i): s for i, s in _ANSWER_LINE.findall(text)}
    targets: list[tuple[int, str]] = []
    judge = _TARGET.search(text)
    if judge:
        for token in re.findall(r"S(\d+)", judge.group(1)):
            index = int(token)
            targets.append((index, lines.get(index, "")))
    return _Context(answer, context, targets, quote)


class _Instance:
    """A minimal valid instance of a JSON schema, with the fields the judges read filled."""

    def __init__(self, root: dict[str, Any], context: _Context) -> None:
        self.root = root
        self.context = context

    def resolve(self, schema: Any) -> dict[str, Any]:
        while isinstance(schema, dict) and "$ref" in schema:
            node: Any = self.root
            for part in str(schema["$ref"]).lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema if isinstance(schema, dict) else {}

    def build(self, schema: Any, key: str | None = None, index: int = 0) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.choose(list(schema["enum"]))
        for combinator in ("anyOf", "oneOf", "allOf"):
            if combinator in schema:
                branches = [self.resolve(b) for b in schema[combinator]]
                usable = [b for b in branches if b.get("type") != "null"] or branches
                return self.build(usable[0], key, index)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "object":
            properties = schema.get("properties", {})
            return {name: self.build(sub, name, index) for name, sub in properties.items()}
        if kind == "array":
            items = self.resolve(schema.get("items", {}))
            return [self.build(items, key, i) for i in range(self.count(key, items))]
        if kind in ("integer", "number"):
            return self.integer(key, index)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self.string(key, index)

    def count(self, key: str | None, items: dict[str, Any]) -> int:
        context = self.context
        if key == "truths":
            return len(context.context_sentences)
        if key == "claims" and "sentence" in items.get("properties", {}):
            return len(context.targets)
        if key in ("statements", "claims", "verdicts"):
            return len(context.answer_sentences)
        return 1

    def items_of(self, key: str | None) -> list[str]:
        if key == "truths":
            return self.context.context_sentences
        return self.context.answer_sentences

    @staticmethod
    def choose(values: list[Any]) -> Any:
        for preferred in ("supported", "yes", 1, True):
            if preferred in values:
                return preferred
        return values[0]

    def integer(self, key: str | None, index: int) -> int:
        if key == "sentence":
            targets = self.context.targets
            return targets[index][0] if index < len(targets) else 0
        if key in ("verdict", "chunk"):
            return 1 if key == "verdict" else 0
        return 0

    def string(self, key: str | None, index: int) -> str:
        context = self.context
        if key in ("statements", "claims", "truths"):
            values = self.items_of(key)
            return values[index] if index < len(values) else "x"
        if key in ("statement", "claim"):
            if context.targets:
                return context.targets[index][1] if index < len(context.targets) else "x"
            values = context.answer_sentences
            return values[index] if index < len(values) else "x"
        if key == "quote":
            return context.quote
        if key == "verdict":
            return "yes"
        if key == "reason":
            return "The score is 1.00 because the context states every claim."
        return "x"


def _step(reply: Any) -> str:
    """A label for the request's step: the reply's keys, with the fields of object items."""
    if not isinstance(reply, dict):
        return type(reply).__name__
    labels = []
    for key, value in reply.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            labels.append(f"{key}[{','.join(value[0])}]")
        else:
            labels.append(key)
    return " ".join(labels)


@dataclass(frozen=True, slots=True)
class Logged:
    judge: str
    sample: str
    model: str
    step: str
    schema_from: str
    response_format: str | None
    prompt_chars: int
    prompt_tokens: int
    completion_tokens: int

    def as_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "sample": self.sample,
            "model": self.model,
            "step": self.step,
            "schema_from": self.schema_from,
            "response_format": self.response_format,
            "prompt_chars": self.prompt_chars,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


class CountingJudge:
    """Answers every request with a valid instance of the schema it asks for, and logs it."""

    def __init__(self, samples: dict[str, Sample]) -> None:
        self.samples = samples
        self.log: list[Logged] = []
        self.lock = threading.Lock()
        self.server = OpenAIServer(self.answer)

    @property
    def stray(self) -> list[str]:
        """Requests to any other path (or a label that names no judge and sample)."""
        return self.server.stray

    def answer(self, body: dict[str, Any], label: str) -> Step | None:
        if not label:
            judge, sample_id = "unknown", "unknown"
        elif (match := _LABEL.fullmatch(label)) is not None:
            judge, sample_id = match.group("judge"), match.group("sample")
        else:
            return None
        schema, schema_from = request_schema(body)
        context = _context(body, self.samples.get(sample_id))
        if schema is None:
            reply: Any = {"reason": "no schema in the request"}
        else:
            reply = _Instance(schema, context).build(schema)
        content = compact(reply)
        chars = prompt_chars(body)
        prompt_tokens = estimate_tokens(chars)
        completion_tokens = estimate_tokens(len(content))
        response_format = body.get("response_format")
        with self.lock:
            self.log.append(
                Logged(
                    judge=judge,
                    sample=sample_id,
                    model=str(body.get("model")),
                    step=_step(reply),
                    schema_from=schema_from,
                    response_format=(
                        str(response_format.get("type"))
                        if isinstance(response_format, dict)
                        else None
                    ),
                    prompt_chars=chars,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            )
            number = len(self.log)
        usage = (prompt_tokens, completion_tokens)
        if schema_from == "tools" and body.get("tools"):
            name = body["tools"][0].get("function", {}).get("name", "tool")
            call = {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": content},
            }
            return Step(content=None, tool_calls=[call], finish_reason="tool_calls", usage=usage)
        return Step(content=content, usage=usage)

    def requests_of(self, judge: str, sample: str) -> list[Logged]:
        with self.lock:
            return [r for r in self.log if r.judge == judge and r.sample == sample]
