"""`faithmon keys create|list|revoke`: API keys for ingest, the API and the dashboard."""

from __future__ import annotations

import json
import os

import click

from ..api.keys import (
    MIN_SECRET_CHARACTERS,
    SCOPES,
    key_hash,
    new_key,
    parse_scopes,
    prefix_of,
)
from ..model import ApiKey
from ..store import keys as store_keys
from . import wiring
from ._common import database_option, json_option, limit_option, load_settings


@click.group()
def keys() -> None:
    """API keys (scopes: ingest, read, review, admin)."""


def _shown(key: ApiKey) -> dict[str, object]:
    return {
        "id": key.id,
        "prefix": key.prefix,
        "name": key.name,
        "scopes": list(key.scopes),
        "tenant": key.tenant,
        "created_at": key.created_at.isoformat() if key.created_at else None,
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
    }


@keys.command("create")
@click.option(
    "--scopes", required=True, help=f"Comma-separated, of {', '.join(SCOPES)} (admin: all)."
)
@click.option("--tenant", default=None, help="Bind the key to one tenant.")
@click.option("--name", default="", help="What the key is for (shown in lists).")
@click.option("--json", "as_json", is_flag=True, help="Print {id, key, scopes, tenant}.")
@click.option(
    "--key-from-env",
    "key_env",
    default=None,
    metavar="VAR",
    help="Store the key in variable VAR (made by `faithmon keys generate`) instead of a new "
    "one; does nothing if it is stored already (deploy bootstrap steps).",
)
@database_option
def keys_create(
    scopes: str, tenant: str | None, name: str, as_json: bool, key_env: str | None
) -> None:
    """Create a key and print it once: only its hash is kept."""
    try:
        granted = parse_scopes(scopes)
    except ValueError as exc:
        raise click.ClickException(f"--scopes: {exc}") from None
    if tenant is not None and not tenant.strip():
        raise click.ClickException("--tenant must not be empty")
    if len(name) > 200:
        raise click.ClickException("--name is longer than 200 characters")
    key, prefix = _given_key(key_env) if key_env else new_key()
    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        existing = store_keys.find_key(session, key_hash(key))
        if existing is not None:
            state = " and revoked" if existing.revoked_at else ""
            click.echo(f"key #{existing.id} ({key_env}) is stored already{state}")
            return
        stored = store_keys.create_key(
            session, prefix, key_hash(key), sorted(granted), tenant=tenant, name=name
        )
    if key_env:
        # The operator holds the key already: a bootstrap log must not repeat it.
        click.echo(f"stored key #{stored.id} from {key_env} ({', '.join(stored.scopes)})")
        return
    if as_json:
        shown = {"id": stored.id, "key": key, "scopes": list(stored.scopes), "tenant": tenant}
        click.echo(json.dumps(shown))
        return
    bound = f" for tenant {tenant}" if tenant else ""
    click.echo(f"key #{stored.id} ({', '.join(stored.scopes)}{bound}):")
    click.echo(key)
    click.echo("shown once: store it now (faithmon keeps only its hash)", err=True)


def _given_key(variable: str) -> tuple[str, str]:
    key = os.environ.get(variable, "").strip()
    prefix = prefix_of(key)
    if not key:
        raise click.ClickException(f"--key-from-env: {variable} is not set")
    if prefix is None or len(key) < len("fm_12345678_") + MIN_SECRET_CHARACTERS:
        raise click.ClickException(
            f"--key-from-env: {variable} does not hold a faithmon key; make one with "
            "`faithmon keys generate`"
        )
    return key, prefix


@keys.command("generate")
def keys_generate() -> None:
    """Print a new random key without storing it (for a deploy's secrets; store it with
    `faithmon keys create --key-from-env`)."""
    click.echo(new_key()[0])


@keys.command("list")
@json_option
@limit_option(100)
@database_option
def keys_list(as_json: bool, limit: int) -> None:
    """List keys by prefix (never the key itself), newest first, revoked ones too."""
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        found = store_keys.list_keys(session)
    found = sorted(found, key=lambda k: k.id, reverse=True)[:limit]
    if as_json:
        click.echo(json.dumps([_shown(k) for k in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("no API keys: create one with `faithmon keys create --scopes admin`")
    for key in found:
        state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
        tenant = f" tenant={key.tenant}" if key.tenant else ""
        name = f" {key.name!r}" if key.name else ""
        click.echo(f"#{key.id} fm_{key.prefix}_… {','.join(key.scopes)}{tenant}{name} {state}")


@keys.command("revoke")
@click.argument("key_id", type=int)
@json_option
@database_option
def keys_revoke(key_id: int, as_json: bool) -> None:
    """Revoke a key: every receiver refuses it within 10 seconds."""
    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        done = store_keys.revoke_key(session, key_id)
    if not done:
        raise click.ClickException(f"no active key #{key_id}")
    if as_json:
        click.echo(json.dumps({"revoked": key_id}))
        return
    click.echo(f"revoked key #{key_id}")
