"""Memory against label cardinality: RSS after 1,000 and after 100,000 distinct routes.

Run from the repository root::

    python bench/segments.py           # 100,000 routes per scenario
    python bench/segments.py --quick   # 20,000

Each scenario runs in a fresh process: the ingest pipeline (the real assembler, extractor
and sampler, with a per-segment rate limit and an hourly minimum) takes one-span RAG
traces whose ``route`` label is new with every trace, 500 to a request, and a store that
counts records and keeps none. ``store up`` saves sampling counts every tick; ``outage``
fails them throughout, so they wait in memory. Reported: VmRSS after 1,000 routes and at
the end, and the size of every map the sampler and the sampling book hold.

Results go to ``bench/results/segments.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, run_facts, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RESULTS = RESULTS_DIR / "segments.json"
BATCH = 500
FIRST = 1_000
SCENARIOS = ("store up", "outage")


def rss_kb() -> int:
    gc.collect()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status (Linux only)")


def sizes(*holders: object) -> dict[str, int]:
    """The length of every sized attribute of ``holders`` (the maps they keep)."""
    found = {}
    for holder in holders:
        for name, value in vars(holder).items():
            if hasattr(value, "__len__") and not isinstance(value, str | bytes):
                found[f"{type(holder).__name__}.{name}"] = len(value)
    return found


def one(scenario: str, routes: int) -> dict[str, Any]:
    """Run one scenario here and return its figures."""
    from faithmon.ingest.pipeline import Pipeline
    from faithmon.ingest.sampler import PolicySampler, SamplingPolicy
    from faithmon.ingest.scrub import identity
    from faithmon.ingest.spans import IngestSpan

    stored = [0]

    def save(records: Sequence[Any]) -> None:
        stored[0] += len(records)

    def save_sampling(tallies: Sequence[Any], dropped: Sequence[Any]) -> None:
        if scenario == "outage":
            raise ConnectionError("database is down")

    resource = {"service.name": "support-bot"}

    def root(n: int) -> IngestSpan:
        attributes = {
            "faithmon.role": "request",
            "openinference.span.kind": "CHAIN",
            "input.value": "Where is my order?",
            "output.value": "It shipped.",
            "faithmon.label.route": f"/orders/{n:08d}",
        }
        return IngestSpan(
            f"{n + 1:032x}", f"{n + 1:016x}", None, "rag", n, n + 1, attributes, resource
        )

    policy = SamplingPolicy(rate_limit=5.0, minimum_per_hour=1, keep_rules=frozenset())
    sampler = PolicySampler(policy)
    pipeline = Pipeline(
        save, sampler=sampler, scrubber=identity, quiet_seconds=0, save_sampling=save_sampling
    )
    started = time.perf_counter()
    first = 0
    for start in range(0, routes, BATCH):
        pipeline.submit([root(n) for n in range(start, min(routes, start + BATCH))])
        pipeline.flush_all()
        if start + BATCH == FIRST:
            first = rss_kb()
    last = rss_kb()
    return {
        "scenario": scenario,
        "routes": routes,
        "rss_kb_after_1000": first,
        "rss_kb_at_end": last,
        "growth": last / first - 1,
        "seconds": time.perf_counter() - started,
        "records_stored": stored[0],
        "map_sizes": sizes(sampler, pipeline._book),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 routes per scenario")
    parser.add_argument("--one", choices=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument("--routes", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.routes)))
        return
    routes = 20_000 if args.quick else 100_000
    started = time.perf_counter()
    runs = []
    for scenario in SCENARIOS:
        command = [sys.executable, __file__, "--one", scenario, "--routes", str(routes)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    print(f"{'scenario':<10} {'RSS @1,000':>11} {f'RSS @{routes:,}':>13} {'growth':>7}  maps")
    for run in runs:
        print(
            f"{run['scenario']:<10} {run['rss_kb_after_1000'] / 1024:>8.1f} MB"
            f" {run['rss_kb_at_end'] / 1024:>10.1f} MB {run['growth']:>+7.1%}  {run['map_sizes']}"
        )
    facts = run_facts("quick" if args.quick else "full", time.perf_counter() - started)
    write_results(RESULTS, {**facts, "runs": runs})


if __name__ == "__main__":
    main()
