"""What every read route shares: who is calling (their tenant), opaque cursors, UTC times,
text without NUL, and the one error shape for an unknown id."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, TypeVar

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from ...drift import DriftConfig
from ...model.standing import ProofFloor

T = TypeVar("T")

MAX_PAGE = 500

MAX_ID = 2**31
"""Ids are SQL INTEGER: a larger one names nothing (and PostgreSQL would refuse it)."""


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: str | None
    """The key's tenant: the caller sees only its records, segments and alerts. None: all."""
    who: str
    """How an acknowledgement names the caller: the key's prefix, never the key."""


def caller(request: Request) -> Caller:
    """The caller as the guard found it; an app served without auth restricts nothing."""
    grant = getattr(request.state, "grant", None)
    tenant = getattr(request.state, "tenant", None)
    # As the dashboard's ack names it; the open door (no key exists yet) has no key to name.
    who = f"key fm_{grant.prefix}" if grant is not None and grant.key_id else "api"
    return Caller(tenant if isinstance(tenant, str) else None, who)


class Problem(BaseModel):
    detail: str


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Problem, "description": "No such id"}}


def not_found(what: str) -> HTTPException:
    return HTTPException(status_code=404, detail=f"no {what}")


def invalid(parameter: str, message: str, value: object) -> RequestValidationError:
    """A 422 in FastAPI's own shape, so the OpenAPI schema of a 422 holds for ours too."""
    return RequestValidationError(
        [{"type": "value_error", "loc": ("query", parameter), "msg": message, "input": value}]
    )


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # Before year 1 or after 9999 once in UTC: as early (or late) as a time can be.
        return (datetime.min if value.year == 1 else datetime.max).replace(tzinfo=UTC)


UtcTime = Annotated[datetime, AfterValidator(_utc)]
"""An ISO-8601 time; one without an offset is UTC."""

# PostgreSQL text cannot hold NUL: refused at the door (and said so in the spec), rather
# than failing in the database.
Text = Annotated[str, StringConstraints(pattern="^[^\\x00]*$")]


class Page(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


def encode_cursor(*values: str | int | float) -> str:
    raw = json.dumps(values, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(text: str | None, *types: type) -> list[Any] | None:
    """The values of a cursor made by :func:`encode_cursor`, checked against ``types``;
    None for no cursor (an empty one too: the first page)."""
    if not text:
        return None
    try:
        values = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        values = None
    if (
        not isinstance(values, list)
        or len(values) != len(types)
        or not all(type(v) is t for v, t in zip(values, types, strict=True))
    ):
        raise invalid("cursor", "not a cursor this API gave", text)
    return values


def time_cursor(text: str | None) -> tuple[datetime, int] | None:
    """A (time, id) cursor."""
    values = decode_cursor(text, str, int)
    if values is None:
        return None
    try:
        at = datetime.fromisoformat(values[0])
        if at.tzinfo is None or not 0 < values[1] < MAX_ID:
            raise ValueError(values)
        return at.astimezone(UTC), values[1]
    except (ValueError, OverflowError):
        raise invalid("cursor", "not a cursor this API gave", text) from None


def id_cursor(text: str | None) -> int | None:
    values = decode_cursor(text, int)
    if values is None:
        return None
    if not 0 < values[0] < MAX_ID:
        raise invalid("cursor", "not a cursor this API gave", text)
    return int(values[0])


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What the read API is told by the composition root; each None is found in the store."""

    judge: str | None = None
    """The configured judge's fingerprint; None: the judge of the newest evaluation."""
    drift: DriftConfig | None = None
    """The worker's drift settings; None: defaults, split by the labels the baselines name."""
    daily_token_budget: int | None = None
    """FAITHMON_JUDGE_DAILY_BUDGET (0: no budget); None: not told."""
    price_input: float | None = None
    """FAITHMON_JUDGE_PRICE_INPUT, US dollars per million prompt tokens; None: not set."""
    price_output: float | None = None
    """FAITHMON_JUDGE_PRICE_OUTPUT, US dollars per million completion tokens; None: not set."""
    stale_after: float = 180.0
    """Seconds after which the worker's last drift run is stale when newer scores exist
    (three of its drift intervals); then the detectors run per request."""
    proof_floor: ProofFloor = field(default_factory=ProofFloor)
    """FAITHMON_SENTINEL_MIN_ACCURACY and _MAX_ERROR_RATE: what proves a judge."""
