"""`faithmon alerts list|show|ack`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import click

from ..alerts import to_json
from ..alerts.rules import SEVERITIES
from ..model.alerts import ACKED_AT, ACKED_BY, acknowledgement, detail_label
from ..store import alerts as store_alerts
from . import wiring
from ._common import database_option, json_option, limit_option, load_settings


@click.group()
def alerts() -> None:
    """Drift alerts."""


@alerts.command("list")
@json_option
@click.option("--open", "only_open", is_flag=True, help="Leave out resolved alerts.")
@limit_option(100)
@database_option
def alerts_list(as_json: bool, only_open: bool, limit: int) -> None:
    """List alerts, newest first, with who acknowledged each."""
    from ..alerts import describe

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        found = store_alerts.list_alerts(session, include_resolved=not only_open)
    found = sorted(found, key=lambda a: a.id or 0, reverse=True)[:limit]
    if as_json:
        click.echo(json.dumps([to_json(a) for a in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("no alerts" + (" open" if only_open else ""))
        return
    click.echo(f"{'id':>5}  {'opened (UTC)':<19}  alert")
    for alert in found:
        click.echo(
            f"{'#' + str(alert.id):>5}  {alert.opened_at:%Y-%m-%d %H:%M:%S}  {describe(alert)}"
        )
        taken = acknowledgement(alert)
        if taken is not None:
            click.echo(f"{'':>5}  {'':<19}  {taken.line}")


@alerts.command("show")
@click.argument("alert_id", type=int)
@json_option
@database_option
def alerts_show(alert_id: int, as_json: bool) -> None:
    """One alert with everything it carries: rates, change point, example claims."""
    from ..alerts import describe, example_words

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        alert = store_alerts.get_alert(session, alert_id)
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    if as_json:
        click.echo(json.dumps(to_json(alert), indent=2, ensure_ascii=False))
        return
    click.echo(f"#{alert.id} {describe(alert)}")
    opened = f"opened {_time(alert.opened_at)}, updated {_time(alert.updated_at)}"
    if alert.resolved_at is not None:
        opened += f", resolved {_time(alert.resolved_at)}"
    click.echo(f"  {opened}")
    taken = acknowledgement(alert)
    click.echo(f"  {taken.line if taken is not None else 'not acknowledged'}")
    for key, value in alert.details.items():
        if key not in ("examples", "example_details", ACKED_BY, ACKED_AT):
            click.echo(f"  {detail_label(key)}: {_plain(key, value)}")
    for example in alert.details.get("examples", []):
        click.echo(f"  trace {example['trace_id']}: {example_words(example)}")


def _time(at: datetime) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S} UTC"


def _plain(key: str, value: Any) -> str:
    """A detail as a person reads it: rates as percentages, times in UTC, yes or no,
    mappings as key=value, lists comma-separated."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(k, v)}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple):
        joined = "–" if key.endswith("_interval") and len(value) == 2 else ", "
        return joined.join(_plain(key, v) for v in value) or "-"
    if isinstance(value, float):
        return f"{value:.1%}" if key.endswith(("_rate", "_interval")) else f"{value:.4g}"
    if isinstance(value, str) and key.endswith("_at"):
        try:
            return _time(datetime.fromisoformat(value).astimezone(UTC))
        except ValueError:
            return value
    return "-" if value is None else str(value)


@alerts.command("ack")
@click.argument("alert_id", type=int)
@click.option("--by", default="", help="Who acknowledges it (default: $USER).")
@json_option
@database_option
def alerts_ack(alert_id: int, by: str, as_json: bool) -> None:
    """Acknowledge an alert (recorded on it; the detector still decides its state).

    An alert keeps its first acknowledgement: a second one says who took it.
    """
    import getpass

    settings = load_settings()
    who = by.strip() or getpass.getuser()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        alert = store_alerts.ack_alert(session, alert_id, who, datetime.now(UTC))
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    first = str(alert.details["acked_by"])
    already = first != who or alert.details.get("acked_at") is None
    if as_json:
        shown = {"id": alert_id, "acked_by": first, "acked_at": alert.details.get("acked_at")}
        click.echo(json.dumps({**shown, "already_acknowledged": first != who}))
        return
    if already:
        click.echo(
            f"#{alert_id} was already acknowledged by {first} at {alert.details['acked_at']}"
        )
        return
    click.echo(f"#{alert_id} acknowledged by {who}")


@alerts.command("test")
@click.option("--sink", "sink_name", default=None, help="Only this sink (a rules-file name).")
@click.option(
    "--route",
    "route",
    default=None,
    metavar="LABELS",
    help="Labels of the test alert (label=value,..., a segment's key: a ',' or '=' in a "
    "value is written %2C or %3D): it goes where they route.",
)
@click.option(
    "--severity",
    type=click.Choice(SEVERITIES),
    default="info",
    show_default=True,
    help="Severity of the test alert, for routes that match on it (severity=critical).",
)
@json_option
def alerts_test(sink_name: str | None, route: str | None, severity: str, as_json: bool) -> None:
    """Send a labelled test notification through the real sinks and routes, to check the
    wiring; each sink says whether it took it (an HTTP sink's refusal by its status)."""
    from ..alerts.matchers import alert_labels
    from ..alerts.routing import Router
    from ..alerts.sinks import DeliveryError
    from ..model import Alert, segment_from_key

    settings = load_settings()
    # A segment's key, read by the one codec; blanks around a pair are forgiven, as typed.
    pairs = [pair.strip() for pair in (route or "").split(",") if pair.strip()]
    read = segment_from_key(",".join(pairs))
    if read is None or any(not name.strip() for name in read):
        raise click.ClickException(f"--route expects label=value pairs, got {route!r}")
    labels = {name.strip(): value.strip() for name, value in read.items()}
    now = datetime.now(UTC)
    alert = Alert(
        rule="test",
        segment=labels,
        state="firing",
        severity=severity,
        opened_at=now,
        updated_at=now,
        details={
            "test": True,
            "summary": "faithmon test notification: the wiring works, nothing is wrong",
        },
        id=0,
        notified_at=now,
    )
    sinks = wiring.make_sinks(settings)
    router = next((s for s in sinks if isinstance(s, Router)), None)
    targets: dict[str, Any] = {}
    if router is not None:
        alert = router.prepare(alert)
        names = [sink_name] if sink_name else router.targets(alert_labels(alert))
        unknown = [n for n in names if n not in router.sinks]
        if unknown:
            known = ", ".join(sorted(router.sinks))
            raise click.ClickException(f"no sink named {unknown[0]!r} (sinks: {known})")
        targets = {n: router.sinks[n] for n in names} or {"log (no route matched)": router.fallback}
    else:
        for sink in sinks:
            targets[type(sink).__name__.removesuffix("Sink").lower()] = sink
        if sink_name:
            if sink_name not in targets:
                known = ", ".join(sorted(targets))
                raise click.ClickException(f"no sink named {sink_name!r} (sinks: {known})")
            targets = {sink_name: targets[sink_name]}
    results = {}
    for name, sink in targets.items():
        try:
            sink.send(alert)
            results[name] = "sent"
        except DeliveryError as exc:  # its status or cause, never its URL
            results[name] = f"failed ({exc})"
        except Exception as exc:
            # The cause's kind only: another error can carry the sink's secret URL.
            results[name] = f"failed ({type(exc).__name__})"
    if as_json:
        click.echo(json.dumps({"labels": labels, "sinks": results}))
    else:
        for name, result in results.items():
            click.echo(f"{name}: {result}")
    if any(r != "sent" for r in results.values()):
        raise click.ClickException("a sink did not take the test notification")
