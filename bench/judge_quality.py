"""How well the offline judge tells faithful from unfaithful answers, and how fast.

Run from the repository root: ``python bench/judge_quality.py``. It reads the labelled
sets in ``../shared/data/faithfulness/*.jsonl`` (see their README) and prints, per
file and for RAGTruth per task: rows, balanced accuracy, TPR and TNR with
"unfaithful" as the positive class, and mean milliseconds per judgement. An answer
is predicted unfaithful when its strict score is below 1.0; an answer without
claims counts as faithful. ``held-out`` rows use only the half of each file that
the judge's thresholds were not tuned on (rows whose ``id`` hashes odd, see
``held_out``).

It then prints a reliability table of claim confidences on RAGTruth's held-out half:
claim-level truth comes from the span labels (a claim judged supported is right
when its sentence overlaps no labelled span; judged unsupported or contradicted is
right when it overlaps one). Per confidence bin: claims and accuracy. Per cascade
bar, on both halves: the precision of claims settled ``supported`` at or above it,
of those settled ``unsupported``/``contradicted``, the share of claims settled and
the share of traces with a claim below it (those the cascade sends to the LLM); and
the bar the calibration picks (the cascade's default, ``FAITHMON_JUDGE_CASCADE_BAR``).
``--fit`` prints, instead, the table for ``faithmon/judge/confidence.py``: per (rule,
verdict) with at least ``MIN_BIN`` claims, the add-one smoothed share of right verdicts
on the tuning half.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from faithmon.judge import OfflineJudge, confidence

DATA = Path(__file__).resolve().parents[2] / "shared/data/faithfulness"


def held_out(row_id: str) -> bool:
    """The fixed split: thresholds were tuned on the even half, this is the odd one."""
    return hashlib.sha256(row_id.encode()).digest()[0] % 2 == 1


@dataclass
class Tally:
    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0
    ms: float = 0.0

    def add(self, unfaithful: bool, predicted: bool, ms: float) -> None:
        self.ms += ms
        if unfaithful:
            self.tp += predicted
            self.fn += not predicted
        else:
            self.fp += predicted
            self.tn += not predicted

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.tn + self.fp

    def row(self, name: str) -> str:
        tpr = self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")
        tnr = self.tn / (self.tn + self.fp) if self.tn + self.fp else float("nan")
        bacc = (tpr + tnr) / 2
        ms = self.ms / self.n if self.n else 0.0
        return f"{name:<28} {self.n:>5} {bacc:>6.3f} {tpr:>6.3f} {tnr:>6.3f} {ms:>8.2f}"


def rows(path: Path) -> Iterable[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


class Rules:
    """Records the rule (basis) behind each claim, in order, by wrapping confidence.of."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._of = confidence.of

        def of(basis: str, verdict: str) -> float:
            self.seen.append(basis)
            return self._of(basis, verdict)

        confidence.of = of


def claims(
    path: Path, judge: OfflineJudge, half: bool
) -> Iterable[tuple[str, str, str, float, bool]]:
    """(row id, basis, verdict, confidence, right) of RAGTruth claims on one half
    (True: held-out)."""
    rules = Rules()
    for row in rows(path):
        if held_out(str(row["id"])) != half:
            continue
        rules.seen.clear()
        response = str(row["response"])
        chunks = [str(c) for c in row["contexts"]]  # type: ignore[attr-defined]
        judgement = judge.judge(str(row["question"] or ""), chunks, response)
        spans = [(int(s["start"]), int(s["end"])) for s in row["unsupported_spans"]]  # type: ignore[attr-defined]
        if len(rules.seen) != len(judgement.claims):
            continue
        cursor = 0
        for claim, basis in zip(judgement.claims, rules.seen, strict=True):
            at = response.find(claim.text, cursor)
            if at < 0:
                continue
            cursor = at + len(claim.text)
            bad = any(start < cursor and end > at for start, end in spans)
            right = bad if claim.verdict != "supported" else not bad
            yield str(row["id"]), basis, claim.verdict, claim.confidence or 0.0, right


# A (rule, verdict) bin is fitted only on at least this many tuning claims; a smaller
# one keeps confidence.DEFAULT (a share of a handful of claims is no calibration).
MIN_BIN = 30


def fit(path: Path, judge: OfflineJudge) -> dict[tuple[str, str], tuple[float, int]]:
    """(rule, verdict) → (add-one smoothed share right, claims) for bins of MIN_BIN+."""
    counts: dict[tuple[str, str], list[int]] = {}
    for _, basis, verdict, _, right in claims(path, judge, half=False):
        tally = counts.setdefault((basis, verdict), [0, 0])
        tally[0] += right
        tally[1] += 1
    return {key: ((r + 1) / (n + 2), n) for key, (r, n) in sorted(counts.items()) if n >= MIN_BIN}


BINS = (0.5, 0.7, 0.8, 0.9, 0.95, 1.01)
BARS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
# The cascade's default bar is the lowest of BARS at which, on the tuning half, the
# claims settled supported are this precise, and those settled otherwise this right.
SUPPORTED_PRECISION = 0.95
OTHER_PRECISION = 0.85

Found = list[tuple[str, str, str, float, bool]]


def reliability(found: Found) -> None:
    print(f"\nreliability, ragtruth held-out claims ({len(found)}):")
    print(f"{'confidence':<14} {'claims':>6} {'accuracy':>8}")
    low = 0.0
    for high in BINS:
        inside = [right for *_, p, right in found if low <= p < high]
        if inside:
            share = sum(inside) / len(inside)
            print(f"[{low:.2f}, {min(high, 1.0):.2f}) {len(inside):>6} {share:>8.3f}")
        low = high


def settled(found: Found, bar: float) -> tuple[float, float, float, float]:
    """At ``bar``: precision of claims settled supported, and of those settled
    otherwise; share of claims settled; share of traces with a claim below it."""
    supported = [right for _, _, v, p, right in found if v == "supported" and p >= bar]
    other = [right for _, _, v, p, right in found if v != "supported" and p >= bar]
    traces = {row for row, *_ in found}
    calling = {row for row, _, _, p, _ in found if p < bar}
    return (
        sum(supported) / len(supported) if supported else float("nan"),
        sum(other) / len(other) if other else float("nan"),
        (len(supported) + len(other)) / len(found) if found else 0.0,
        len(calling) / len(traces) if traces else 0.0,
    )


def bars(tuning: Found, held: Found) -> float | None:
    """The per-bar table on both halves; returns the bar the calibration picks."""
    print(
        f"\n{'bar':<5} {'half':<9} {'supported prec':>14} {'other prec':>10} "
        f"{'claims settled':>14} {'traces calling':>14}"
    )
    chosen = None
    for bar in BARS:
        for name, found in (("tuning", tuning), ("held-out", held)):
            sup, other, share, calling = settled(found, bar)
            print(f"{bar:<5} {name:<9} {sup:>14.3f} {other:>10.3f} {share:>14.3f} {calling:>14.3f}")
        sup, other, *_ = settled(tuning, bar)
        if chosen is None and sup >= SUPPORTED_PRECISION and not other < OTHER_PRECISION:
            chosen = bar
    print(
        f"lowest bar with tuning precision >= {SUPPORTED_PRECISION} (supported) and >= "
        f"{OTHER_PRECISION} (unsupported, contradicted): {chosen}"
    )
    return chosen


def main() -> int:
    files = sorted(DATA.glob("*.jsonl")) if DATA.is_dir() else []
    if not files:
        print(f"no labelled data in {DATA}: nothing to measure")
        return 0
    judge = OfflineJudge()
    ragtruth = DATA / "ragtruth.jsonl"
    if "--fit" in sys.argv[1:]:
        print("TABLE: dict[tuple[str, str], float] = {")
        for (basis, verdict), (share, n) in fit(ragtruth, judge).items():
            print(f"    ({basis!r}, {verdict!r}): {share:.3f},  # {n} claims")
        print("}")
        return 0
    tallies: dict[tuple[str, str], Tally] = {}
    for path in files:
        for row in rows(path):
            chunks = [str(c) for c in row["contexts"]]  # type: ignore[attr-defined]
            started = time.perf_counter()
            judgement = judge.judge(str(row["question"] or ""), chunks, str(row["response"]))
            ms = (time.perf_counter() - started) * 1000
            score = judgement.faithfulness
            predicted = score is not None and score < 1.0
            unfaithful = row["label"] == "unfaithful"
            split = "held-out" if held_out(str(row["id"])) else "tuning"
            groups = [path.stem, f"{path.stem} held-out", f"{path.stem} tuning"]
            if path.stem == "ragtruth":
                task = row["task"]
                groups += [f"  {task}", f"  {task} held-out", f"  {task} tuning"]
            for group in groups:
                tally = tallies.setdefault((path.stem, group), Tally())
                if not group.endswith(("held-out", "tuning")) or group.endswith(split):
                    tally.add(unfaithful, predicted, ms)
    print(f"judge {judge.name}; predicted unfaithful = strict score < 1.0\n")
    print(f"{'set':<28} {'n':>5} {'BAcc':>6} {'TPR':>6} {'TNR':>6} {'ms/item':>8}")
    for (_, group), tally in tallies.items():  # insertion order: file, then its tasks
        print(tally.row(group))
    if ragtruth.is_file():
        held = list(claims(ragtruth, judge, half=True))
        reliability(held)
        bars(list(claims(ragtruth, judge, half=False)), held)
    return 0


if __name__ == "__main__":
    sys.exit(main())
