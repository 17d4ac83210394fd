"""`faithmon traces list|show`: the stored records, through the read API's own queries (its
filters for the list, its trace view for one trace), so the CLI and the API agree."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime

import click

from ..model import answer_unsupported, parse_label
from ..store import reads_traces as reads
from ..store import stored_records as stored_traces
from ..store import trace_view
from . import traces_show, wiring
from ._common import database_option, iso_time, json_option, limit_option, load_settings
from .views import record_json

# As the read API's ``status`` and ``label`` parameters take them (a label by the parser
# they share, which checks a name before any query: it is spliced into a JSON path).
STATUSES = ("pending", "scored", "no_context", "incomplete_evidence", "judge_error")
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")


def _labels(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    labels = {}
    for value in values:
        pair = parse_label(value)
        if pair is None:
            raise click.BadParameter(f"{value!r}: expected KEY=VALUE (or KEY:VALUE)")
        labels[pair[0]] = pair[1]
    return labels


@click.group()
def traces() -> None:
    """Stored RAG records."""


@traces.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="Only records in this status.")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    callback=_labels,
    help="Only records with this label (KEY:VALUE also works); repeat it to ask for every pair.",
)
@click.option("--since", metavar="TIME", callback=iso_time, help="Started at or after (ISO-8601).")
@click.option("--until", metavar="TIME", callback=iso_time, help="Started before (ISO-8601).")
@click.option(
    "--max-score",
    type=click.FloatRange(0, 1),
    help="Strict faithfulness of the newest evaluation at most this.",
)
@click.option(
    "--critical/--no-critical",
    default=None,
    help="Only records whose newest evaluation has (or has no) critical unsupported claim.",
)
@limit_option(50, "Most recent records to show.")
@json_option
@database_option
def traces_list(
    status: str | None,
    labels: dict[str, str],
    since: datetime | None,
    until: datetime | None,
    max_score: float | None,
    critical: bool | None,
    limit: int,
    as_json: bool,
) -> None:
    """List stored records, newest first, with their newest evaluation's scores."""
    settings = load_settings()
    where = reads.TraceFilter(
        status=status,
        labels=labels,
        since=since,
        until=until,
        max_score=max_score,
        critical=critical,
    )
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        page = reads.list_traces(session, where, limit)
        ids = [t.trace_id for t in page.items]
        found = stored_traces.load_traces(session, ids) if as_json else {}
    if as_json:
        judge_name = wiring.make_judge(settings).name
        # A record retention deleted between the two queries is left out, not an error.
        rows = [
            record_json(found[t.trace_id], judge_name) for t in page.items if t.trace_id in found
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for line in _table(page.items):
        click.echo(line)
    if page.next is not None:
        click.echo(f"(more than {limit}: raise --limit, or narrow with --until)", err=True)


def _table(items: Sequence[reads.TraceSummary]) -> list[str]:
    head = f"{'TRACE ID':<32}  {'STARTED (UTC)':<19}  {'STATUS':<19}  STRICT  CRIT  LABELS  "
    lines = [click.style(head + "QUESTION", bold=True)]
    for t in items:
        strict = f"{traces_show.score(t.faithfulness):>6}"
        if answer_unsupported(t.faithfulness):
            strict = click.style(strict, fg="yellow")
        crit = click.style("yes ", fg="red", bold=True) if t.critical else "    "
        labels = traces_show.plain(",".join(f"{k}={v}" for k, v in sorted(t.labels.items())))
        question = traces_show.plain(t.question[:60])
        lines.append(
            f"{t.trace_id:<32}  {traces_show.when(t.started_at)}  {t.status:<19}  "
            f"{strict}  {crit}  {labels or '-'}  {question}"
        )
    return lines


@traces.command("show")
@click.argument("trace_id")
@json_option
@database_option
def traces_show_command(trace_id: str, as_json: bool) -> None:
    """One record whole: every evaluation (scores, citation accuracy, unresolved markers,
    policy findings), then its chunks with the claims that cite them, each with whether
    the chunks it cites support it (with --json: what the read API answers to
    GET /api/v1/traces/TRACE_ID)."""
    if not _TRACE_ID.fullmatch(trace_id):
        raise click.ClickException(
            f"malformed trace id {traces_show.plain(trace_id)!r}: expected 32 hex digits"
        )
    settings = load_settings()
    floor = wiring.proof_floor(settings)
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        view = trace_view.load_trace_view(session, trace_id.lower(), floor)
    if view is None:
        raise click.ClickException(f"no trace {trace_id.lower()}")
    if as_json:
        click.echo(json.dumps(trace_view.json_ready(view), indent=2, ensure_ascii=False))
        return
    for line in traces_show.render(view):
        click.echo(line)
