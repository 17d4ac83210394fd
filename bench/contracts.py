"""What the contracts beside the score do to the offline judge on labelled data.

Run from the repository root: ``python bench/contracts.py``. On each labelled file in
``../shared/data/faithfulness`` it judges every row with the offline judge alone and
with the contracts (``checked``: markers cut, quotations checked by string, severity and
policy rules) and prints, per file: balanced accuracy of each (unfaithful = positive;
predicted unfaithful = strict score below 1.0), ms per item of each and their ratio (the
contracts' cost, measured in the same run, alternating), and the share of claims marked
critical by the old rule ("any number or capitalised word") and by the shipped severity
rules, with the counts per rule, partial verdicts and misquotes. It prints a message and
exits 0 when the data folder is absent.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from faithmon.judge import OfflineJudge
from faithmon.judge import text as t
from faithmon.judge.contracts import checked
from faithmon.model import Judge, Judgement

DATA = Path(__file__).resolve().parents[2] / "shared/data/faithfulness"


def old_critical(sentence: str) -> bool:
    """The rule before severity rules: any number or capitalised word after the first."""
    return bool(t.numbers(sentence)) or any(w[:1].isupper() for w in sentence.split()[1:])


@dataclass
class Run:
    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0
    seconds: float = 0.0
    judgements: list[Judgement] = field(default_factory=list)

    def add(self, unfaithful: bool, judgement: Judgement, seconds: float) -> None:
        predicted = judgement.faithfulness is not None and judgement.faithfulness < 1
        self.tp += unfaithful and predicted
        self.fn += unfaithful and not predicted
        self.fp += not unfaithful and predicted
        self.tn += not unfaithful and not predicted
        self.seconds += seconds
        self.judgements.append(judgement)

    @property
    def bacc(self) -> float:
        tpr = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        tnr = self.tn / (self.tn + self.fp) if self.tn + self.fp else 0.0
        return (tpr + tnr) / 2


def measure(rows: list[dict[str, object]]) -> tuple[Run, Run]:
    raw, contracted = Run(), Run()
    judges: tuple[tuple[Judge, Run], ...] = (
        (OfflineJudge(), raw),
        (checked(OfflineJudge()), contracted),
    )
    for number, row in enumerate(rows):
        # Alternate which goes first, so a warm cache favours neither.
        order = judges if number % 2 == 0 else judges[::-1]
        for judge, run in order:
            started = time.perf_counter()
            judgement = judge.judge(
                str(row["question"]), list(row["contexts"]), str(row["response"])
            )  # type: ignore[call-overload]
            run.add(row["label"] == "unfaithful", judgement, time.perf_counter() - started)
    return raw, contracted


def main() -> int:
    files = sorted(DATA.glob("*.jsonl")) if DATA.is_dir() else []
    if not files:
        print(f"no labelled data in {DATA}: nothing to measure")
        return 0
    head = ("set", "rows", "BAcc raw", "checked", "ms raw", "checked", "ratio")
    print("{:14} {:>5} {:>9} {:>8} {:>7} {:>8} {:>6}".format(*head))
    critical_lines = []
    for path in files:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        raw, contracted = measure(rows)
        ms_raw = raw.seconds / len(rows) * 1000
        ms_checked = contracted.seconds / len(rows) * 1000
        print(
            f"{path.stem:14} {len(rows):5} {raw.bacc:9.3f} {contracted.bacc:8.3f} "
            f"{ms_raw:7.2f} {ms_checked:8.2f} {ms_checked / ms_raw:6.2f}"
        )
        claims = [c for j in contracted.judgements for c in j.claims]
        if not claims:
            continue
        before = sum(old_critical(c.text) for c in claims)
        after = sum(c.critical for c in claims)
        rules = Counter(c.critical_rule for c in claims if c.critical_rule)
        partial = sum(c.verdict == "partial" for c in claims)
        critical_lines.append(
            f"{path.stem}: {len(claims)} claims; critical before {before / len(claims):.1%}, "
            f"after {after / len(claims):.1%}; partial {partial}; by rule "
            + ", ".join(f"{name} {n}" for name, n in rules.most_common())
        )
    print()
    print("\n".join(critical_lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
