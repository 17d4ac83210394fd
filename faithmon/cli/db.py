"""`faithmon db upgrade` and `faithmon db rotate-scrub-key`."""

from __future__ import annotations

import json

import click

from ..config_paths import make_room_for_database
from ..store import engine as store_engine
from ..store import opening as store_opening
from ._common import database_option, json_option, load_settings


@click.group()
def db() -> None:
    """Database schema commands."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@json_option
@database_option
def db_upgrade(revision: str, as_json: bool) -> None:
    """Create or upgrade the schema of FAITHMON_DATABASE_URL."""
    settings = load_settings()
    make_room_for_database(settings)
    engine = store_opening.open_engine(
        settings.database_url, connect_timeout=settings.db_connect_timeout
    )
    try:
        before = store_engine.current_revision(engine)
        store_engine.upgrade(engine, revision)
        after = store_engine.current_revision(engine)
    finally:
        engine.dispose()
    shown = store_opening.shown_url(settings.database_url)
    if as_json:
        click.echo(json.dumps({"database": shown, "from": before, "revision": after}))
        return
    moved = f" (from {before})" if before and before != after else ""
    click.echo(f"schema of {shown} at revision {after}{moved}")


@db.command("rotate-scrub-key")
@database_option
def db_rotate_scrub_key() -> None:
    """Record this command's scrub key as the store's, for a key changed on purpose.

    Receivers and workers still on the old key then refuse to start: restart them all
    with the new one (deploy/README.md, "The scrub key").
    """
    from . import wiring
    from .scrub_key import rotate

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions:
        source, before = rotate(sessions, settings)
    was = ""
    if before is not None:
        when = f"{before.recorded_at:%Y-%m-%d %H:%M:%S} UTC"
        was = f" in place of the one {before.recorded_by} recorded at {when}"
    click.echo(
        f"recorded the fingerprint of {source} as the store's scrub key{was}; restart every "
        "receiver and worker with this key"
    )
