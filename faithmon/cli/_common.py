"""What every command shares: settings read once (a bad one is one line), the options every
command that opens the store takes, logging set up, and errors turned into one line."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import ConfigError, DatabaseUrlError

if TYPE_CHECKING:
    from ..config import Settings

_F = TypeVar("_F", bound=Callable[..., Any])
_URL = "faithmon.database_url"
_DATA_DIR = "faithmon.data_dir"
VERBOSE = "faithmon.verbose"
STRICT = "faithmon.strict"


def _meta() -> dict[str, Any]:
    context = click.get_current_context(silent=True)
    return context.meta if context is not None else {}


def load_settings(state: bool = True, **overrides: Any) -> Settings:
    """The settings, with ``--data-dir``, ``--database-url`` and ``overrides`` (a command's
    own options) over the environment; unknown ``FAITHMON_*`` names are warned about
    (refused with ``--strict`` or ``FAITHMON_STRICT=1``). With ``state``, files an earlier
    faithmon kept in the working directory are used, each with a warning, until moved
    into the data dir (``config_paths.earlier_state``)."""
    # Here, not at the top: the settings import every part's defaults (the judges, drift),
    # which `faithmon --help` and `--version` do not need.
    from .. import config_check
    from ..config import Settings
    from ..config_paths import earlier_state

    meta = _meta()
    unknown = config_check.unknown_names(os.environ)
    if unknown and (meta.get(STRICT) or config_check.strict(os.environ)):
        raise click.ClickException(f"{unknown[0]} (refused: strict)")
    for message in unknown:
        click.echo(f"warning: {message}", err=True)
    if meta.get(_DATA_DIR):
        overrides["data_dir"] = meta[_DATA_DIR]
    try:
        settings = Settings.from_env(**overrides)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    url = meta.get(_URL)
    settings = replace(settings, database_url=url) if url else settings
    if not state:
        return settings
    settings, notes = earlier_state(settings, Path.cwd())
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    return settings


def _remembered(name: str, key: str, metavar: str, help: str) -> Callable[[_F], _F]:
    """An option whose value goes into the context's meta (read by ``load_settings``)."""

    def remember(context: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            if not value.strip():
                raise click.BadParameter("must not be empty")
            context.meta[key] = value.strip()

    return click.option(
        name, metavar=metavar, default=None, expose_value=False, callback=remember, help=help
    )


def database_option(command: _F) -> _F:
    """``--database-url``: the store to open, over FAITHMON_DATABASE_URL."""
    return _remembered(
        "--database-url",
        _URL,
        "URL",
        "The store's SQLAlchemy URL (default: FAITHMON_DATABASE_URL).",
    )(command)


def data_dir_option(command: _F) -> _F:
    """``faithmon --data-dir``, for every command: the data dir, over FAITHMON_DATA_DIR."""
    return _remembered(
        "--data-dir",
        _DATA_DIR,
        "DIR",
        "Folder of faithmon's state: the default database, scrub key file, spool and worker "
        "heartbeat (default: FAITHMON_DATA_DIR, ./faithmon-data).",
    )(command)


def json_option(command: _F) -> _F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)


def limit_option(default: int, help: str = "At most this many rows.") -> Callable[[_F], _F]:
    return click.option(
        "--limit",
        default=default,
        show_default=True,
        type=click.IntRange(min=1),
        help=help,
    )


def iso_time(_ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """The callback of a time option: an ISO-8601 time (a date alone is its midnight); one
    without an offset is UTC, as the read API takes it."""
    if value is None:
        return None
    try:
        at = datetime.fromisoformat(value.strip())
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    except (ValueError, OverflowError):
        raise click.BadParameter(f"{value!r}: not an ISO-8601 time") from None


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless one: "1 record", "12 records"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    # The migration runner's INFO lines say which revision ran: for --verbose. So are the
    # scheduler's: each job started and ended (two lines per job every few seconds), and
    # its warnings that a run was skipped or late while the one before still ran, which
    # the worker asks for (one run of a job at a time, late runs coalesced). The worker's
    # own lines say what each job did.
    if not _meta().get(VERBOSE):
        logging.getLogger("alembic").setLevel(logging.WARNING)
        logging.getLogger("apscheduler").setLevel(logging.ERROR)


def source_of_url() -> str:
    return "--database-url" if _meta().get(_URL) else "FAITHMON_DATABASE_URL"


class Main(click.Group):
    """The ``faithmon`` group: an error faithmon expects is one line naming what to change;
    anything else is one line too, with ``--verbose`` for the traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DatabaseUrlError as exc:
            raise click.ClickException(
                f"{source_of_url()}={exc.url}: {exc.reason}; {exc.hint}"
            ) from None
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
        except click.UsageError as exc:
            # One line, with where to read more, instead of the usage block above it.
            where = exc.ctx.command_path if exc.ctx is not None else "faithmon"
            raise _UsageLine(f"{exc.format_message()} (see `{where} --help`)") from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader (`| head`) has gone: stop quietly, with nothing more to write.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(0) from None
        except OSError as exc:
            if ctx.meta.get(VERBOSE):
                raise
            where = f" {exc.filename}" if exc.filename else ""
            raise click.ClickException(
                f"{exc.strerror or exc}{':' if where else ''}{where}"
            ) from None
        except Exception as exc:
            if ctx.meta.get(VERBOSE):
                raise
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise click.ClickException(
                f"unexpected {type(exc).__name__}: {first} (run with --verbose for details)"
            ) from None


class _UsageLine(click.ClickException):
    """A usage error shown as one line; it keeps click's exit status for usage errors."""

    exit_code = 2
