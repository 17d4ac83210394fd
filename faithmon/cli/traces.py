"""`faithmon traces list`."""

from __future__ import annotations

import json

import click

from ..store import traces as stored_traces
from . import wiring
from ._common import load_settings
from .views import record_json


@click.group()
def traces() -> None:
    """Stored RAG records."""


@traces.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--limit", default=50, show_default=True, help="Most recent records to show.")
def traces_list(as_json: bool, limit: int) -> None:
    """List stored records, newest first, with their evaluations."""
    settings = load_settings()
    judge_name = wiring.make_judge(settings).name
    with wiring.open_store(settings) as sessions, sessions() as session:
        stored = stored_traces.list_records(session, limit=limit)
    rows = [record_json(s, judge_name) for s in stored]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        score_text = "-" if row["faithfulness"] is None else f"{row['faithfulness']:.2f}"
        labels = ",".join(f"{k}={v}" for k, v in sorted(row["labels"].items()))
        click.echo(
            f"{row['trace_id']}  {row['status']:<11} {score_text:>5}  {labels}  "
            f"{row['question'][:60]}"
        )
