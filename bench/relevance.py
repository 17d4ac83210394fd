"""Context and answer relevance and the cause of unfaithful answers, by swapping.

Run from the repository root: ``python bench/relevance.py``. From the question-answer
rows of ``../shared/data/faithfulness/*.jsonl`` (those with a question), each row is
judged three ways by the offline judge: as it is (matched), with another question's
chunks (a retrieval miss) and with another question's answer (an off-topic answer).
The partner is the row half the set away, skipping rows of the same question. It prints:

- ROC AUC, matched against swapped: context relevance over the swapped chunks, answer
  relevance over the swapped answers;
- cause accuracy on unfaithful answers whose origin the construction knows: a
  faithful answer judged unsupported over another question's chunks is a
  ``retrieval`` miss; an answer labelled unfaithful over its own chunks is a
  ``generation`` error (only answers the judge scores below 1 carry a cause);
- abstention shares over the matched and swapped chunks;
- the offline judge's mean milliseconds per answer with relevance and without it
  (``relevance.measure`` stubbed out), each row's best of three alternating timings.

Exits 0 with a note when the data is absent.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from faithmon.judge import OfflineJudge, relevance
from faithmon.model import Judgement

DATA = Path(__file__).resolve().parents[2] / "shared/data/faithfulness"

Row = dict[str, object]


def qa_rows() -> list[Row]:
    found: list[Row] = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if row and str(row.get("question") or "").strip():
                found.append(row)
    return found


def partner(rows: Sequence[Row], i: int) -> Row:
    """The row half the set away, skipping rows of the same question."""
    j = (i + len(rows) // 2) % len(rows)
    while rows[j]["question"] == rows[i]["question"]:
        j = (j + 1) % len(rows)
    return rows[j]


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(matched scores above swapped), ties counting half (Mann-Whitney)."""
    wins = 0.0
    for p in positives:
        for n in negatives:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positives) * len(negatives)) if positives and negatives else float("nan")


def judge(j: OfflineJudge, row: Row, chunks: object = None, answer: object = None) -> Judgement:
    contexts = row["contexts"] if chunks is None else chunks
    response = row["response"] if answer is None else answer
    return j.judge(str(row["question"]), [str(c) for c in contexts], str(response))  # type: ignore[attr-defined]


def cost(rows: Sequence[Row]) -> tuple[float, float]:
    """(ms per answer with relevance, without), each row timed both ways in turn over
    three passes (the cheaper of each pair of timings kept), so load drift hits both."""
    measure = relevance.measure
    off: Callable[..., None] = lambda *_, **__: None  # noqa: E731
    j = OfflineJudge()
    totals = [0.0, 0.0]
    try:
        for row in rows:
            best = [float("inf"), float("inf")]
            for _ in range(3):
                for k, stub in enumerate((measure, off)):
                    relevance.measure = stub
                    started = time.perf_counter()
                    judge(j, row)
                    best[k] = min(best[k], time.perf_counter() - started)
            totals[0] += best[0]
            totals[1] += best[1]
    finally:
        relevance.measure = measure
    return totals[0] * 1000 / len(rows), totals[1] * 1000 / len(rows)


def line(name: str, value: float, goal: str = "") -> None:
    print(f"{name:<34} {value:>8.3f} {goal:>8}")


def main() -> int:
    rows = qa_rows() if DATA.is_dir() else []
    if not rows:
        print(f"no labelled data in {DATA}: nothing to measure")
        return 0
    j = OfflineJudge()
    context = {"matched": [], "swapped": []}  # type: dict[str, list[float]]
    answer = {"matched": [], "swapped": []}  # type: dict[str, list[float]]
    causes: Counter[tuple[str, str]] = Counter()  # (expected, got)
    known: Counter[str] = Counter()
    abstained: Counter[str] = Counter()
    for i, row in enumerate(rows):
        other = partner(rows, i)
        matched = judge(j, row)
        chunks_swapped = judge(j, row, chunks=other["contexts"])
        answer_swapped = judge(j, row, answer=other["response"])
        for kind, got in (("matched", matched), ("swapped", chunks_swapped)):
            r = got.relevance
            context[kind].append(r.context_relevance or 0.0 if r else 0.0)
            if r is not None and r.abstention is not None:
                abstained[f"{kind} {r.abstention}"] += 1
        for kind, got in (("matched", matched), ("swapped", answer_swapped)):
            r = got.relevance
            score = r.answer_relevance if r else None
            answer[kind].append(0.0 if score is None else score)
        faithful = row["label"] == "faithful"
        cases = [("retrieval", chunks_swapped)] if faithful else [("generation", matched)]
        for expected, got in cases:
            known[expected] += 1
            if got.relevance is not None and got.relevance.cause is not None:
                causes[(expected, got.relevance.cause)] += 1
    with_ms, without_ms = cost(rows)
    print(f"judge {j.name}; {len(rows)} question-answer rows\n")
    print(f"{'measure':<34} {'value':>8} {'goal':>8}")
    line("context relevance AUC", auc(context["matched"], context["swapped"]), ">=0.95")
    line("answer relevance AUC", auc(answer["matched"], answer["swapped"]), ">=0.90")
    for kind in ("matched", "swapped"):
        mean = sum(context[kind]) / len(context[kind])
        print(f"{'mean context relevance, ' + kind:<34} {mean:>8.3f}")
    for kind in ("matched", "swapped"):
        mean = sum(answer[kind]) / len(answer[kind])
        print(f"{'mean answer relevance, ' + kind:<34} {mean:>8.3f}")
    right = sum(n for (e, g), n in causes.items() if e == g)
    caused = sum(causes.values())
    line("cause accuracy (carrying a cause)", right / caused if caused else 0.0, ">=0.90")
    for expected in ("retrieval", "generation"):
        scored = sum(n for (e, _), n in causes.items() if e == expected)
        hit = causes[(expected, expected)]
        print(f"  {expected:<14} known {known[expected]:>5}  scored<1 {scored:>5}  right {hit:>5}")
    for label, n in sorted(abstained.items()):
        print(f"  abstentions, {label:<20} {n:>5}")
    growth = with_ms / without_ms - 1 if without_ms else 0.0
    print(f"{'ms per answer without relevance':<34} {without_ms:>8.2f}")
    print(f"{'ms per answer with relevance':<34} {with_ms:>8.2f}")
    print(f"{'cost growth':<34} {growth:>8.1%} {'<=20%':>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
