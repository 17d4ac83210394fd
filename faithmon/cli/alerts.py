"""`faithmon alerts list|show|ack`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from ..alerts import to_json
from ..store import alerts as store_alerts
from . import wiring
from ._common import load_settings


@click.group()
def alerts() -> None:
    """Drift alerts."""


@alerts.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--open", "only_open", is_flag=True, help="Leave out resolved alerts.")
def alerts_list(as_json: bool, only_open: bool) -> None:
    """List alerts, oldest first."""
    from ..alerts import describe

    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions() as session:
        found = store_alerts.list_alerts(session, include_resolved=not only_open)
    if as_json:
        click.echo(json.dumps([to_json(a) for a in found], indent=2, ensure_ascii=False))
        return
    for alert in found:
        click.echo(f"#{alert.id} {alert.opened_at:%Y-%m-%d %H:%M:%S} {describe(alert)}")


@alerts.command("show")
@click.argument("alert_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def alerts_show(alert_id: int, as_json: bool) -> None:
    """One alert with everything it carries: rates, change point, example claims."""
    from ..alerts import describe

    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions() as session:
        alert = store_alerts.get_alert(session, alert_id)
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    if as_json:
        click.echo(json.dumps(to_json(alert), indent=2, ensure_ascii=False))
        return
    click.echo(f"#{alert.id} {describe(alert)}")
    click.echo(f"  opened {alert.opened_at.isoformat()}, updated {alert.updated_at.isoformat()}")
    for key, value in alert.details.items():
        if key != "examples":
            click.echo(f"  {key}: {value}")
    for example in alert.details.get("examples", []):
        click.echo(f"  trace {example['trace_id']}: {'; '.join(example['unsupported_claims'])}")


@alerts.command("ack")
@click.argument("alert_id", type=int)
@click.option("--by", default="", help="Who acknowledges it (default: $USER).")
def alerts_ack(alert_id: int, by: str) -> None:
    """Acknowledge an alert (recorded on it; the detector still decides its state)."""
    import getpass

    settings = load_settings()
    who = by or getpass.getuser()
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        alert = store_alerts.ack_alert(session, alert_id, who, datetime.now(UTC))
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    click.echo(f"#{alert_id} acknowledged by {who}")
