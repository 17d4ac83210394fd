"""The scrubber bench's tables: faithmon against Presidio figure by figure with the
goals (one table per corpus), recall by format where a scrubber misses, and a few of
faithmon's misses."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from common import columns, number
from scrub_corpus import KINDS, NAME_KINDS
from scrub_score import Score

RECALL_GOAL = 0.95
"""Recall goal of each pattern family (EMAIL, PHONE, CARD, IBAN, SSN, IP, SECRET)."""
NAME_RECALL_GOAL = 0.90
"""Recall goal of PERSON and ADDRESS."""
PRECISION_GOAL = 1.0
"""No distractor may be scrubbed, on either corpus."""
SPEED_GOAL = 20.0


def recall_goal(kind: str) -> float:
    return NAME_RECALL_GOAL if kind in NAME_KINDS else RECALL_GOAL


def fraction(hit: int, total: int) -> str:
    return f"{hit / total:.3f}" if total else "–"


def status(met: bool) -> str:
    return "goal met" if met else "goal missed"


@dataclass(frozen=True, slots=True)
class System:
    name: str
    score: Score
    seconds: tuple[float, ...]
    covers: frozenset[str]
    """The PII kinds it has a recognizer for."""

    def texts_per_second(self, count: int) -> float:
        return count / statistics.median(self.seconds)


def render(
    header: str,
    ours: System,
    others: Sequence[System],
    count: int,
    megabytes: float,
    *,
    throughput: bool = True,
    prefix: str = "",
) -> tuple[str, dict[str, bool]]:
    """The table of one corpus, and each goal's name (after ``prefix``) → met.

    A family with no value in the corpus gets a row of dashes and no goal. Without
    ``throughput`` the throughput rows are left out (they are measured on one corpus only).
    """
    baseline = others[0]
    titles = ("figure", ours.name, *(o.name for o in others), "ratio", "goal", "status")
    right = (False, True, *(True for _ in others), True, False, False)
    rows: list[list[str]] = []
    goals: dict[str, bool] = {}
    for kind in KINDS:
        hit, total = ours.score.recall[kind]
        goal = recall_goal(kind)
        if not total:
            rows.append([f"recall {kind} (n=0)", "–", *("–" for _ in others), "", "", "no values"])
            continue
        cells = [
            fraction(*o.score.recall[kind]) if kind in o.covers else "n/a (no recognizer)"
            for o in others
        ]
        met = hit / total >= goal
        goals[f"{prefix}recall {kind}"] = met
        rows.append(
            [
                f"recall {kind} (n={total:,})",
                fraction(hit, total),
                *cells,
                "",
                f"≥ {goal:.2f}",
                status(met),
            ]
        )

    def precision(system: System) -> str:
        s = system.score
        return f"{s.precision:.3f} ({s.distractors_touched} scrubbed)"

    met = ours.score.precision >= PRECISION_GOAL
    goals[f"{prefix}precision"] = met
    rows.append(
        [
            f"precision (distractors, n={ours.score.distractors:,})",
            precision(ours),
            *(precision(o) for o in others),
            "",
            "1.000 (none scrubbed)" if PRECISION_GOAL == 1 else f"≥ {PRECISION_GOAL}",
            status(met),
        ]
    )
    rows.append(
        [
            "false scrubs (detections on no PII)",
            f"{ours.score.false_scrubs} of {ours.score.detections:,}",
            *(f"{o.score.false_scrubs} of {o.score.detections:,}" for o in others),
            "",
            "",
            "",
        ]
    )
    if not throughput:
        return "\n".join([header, "", *columns(titles, rows, right)]), goals
    ours_tps = ours.texts_per_second(count)
    base_tps = baseline.texts_per_second(count)
    speed = ours_tps / base_tps
    goals["throughput"] = speed >= SPEED_GOAL
    rows.append(
        [
            "throughput, texts/s (faithmon cache cold)",
            number(ours_tps),
            *(number(o.texts_per_second(count)) for o in others),
            f"{speed:.1f}x",
            f"≥ {SPEED_GOAL:.0f}x",
            status(speed >= SPEED_GOAL),
        ]
    )
    rows.append(
        [
            "throughput, MB/s (UTF-8)",
            number(ours_tps * megabytes / count),
            *(number(o.texts_per_second(count) * megabytes / count) for o in others),
            f"{speed:.1f}x",
            "",
            "",
        ]
    )
    return "\n".join([header, "", *columns(titles, rows, right)]), goals


def format_rows(ours: System, others: Sequence[System], corpus: str = "") -> list[str]:
    """Recall by format, for the formats where some scrubber misses a value."""
    rows = []
    for key, (hit, total) in ours.score.variants.items():
        kind = key.split("/")[0]
        theirs = [
            o.score.variants.get(key, (0, total)) if kind in o.covers else None for o in others
        ]
        if hit == total and all(t is None or t[0] == total for t in theirs):
            continue
        rows.append(
            [
                f"{key} (n={total})",
                fraction(hit, total),
                *("n/a" if t is None else fraction(*t) for t in theirs),
            ]
        )
    if not rows:
        return []
    titles = (
        f"recall by format{corpus} (only formats below 1.000)",
        ours.name,
        *(o.name for o in others),
    )
    return ["", *columns(titles, rows, (False, True, *(True for _ in others)))]


def examples(score: Score, per_kind: int = 3, corpus: str = "") -> list[str]:
    """faithmon's misses and touched distractors, a few of each type."""
    out: list[str] = []
    shown: Counter[str] = Counter()
    for miss in score.misses:
        if shown[miss["kind"]] < per_kind:
            shown[miss["kind"]] += 1
            found = ", ".join(f"{v!r} as {k}" for v, k in miss["found"]) or "nothing"
            out.append(
                f"  missed {miss['kind']} ({miss['format']}): {miss['context']!r}; found {found}"
            )
    for hit in score.touched:
        if shown["d:" + hit["distractor"]] < per_kind:
            shown["d:" + hit["distractor"]] += 1
            found = ", ".join(f"{v!r} as {k}" for v, k in hit["found"])
            out.append(
                f"  scrubbed {hit['distractor']} {hit['value']!r}: {hit['context']!r} ({found})"
            )
    for stray in score.strays:
        if shown["s:" + stray["kind"]] < per_kind:
            shown["s:" + stray["kind"]] += 1
            out.append(f"  false scrub {stray['kind']} {stray['found']!r}: {stray['context']!r}")
    title = f"faithmon's misses and false scrubs{corpus} (a few of each type):"
    return ["", title, *out] if out else []
