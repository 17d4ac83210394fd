"""`faithmon judge status|unblock` and `faithmon score` (a judge without a database)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import click

from ..errors import ConfigError
from ..judge import JUDGES
from . import wiring
from ._common import counted, database_option, json_option, load_settings
from .input_files import read_lines

judge_choice = click.option(
    "--judge",
    "judge_name",
    type=click.Choice(sorted(JUDGES)),
    default=None,
    help="Judge to use (default: FAITHMON_JUDGE).",
)
"""The judge a command that judges files uses: `score` and `gate` alike."""


@click.group()
def judge() -> None:
    """Judge configurations: standing, blocks and usage."""


@judge.command("status")
@json_option
@database_option
def judge_status(as_json: bool) -> None:
    """Each judge configuration's standing (proven, unproven, drifting, blocked, untested)
    with its sentinel figures, blocked configurations and judge usage per day."""
    from ..store import sentinels as store_sentinels
    from ..store import work

    settings = load_settings()
    current = wiring.make_judge(settings).name
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        status: dict[str, Any] = {
            "judge": current,
            "blocked": work.judge_blocks(session),
            "usage": work.usage_by_day(session),
            "judges": [
                s.as_json()
                for s in store_sentinels.standings(
                    session, wiring.proof_floor(settings), also=[current]
                )
            ],
        }
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    click.echo(f"current judge: {status['judge']}")
    for standing in status["judges"]:
        ran = f" (set {standing['set']}, ran {standing['ran_at']})" if standing["set"] else ""
        click.echo(f"{standing['state'].upper()} {standing['line']}{ran}")
    for block in status["blocked"]:
        click.echo(f"BLOCKED {block['judge']} since {block['blocked_at']}: {block['reason']}")
    if not status["blocked"]:
        click.echo("no judge configuration is blocked")
    if not status["usage"]:
        click.echo("no judge calls recorded yet")
    for day in status["usage"]:
        click.echo(
            f"{day['day']} {day['judge']}: {day['calls']} calls, "
            f"{day['prompt_tokens'] + day['completion_tokens']} tokens"
        )


@judge.command("unblock")
@click.option("--judge", "name", default=None, help="One judge fingerprint (default: all).")
@json_option
@database_option
def judge_unblock(name: str | None, as_json: bool) -> None:
    """Let a blocked judge configuration score again (after fixing its key or billing)."""
    from ..store import work

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        count = work.unblock(session, name)
    if as_json:
        click.echo(json.dumps({"unblocked": count}))
        return
    if not count:
        click.echo("no judge configuration was blocked" + (f" as {name}" if name else ""))
        return
    click.echo(f"unblocked {count} judge configuration(s)")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("-o", "--output", type=click.File("w"), default="-", help="Output JSONL (stdout).")
@judge_choice
def score(file: Path, output: IO[str], judge_name: str | None) -> None:
    """Score a JSONL file of {user_input, response, retrieved_contexts}; no database.

    DeepEval's names (input, actual_output, retrieval_context) and RAGAS's older ones
    (question, answer, contexts) are read too. A summary (records scored, mean scores,
    claims by verdict, errors) ends the run, on stderr.
    """
    from ..judge.jsonl import score_lines

    settings = load_settings()
    try:
        judge = wiring.make_judge(settings, judge_name)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    lines = read_lines(file)
    summary = Summary()
    with click.progressbar(
        lines, label="scoring", file=sys.stderr, show_pos=True, show_eta=True, width=30
    ) as progress:
        for item, error in score_lines(judge, progress):
            summary.add(item, error)
            output.write(json.dumps(item, ensure_ascii=False) + "\n")
    for error in summary.errors[:_ERRORS_SHOWN]:
        click.echo(error, err=True)
    if len(summary.errors) > _ERRORS_SHOWN:
        click.echo(f"... and {len(summary.errors) - _ERRORS_SHOWN} more errors", err=True)
    click.echo(summary.line(), err=True)
    if summary.errors:
        raise click.ClickException(f"{len(summary.errors)} lines could not be scored")


_ERRORS_SHOWN = 10


@dataclass
class Summary:
    """What a `faithmon score` run found, for its last line."""

    records: int = 0
    strict: list[float] = field(default_factory=list)
    lenient: list[float] = field(default_factory=list)
    verdicts: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    judge_errors: int = 0

    def add(self, item: dict[str, Any], error: str | None) -> None:
        self.records += 1
        if error is not None:
            self.errors.append(error)
            return
        if item.get("status") == "judge_error":
            self.judge_errors += 1
        if isinstance(item.get("faithfulness"), float | int):
            self.strict.append(float(item["faithfulness"]))
        if isinstance(item.get("lenient"), float | int):
            self.lenient.append(float(item["lenient"]))
        self.verdicts.update(str(c.get("verdict")) for c in item.get("claims", []))

    def line(self) -> str:
        def mean(values: list[float]) -> str:
            return f"{sum(values) / len(values):.3f}" if values else "-"

        errors = f"errors: {len(self.errors)} in the input, {self.judge_errors} of the judge"
        # A line the judge failed on, or that could not be read, was not scored.
        scored = self.records - len(self.errors) - self.judge_errors
        if scored == 0:
            return f"nothing scored of {counted(self.records, 'line')}; {errors}"
        verdicts = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items())) or "none"
        return (
            f"scored {counted(scored, 'record')}: mean faithfulness {mean(self.strict)} strict, "
            f"{mean(self.lenient)} lenient; claims: {verdicts}; {errors}"
        )
