"""`faithmon sample explain|counts`: sampling decisions and tallies."""

from __future__ import annotations

import json

import click

from ..model import segment_name
from . import wiring
from ._common import database_option, json_option, limit_option, load_settings


@click.group()
def sample() -> None:
    """Sampling decisions and counts."""


@sample.command("explain")
@click.argument("trace_id")
@json_option
@database_option
def sample_explain(trace_id: str, as_json: bool) -> None:
    """Say why a trace was or was not kept."""
    from ..ingest.sampler import ratio_keeps
    from ..store import sampling as store_sampling

    trace_id = trace_id.strip().lower()
    if len(trace_id) != 32 or not all(c in "0123456789abcdef" for c in trace_id):
        raise click.ClickException("a trace id is 32 hexadecimal digits")
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        found = store_sampling.decision_for(session, trace_id)
    if found is not None:
        where, facts = found
        if as_json:
            click.echo(json.dumps({"trace_id": trace_id, "where": where, **facts}, default=str))
            return
        click.echo(f"{trace_id}: {where} ({facts['reason']})")
        for key, value in facts.items():
            if key != "reason":
                click.echo(f"  {key}: {value}")
        return
    rate = settings.sample_rate
    kept = ratio_keeps(trace_id, rate)
    if as_json:
        shown = {"trace_id": trace_id, "where": "not_seen", "sample_rate": rate, "id_kept": kept}
        click.echo(json.dumps(shown))
        return
    if kept:
        click.echo(
            f"{trace_id}: not seen. At FAITHMON_SAMPLE_RATE={rate} its id would be kept, so it "
            "did not reach this faithmon (or is still being assembled, or was not a RAG trace)."
        )
    else:
        click.echo(
            f"{trace_id}: not stored. At FAITHMON_SAMPLE_RATE={rate} its id falls outside the "
            "sample (sampled_out), unless a keep rule applied; faithmon may also never have "
            "seen it."
        )


@sample.command("counts")
@json_option
@limit_option(1000)
@database_option
def sample_counts(as_json: bool, limit: int) -> None:
    """Seen and kept records per segment and hour, for correcting rates for sampling."""
    from ..store import sampling as store_sampling

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        tallies = store_sampling.sampling_counts(session)
    # Newest hour first, like every list.
    tallies = sorted(tallies, key=lambda t: t.hour, reverse=True)[:limit]
    rows = [
        {
            "hour": t.hour.isoformat(),
            "segment": dict(t.segment),
            "reason": t.reason,
            "count": t.count,
        }
        for t in tallies
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for tally in tallies:
        segment = segment_name(tally.segment, "-")
        click.echo(f"{tally.hour.isoformat()}  {segment:<40} {tally.reason:<24} {tally.count}")
