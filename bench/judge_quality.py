"""How well the offline judge tells faithful from unfaithful answers, and how fast.

Run from the repository root: ``python bench/judge_quality.py``. It reads the labelled
sets in ``../shared/data/faithfulness/*.jsonl`` (see their README) and prints, per
file and for RAGTruth per task: rows, balanced accuracy, TPR and TNR with
"unfaithful" as the positive class, and mean milliseconds per judgement. An answer
is predicted unfaithful when its strict score is below 1.0; an answer without
claims counts as faithful. ``held-out`` rows use only the half of each file that
the judge's thresholds were not tuned on (rows whose ``id`` hashes odd, see
``held_out``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from faithmon.judge import OfflineJudge

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


def main() -> int:
    files = sorted(DATA.glob("*.jsonl")) if DATA.is_dir() else []
    if not files:
        print(f"no labelled data in {DATA}: nothing to measure")
        return 0
    judge = OfflineJudge()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
