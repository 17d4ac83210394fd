"""Helpers shared by the convention readers: text, JSON, documents, evidence checks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from faithmon_instrumentation import attributes as attr

from ...model import Chunk
from .. import bounded_json
from ..spans import IngestSpan

QUESTION_KEYS = ("question", "query", "input", "user_input", "query_str", "prompt")
ANSWER_KEYS = ("answer", "output", "result", "response", "text", "content")


def text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def loads(value: Any) -> Any:
    """A JSON string decoded, a structured value as it is; None for absent or bad JSON
    (nested past ``bounded_json.MAX_DEPTH`` included)."""
    if isinstance(value, str):
        try:
            return bounded_json.loads(value)
        except ValueError:
            return None
    return value


def pick(value: Any, keys: Sequence[str]) -> str | None:
    """A string, or the first string under one of ``keys`` in a (nested) mapping."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        for key in keys:
            found = value.get(key)
            if isinstance(found, str) and found.strip():
                return found
        for nested in ("inputs", "outputs", "kwargs"):
            if isinstance(value.get(nested), Mapping):
                found_nested = pick(value[nested], keys)
                if found_nested:
                    return found_nested
    return None


def metadata(raw: Any) -> tuple[Mapping[str, Any], str | None]:
    """A chunk's metadata, and why it was left out (None when it was kept).

    JSON that does not parse is kept as text (``raw``); JSON nested too deep is not: it
    is the problem, and the record's evidence is incomplete.
    """
    if isinstance(raw, Mapping):
        return dict(raw), None
    if isinstance(raw, str):
        try:
            loaded = bounded_json.loads(raw)
        except bounded_json.TooDeep as exc:
            return {}, f"metadata {exc}"
        except ValueError:
            loaded = None
        return (loaded if isinstance(loaded, dict) else {"raw": raw}), None
    return {}, None


def chunk(position: int, doc: Mapping[str, Any]) -> tuple[Chunk | None, str | None]:
    """The chunk in ``doc`` (None when it has no text), and why its metadata was left out."""
    content = doc.get("content", doc.get("text", doc.get("page_content", doc.get("document"))))
    if not isinstance(content, str):
        return None, None
    score = doc.get("score")
    meta, problem = metadata(doc.get("metadata"))
    built = Chunk(
        position=position,
        text=content,
        id=None if doc.get("id") is None else str(doc["id"]),
        score=float(score)
        if isinstance(score, int | float) and not isinstance(score, bool)
        else None,
        metadata=meta,
    )
    return built, problem


ChunksRead = tuple[tuple[Chunk, ...], str | None]
"""(the chunks that could be read, why some could not, or None)."""


def chunks(docs: Iterable[Any]) -> ChunksRead:
    """Chunks in list order; an item that is not an object, or has no text, or metadata
    left out, is a problem."""
    out: list[Chunk] = []
    problem: str | None = None
    for i, doc in enumerate(docs):
        built, unreadable = chunk(i, doc) if isinstance(doc, Mapping) else (None, None)
        if built is None:
            kind = "has no text" if isinstance(doc, Mapping) else "is not an object"
            problem = problem or f"chunk {i} {kind}"
            continue
        if unreadable is not None:
            problem = problem or f"chunk {i} {unreadable}"
        out.append(built)
    return tuple(out), problem


def json_documents(value: Any, key: str = "documents") -> ChunksRead:
    """Chunks from a JSON list (or a mapping holding one under ``key``)."""
    try:
        loaded = bounded_json.loads(value) if isinstance(value, str) else value
    except bounded_json.TooDeep as exc:
        return (), f"chunk {exc}"
    except ValueError:
        loaded = None
    if loaded is None and value is not None:
        return (), "chunk JSON does not parse"
    if isinstance(loaded, Mapping):
        loaded = loaded.get(key)
    if not isinstance(loaded, list):
        return (), "chunk JSON is not a list"
    return chunks(loaded)


_INDEXED_KEY = re.compile(r"([0-9]+)\.document\.(.+)")


def flattened_documents(
    span: IngestSpan, prefix: str
) -> tuple[tuple[Chunk, ...] | None, str | None]:
    """Chunks from OpenInference's ``<prefix>.<i>.document.<field>`` keys; None if none.

    A key under ``<prefix>.`` of another shape, or indices with a gap, is a problem.
    """
    fields: dict[int, dict[str, Any]] = {}
    unreadable = False
    head = prefix + "."
    for key, value in span.attributes.items():
        if not key.startswith(head):
            continue
        match = _INDEXED_KEY.fullmatch(key, len(head))
        if match is None:
            unreadable = True
            continue
        fields.setdefault(int(match[1]), {})[match[2]] = value
    if not fields and not unreadable:
        return None, None
    docs, problem = chunks(fields[i] for i in sorted(fields))
    gap = next((i for i in range(len(fields)) if i not in fields), None)
    if gap is not None:
        problem = f"flattened chunk keys skip index {gap}"
    elif unreadable:
        problem = "a flattened chunk key does not parse"
    return docs, problem


def evidence_problem(
    span: IngestSpan, documents: Sequence[Chunk], unreadable: str | None = None
) -> str | None:
    """Why this span's chunks cannot be trusted whole, or None.

    ``unreadable`` is the reader's own problem with them (a gap, a chunk without
    text). Dropped attributes and the shim's chunk count come first: they are the
    likelier cause and say more.
    """
    if span.dropped_attributes:
        return f"span {span.name!r} dropped {span.dropped_attributes} attributes"
    expected_count = span.attributes.get(attr.DOCUMENT_COUNT)
    if isinstance(expected_count, int) and expected_count != len(documents):
        return f"{len(documents)} of {expected_count} chunks arrived"
    if unreadable:
        return unreadable
    checks = span.attributes.get(attr.DOCUMENT_CHECKS)
    if isinstance(checks, str):
        actual = attr.document_checks([c.text for c in documents])
        if checks != actual:
            pairs = zip(checks.split(","), actual.split(","), strict=False)
            cut = sum(a != b for a, b in pairs)
            return f"{cut or 'some'} of {len(documents)} chunks arrived cut or altered"
    return None


def messages_text(value: Any, role: str) -> str | None:
    """The text of the last ``role`` message in GenAI-style messages (parts or content)."""
    loaded = loads(value)
    if not isinstance(loaded, list):
        return None
    for message in reversed(loaded):
        if not isinstance(message, Mapping) or message.get("role", role) != role:
            continue
        content = message.get("content")
        if isinstance(content, str) and content.strip():
            return content
        parts = message.get("parts")
        if isinstance(parts, list):
            texts = [
                str(p.get("content"))
                for p in parts
                if isinstance(p, Mapping) and p.get("type") == "text" and p.get("content")
            ]
            if texts:
                return "".join(texts)
    return None


def indexed_messages(span: IngestSpan, prefix: str, role: str | None) -> str | None:
    """The last ``<prefix>.<i>.content`` (optionally of ``role``) in flattened keys."""
    found: dict[int, dict[str, Any]] = {}
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.(?:message\.)?(content|role)$")
    for key, value in span.attributes.items():
        match = pattern.match(key)
        if match:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    for index in sorted(found, reverse=True):
        message = found[index]
        if role is not None and message.get("role", role) != role:
            continue
        content = text(message.get("content"))
        if content:
            return content
    return None
