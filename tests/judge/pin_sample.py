"""Re-pin the offline judge's verdicts on the committed labelled sample (data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from faithmon.judge import OfflineJudge

SAMPLE = Path(__file__).parent / "data" / "labelled_sample.jsonl"


def main() -> None:
    judge = OfflineJudge()
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    moved = 0
    for row in rows:
        judgement = judge.judge(row["question"], row["contexts"], row["response"])
        pinned = {"status": judgement.status, "verdicts": [c.verdict for c in judgement.claims]}
        if pinned != row["pinned"]:
            moved += 1
            print(f"{row['id']}: {row['pinned']} -> {pinned}")
        row["pinned"] = pinned
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    SAMPLE.write_text("".join(lines), encoding="utf-8")
    print(f"{moved} of {len(rows)} rows moved")


if __name__ == "__main__":
    main()
