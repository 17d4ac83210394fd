"""How long `faithmon --help` and `faithmon --version` take to start, against a bare Python.

Run from the repository root: ``python bench/cli_startup.py`` (``--runs N``, default 15).
Each command runs as the console script does (``python -m faithmon ...``) in a fresh
process, alternating with the baseline (``python -c pass``, the interpreter alone), and
the median wall time is shown with the ratio. A second table, from one run under
``-X importtime``, lists the slowest top-level imports of each command: what to make lazy
when a figure grows. The goal is under 0.3 s on an idle machine; the figures of a busy
machine are larger for both sides alike, which the ratio shows.

Writes ``bench/results/cli_startup.json``.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from common import RESULTS_DIR, Figure, alternate, columns, render, run_facts, write_results

RESULTS = RESULTS_DIR / "cli_startup.json"
ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("--help",), ("--version",))
BASELINE = "python -c pass"
GOAL_SECONDS = 0.3


def wall(argv: Sequence[str]) -> float:
    """Seconds from start to exit of one fresh process."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def import_times(args: Sequence[str]) -> list[tuple[str, float]]:
    """(module, cumulative ms) of each top-level import of one run, slowest first."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "faithmon", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    found = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        # Nested imports are indented under the one that asked for them: top level only.
        if cumulative.strip().isdigit() and not name.startswith("   "):
            found.append((name.strip(), int(cumulative) / 1000))
    return sorted(found, key=lambda row: -row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per figure")
    args = parser.parse_args()
    started = time.perf_counter()
    figures = []
    for command in COMMANDS:
        samples, base = alternate(
            args.runs,
            functools.partial(wall, [sys.executable, "-m", "faithmon", *command]),
            functools.partial(wall, [sys.executable, "-c", "pass"]),
        )
        name = f"faithmon {' '.join(command)}"
        figures.append(Figure(name, "s", samples, BASELINE, base, higher_is_better=False))
    notes = [
        f"median of {args.runs} fresh processes each; goal: under {GOAL_SECONDS} s on an "
        "idle machine; "
        + ", ".join(
            f"{f.name} {'meets' if f.value < GOAL_SECONDS else 'misses'} it" for f in figures
        )
    ]
    print(render(figures, "CLI start-up, wall time", notes))
    slowest = {" ".join(c): import_times(c)[:6] for c in COMMANDS}
    for command, rows in slowest.items():
        print(f"\nfaithmon {command}: slowest top-level imports (-X importtime, one run)")
        print("\n".join(columns(("module", "ms"), [(m, f"{ms:.1f}") for m, ms in rows])))
    facts = run_facts(f"{args.runs} runs", time.perf_counter() - started)
    write_results(
        RESULTS,
        {
            **facts,
            "figures": [f.as_json() for f in figures],
            "imports_ms": {c: dict(rows) for c, rows in slowest.items()},
        },
    )


if __name__ == "__main__":
    main()
