"""`faithmon db upgrade`."""

from __future__ import annotations

import json

import click

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
