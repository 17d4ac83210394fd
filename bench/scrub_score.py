"""How the scrubber bench scores a scrubber's detections against the corpus's labels:
recall per type and format, precision over the distractors, false scrubs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scrub_corpus import KINDS, Item

# Examples of misses and false scrubs kept in the JSON, per format or type.
EXAMPLES = 8

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Score:
    recall: dict[str, tuple[int, int]]
    """kind → (values fully covered, values)."""
    variants: dict[str, tuple[int, int]]
    """``KIND/variant`` → (values fully covered, values)."""
    distractors_touched: int
    distractors: int
    false_scrubs: int
    detections: int
    misses: list[dict[str, Any]]
    touched: list[dict[str, Any]]
    strays: list[dict[str, Any]]

    @property
    def precision(self) -> float:
        return 1 - self.distractors_touched / self.distractors

    def as_json(self) -> dict[str, Any]:
        return {
            "recall": {
                k: {"covered": c, "values": n, "recall": c / n if n else None}
                for k, (c, n) in self.recall.items()
            },
            "recall_by_format": {
                k: {"covered": c, "values": n, "recall": c / n}
                for k, (c, n) in self.variants.items()
            },
            "precision": self.precision,
            "distractors_touched": self.distractors_touched,
            "distractors_touched_by_kind": dict(
                Counter(t["distractor"] for t in self.touched).most_common()
            ),
            "distractors": self.distractors,
            "false_scrubs": self.false_scrubs,
            "detections": self.detections,
            "missed_examples": _some(self.misses, "format"),
            "touched_distractor_examples": _some(self.touched, "distractor"),
            "false_scrub_examples": _some(self.strays, "kind"),
        }


def _some(examples: Sequence[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The first ``EXAMPLES`` examples of each value of ``key``."""
    seen: Counter[str] = Counter()
    kept = []
    for example in examples:
        seen[example[key]] += 1
        if seen[example[key]] <= EXAMPLES:
            kept.append(example)
    return kept


def _covered(start: int, end: int, spans: Sequence[Span]) -> bool:
    """Whether the union of ``spans`` covers every character of [start, end)."""
    cursor = start
    for s, e, _ in sorted(spans):
        if s > cursor:
            break
        cursor = max(cursor, e)
        if cursor >= end:
            return True
    return cursor >= end


def _overlaps(start: int, end: int, span: Span) -> bool:
    return span[0] < end and span[1] > start


def _context(text: str, start: int, end: int) -> str:
    return text[max(0, start - 30) : start] + "⟦" + text[start:end] + "⟧" + text[end : end + 30]


def score(items: Sequence[Item], detections: Sequence[Sequence[Span]]) -> Score:
    recall: Counter[str] = Counter()
    total: Counter[str] = Counter()
    variant_hits: Counter[str] = Counter()
    variant_total: Counter[str] = Counter()
    touched = distractors = strays = count = 0
    misses: list[dict[str, Any]] = []
    touched_examples: list[dict[str, Any]] = []
    stray_examples: list[dict[str, Any]] = []
    for item, spans in zip(items, detections, strict=True):
        text = item.text
        for label in item.pii:
            key = f"{label.kind}/{label.variant}"
            total[label.kind] += 1
            variant_total[key] += 1
            if _covered(label.start, label.end, spans):
                recall[label.kind] += 1
                variant_hits[key] += 1
            else:
                misses.append(
                    {
                        "kind": label.kind,
                        "format": label.variant,
                        "value": text[label.start : label.end],
                        "found": [
                            [text[s:e], k]
                            for s, e, k in spans
                            if _overlaps(label.start, label.end, (s, e, k))
                        ],
                        "context": _context(text, label.start, label.end),
                    }
                )
        for label in item.distractors:
            distractors += 1
            hits = [span for span in spans if _overlaps(label.start, label.end, span)]
            if hits:
                touched += 1
                touched_examples.append(
                    {
                        "distractor": label.kind,
                        "value": label.variant,
                        "found": [[text[s:e], k] for s, e, k in hits],
                        "context": _context(text, label.start, label.end),
                    }
                )
        for span in spans:
            count += 1
            if not any(_overlaps(label.start, label.end, span) for label in item.pii):
                strays += 1
                stray_examples.append(
                    {
                        "kind": span[2],
                        "found": text[span[0] : span[1]],
                        "context": _context(text, span[0], span[1]),
                    }
                )
    return Score(
        recall={k: (recall[k], total[k]) for k in KINDS},
        variants={k: (variant_hits[k], variant_total[k]) for k in sorted(variant_total)},
        distractors_touched=touched,
        distractors=distractors,
        false_scrubs=strays,
        detections=count,
        misses=misses,
        touched=touched_examples,
        strays=stray_examples,
    )
