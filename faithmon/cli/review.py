"""`faithmon review queue|label|skip|agreement|calibrate|export`: people label the judge's
claims, and the labels measure the judge and calibrate its thresholds."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ..model.review import LABELS, ReviewItem, item_json
from ..store import review as store_review
from . import wiring
from ._common import counted, database_option, json_option, limit_option, load_settings
from .review_labels import parse_labels


@click.group()
def review() -> None:
    """The review loop: label claims, measure the judge, calibrate thresholds."""


@review.command("queue")
@json_option
@limit_option(20)
@click.option("--tenant", default=None, help="Only this tenant's items.")
@database_option
def review_queue(as_json: bool, limit: int, tenant: str | None) -> None:
    """Open review items, most urgent first: critical cases, the cascade's overruled claims,
    low scores, then the sample of high scores."""
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        items = store_review.queue(session, tenant, limit)
    if as_json:
        click.echo(json.dumps([item_json(i) for i in items], indent=2, ensure_ascii=False))
        return
    if not items:
        click.echo("the review queue is empty")
        return
    for item in items:
        click.echo(
            f"{item.trace_id}  {item.reason:<17} p={item.inclusion_probability:.2f}  "
            f"{item.reviews_done}/{item.reviews_wanted} reviews  {item.judge}"
        )
        for claim in item.claims:
            click.echo(f"    [{claim.index}] {claim.verdict:<12} {claim.text}")


def _open_item(session: Any, trace_id: str) -> ReviewItem:
    item = store_review.find(session, trace_id)
    if item is None:
        raise click.ClickException(f"trace {trace_id} is not in the review queue")
    if item.status != store_review.OPEN:
        raise click.ClickException(f"trace {trace_id}'s review item is {item.status}")
    return item


@review.command("label")
@click.argument("trace_id")
@click.option(
    "--claim",
    "claims",
    multiple=True,
    metavar="INDEX[.PART]=VERDICT[:critical]",
    help=f"A claim's label ({', '.join(LABELS)}), optionally :critical or :minor (repeatable).",
)
@click.option(
    "--split",
    "splits",
    multiple=True,
    metavar='"INDEX=PART|PART"',
    help="Split a claim the judge left whole; label each part with --claim INDEX.PART=...",
)
@click.option(
    "--merge",
    "merges",
    multiple=True,
    metavar="I+J=VERDICT[:critical]",
    help="Label claims the judge split as one claim (repeatable).",
)
@click.option("--reviewer", default="", help="Who labels (default: $USER).")
@click.option("--note", default="", help="A note kept with the labels.")
@json_option
@database_option
def review_label(
    trace_id: str,
    claims: tuple[str, ...],
    splits: tuple[str, ...],
    merges: tuple[str, ...],
    reviewer: str,
    note: str,
    as_json: bool,
) -> None:
    """Label the claims of a queued trace, by their index in `review queue`; split a claim
    or merge claims where the judge cut the answer wrongly."""
    who = reviewer.strip() or getpass.getuser()
    now = datetime.now(UTC)
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        item = _open_item(session, trace_id)
        if who in store_review.labelled_by(session, item.id):
            raise click.ClickException(f"{who} has already labelled trace {trace_id}")
        held = item.lease_owner and item.lease_expires and item.lease_expires > now
        if held and item.lease_owner != who:
            raise click.ClickException(
                f"trace {trace_id} is being reviewed by {item.lease_owner} until "
                f"{item.lease_expires:%H:%M} UTC"
            )
        try:
            labels = parse_labels(claims, splits, merges, item.claims)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        done = store_review.label(session, item, who, labels, note, now)
    if as_json:
        click.echo(json.dumps({**item_json(done), "reviewer": who, "labelled": len(labels)}))
        return
    state = "done" if done.status == store_review.DONE else "waits for another reviewer"
    labelled = counted(len(labels), "claim")
    click.echo(f"trace {trace_id}: {labelled} labelled by {who}; the item {state}")


@review.command("skip")
@click.argument("trace_id")
@database_option
def review_skip(trace_id: str) -> None:
    """Take a trace out of the review queue (it cannot be reviewed)."""
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        store_review.skip(session, _open_item(session, trace_id))
    click.echo(f"trace {trace_id} skipped")


@review.command("agreement")
@json_option
@database_option
def review_agreement(as_json: bool) -> None:
    """How each judge configuration agrees with the reviewers (κ, balanced accuracy, false
    acceptance and rejection with 95% intervals, weighted for how the queue sampled)."""
    from ..review.agreement import agreement

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        items = store_review.reviewed(session)
    figures = agreement(items, settings.drift_dimensions)
    if as_json:
        click.echo(json.dumps(figures, indent=2))
        return
    if not figures["judges"]:
        click.echo("no reviewed items yet")
        return
    for judge in figures["judges"]:
        click.echo(judge["judge"])
        for level in ("claim_level", "answer_level"):
            f = judge[level]
            click.echo(
                f"  {level.replace('_', ' ')}: kappa {_num(f['kappa'])} {f['ci95'] or ''}, "
                f"balanced accuracy {_num(f['balanced_accuracy'])}, n {f['n']}; false "
                f"acceptance {_num(f['false_acceptance']['rate'])}, false rejection "
                f"{_num(f['false_rejection']['rate'])}"
            )
    people = figures["reviewers"]
    click.echo(f"between reviewers: kappa {_num(people['kappa'])} over {people['n']} claims")


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@review.command("calibrate")
@click.option("--dry-run", is_flag=True, help="Show the thresholds without storing them.")
@click.option(
    "--reset",
    is_flag=True,
    help="Remove every stored threshold (no answer is gated until the next calibration).",
)
@json_option
@database_option
def review_calibrate(dry_run: bool, reset: bool, as_json: bool) -> None:
    """For each judge configuration and segment, the score threshold with the lowest false
    acceptance under FAITHMON_REVIEW_MAX_FALSE_REJECTION, with its guard band; stored,
    versioned, with the number of labelled answers it rests on. A segment needs
    FAITHMON_REVIEW_MIN_LABELS labelled answers before its threshold is stored. A
    configuration is calibrated on every reviewed answer it has scored (so a new one,
    once the reviewed traces are rescored); thresholds of other configurations than the
    current judge are listed as stale."""
    from ..review.calibrate import answer_points, by_segment, calibrate, dataset_version, rescored
    from ..review.calibrate import shortfall as short_of
    from ..store import review_thresholds as thresholds

    if reset and dry_run:
        raise click.UsageError("--reset removes thresholds; --dry-run stores none: give one")
    settings = load_settings()
    if reset:
        with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
            removed = thresholds.clear_thresholds(session)
        click.echo(
            json.dumps({"removed": removed})
            if as_json
            else f"removed {counted(removed, 'stored threshold')}: none gates an answer until "
            "the next calibration"
        )
        return
    current = wiring.make_judge(settings).name
    needed = settings.review_min_labels
    now = datetime.now(UTC)
    results: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        items = store_review.reviewed(session)
        scores = thresholds.scores_by_trace(session, [i.trace_id for i in items])
        for judge, mine in rescored(items, scores).items():
            version = dataset_version(mine)
            stored = thresholds.latest_thresholds(session, judge)
            for segment, members in sorted(by_segment(mine, settings.drift_dimensions).items()):
                points = answer_points(members)
                name = segment or "overall"
                why_not = short_of(points, needed)
                found = None
                if why_not is None:
                    max_fr, guard = settings.review_max_false_rejection, settings.review_guard_band
                    found = calibrate(points, max_fr, guard)
                if found is None:
                    # A threshold stored before (from fewer labels, say) stays in use.
                    waiting.append(
                        {
                            "judge": judge,
                            "segment": name,
                            "n": len(points),
                            "reason": why_not or "no score within 0 to 1",
                            "kept": stored.get(segment),
                        }
                    )
                    continue
                if not dry_run:
                    thresholds.save_threshold(session, judge, segment, found, version, now)
                results.append(
                    {"judge": judge, "segment": name, **_t(found), "dataset_version": version}
                )
        stale = [
            {"judge": judge, "segment": segment or "overall", **kept}
            for judge, by_segment_kept in thresholds.latest_of_every_judge(session).items()
            if judge != current
            for segment, kept in by_segment_kept.items()
        ]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "judge": current,
                    "dry_run": dry_run,
                    "min_labels": needed,
                    "thresholds": results,
                    "waiting": waiting,
                    "stale": stale,
                },
                indent=2,
            )
        )
        return
    if not results and not waiting:
        click.echo("no reviewed answers with a score yet")
        return
    for r in results:
        click.echo(
            f"{r['judge']} {r['segment']}: threshold {r['threshold']} (review "
            f"{r['guard_low']}-{r['guard_high']}) on {r['n']} labelled answers; {r['rationale']}"
        )
    for w in waiting:
        kept = (
            f"; the threshold stored before, on {w['kept'].get('n')} answers, stays in use "
            "until --reset"
            if w["kept"]
            else ""
        )
        click.echo(f"{w['judge']} {w['segment']}: no threshold: {w['reason']}{kept}")
    for r in stale:
        click.echo(f"stale (not the current judge): {r['judge']} {r['segment']}")
    done = "Dry run: nothing stored" if dry_run else f"{counted(len(results), 'threshold')} stored"
    click.echo(f"{done}; each needs {needed} labelled answers (FAITHMON_REVIEW_MIN_LABELS).")


def _t(found: Any) -> dict[str, Any]:
    keys = ("threshold", "guard_low", "guard_high", "false_acceptance", "false_rejection")
    return {**{k: getattr(found, k) for k in keys}, "n": found.n, "rationale": found.rationale}


@review.command("export")
@click.option("--sentinel", "sentinel_name", default=None, help="Add as a new version of this set.")
@click.option(
    "--format",
    "form",
    type=click.Choice(["sentinel", "ragas", "deepeval"]),
    default="sentinel",
    show_default=True,
    help="sentinel: faithmon's JSONL; ragas, deepeval: those tools' dataset fields.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="File.")
@database_option
def review_export(sentinel_name: str | None, form: str, output: str | None) -> None:
    """Reviewed cases (scrubbed, as stored) as a sentinel set or an evaluation dataset;
    an answer whose reviewers disagree is left out."""
    from ..drift import sentinels
    from ..review.export import row
    from ..store import sentinels as store_sentinels

    if sentinel_name is not None and form != "sentinel":
        raise click.UsageError("--sentinel needs --format sentinel")
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        rows = [
            r
            for r in (row(rec, item, form) for rec, item in store_review.reviewed_cases(session))
            if r
        ]
        if not rows:
            raise click.ClickException("no reviewed cases to export")
        added = None
        if sentinel_name is not None:
            base = store_sentinels.latest_sets(session, sentinel_name)
            known = {c.id: c for c in (base[0][3] if base else [])}
            lines = [json.dumps(r, ensure_ascii=False) for r in rows]
            for case in sentinels.parse_cases(lines):
                known[case.id] = case
            merged = list(known.values())
            version = sentinels.version(merged)
            added = store_sentinels.add_set(session, sentinel_name, version, merged)
            rows = [sentinels.case_json(c) for c in merged]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")
    if sentinel_name is not None:
        state = "added" if added else "already present"
        click.echo(
            f"sentinel set {sentinel_name} version {version}: {len(rows)} cases, {state}", err=True
        )
