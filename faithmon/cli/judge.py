"""`faithmon judge status|unblock` and `faithmon score` (a judge without a database)."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

import click

from ..errors import ConfigError
from ..judge import JUDGES
from . import wiring
from ._common import load_settings


@click.group()
def judge() -> None:
    """Judge configurations: standing, blocks and usage."""


@judge.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def judge_status(as_json: bool) -> None:
    """Each judge configuration's standing (proven, unproven, drifting, blocked, untested)
    with its sentinel figures, blocked configurations and judge usage per day."""
    from ..store import sentinels as store_sentinels
    from ..store import work

    settings = load_settings()
    current = wiring.make_judge(settings).name
    with wiring.open_store(settings) as sessions, sessions() as session:
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
    for day in status["usage"]:
        click.echo(
            f"{day['day']} {day['judge']}: {day['calls']} calls, "
            f"{day['prompt_tokens'] + day['completion_tokens']} tokens"
        )


@judge.command("unblock")
@click.option("--judge", "name", default=None, help="One judge fingerprint (default: all).")
def judge_unblock(name: str | None) -> None:
    """Let a blocked judge configuration score again (after fixing its key or billing)."""
    from ..store import work

    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        count = work.unblock(session, name)
    click.echo(f"unblocked {count} judge configuration(s)")


@click.command()
@click.argument("file", type=click.File("r"))
@click.option("-o", "--output", type=click.File("w"), default="-", help="Output JSONL (stdout).")
@click.option(
    "--judge",
    "judge_name",
    type=click.Choice(sorted(JUDGES)),
    default=None,
    help="Judge to use (default: FAITHMON_JUDGE).",
)
def score(file: IO[str], output: IO[str], judge_name: str | None) -> None:
    """Score a JSONL file of {user_input, response, retrieved_contexts}; no database.

    DeepEval's names (input, actual_output, retrieval_context) are read too.
    """
    from ..judge.jsonl import score_lines

    settings = load_settings()
    try:
        judge = wiring.make_judge(settings, judge_name)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    lines = file.readlines()
    errors = 0
    with click.progressbar(
        lines, label="scoring", file=sys.stderr, show_pos=True, width=30
    ) as progress:
        for item, error in score_lines(judge, progress):
            if error is not None:
                errors += 1
                click.echo(f"\n{error}", err=True)
            output.write(json.dumps(item, ensure_ascii=False) + "\n")
    if errors:
        raise click.ClickException(f"{errors} lines could not be scored")
