"""`faithmon gate CASES.jsonl`: the release gate (the work is in :mod:`faithmon.gate`).

This module only reads what the person gave (flags, the rules file, the cases, the
baseline), builds the judge as `faithmon score` does, asks the store for the judge
configuration's standing when there is one, and turns the outcome into output files
and an exit status. Whatever the person typed or pointed at that cannot be used is one
line and exit 2, before any judge call.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..config import Settings
from ..errors import ConfigError, DatabaseUrlError
from ..gate import (
    USAGE,
    GateInputError,
    Rules,
    Standing,
    dataset_digest,
    load_rules,
    parse_cases,
    parse_percentile,
    prompt_version,
    read_baseline,
    refuse_other_dataset,
    run_gate,
    with_flags,
    write_junit,
    write_records,
)
from . import wiring
from ._common import database_option, load_settings
from .input_files import UnreadableInput, read_lines
from .judge import judge_choice


class GateUsage(click.ClickException):
    """A gate input that cannot be used: one line, exit status 2."""

    exit_code = USAGE


def _writable(path: Path | None, option: str) -> None:
    """Refuse, before judging, an output whose folder is missing (a run is not lost to it)."""
    if path is not None and not path.resolve().parent.is_dir():
        raise GateUsage(f"{option} {path}: the folder {path.resolve().parent} does not exist")


def _standing(judge: str, settings: Settings) -> Standing:
    """The judge configuration's standing in the store, or ``unknown`` when no store tells.
    The store is read as it is, never upgraded: a CI job may point at production's."""
    from ..store import sentinels as store_sentinels

    try:
        with (
            wiring.open_store(settings, upgrade=False, must_exist=True) as sessions,
            sessions() as session,
        ):
            found = store_sentinels.standing(session, judge, wiring.proof_floor(settings))
    except DatabaseUrlError as exc:
        return Standing("unknown", f"{judge} has no known sentinel run: {exc.reason}")
    except Exception as exc:  # an old schema, a server that refuses: the standing is advisory
        cause = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Standing("unknown", f"{judge}: the store could not tell its standing ({cause})")
    return Standing(found.state, found.line)


@click.command()
@click.argument(
    "cases_file",
    metavar="CASES.jsonl",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
)
@click.option(
    "--rules",
    "rules_file",
    metavar="FILE.toml",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML file whose [gate] table sets the rules (flags win over it).",
)
@click.option(
    "--min-mean",
    metavar="X",
    type=click.FloatRange(0, 1),
    help="Least mean strict score of the dataset.",
)
@click.option(
    "--min-percentile",
    "min_percentiles",
    multiple=True,
    metavar="P:X",
    help="The P-th percentile of the strict scores at least X (10:0.8); repeatable.",
)
@click.option(
    "--max-critical-unsupported",
    metavar="N",
    type=click.IntRange(min=0),
    default=None,
    help="Most critical claims not supported over every case (default 0).",
)
@click.option(
    "--baseline",
    metavar="RESULTS.jsonl",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The results (-o) of an earlier run to compare with; needs --max-drop.",
)
@click.option(
    "--max-drop",
    metavar="D",
    type=click.FloatRange(0, 1),
    help="How far below the baseline a case or an aggregate may fall.",
)
@click.option(
    "--allow-dataset-change",
    is_flag=True,
    help="Compare with a baseline made on another version of the cases.",
)
@judge_choice
@click.option(
    "--require-proven",
    is_flag=True,
    help="Exit 3 unless the judge configuration is proven on its sentinels.",
)
@click.option(
    "-o",
    "--output",
    metavar="RESULTS.jsonl",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every case's evaluation record here (JSONL; a later run's --baseline).",
)
@click.option(
    "--junit",
    metavar="OUT.xml",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a JUnit XML report: a test case per case and per aggregate rule.",
)
@database_option
@click.pass_context
def gate(
    ctx: click.Context,
    cases_file: Path,
    rules_file: Path | None,
    min_mean: float | None,
    min_percentiles: tuple[str, ...],
    max_critical_unsupported: int | None,
    baseline: Path | None,
    max_drop: float | None,
    allow_dataset_change: bool,
    judge_name: str | None,
    require_proven: bool,
    output: Path | None,
    junit: Path | None,
) -> None:
    """Hold a JSONL file of cases to faithfulness rules: a release gate for CI.

    Lines as `faithmon score` reads them, each with optional `id`, `minimum`, `critical`
    and `expected`. Exit status: 0 every rule holds, 1 a rule failed, 2 a usage error,
    3 the judge could not score some cases (or, with --require-proven, is not proven).
    """
    try:
        settings = load_settings()
    except click.ClickException as exc:
        raise GateUsage(exc.message) from None
    try:
        rules = load_rules(rules_file) if rules_file is not None else Rules()
        rules = with_flags(
            rules,
            min_mean=min_mean,
            min_percentiles=tuple(parse_percentile(p) for p in min_percentiles),
            max_critical_unsupported=max_critical_unsupported,
            baseline=baseline,
            max_drop=max_drop,
            allow_dataset_change=allow_dataset_change,
            require_proven=require_proven,
        )
        cases = parse_cases(read_lines(cases_file), str(cases_file))
        dataset = dataset_digest(cases)
        before = read_baseline(rules.baseline) if rules.baseline is not None else None
        if before is not None:
            refuse_other_dataset(before, dataset, rules.allow_dataset_change)
        judge = wiring.make_judge(settings, judge_name)
    except (GateInputError, ConfigError) as exc:
        raise GateUsage(str(exc)) from None
    except UnreadableInput as exc:
        raise GateUsage(exc.message) from None
    _writable(output, "-o")
    _writable(junit, "--junit")

    standing = _standing(judge.name, settings)
    click.echo(f"gate: judging {len(cases)} cases of dataset {dataset} with {judge.name}", err=True)
    outcome = run_gate(
        judge,
        cases,
        rules,
        dataset=dataset,
        standing=standing,
        baseline=before,
        concurrency=settings.judge_concurrency,
        token_budget=settings.judge_daily_budget,
    )
    for line in outcome.lines():
        click.echo(line)
    try:
        if output is not None:
            kind = judge_name or settings.judge
            write_records(output, outcome.results, dataset, prompt_version(kind))
        if junit is not None:
            properties = {"dataset": dataset, "judge": judge.name, "standing": standing.state}
            refused = standing.line if outcome.refused_standing else None
            write_junit(junit, outcome.results, outcome.rules, properties, refused)
    except OSError as exc:
        raise GateUsage(f"cannot write {exc.filename}: {exc.strerror}") from None
    ctx.exit(outcome.status)
