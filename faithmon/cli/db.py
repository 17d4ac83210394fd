"""`faithmon db upgrade`."""

from __future__ import annotations

import click

from ..store import engine as store_engine
from ._common import load_settings


@click.group()
def db() -> None:
    """Database schema commands."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(revision: str) -> None:
    """Create or upgrade the schema of FAITHMON_DATABASE_URL."""
    settings = load_settings()
    engine = store_engine.make_engine(settings.database_url)
    try:
        store_engine.upgrade(engine, revision)
        click.echo(f"schema at revision {store_engine.current_revision(engine)}")
    finally:
        engine.dispose()
