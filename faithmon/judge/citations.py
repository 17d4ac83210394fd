"""Citation markers, found deterministically, and the sentences they belong to.

Forms (each a style of ``FAITHMON_CITATION_STYLE``): ``numeric`` ``[1]``, ``[1, 3]``,
``[1-2]``, ``[doc-3]``; ``id`` ``[abc-12]`` naming a chunk's document id; ``footnote``
``^1`` and ``[^1]``; ``link`` a markdown link whose target is a chunk's URL or id.
Numbers are 1-based over the chunks as the generator saw them, unless a chunk's
metadata gives its displayed number. A marker that names no chunk the generator was
given (beyond the last, or a retrieved chunk it never saw) is unresolved.

Markers are cut from the answer before any judge reads it (a ``[2]`` is no claim about
the number 2), and a sentence keeps the markers written in it or right after its end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import text as t

STYLES = ("numeric", "id", "footnote", "link")
NUMBER_KEYS = ("citation_number", "display_number", "number")
URL_KEYS = ("url", "source_url", "uri", "link", "source")

_OPEN, _CLOSE = "\ue000", "\ue001"
_TOKEN = re.compile(f"\\s*{_OPEN}(\\d+){_CLOSE}")
_BEFORE_END = re.compile(f"([.!?])((?:\\s*{_OPEN}\\d+{_CLOSE})+)")
_LINK = re.compile(r"(?<!!)\[([^\[\]\n]{1,200})\]\(([^()\s]{1,500})\)")
_BRACKET = re.compile(r"(?<![!\w])\[(\^?)([^\[\]\n]{1,80})\](?!\()")
_CARET = re.compile(r"(?<=[\w.,;:!?)\"'\u201d])\^(\d{1,3})\b")
_RANGE = re.compile(r"^(\d{1,4})\s*[-\u2013]\s*(\d{1,4})$")
_DOC = re.compile(r"^(?:doc(?:ument)?|source|src|chunk|ref|passage|context)[\s_-]?(\d{1,4})$", re.I)
_IDLIKE = re.compile(r"^[\w.:/#-]*\d[\w.:/#-]*$")


@dataclass(frozen=True, slots=True)
class Source:
    """A chunk as the generator saw it, with what a marker may name it by."""

    text: str
    id: str | None = None
    url: str | None = None
    number: int | None = None
    """The number the app displayed for it, when its metadata says."""


def source_of(position: int, text: str, doc_id: str | None, metadata: Mapping[str, Any]) -> Source:
    number = next((metadata[k] for k in NUMBER_KEYS if k in metadata), None)
    url = next((metadata[k] for k in URL_KEYS if isinstance(metadata.get(k), str)), None)
    shown = int(number) if isinstance(number, int | str) and str(number).isdigit() else None
    return Source(text, doc_id, url, shown)


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    """The sentence with its markers cut out."""
    cited: tuple[int, ...] = ()
    """Chunk indices its markers resolve to, in order."""
    unresolved: int = 0

    @property
    def has_markers(self) -> bool:
        return bool(self.cited) or self.unresolved > 0


@dataclass(slots=True)
class Marked:
    answer: str
    """The answer with every marker cut out: what the judges read."""
    sentences: list[Sentence] = field(default_factory=list)
    unresolved: int = 0


class _Resolver:
    def __init__(self, sources: Sequence[Source], styles: frozenset[str]) -> None:
        self.styles = styles
        self.count = len(sources)
        shown = {s.number: i for i, s in enumerate(sources) if s.number is not None}
        self.by_number = shown or {i + 1: i for i in range(len(sources))}
        self.by_id = {s.id.casefold(): i for i, s in enumerate(sources) if s.id}
        self.by_url = {s.url.rstrip("/"): i for i, s in enumerate(sources) if s.url}

    def number(self, n: int) -> int | None:
        return self.by_number.get(n)

    def part(self, part: str) -> list[int | None] | None:
        """What one comma-separated part of a bracket names; None: it is no marker."""
        part = part.strip()
        if "numeric" in self.styles:
            if part.isdigit():
                return [self.number(int(part))]
            ranged = _RANGE.match(part)
            if ranged:
                low, high = int(ranged[1]), int(ranged[2])
                if 0 < high - low < 50:
                    return [self.number(n) for n in range(low, high + 1)]
        if "id" in self.styles and part.casefold() in self.by_id:
            return [self.by_id[part.casefold()]]
        doc = _DOC.match(part)
        if doc and "numeric" in self.styles:
            return [self.number(int(doc[1]))]
        if "id" in self.styles and self.by_id and _IDLIKE.match(part):
            return [None]  # shaped like the app's ids, but names no chunk it was given
        return None

    def bracket(self, body: str, caret: bool) -> list[int | None] | None:
        if caret:
            if "footnote" not in self.styles:
                return None
            body = body.strip()
            if body.isdigit():
                return [self.number(int(body))]
            return [self.by_id.get(body.casefold())]
        parts = [self.part(p) for p in re.split(r"[,;]", body)]
        if any(p is None for p in parts):
            return None
        return [i for p in parts if p is not None for i in p]

    def link(self, target: str) -> int | None:
        return self.by_url.get(target.rstrip("/"), self.by_id.get(target.casefold()))


def parse(answer: str, sources: Sequence[Source], styles: frozenset[str]) -> Marked:
    """Cut the markers out of ``answer``; each sentence keeps what it cites."""
    resolver = _Resolver(sources, styles)
    found: list[list[int | None]] = []

    def token(named: list[int | None]) -> str:
        found.append(named)
        return f"{_OPEN}{len(found) - 1}{_CLOSE}"

    def link(match: re.Match[str]) -> str:
        index = resolver.link(match[2]) if "link" in styles else None
        return match[0] if index is None else f"{match[1]}{token([index])}"

    def bracket(match: re.Match[str]) -> str:
        named = resolver.bracket(match[2], bool(match[1]))
        return match[0] if named is None else token(named)

    def caret(match: re.Match[str]) -> str:
        return token([resolver.number(int(match[1]))]) if "footnote" in styles else match[0]

    marked = _CARET.sub(caret, _BRACKET.sub(bracket, _LINK.sub(link, answer)))
    if not found:
        return Marked(answer, [Sentence(s) for s in t.sentences(answer)])
    # "… 30 days. [1] Refunds …": a marker after a sentence's end belongs to that sentence.
    marked = _BEFORE_END.sub(lambda m: f"{m[2]}{m[1]}", marked)
    sentences: list[Sentence] = []
    for sentence in t.sentences(marked):
        named = [i for n in _TOKEN.findall(sentence) for i in found[int(n)]]
        cited = tuple(dict.fromkeys(i for i in named if i is not None))
        clean = _TOKEN.sub("", sentence).strip()
        if clean and not (sentences and named and t.is_non_claim(clean)):
            sentences.append(Sentence(clean, cited, sum(i is None for i in named)))
        elif sentences:
            # A line of markers alone, or "See [4].", cites for the sentence before it.
            last = sentences[-1]
            sentences[-1] = Sentence(
                last.text,
                tuple(dict.fromkeys((*last.cited, *cited))),
                last.unresolved + sum(i is None for i in named),
            )
    unresolved = sum(i is None for named in found for i in named)
    return Marked(_TOKEN.sub("", marked), sentences, unresolved)


def styles_of(setting: str) -> frozenset[str]:
    """``FAITHMON_CITATION_STYLE``: ``all`` (the default), ``off``, or a comma list."""
    words = {w.strip().lower() for w in setting.split(",") if w.strip()}
    if not words or words == {"all"}:
        return frozenset(STYLES)
    if words == {"off"}:
        return frozenset()
    unknown = words - set(STYLES)
    if unknown:
        raise ValueError(
            f"unknown citation style {sorted(unknown)[0]!r}; use all, off or {', '.join(STYLES)}"
        )
    return frozenset(words)
