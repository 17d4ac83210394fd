"""Replace PII with keyed, consistent pseudonyms before anything is stored.

Each detected value becomes ``<KIND_xxxxxxxx>``: HMAC-SHA256 under the scrub key
over the value's normalised form (see ``detectors``), so the same value gets
the same placeholder wherever it appears in a record (question, chunks, answer,
labels, metadata, settings; keys as well as values, since a key such as
``"jane.doe@example.com"`` is as private as a value) and different values get
different ones. A judge can then still tell "the answer repeats the chunk's
account number" from "it gives another one".

Scope decides whether placeholders also match *across* records, which makes
records linkable: ``record`` (the default) keys each record apart, ``tenant``
keys by the tenant label, ``global`` keys everything alike. Labels are always keyed
globally: they name segments, which gather records.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from ..model import Chunk, RagRecord
from . import addresses, names
from .detectors import Detector, Found, builtin
from .detectors_common import bounded

Scope = Literal["record", "tenant", "global"]
Known = frozenset[tuple[str, str]]
"""(kind, text) of name and address parts found in a record (``PiiScrubber.mentions``)."""
SCOPES: tuple[Scope, ...] = ("record", "tenant", "global")
CACHE_ENTRIES = 4096
CACHE_MAX_TEXT = 8192


class PiiScrubber:
    """Scrub every text of a record with the built-in detectors (plus any extra ones).

    ``names_and_addresses=False`` leaves out the PERSON and ADDRESS detectors.

    Not thread-safe (its cache): the pipeline calls it under its own lock.
    """

    def __init__(
        self,
        key: bytes,
        phone_region: str = "US",
        scope: Scope = "record",
        extra_detectors: Sequence[Detector] = (),
        names_and_addresses: bool = True,
    ) -> None:
        if len(key) < 16:
            raise ValueError("the scrub key must be at least 16 bytes")
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
        self._key = key
        self._scope = scope
        builtins = builtin(phone_region, names_and_addresses)
        # A plug-in named twice (FAITHMON_SCRUB_DETECTORS=faithmon.ingest.names:detect,
        # as before they were built in) runs once.
        self._detectors = [*builtins, *(d for d in extra_detectors if d not in builtins)]
        # Labels and knowledge-base chunks repeat from record to record, and
        # detection (phone matching above all) is the costliest step of ingest.
        self._cache: OrderedDict[str, tuple[Found, ...]] = OrderedDict()

    def pseudonym(self, kind: str, value: str, scope_id: str = "") -> str:
        message = f"{scope_id}\x00{kind}\x00{value}".encode()
        digest = hmac.new(self._key, message, hashlib.sha256).hexdigest()
        return f"<{kind}_{digest[:8]}>"

    def detect(self, text: str) -> tuple[Found, ...]:
        """Non-overlapping findings, in order; the first detector wins a tie.

        Findings that overlap merge into one over their union, of the earlier one's kind
        and keyed on the union's text, so no fragment of either is left raw.
        """
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        candidates = [
            (found, rank) for rank, detect in enumerate(self._detectors) for found in detect(text)
        ]
        result = _merged(text, candidates)
        if len(text) <= CACHE_MAX_TEXT:
            self._cache[text] = result
            if len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return result

    def mentions(self, texts: Iterable[str]) -> frozenset[tuple[str, str]]:
        """(kind, words) of the parts of every PERSON and ADDRESS found in ``texts`` that
        still name someone or somewhere on their own: "Smith" of "John Smith", "Goleta"
        of "420 S Fairview Ave, Goleta, CA"."""
        found: set[tuple[str, str]] = set()
        for text in texts:
            for finding in self.detect(text):
                span = text[finding.start : finding.end]
                if finding.kind == names.KIND:
                    found.update(
                        (names.KIND, span[s:e])
                        for s, e, _ in names.words(span)
                        if names.standalone(span[s:e])
                    )
                elif finding.kind == addresses.KIND:
                    found.update(
                        (addresses.KIND, span[s:e])
                        for s, e, _ in addresses.components(span)[1:]
                        if addresses.standalone(span[s:e])
                    )
        return frozenset(found)

    def scrub_text(self, text: str, scope_id: str = "", known: Known = frozenset()) -> str:
        """The text with every detected value replaced by its pseudonym.

        ``known``: parts of names and addresses found elsewhere in the record
        (``mentions``); each also goes where it stands alone ("Smith" after "John
        Smith"). A name becomes a token per word ("Dr. <PERSON_a> <PERSON_b>") and an
        address one per part between commas, so such a part keeps its token alone.
        """
        if not text:
            return text
        findings = self.detect(text)
        if known:
            findings = _with_mentions(text, findings, known)
        if not findings:
            return text
        out: list[str] = []
        cursor = 0
        for found in findings:
            out.append(text[cursor : found.start])
            if found.kind == names.KIND:
                parts = names.words(text[found.start : found.end])
                out.append(self._parts(text, found, parts, scope_id))
            elif found.kind == addresses.KIND:
                parts = addresses.components(text[found.start : found.end])
                out.append(self._parts(text, found, parts, scope_id))
            else:
                out.append(self.pseudonym(found.kind, found.value, scope_id))
            cursor = found.end
        out.append(text[cursor:])
        return "".join(out)

    def _parts(
        self, text: str, found: Found, parts: list[tuple[int, int, str]], scope_id: str
    ) -> str:
        """A name or address with a pseudonym per part (what lies between them kept)."""
        span = text[found.start : found.end]
        if not parts:
            return self.pseudonym(found.kind, found.value, scope_id)
        out: list[str] = []
        cursor = 0
        for start, end, value in parts:
            out += [span[cursor:start], self.pseudonym(found.kind, value, scope_id)]
            cursor = end
        out.append(span[cursor:])
        return "".join(out)

    def _mapping_key(self, key: Any, scope_id: str, known: Known = frozenset()) -> Any:
        return self.scrub_text(key, scope_id, known) if isinstance(key, str) else key

    def _value(self, value: Any, scope_id: str, known: Known = frozenset()) -> Any:
        if isinstance(value, str):
            return self.scrub_text(value, scope_id, known)
        if isinstance(value, Mapping):
            # Two keys collide only if they hold the same PII (say, in two letter
            # cases); the later value then wins, which loses data but leaks none.
            return {
                self._mapping_key(k, scope_id, known): self._value(v, scope_id, known)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._value(v, scope_id, known) for v in value]
        return value

    def scrub_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """Labels with PII in their keys or values replaced, as records' labels are: in
        the ``global`` scope whatever the scrubber's, since labels name segments and a
        segment must be one across records (an e-mail in ``service.name`` scrubbed per
        record made every record a segment of its own, and an alert of its own)."""
        return {self._mapping_key(k, ""): self.scrub_text(v, "") for k, v in labels.items()}

    def _chunks(self, chunks: tuple[Chunk, ...], scope_id: str, known: Known) -> tuple[Chunk, ...]:
        return tuple(
            replace(
                chunk,
                text=self.scrub_text(chunk.text, scope_id, known),
                id=self.scrub_text(chunk.id, scope_id) if chunk.id else chunk.id,
                metadata=self._value(dict(chunk.metadata), scope_id, known),
            )
            for chunk in chunks
        )

    def scope_of(self, record: RagRecord) -> str:
        if self._scope == "record":
            return record.trace_id
        if self._scope == "tenant":
            return "tenant:" + record.labels.get("tenant", "")
        return ""

    def __call__(self, record: RagRecord) -> RagRecord:
        scope_id = self.scope_of(record)
        # A name or address found in one text of the record is scrubbed wherever its
        # parts stand, in every text of the record.
        texts = [record.question, record.answer]
        texts += [chunk.text for chunk in (*record.chunks, *record.retrieved)]
        known = self.mentions(texts)
        return replace(
            record,
            question=self.scrub_text(record.question, scope_id, known),
            answer=self.scrub_text(record.answer, scope_id, known),
            chunks=self._chunks(record.chunks, scope_id, known),
            retrieved=self._chunks(record.retrieved, scope_id, known),
            labels=self.scrub_labels(record.labels),
            generation=self._value(dict(record.generation), scope_id, known),
            keep=self.scrub_text(record.keep, scope_id, known) if record.keep else record.keep,
        )


def _merged(text: str, candidates: list[tuple[Found, int]]) -> tuple[Found, ...]:
    """Candidates (finding, detector rank) as sorted, non-overlapping findings: those
    that overlap become one over their union, of the first one's kind."""
    candidates.sort(key=lambda item: (item[0].start, item[1], -item[0].end))
    kept: list[Found] = []
    for found, _ in candidates:
        if found.end <= found.start:
            continue
        if kept and found.start < kept[-1].end:
            last = kept[-1]
            if found.end > last.end:
                union = " ".join(text[last.start : found.end].split()).casefold()
                kept[-1] = Found(last.start, found.end, last.kind, union)
            continue
        kept.append(found)
    return tuple(kept)


_POSSESSIVE = re.compile(r"['’]s\b")


def _with_mentions(text: str, findings: tuple[Found, ...], known: Known) -> tuple[Found, ...]:
    """``findings`` and every whole-word occurrence of a ``known`` part outside them."""
    extra: list[tuple[Found, int]] = []
    for kind, part in known:
        start = text.find(part)
        while start >= 0:
            end = start + len(part)
            # A word, or a word's possessive ("Farage's"), never part of a longer word.
            whole = bounded(text, start, end, "'’-") or (
                bounded(text + " ", start, end + 2, "'’-")  # "Farage's": the "'s" taken in
                and _POSSESSIVE.match(text, end) is not None
            )
            if whole and not any(f.start < end and start < f.end for f in findings):
                value = names.words(part)[0][2] if kind == names.KIND else part.casefold()
                if kind == addresses.KIND:
                    value = addresses.components(part)[0][2]
                extra.append((Found(start, end, kind, value), 1))
            start = text.find(part, end)
    if not extra:
        return findings
    return _merged(text, [(f, 0) for f in findings] + extra)


def identity(record: RagRecord) -> RagRecord:
    return record


__all__ = ["SCOPES", "PiiScrubber", "Scope", "identity"]
