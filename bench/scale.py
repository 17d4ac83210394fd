"""How the worker's jobs and the list query grow with stored records (SQLite, PostgreSQL).

    python bench/scale.py                          # 10,000, 100,000 and 1,000,000 records
    python bench/scale.py --sizes 10000,100000 --backends sqlite --json out.json

Each store is bulk-loaded through the store's own code (bench/api_store.py: records with
tenants, routes, models and a service, evaluations with claims, a frozen baseline), grown
size by size. At each size the worker's drift run first catches up on what was loaded (and runs
once more, as a worker running every minute would: the thresholds of this traffic are
solved by then); then, timed:

- ``drift_run_after_1000``: one drift run after 1,000 new evaluations;
- ``drift_status``: `faithmon drift status` (a dry run, in a process with no solved
  thresholds in memory: it learns them from the stored state);
- ``claim_batch_100``: one worker's claim of a batch of 100 pending records;
- ``retention_10pct``: a retention pass deleting the oldest 10% of records;
- ``list_label_filter``: the trace list (first page of 50) filtered on a label.

Each figure is printed per size with its growth exponent between sizes (log ratio of
seconds over log ratio of records: 0 is flat, 1 is linear).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, select, update

from bench.api_store import CONFIG, JUDGE, Store
from bench.common import postgres_admin, postgres_database
from faithmon.drift import arl
from faithmon.jobs import apply_retention, check_drift
from faithmon.store import records as store_records
from faithmon.store.reads_traces import TraceFilter, list_traces
from faithmon.store.tables import RecordRow

FIGURES = (
    "drift_run_after_1000",
    "drift_status",
    "claim_batch_100",
    "retention_10pct",
    "list_label_filter",
)
GOALS = {"drift_run_after_1000": 1.0, "claim_batch_100": 0.05, "list_label_filter": 0.05}
NEW = 1000
DAY = timedelta(days=1)


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _stored(store: Store) -> int:
    with store.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(RecordRow)) or 0)


def _clock(store: Store) -> Callable[[], datetime]:
    """The worker's clock: five minutes after the newest trace, as if it ran with the
    traffic (the drift state's horizon follows it)."""
    with store.sessions() as session:
        newest = session.scalar(select(func.max(RecordRow.started_at)))
    assert newest is not None
    at = newest + timedelta(minutes=5)
    return lambda: at


def _drift(store: Store, dry_run: bool = False) -> float:
    now = _clock(store)
    return _timed(lambda: check_drift(store.sessions, JUDGE, CONFIG, now=now, dry_run=dry_run))


def _claim(store: Store) -> float:
    """A claim among 200 pending records (the newest, as a worker meets them), put back
    as they were afterwards."""
    with store.sessions.begin() as session:
        newest = select(RecordRow.id).order_by(RecordRow.started_at.desc()).limit(200)
        ids = list(session.scalars(newest))
        statuses = dict(
            session.execute(
                select(RecordRow.id, RecordRow.status).where(RecordRow.id.in_(ids))
            ).all()
        )
        session.execute(update(RecordRow).where(RecordRow.id.in_(ids)).values(status="pending"))
    with store.sessions() as session, session.begin():
        started = time.perf_counter()
        claimed = store_records.claim_pending(session, "bench", 100, 300)
        seconds = time.perf_counter() - started
        assert len(claimed) == 100, len(claimed)
    with store.sessions.begin() as session:
        for status in set(statuses.values()):
            chosen = [i for i, s in statuses.items() if s == status]
            session.execute(
                update(RecordRow)
                .where(RecordRow.id.in_(chosen))
                .values(status=status, lease_owner=None, lease_expires=None)
            )
    return seconds


def _retention(store: Store) -> tuple[float, int]:
    with store.sessions() as session:
        count = int(session.scalar(select(func.count()).select_from(RecordRow)) or 0)
        cutoff = session.scalar(
            select(RecordRow.started_at).order_by(RecordRow.started_at).offset(count // 10)
        )
    assert cutoff is not None
    deleted: list[int] = []
    seconds = _timed(
        lambda: deleted.append(
            apply_retention(store.sessions, 1, CONFIG.dimensions, JUDGE, now=lambda: cutoff + DAY)
        )
    )
    return seconds, deleted[0]


def _list(store: Store) -> float:
    where = TraceFilter(labels={"route": "billing", "model": "llama-3-70b"})
    with store.sessions() as session:
        return _timed(lambda: list_traces(session, where, 50))


def measure(url: str, sizes: list[int]) -> dict[int, dict[str, float]]:
    arl.forget()  # each backend starts with nothing solved, as a new worker does
    store = Store(url, total=max(sizes) * 2 + NEW * len(sizes))
    figures: dict[int, dict[str, float]] = {}
    deleted = 0
    for size in sizes:
        build = store.grow(size + deleted - NEW)
        catch_up = _drift(store)
        # A worker runs every minute: by now it has solved the thresholds of this traffic.
        _drift(store)
        store.grow(size + deleted)
        row = {"drift_run_after_1000": _drift(store)}
        arl.forget()
        row["drift_status"] = _drift(store, dry_run=True)
        row["claim_batch_100"] = _claim(store)
        row["list_label_filter"] = _list(store)
        row["retention_10pct"], gone = _retention(store)
        assert gone >= size // 20, f"retention deleted {gone} of {size} records"
        deleted += gone
        row["records"] = float(size)
        row["build_seconds"] = build
        row["retention_deleted"] = float(gone)
        row["drift_catch_up"] = catch_up
        figures[size] = row
        print(
            f"  {size:>9,} records: built in {build:.0f}s, drift caught up in {catch_up:.1f}s",
            flush=True,
        )
    return figures


def _exponent(figures: dict[int, dict[str, float]], name: str, size: int, prior: int) -> str:
    a, b = figures[prior][name], figures[size][name]
    if a <= 0 or b <= 0:
        return "-"
    return f"{math.log(b / a) / math.log(size / prior):+.2f}"


def render(backend: str, figures: dict[int, dict[str, float]]) -> str:
    sizes = sorted(figures)
    lines = [f"\n{backend}", f"{'figure':<22}" + "".join(f"{s:>14,}" for s in sizes)]
    lines[-1] += "   growth exponent" + "   goal"
    for name in FIGURES:
        cells = "".join(f"{figures[s][name] * 1000:>12.1f}ms" for s in sizes)
        growth = " ".join(_exponent(figures, name, s, p) for p, s in itertools.pairwise(sizes))
        goal = GOALS.get(name)
        met = ""
        if goal is not None:
            met = f"< {goal * 1000:.0f}ms at the largest: " + (
                "met" if figures[sizes[-1]][name] < goal else "MISSED"
            )
        lines.append(f"{name:<22}{cells}   {growth or '-':<15}   {met}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument(
        "--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--json", type=Path, help="write {BACKEND: {SIZE: {FIGURE: seconds}}}")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    if any(s <= NEW for s in sizes):
        parser.error(f"every size must be above {NEW}")
    report: dict[str, dict[str, dict[str, float]]] = {}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        print(f"{backend}: building stores of {', '.join(f'{s:,}' for s in sizes)} records")
        if backend == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                figures = measure(f"sqlite:///{folder}/scale.db", sizes)
        elif backend == "postgresql":
            admin, why = postgres_admin(args.postgres_url)
            if admin is None:
                print(f"  skipped: {why}")
                continue
            with postgres_database(admin) as url:
                figures = measure(url, sizes)
        else:
            parser.error(f"unknown backend {backend!r}: sqlite or postgresql")
        print(render(backend, figures))
        report[backend] = {
            str(s): {k: round(v, 6) for k, v in row.items()} for s, row in figures.items()
        }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
