"""The label options of ``faithmon review label``, read into claim labels:

- ``--claim INDEX=VERDICT[:critical|:minor]`` labels a claim as the judge stored it;
  ``--claim INDEX.PART=...`` labels a part of a claim split with ``--split``;
- ``--split "INDEX=first part|second part"`` splits a claim the judge left whole;
- ``--merge "I+J=VERDICT[:critical|:minor]"`` labels claims the judge split as one.

Each mistake is a ValueError naming the option and the text; labels that leave a claim out
are refused (the item would close with it unlabelled).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.review import LABELS, ClaimLabel, ReviewClaim, shape_problem
from ..review.labels import unlabelled


def _verdict(text: str, rest: str) -> tuple[str, bool]:
    verdict, _, severity = rest.strip().partition(":")
    if verdict not in LABELS:
        raise ValueError(f"{text!r}: the verdict must be one of {', '.join(LABELS)}")
    if severity not in ("", "critical", "minor"):
        raise ValueError(f"{text!r}: the severity must be critical or minor")
    return verdict, severity == "critical"


def _index(text: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{text!r}: {value!r} is not a claim index") from None


def parse_labels(
    claims: Sequence[str],
    splits: Sequence[str],
    merges: Sequence[str],
    stored: Sequence[ReviewClaim],
) -> list[ClaimLabel]:
    """The labels the options say, checked against the item's ``stored`` claims."""
    parts: dict[int, list[str]] = {}
    for text in splits:
        index_text, sep, rest = text.partition("=")
        pieces = [p.strip() for p in rest.split("|")]
        if not sep or len(pieces) < 2 or not all(pieces):
            raise ValueError(f"--split {text!r}: expected INDEX=first part|second part")
        parts[_index(f"--split {text}", index_text.strip())] = pieces
    labels: list[ClaimLabel] = []
    for text in claims:
        where, sep, rest = text.partition("=")
        if not sep:
            raise ValueError(f"--claim {text!r}: expected INDEX=VERDICT, e.g. 0=unsupported")
        verdict, critical = _verdict(f"--claim {text}", rest)
        index_text, dot, part_text = where.strip().partition(".")
        index = _index(f"--claim {text}", index_text)
        part = _index(f"--claim {text}", part_text) if dot else 0
        if dot and (index not in parts or not 0 <= part < len(parts[index])):
            raise ValueError(f"--claim {text!r}: claim {index} has no --split part {part}")
        if not dot and index in parts:
            raise ValueError(f"--claim {text!r}: claim {index} is split; label its parts")
        piece = parts[index][part] if dot else None
        labels.append(ClaimLabel(index, verdict, critical, part, piece))  # type: ignore[arg-type]
    for text in merges:
        where, sep, rest = text.partition("=")
        if not sep:
            raise ValueError(f"--merge {text!r}: expected I+J=VERDICT, e.g. 1+2=supported")
        verdict, critical = _verdict(f"--merge {text}", rest)
        group = tuple(_index(f"--merge {text}", i.strip()) for i in where.split("+"))
        known = [c.text for c in stored if c.index in group]
        joined = " ".join(known)
        labels.extend(
            ClaimLabel(i, verdict, critical, 0, joined, group)  # type: ignore[arg-type]
            for i in dict.fromkeys(group)
        )
    if not labels:
        raise ValueError("nothing to label: give --claim INDEX=VERDICT or --merge I+J=VERDICT")
    labelled = {(x.index, x.part) for x in labels}
    for index, pieces in parts.items():
        missing = [n for n in range(len(pieces)) if (index, n) not in labelled]
        if missing:
            n = missing[0]
            raise ValueError(f"--split {index}: part {n} has no --claim {index}.{n}")
    problem = shape_problem(labels, len(stored)) or unlabelled(labels, len(stored))
    if problem is not None:
        raise ValueError(problem)
    return labels
