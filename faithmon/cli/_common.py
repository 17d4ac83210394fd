"""What every command shares: settings read once (a bad one is one line), logging set up."""

from __future__ import annotations

import logging
import sys

import click

from ..config import Settings
from ..errors import ConfigError


def load_settings() -> Settings:
    try:
        return Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
