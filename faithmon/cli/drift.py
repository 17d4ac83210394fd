"""`faithmon drift status|rebuild|calibrate`: the production drift detectors per segment."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import click

from .. import drift
from ..model import segment_key, segment_name
from ..model.segment_state import detector_state
from . import wiring
from ._common import database_option, json_option, load_settings


@click.group("drift")
def drift_group() -> None:
    """Production drift detectors per segment."""


def _state(reading: drift.Reading) -> str:
    """The detector's state as the dashboard names it, and what folded or explained it."""
    state = detector_state(reading.level, reading.folded, reading.explained_by is not None)
    if state == "folded":
        return "folded into " + segment_name(reading.partition)
    if state == "explained" and reading.explained_by is not None:
        return "explained by " + segment_name(reading.explained_by)
    return state


@drift_group.command("rebuild")
@json_option
@database_option
def drift_rebuild(as_json: bool) -> None:
    """Fold every stored score into the detectors again (each worker run folds only new ones)."""
    import time

    from .. import jobs

    settings = load_settings()
    judge_ = wiring.make_judge(settings)
    config = wiring.drift_config(settings)
    started = time.perf_counter()
    with wiring.open_store(settings, must_exist=True) as sessions:
        folded = jobs.rebuild_drift(sessions, judge_.name, config)
    seconds = time.perf_counter() - started
    if as_json:
        shown = {
            "judge": judge_.name,
            "folded": folded.read,
            "watermark": folded.state.watermark,
            "seconds": round(seconds, 3),
        }
        click.echo(json.dumps(shown))
        return
    click.echo(
        f"rebuilt the drift detectors of {judge_.name}: {folded.read} scored records folded "
        f"up to evaluation {folded.state.watermark} in {seconds:.1f}s"
    )


@drift_group.command("status")
@json_option
@database_option
def drift_status(as_json: bool) -> None:
    """Each detector's baseline, current rate with a 95% interval, CUSUM, threshold and state."""
    from .. import jobs

    settings = load_settings()
    judge_ = wiring.make_judge(settings)
    config = wiring.drift_config(settings)
    with wiring.open_store(settings, must_exist=True) as sessions:
        run = jobs.check_drift(
            sessions, judge_.name, config, dry_run=True, ceiling=wiring.ceiling(settings)
        )
    if not run.baseline_ready:
        if as_json:
            click.echo(json.dumps({"building": [dict(p) for p in run.progress]}, indent=2))
            return
        click.echo(f"drift detection has not started yet (judge {judge_.name})")
        for grown in run.progress:
            name = segment_name(grown["labels"], "the records without a tenant")
            click.echo(f"{name}: {drift.progress_line(grown)}")
        if not run.progress:
            click.echo(
                f"baseline: 0 of {config.baseline_records:,} scored records; until then the"
                f" ceiling of {wiring.ceiling(settings).ceiling:.0%} applies"
            )
        return
    rows: list[dict[str, Any]] = []
    partitions: list[str] = []
    for reading in run.readings:
        partitions.append(segment_key(reading.partition))
        low, high = drift.wilson_interval(reading.unsupported, reading.records)
        rows.append(
            {
                "segment": dict(reading.segment),
                "stream": reading.stream,
                "baseline_rate": round(reading.baseline_rate, 4),
                "baseline_source": reading.baseline_source,
                "records": reading.records,
                "current_rate": round(reading.rate, 4),
                "current_interval": [round(low, 4), round(high, 4)],
                "statistic": round(reading.statistic, 3),
                "threshold": reading.threshold,
                "expected_delay": round(reading.expected_delay or 0.0, 1),
                "records_per_day": round(reading.per_day, 1),
                "state": _state(reading),
            }
        )
    silent: list[dict[str, Any]] = [
        {"segment": dict(s.segment), "last_at": s.last_at.isoformat(), "per_day": s.per_day}
        for s in run.silent
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if run.thresholds_from is not None:
        pinned = run.thresholds_from.get("threshold")
        how = f"pinned at {pinned:g}" if isinstance(pinned, float | int) else "from the budget"
        click.echo(
            f"thresholds as the run that raised the alerts set them ({how}), not as "
            "this shell's FAITHMON_DRIFT_* settings would"
        )
    # Tenants' partitions each under a heading, their longer names aligned; with none,
    # one table as ever.
    headed = any(partitions)
    width = max([30] + [len(segment_name(row["segment"])) for row in rows if headed])
    click.echo(
        f"{'segment':<{width}} {'stream':<11} {'baseline':>8} {'current (95%)':>22} {'n':>6}"
        f" {'cusum':>7} {'h':>6}  state"
    )
    for at, (row, partition) in enumerate(zip(rows, partitions, strict=True)):
        if headed and (at == 0 or partition != partitions[at - 1]):
            click.echo(f"-- partition {partition or 'without a tenant'}")
        name = segment_name(row["segment"])
        low, high = row["current_interval"]
        current = f"{row['current_rate']:.1%} ({low:.1%}-{high:.1%})"
        click.echo(
            f"{name:<{width}} {row['stream']:<11} {row['baseline_rate']:>8.1%} {current:>22}"
            f" {row['records']:>6} {row['statistic']:>7.2f} {row['threshold']:>6.2f}"
            f"  {row['state']}"
        )
    for item in silent:
        click.echo(f"silent: {segment_name(item['segment'])} since {item['last_at']}")
    for grown in run.progress:
        name = segment_name(grown["labels"], "the records without a tenant")
        click.echo(f"{name}: {drift.progress_line(grown)}")


@drift_group.command("calibrate")
@click.option(
    "--days",
    default=14,
    show_default=True,
    type=click.IntRange(min=1),
    help="Days of stored history to replay.",
)
@click.option("--dry-run", is_flag=True, help="Show the thresholds without storing them.")
@click.option("--reset", is_flag=True, help="Forget calibrated thresholds (back to the budget).")
@json_option
@database_option
def drift_calibrate(days: int, dry_run: bool, reset: bool, as_json: bool) -> None:
    """Set each detector's threshold from the last DAYS of history and the false-alarm budget.

    The rate each detector saw while no alert fired (judge noise, creep and all)
    sets the threshold that holds its share of FAITHMON_DRIFT_FALSE_ALARMS; the
    history is replayed to show the alarms each threshold would have raised.
    """
    from .. import jobs
    from ..store import thresholds as store_thresholds

    settings = load_settings()
    judge_ = wiring.make_judge(settings)
    config = wiring.drift_config(settings)
    if config.threshold is not None:
        raise click.ClickException(
            f"FAITHMON_DRIFT_THRESHOLD pins every threshold at {config.threshold:g}; "
            "set it to auto to use calibrated thresholds"
        )
    with wiring.open_store(settings, must_exist=True) as sessions:
        if reset:
            with sessions() as session, session.begin():
                store_thresholds.clear(session)
            click.echo("calibrated thresholds forgotten: thresholds come from the budget")
            return
        now = datetime.now(UTC)
        result = jobs.calibrate_drift(sessions, judge_.name, config, now - timedelta(days=days))
        if result is None:
            raise click.ClickException(
                f"no frozen baseline for judge {judge_.name} yet: nothing to calibrate against"
            )
        if not dry_run:
            with sessions() as session, session.begin():
                store_thresholds.replace_all(
                    session,
                    {c.detector: (c.threshold, _facts(c, days, now)) for c in result},
                )
    if as_json:
        click.echo(json.dumps([asdict(c) for c in result], indent=2))
        return
    partitions = [segment_key(config.partition_of(c.segment)) for c in result]
    headed = any(partitions)
    width = max([30] + [len(segment_name(c.segment)) for c in result if headed])
    click.echo(
        f"{'segment':<{width}} {'stream':<11} {'per day':>8} {'baseline':>8} {'seen':>7}"
        f" {'h budget':>8} {'h':>6} {'delay':>6} {'alarms':>7}  note"
    )
    for at, (c, partition) in enumerate(zip(result, partitions, strict=True)):
        if headed and (at == 0 or partition != partitions[at - 1]):
            click.echo(f"-- partition {partition or 'without a tenant'}")
        name = segment_key(c.segment) or "overall"
        click.echo(
            f"{name:<{width}} {c.stream:<11} {c.per_day:>8.1f} {c.baseline_rate:>8.1%}"
            f" {c.observed_rate:>7.1%} {c.budget_threshold:>8.2f} {c.threshold:>6.2f}"
            f" {c.expected_delay:>6.0f} {c.replay_alarms_budget:>3}->{c.replay_alarms:<3}  {c.note}"
        )
    spread = f" across {len(set(partitions))} partitions" if headed else ""
    click.echo(
        f"\n{len(result)} detectors over {days} days of history; budget "
        f"{config.false_alarms:g} false alarms per 30 days{spread}. "
        + ("Dry run: nothing stored." if dry_run else "Thresholds stored.")
    )


def _facts(c: drift.Calibration, days: int, now: datetime) -> dict[str, Any]:
    return {
        "days": days,
        "calibrated_at": now.isoformat(),
        "records": c.records,
        "baseline_rate": c.baseline_rate,
        "observed_rate": c.observed_rate,
        "budget_threshold": c.budget_threshold,
        "expected_delay": c.expected_delay,
    }
