"""The offline judge on the committed hand-written sets, per kind of error.

Run from the repository root: ``python bench/judge_sets.py [--bar 0.8]``.

- ``tests/judge/data/adversarial.jsonl``: 150 pairs over the same chunks, a faithful
  and an unfaithful answer each. Per kind: the share of faithful answers scored 1.0,
  of unfaithful ones scored below it, their mean (accuracy), and for the cascade at
  ``--bar`` the share of unfaithful answers that reach the LLM or are settled
  unfaithful offline (none swallowed is the goal). The rules were mended beside them.
- ``tests/judge/data/adversarial_fresh.jsonl``: 80 pairs of the same kinds written
  apart from the rules and from the set above; the odd ids were read to mend false
  flags, the even ids never (their row is the held-out figure).
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
FRESH = ROOT / "tests/judge/data/adversarial_fresh.jsonl"
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


def adversarial(judge: OfflineJudge, bar: float, path: Path, title: str) -> None:
    kept: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    reached: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for row in lines(path):
        kind, question, chunks = str(row["kind"]), str(row["question"]), row["chunks"]
        faithful = judge.judge(question, chunks, str(row["faithful"]))  # type: ignore[arg-type]
        unfaithful = judge.judge(question, chunks, str(row["unfaithful"]))  # type: ignore[arg-type]
        for group in (kind, *_halves(path, str(row["id"]))):
            total[group] += 1
            kept[group] += not flagged(faithful)
            caught[group] += flagged(unfaithful)
            reached[group] += reaches(unfaithful, bar)
    print(f"{title} ({path.relative_to(ROOT)}), cascade bar {bar:g}")
    head = ("kind", "pairs", "faithful", "unfaithful", "accuracy", "cascade")
    print("{:<22} {:>5} {:>9} {:>11} {:>9} {:>8}".format(*head))
    kinds = sorted(k for k in total if not k.startswith("half:"))
    for kind in [*kinds, "all", *sorted(k for k in total if k.startswith("half:"))]:
        n = sum(total[k] for k in kinds) if kind == "all" else total[kind]
        k = sum(kept[k] for k in kinds) if kind == "all" else kept[kind]
        c = sum(caught[k] for k in kinds) if kind == "all" else caught[kind]
        r = sum(reached[k] for k in kinds) if kind == "all" else reached[kind]
        shares = (k / n, c / n, (k + c) / (2 * n), r / n)
        print("{:<22} {:>5} {:>9.3f} {:>11.3f} {:>9.3f} {:>8.3f}".format(kind, n, *shares))


def _halves(path: Path, row_id: str) -> tuple[str, ...]:
    """The fresh pairs' split: odd ids were read while mending the judge, even ids never."""
    if path != FRESH:
        return ()
    return ("half: read (odd ids)",) if int(row_id.rsplit("-", 1)[1]) % 2 else ("half: unread",)


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
    adversarial(judge, args.bar, ADVERSARIAL, "adversarial pairs")
    print()
    adversarial(judge, args.bar, FRESH, "fresh adversarial pairs")
    print()
    sentinels(judge, "starter", per_kind=False)
    sentinels(judge, "certify", per_kind=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
