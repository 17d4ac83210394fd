"""`faithmon silence add|list|expire`: stop the notifications of matching alerts for a while
(the alerts still change state and are stored)."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime

import click

from ..alerts.silencing import make_silence, to_json
from ..model.silences import Silence, parse_duration
from ..store import silences as store_silences
from . import wiring
from ._common import database_option, json_option, limit_option, load_settings


@click.group()
def silence() -> None:
    """Silences: label matchers over a time range that stop alert notifications."""


def _time(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.ClickException(f"--starts-at {text!r}: not an ISO-8601 time") from None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _line(silence: Silence, now: datetime) -> str:
    return (
        f"{'#' + str(silence.id):>5}  {silence.state(now):<7}  {silence.starts_at:%Y-%m-%d %H:%M}"
        f"  {silence.ends_at:%Y-%m-%d %H:%M}  {silence.created_by[:16]:<16}  "
        f"{','.join(silence.matchers)}  {silence.comment}"
    )


@silence.command("add")
@click.option(
    "--match",
    "matchers",
    multiple=True,
    required=True,
    metavar="MATCHER",
    help="A label matcher: name=value, name!=value, name=~regex, name!~regex (repeatable).",
)
@click.option("--duration", required=True, metavar="DURATION", help="30s, 10m, 2h or 1d.")
@click.option("--comment", required=True, metavar="TEXT", help="Why (shown in the lists).")
@click.option("--by", default="", help="Who makes it (default: $USER).")
@click.option("--starts-at", default=None, metavar="TIME", help="ISO-8601 (default: now; UTC).")
@json_option
@database_option
def silence_add(
    matchers: tuple[str, ...],
    duration: str,
    comment: str,
    by: str,
    starts_at: str | None,
    as_json: bool,
) -> None:
    """Silence the alerts whose labels match every --match, for --duration."""
    now = datetime.now(UTC)
    try:
        length = parse_duration(duration)
    except ValueError as exc:
        raise click.ClickException(f"--duration {exc}") from None
    try:
        made = make_silence(
            matchers,
            length,
            comment,
            by.strip() or getpass.getuser(),
            now,
            starts_at=_time(starts_at) if starts_at else None,
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        stored = store_silences.add_silence(session, made)
    if as_json:
        click.echo(json.dumps(to_json(stored, now), ensure_ascii=False))
        return
    click.echo(
        f"silence #{stored.id} {stored.state(now)} until {stored.ends_at:%Y-%m-%d %H:%M} UTC: "
        f"{', '.join(stored.matchers)}"
    )


@silence.command("list")
@json_option
@click.option("--all", "show_all", is_flag=True, help="Include silences that have ended.")
@limit_option(100)
@database_option
def silence_list(as_json: bool, show_all: bool, limit: int) -> None:
    """List silences newest first: active and pending ones (--all: ended ones too)."""
    now = datetime.now(UTC)
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        found = store_silences.list_silences(session, now, limit, include_ended=show_all)
    if as_json:
        click.echo(json.dumps([to_json(s, now) for s in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("no silences" + ("" if show_all else " active or pending"))
        return
    click.echo(
        f"{'id':>5}  {'state':<7}  {'starts (UTC)':<16}  {'ends (UTC)':<16}  "
        f"{'by':<16}  matchers  comment"
    )
    for item in found:
        click.echo(_line(item, now))


@silence.command("expire")
@click.argument("silence_id", type=int)
@json_option
@database_option
def silence_expire(silence_id: int, as_json: bool) -> None:
    """End a silence now (one that has already ended is left as it is)."""
    now = datetime.now(UTC)
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        found = store_silences.expire_silence(session, silence_id, now)
    if found is None:
        raise click.ClickException(f"no silence #{silence_id}")
    ended, changed = found
    if as_json:
        click.echo(json.dumps({**to_json(ended, now), "already_ended": not changed}))
        return
    if changed:
        click.echo(f"silence #{silence_id} expired")
        return
    click.echo(f"silence #{silence_id} had already ended at {ended.ends_at:%Y-%m-%d %H:%M} UTC")
