"""Durability bench: a database outage and a SIGKILL, with and without the receiver's spool.

Run from the repository root::

    python bench/durability.py           # 3,000 traces with a 30 s outage, 5 s of load: ~3 min
    python bench/durability.py --quick   # 1,000 traces with a 10 s outage, 2 s of load: ~70 s
    python bench/durability.py --postgres-url URL  # default: postgres@127.0.0.1:5432/test

Each run gets a fresh PostgreSQL database (``faithmon db upgrade``) and real
``python -m faithmon serve`` processes on 127.0.0.1, with
FAITHMON_ASSEMBLY_QUIET_SECONDS=0.2 and FAITHMON_SPOOL_DIR a fresh folder, or
the empty string for the baseline (no spool), measured in the same run.

1. Outage: the receiver reaches PostgreSQL through a cuttable TCP proxy
   (``tests/e2e/proxy.py``). An app process sends 50 traces/s through the shim
   (``fm.setup``, ``rag_span``, ``record_retrieval``, ``record_answer``) for
   60 s, and the proxy is cut from second 15 to 45. Reported: traces sent,
   stored and lost, the answers the shim's exporter got (counted in the app
   process, during the outage and in all) and the receiver's "answering 503"
   log lines, /healthz mid-outage, and how long after the restore the store
   held every trace the app had sent by then.
2. SIGKILL: two threads POST one trace per request (OTLP protobuf built once by
   the real SDK, a fresh trace id per request) as fast as they can; after 5 s
   the receiver is killed with SIGKILL and restarted on the same spool folder.
   Reported: traces acknowledged (200), stored before and after the restart,
   acknowledged but missing, duplicate rows (rows − distinct trace ids), and the
   time from the restart until the stored count last grew.
3. The receiver's peak RSS (VmHWM) in each run.

Results go to ``bench/results/durability.json``. The script exits 1 when a run
with the spool loses an acknowledged trace or stores one twice, else 0 (also
when PostgreSQL is unreachable: it then prints why and skips).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common import (
    DEFAULT_POSTGRES,
    RESULTS_DIR,
    columns,
    cpus,
    postgres_admin,
    run_facts,
    write_results,
)
from durability_kill import run_kill
from durability_outage import run_outage
from durability_setup import FULL, QUICK, QUIET_SECONDS

RESULTS = RESULTS_DIR / "durability.json"


def _n(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _answers(answers: dict[str, int]) -> str:
    return " ".join(f"{k}×{v:,}" for k, v in sorted(answers.items())) or "none"


def rows_of(outage: Sequence[dict[str, Any]], kill: Sequence[dict[str, Any]]) -> list[list[str]]:
    def row(
        name: str, cells: Sequence[dict[str, Any]], get: Callable[[dict[str, Any]], Any]
    ) -> list[str]:
        return [name, *(_n(get(cell)) for cell in cells)]

    return [
        ["database outage", "", ""],
        row("  traces sent by the app", outage, lambda r: r["sent"]),
        row("  stored", outage, lambda r: r["stored"]),
        row("  lost", outage, lambda r: r["lost"]),
        row(
            "  exporter got, during the outage",
            outage,
            lambda r: _answers(r["exporter_answers_during_outage"]),
        ),
        row("  exporter got, in all", outage, lambda r: _answers(r["exporter_answers"])),
        row("  receiver logged 'answering 503'", outage, lambda r: r["log"]["answering_503"]),
        row("  /healthz mid-outage", outage, lambda r: r["healthz_mid_outage"].split()[0]),
        row(
            "  stored during the outage",
            outage,
            lambda r: r["stored_at_restore"] - r["stored_at_cut"],
        ),
        row(
            "  traces sent by the restore all stored, s after it",
            outage,
            lambda r: r["caught_up_after_restore_seconds"],
        ),
        row(
            "  last record stored, s after the last trace sent",
            outage,
            lambda r: r["last_stored_after_last_sent_seconds"],
        ),
        row("  peak spool, MB", outage, lambda r: r["peak_spool_bytes"] / 1e6),
        row("  receiver peak RSS, MiB", outage, lambda r: r["peak_rss_mib"]),
        ["SIGKILL under load", "", ""],
        row("  acknowledged (200)", kill, lambda r: r["acknowledged"]),
        row("  acknowledged per second", kill, lambda r: r["acknowledged_per_second"]),
        row("  stored before restart", kill, lambda r: r["stored_before_restart"]),
        row("  stored after restart", kill, lambda r: r["stored_after_restart"]),
        row("  acknowledged but missing", kill, lambda r: r["acknowledged_missing"]),
        row("  stored, never acknowledged", kill, lambda r: r["stored_not_acknowledged"]),
        row("  duplicate rows", kill, lambda r: r["duplicates"]),
        row("  restart to ready, s", kill, lambda r: r["restart_to_ready_seconds"]),
        row("  restart to replayed, s", kill, lambda r: r["restart_to_replayed_seconds"]),
        row("  receiver peak RSS before kill, MiB", kill, lambda r: r["peak_rss_mib"]),
        row("  restarted receiver peak RSS, MiB", kill, lambda r: r["restarted_peak_rss_mib"]),
    ]


def render_table(rows: Sequence[Sequence[str]], header: str, notes: Sequence[str]) -> str:
    titles = ("figure", "spool on", "spool off (baseline)")
    return "\n".join([header, "", *columns(titles, rows), "", *notes])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="1,000 traces, a 10 s outage, 2 s of load"
    )
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"database to create the bench databases from (default {DEFAULT_POSTGRES})",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    mode = "quick" if args.quick else "full"
    admin, reason = postgres_admin(args.postgres_url)
    if admin is None:
        print(f"PostgreSQL unreachable, durability bench skipped: {reason}")
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="faithmon-durability-bench-"))
    started = time.perf_counter()
    outage: list[dict[str, Any]] = []
    kill: list[dict[str, Any]] = []
    try:
        for spooled in (True, False):
            label = "spool on" if spooled else "spool off"
            print(
                f"outage, {label}: {sizes.traces:,} traces, {sizes.outage:.0f} s cut",
                file=sys.stderr,
            )
            outage.append(run_outage(admin, sizes, spooled, workdir))
            print(f"  sent {outage[-1]['sent']}, stored {outage[-1]['stored']}", file=sys.stderr)
        for spooled in (True, False):
            label = "spool on" if spooled else "spool off"
            print(f"SIGKILL, {label}: {sizes.load_seconds:.0f} s of load", file=sys.stderr)
            kill.append(run_kill(admin, sizes, spooled, workdir))
            print(
                f"  acknowledged {kill[-1]['acknowledged']}, "
                f"missing {kill[-1]['acknowledged_missing']}",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        admin.dispose()
    elapsed = time.perf_counter() - started

    spooled_outage, spooled_kill = outage[0], kill[0]
    bug = bool(
        spooled_outage["lost"]
        or spooled_outage["stored"] != spooled_outage["distinct"]
        or spooled_kill["acknowledged_missing"]
        or spooled_kill["duplicates"]
    )
    notes = [
        f"outage: the app sends {sizes.rate:.0f} traces/s through the shim; PostgreSQL is cut "
        f"from {sizes.cut_at:.0f} s to {sizes.cut_at + sizes.outage:.0f} s (proxy)",
        "SIGKILL: 2 threads, one trace per POST, as fast as answered; then a restart on the "
        "same spool folder; 'replayed' = until the stored count last grew",
        f"with the spool, lost or duplicated: {'YES (a bug)' if bug else 'none'}",
    ]
    for run in (*outage, *kill):
        for key in ("log", "restart_log"):
            if key in run and run[key]["replayed"]:
                notes.append(f"  {run[key]['replayed'][-1].strip()}")
    header = (
        f"faithmon durability bench ({mode}): Python {platform.python_version()}, "
        f"{cpus()} CPUs, PostgreSQL, {elapsed:.0f}s in all"
    )
    print(render_table(rows_of(outage, kill), header, notes))

    report = {
        **run_facts(mode, elapsed),
        "sizes": {
            "traces": sizes.traces,
            "rate": sizes.rate,
            "cut_at": sizes.cut_at,
            "outage": sizes.outage,
            "load_seconds": sizes.load_seconds,
        },
        "assembly_quiet_seconds": float(QUIET_SECONDS),
        "spool_lost_or_duplicated": bug,
        "outage": outage,
        "sigkill": kill,
    }
    write_results(RESULTS, report)
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
