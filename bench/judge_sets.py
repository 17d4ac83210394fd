"""The offline judge on the committed hand-written sets, per kind of error.

Run from the repository root: ``python bench/judge_sets.py [--bar 0.8]``.

- ``tests/judge/data/adversarial.jsonl``: 150 pairs over the same chunks, a faithful
  and an unfaithful answer each. Per kind: the share of faithful answers scored 1.0,
  of unfaithful ones scored below it, their mean (accuracy), and for the cascade at
  ``--bar`` the share of unfaithful answers that reach the LLM or are settled
  unfaithful offline (none swallowed is the goal).
- ``faithmon/sentinel_sets/starter.jsonl`` (60 cases the rules were developed beside)
  and ``faithmon/sentinel_sets/certify.jsonl`` (200 cases written apart from the
  rules, docs/how-it-works.md says how): accuracy, false-flag rate, miss rate, and
  per kind for the certification set.

An answer is predicted unfaithful when its strict score is below 1.0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from faithmon.judge import OfflineJudge
from faithmon.model import Judgement
from faithmon.model.judgement import UNVERIFIED

ROOT = Path(__file__).resolve().parents[1]
ADVERSARIAL = ROOT / "tests/judge/data/adversarial.jsonl"
SETS = ROOT / "faithmon/sentinel_sets"


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def flagged(judgement: Judgement) -> bool:
    score = judgement.faithfulness
    return score is not None and score < 1.0


def reaches(judgement: Judgement, bar: float) -> bool:
    """The cascade would not swallow this answer: a claim goes to the LLM, or one is
    settled offline as not supported."""
    for claim in judgement.claims:
        confident = claim.confidence is not None and claim.confidence >= bar
        settled = confident and not (claim.verdict == "supported" and UNVERIFIED in claim.flags)
        if not settled or claim.verdict != "supported":
            return True
    return judgement.status != "ok"


def adversarial(judge: OfflineJudge, bar: float) -> None:
    kept: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    reached: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for row in lines(ADVERSARIAL):
        kind, question, chunks = str(row["kind"]), str(row["question"]), row["chunks"]
        faithful = judge.judge(question, chunks, str(row["faithful"]))  # type: ignore[arg-type]
        unfaithful = judge.judge(question, chunks, str(row["unfaithful"]))  # type: ignore[arg-type]
        total[kind] += 1
        kept[kind] += not flagged(faithful)
        caught[kind] += flagged(unfaithful)
        reached[kind] += reaches(unfaithful, bar)
    print(f"adversarial pairs ({ADVERSARIAL.relative_to(ROOT)}), cascade bar {bar:g}")
    head = ("kind", "pairs", "faithful", "unfaithful", "accuracy", "cascade")
    print("{:<18} {:>5} {:>9} {:>11} {:>9} {:>8}".format(*head))
    for kind in [*sorted(total), "all"]:
        n = sum(total.values()) if kind == "all" else total[kind]
        k = sum(kept.values()) if kind == "all" else kept[kind]
        c = sum(caught.values()) if kind == "all" else caught[kind]
        r = sum(reached.values()) if kind == "all" else reached[kind]
        shares = (k / n, c / n, (k + c) / (2 * n), r / n)
        print("{:<18} {:>5} {:>9.3f} {:>11.3f} {:>9.3f} {:>8.3f}".format(kind, n, *shares))


def sentinels(judge: OfflineJudge, name: str, per_kind: bool) -> None:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    false_flags = misses = supported = unsupported = 0
    for case in lines(SETS / f"{name}.jsonl"):
        judgement = judge.judge(str(case["question"]), case["chunks"], str(case["answer"]))  # type: ignore[arg-type]
        expected_flag = case["expected"] == "unsupported"
        got = flagged(judgement)
        right[str(case["kind"])] += got == expected_flag
        total[str(case["kind"])] += 1
        supported += not expected_flag
        unsupported += expected_flag
        false_flags += got and not expected_flag
        misses += expected_flag and not got
    accuracy = sum(right.values()) / sum(total.values())
    print(
        f"{name:<10} cases {sum(total.values()):>4}  accuracy {accuracy:.3f}  "
        f"false-flag rate {false_flags / supported:.3f}  miss rate {misses / unsupported:.3f}"
    )
    if per_kind:
        for kind in sorted(total):
            print(f"  {kind:<24} {right[kind]:>3}/{total[kind]:<3}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--bar", type=float, default=0.8, help="the cascade's bar")
    args = parser.parse_args()
    judge = OfflineJudge()
    print(f"judge {judge.name}\n")
    adversarial(judge, args.bar)
    print()
    sentinels(judge, "starter", per_kind=False)
    sentinels(judge, "certify", per_kind=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
