"""Scrubber bench: recall, precision and throughput of faithmon's PII scrubber against Presidio.

Run from the repository root::

    python bench/scrub.py                 # about 2,000 texts, 5 runs: a minute or two
    python bench/scrub.py --quick         # about 200 texts, 3 runs: a few seconds
    python bench/scrub.py --presidio /tmp/presidio-venv/bin/python

Two corpora feed both scrubbers:

- generated, with Faker and ``random`` under a fixed seed: support-bot texts, each
  with 0-3 PII values at known character offsets (EMAIL, PHONE, CARD, IBAN, SSN, IP,
  SECRET) among values that must survive (order ids, dates, prices, versions,
  product codes, gift codes, ...);
- hand-written, ``bench/data/scrub_handwritten.jsonl`` (format: ``load_handwritten``
  in ``scrub_corpus.py``): about 120 texts in formats the generator does not produce
  (``<a@b>``, ``mailto:``, spelled-out e-mail, ``tel:``, extensions, European national
  phone formats, IPs with ports, vendor API keys, connection strings ...), and the
  PERSON and ADDRESS families, among distractors such as ISBNs, DOIs, CIDR ranges,
  documentation addresses, hex codes, SLA figures and "the Washington Street store".
  Both sizes (``--quick`` or not) use all of it.

faithmon runs with its default detectors, names and addresses included.

- Recall of a type: the share of its values whose every character lies inside a
  detected span (of any type), so that no part of the value is left.
- Precision: 1 - the share of distractors that any detected span touches. The
  count of detections that touch no labelled PII at all ("false scrubs") is
  given too.
- Throughput: texts/s and MB/s (UTF-8) of full scrubbing. faithmon: ``scrub_text``
  on every text with a fresh ``PiiScrubber`` per pass over texts that are all
  distinct, so its cache never hits (cache cold). Presidio: ``analyze`` +
  ``anonymize`` with its pattern recognizers and the no-op NLP engine, in its own
  venv (``bench/peers/presidio_worker.py``), passes taken in turn with faithmon's.

Throughput is measured on the generated corpus only.

Goals (from issue 17): recall >= 0.95 on every pattern family, >= 0.90 on PERSON and
ADDRESS, no distractor scrubbed, on each corpus, and at least 20 times Presidio's
throughput. Families faithmon has no detector for are scored all the same. The tables
say whether each goal is met; the script exits 0 either way. Results go to
``bench/results/scrub.json``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, number, write_results
from peers.presidio import DEFAULT_PRESIDIO, PRESIDIO_KINDS, Presidio
from scrub_corpus import HANDWRITTEN, KINDS, Generator, Item, load_handwritten
from scrub_report import (
    NAME_RECALL_GOAL,
    PRECISION_GOAL,
    RECALL_GOAL,
    SPEED_GOAL,
    System,
    examples,
    format_rows,
    render,
)
from scrub_score import Span, score

from faithmon.ingest.scrub import PiiScrubber

RESULTS = RESULTS_DIR / "scrub.json"
SEED = 20261201
# A fixed key: the bench measures scrubbing, it protects nothing.
KEY = b"faithmon-bench-scrub-key"


@dataclass(frozen=True, slots=True)
class Sizes:
    texts: int
    repetitions: int


QUICK = Sizes(texts=200, repetitions=3)
FULL = Sizes(texts=2000, repetitions=5)


def faithmon_detections(texts: Sequence[str]) -> list[list[Span]]:
    scrubber = PiiScrubber(KEY, scope="global")
    return [[(f.start, f.end, f.kind) for f in scrubber.detect(text)] for text in texts]


def faithmon_pass(texts: Sequence[str]) -> float:
    """Seconds to scrub every text once with a fresh scrubber (all texts distinct: cache cold)."""
    scrubber = PiiScrubber(KEY, scope="global")
    started = time.perf_counter()
    for text in texts:
        scrubber.scrub_text(text)
    return time.perf_counter() - started


def faithmon_warm_pass(texts: Sequence[str]) -> float:
    """Seconds for a second pass over the same texts with the same scrubber: every text cached."""
    scrubber = PiiScrubber(KEY, scope="global")
    for text in texts:
        scrubber.scrub_text(text)
    started = time.perf_counter()
    for text in texts:
        scrubber.scrub_text(text)
    return time.perf_counter() - started


def corpus_counts(items: Sequence[Item]) -> dict[str, Any]:
    texts = [item.text for item in items]
    return {
        "texts": len(texts),
        "megabytes": sum(len(t.encode()) for t in texts) / 1e6,
        "pii_values": sum(len(item.pii) for item in items),
        "pii_by_kind": {
            kind: sum(label.kind == kind for item in items for label in item.pii) for kind in KINDS
        },
        "distractors": sum(len(item.distractors) for item in items),
        "distractors_by_family": dict(
            Counter(label.kind for item in items for label in item.distractors).most_common()
        ),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="about 200 texts, 3 runs")
    parser.add_argument(
        "--presidio",
        default=DEFAULT_PRESIDIO,
        metavar="PYTHON",
        help=f"the Python of a venv with presidio-analyzer and presidio-anonymizer "
        f"(default {DEFAULT_PRESIDIO})",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if not Path(args.presidio).exists():
        parser.error(
            f"{args.presidio} not found: make a venv with "
            "`python3 -m venv /tmp/presidio-venv && /tmp/presidio-venv/bin/pip install "
            "presidio-analyzer presidio-anonymizer`, or pass --presidio"
        )

    started = time.perf_counter()
    items = Generator(SEED).corpus(sizes.texts)
    texts = [item.text for item in items]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    pii_count = sum(len(item.pii) for item in items)
    distractor_count = sum(len(item.distractors) for item in items)

    hand_items = load_handwritten()
    hand_texts = [item.text for item in hand_items]
    hand = corpus_counts(hand_items)

    ours_detections = faithmon_detections(texts)
    ours_hand = faithmon_detections(hand_texts)
    presidio = Presidio(args.presidio)
    notes: list[str] = []
    try:
        probe = presidio.ask({"cmd": "probe"})
        presidio_detections, setup = presidio.load(texts, "no_op")
        faithmon_pass(texts)  # warm-up, as Presidio's load pass is
        ours_seconds: list[float] = []
        presidio_seconds: list[float] = []
        for _ in range(sizes.repetitions):
            ours_seconds.append(faithmon_pass(texts))
            presidio_seconds.append(presidio.timed_pass())
        warm = statistics.median(faithmon_warm_pass(texts) for _ in range(sizes.repetitions))
        presidio_hand, _ = presidio.load(hand_texts, "no_op")  # after the timed passes
    finally:
        presidio.close()

    ours = System("faithmon", score(items, ours_detections), tuple(ours_seconds), frozenset(KINDS))
    ours_h = System("faithmon", score(hand_items, ours_hand), tuple(ours_seconds), ours.covers)
    presidio_name = f"Presidio {probe['presidio_analyzer']} patterns"
    covered = frozenset(PRESIDIO_KINDS.values())
    others = [
        System(
            presidio_name,
            score(items, presidio_detections),
            tuple(presidio_seconds),
            covered,
        )
    ]
    others_h = [
        System(presidio_name, score(hand_items, presidio_hand), tuple(presidio_seconds), covered)
    ]
    spacy_models: list[str] = probe["spacy_models"]
    spacy_seconds: list[float] = []
    if spacy_models:
        with_spacy = Presidio(args.presidio)
        try:
            spacy_detections, _ = with_spacy.load(texts, spacy_models[0])
            spacy_seconds = [with_spacy.timed_pass() for _ in range(sizes.repetitions)]
            spacy_hand, _ = with_spacy.load(hand_texts, spacy_models[0])
        finally:
            with_spacy.close()
        others.append(
            System(
                f"Presidio + {spacy_models[0]}",
                score(items, spacy_detections),
                tuple(spacy_seconds),
                covered,
            )
        )
        others_h.append(
            System(others[-1].name, score(hand_items, spacy_hand), tuple(spacy_seconds), covered)
        )
    else:
        notes.append(
            "Presidio + spaCy: no official spaCy English model (en_core_web_sm/md/lg/trf) is "
            "installed in Presidio's venv, and none installs from PyPI under that name: "
            "no row for it."
        )
    elapsed = time.perf_counter() - started

    header = (
        f"faithmon scrub bench ({'quick' if args.quick else 'full'}): Python "
        f"{platform.python_version()} on {platform.machine()}, {len(texts):,} texts "
        f"({megabytes:.2f} MB), {pii_count:,} PII values, {distractor_count:,} distractors, "
        f"seed {SEED}, median of {sizes.repetitions} runs, {elapsed:.1f}s in all"
    )
    rendered, goals = render(header, ours, others, len(texts), megabytes)
    hand_header = (
        f"hand-written corpus ({HANDWRITTEN.relative_to(HANDWRITTEN.parents[2])}): "
        f"{hand['texts']:,} texts, {hand['pii_values']:,} PII values, "
        f"{hand['distractors']:,} distractors (throughput: generated corpus only)"
    )
    hand_rendered, hand_goals = render(
        hand_header,
        ours_h,
        others_h,
        len(hand_texts),
        sum(len(t.encode()) for t in hand_texts) / 1e6,
        throughput=False,
        prefix="hand-written ",
    )
    goals |= hand_goals
    notes = [
        "recall = share of values with every character inside a detected span; precision = 1 - "
        "share of distractors any span touches",
        f"ratio = faithmon / {presidio_name} (the baseline, measured in the same run, "
        "runs taken in turn); texts are all distinct and each faithmon run uses a fresh "
        "PiiScrubber, so its cache never hits",
        f"faithmon with its cache warm (same texts again): {number(len(texts) / warm)} texts/s",
        f"Presidio: analyze + anonymize, entities {', '.join(PRESIDIO_KINDS)}, no-op NLP "
        f"engine (no model), score threshold 0; engine setup {setup:.1f}s not timed",
        *notes,
    ]
    print(rendered)
    print("\n" + hand_rendered)
    print("\n" + "\n".join(notes))
    for line in format_rows(ours, others, " (generated)"):
        print(line)
    for line in format_rows(ours_h, others_h, " (hand-written)"):
        print(line)
    for line in examples(ours.score, corpus=" (generated)"):
        print(line)
    for line in examples(ours_h.score, corpus=" (hand-written)"):
        print(line)
    missed = [name for name, met in goals.items() if not met]
    print("\nall goals met" if not missed else f"\ngoals missed: {', '.join(missed)}")

    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "seconds": elapsed,
        "seed": SEED,
        "corpus": {
            "texts": len(texts),
            "megabytes": megabytes,
            "pii_values": pii_count,
            "distractors": distractor_count,
            "pii_by_kind": corpus_counts(items)["pii_by_kind"],
        },
        "versions": {k: v for k, v in probe.items() if k != "spacy_models"},
        "spacy_models": spacy_models,
        "goals": {
            "recall": RECALL_GOAL,
            "name_recall": NAME_RECALL_GOAL,
            "precision": PRECISION_GOAL,
            "throughput_ratio": SPEED_GOAL,
            "met": goals,
        },
        "systems": [
            {
                "name": system.name,
                "texts_per_second": system.texts_per_second(len(texts)),
                "megabytes_per_second": system.texts_per_second(len(texts))
                * megabytes
                / len(texts),
                "seconds_per_pass": list(system.seconds),
                **system.score.as_json(),
            }
            for system in (ours, *others)
        ],
        "handwritten": {
            "path": str(HANDWRITTEN.relative_to(HANDWRITTEN.parents[2])),
            "corpus": hand,
            "systems": [
                {"name": system.name, **system.score.as_json()} for system in (ours_h, *others_h)
            ],
        },
        "faithmon_warm_cache_texts_per_second": len(texts) / warm,
        "throughput_ratio": ours.texts_per_second(len(texts))
        / others[0].texts_per_second(len(texts)),
        "presidio_setup_seconds": setup,
        "notes": notes,
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
