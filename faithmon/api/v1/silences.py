"""``/api/v1/silences``: silences newest first, making one, and ending one early. Making and
ending need `review` (as acknowledging an alert does) and record the key that did; a
tenant-bound key's silences always carry ``tenant=<its tenant>`` and it sees only those."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field

from ...alerts.silencing import make_silence
from ...model.silences import Silence, parse_duration
from ...store import Sessions
from ...store import silences as store_silences
from ._common import (
    MAX_ID,
    MAX_PAGE,
    NOT_FOUND,
    Caller,
    Page,
    Problem,
    Text,
    UtcTime,
    caller,
    encode_cursor,
    id_cursor,
    not_found,
)

SilenceId = Annotated[int, Path(ge=1, lt=MAX_ID)]

NOT_JSON: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "The body is not JSON"}
}


class SilenceOut(BaseModel):
    id: int
    matchers: list[str] = Field(description="Label matchers; every one holds for a muted alert.")
    state: Literal["pending", "active", "expired"]
    starts_at: datetime
    ends_at: datetime
    comment: str
    created_by: str = Field(description="The key that made it (its prefix), or a CLI user.")
    created_at: datetime
    expired_at: datetime | None = Field(description="When it was ended early, if it was.")
    tenant: str | None


class ExpiredOut(SilenceOut):
    already_ended: bool = Field(description="It had ended before: nothing was changed.")


class SilenceIn(BaseModel):
    matchers: list[Annotated[Text, Field(max_length=500)]] = Field(
        min_length=1,
        max_length=50,
        description="`name=value`, `name!=value`, `name=~regex`, `name!~regex` over an "
        "alert's labels (`kind`, `severity`, the segment's labels, `tenant`).",
    )
    duration: Annotated[Text, Field(max_length=20)] | None = Field(
        default=None, description="`30s`, `10m`, `2h`, `1d`; or give `ends_at`."
    )
    ends_at: UtcTime | None = None
    starts_at: UtcTime | None = Field(default=None, description="Default: now.")
    comment: Annotated[Text, Field(min_length=1, max_length=2000)]


def silence_out(silence: Silence, now: datetime) -> SilenceOut:
    assert silence.id is not None  # stored silences have ids
    return SilenceOut(
        id=silence.id,
        matchers=list(silence.matchers),
        state=silence.state(now),
        starts_at=silence.starts_at,
        ends_at=silence.ends_at,
        comment=silence.comment,
        created_by=silence.created_by,
        created_at=silence.created_at,
        expired_at=silence.expired_at,
        tenant=silence.tenant,
    )


def _refused(field: str, message: str, value: object) -> RequestValidationError:
    return RequestValidationError(
        [{"type": "value_error", "loc": ("body", field), "msg": message, "input": value}]
    )


def _end(body: SilenceIn) -> timedelta | datetime:
    if (body.duration is None) == (body.ends_at is None):
        raise _refused("duration", "give either duration or ends_at", body.duration)
    if body.ends_at is not None:
        return body.ends_at
    try:
        return parse_duration(body.duration or "")
    except ValueError as exc:
        raise _refused("duration", str(exc), body.duration) from None


def router(sessions: Sessions) -> APIRouter:
    api = APIRouter(tags=["silences"])

    @api.get("/silences", response_model=Page[SilenceOut])
    def list_silences(
        who: Annotated[Caller, Depends(caller)],
        include_ended: Annotated[bool, Query(description="Ended ones too.")] = False,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[Text | None, Query(max_length=200)] = None,
    ) -> Page[SilenceOut]:
        """Silences newest first: active and pending ones (a tenant's key sees its own)."""
        now = datetime.now(UTC)
        before = id_cursor(cursor)
        with sessions() as session:
            found = store_silences.list_silences(
                session, now, limit + 1, include_ended, who.tenant, before
            )
        shown = found[:limit]
        more = len(found) > limit and shown[-1].id is not None
        return Page[SilenceOut](
            items=[silence_out(s, now) for s in shown],
            next_cursor=encode_cursor(shown[-1].id or 0) if more else None,
        )

    @api.post("/silences", response_model=SilenceOut, status_code=201, responses=NOT_JSON)
    def add_silence(who: Annotated[Caller, Depends(caller)], body: SilenceIn) -> SilenceOut:
        """Make a silence; needs `review`. A tenant's key's silence gets `tenant=<it>`."""
        now = datetime.now(UTC)
        try:
            made = make_silence(
                body.matchers,
                _end(body),
                body.comment,
                who.who,
                now,
                starts_at=body.starts_at,
                tenant=who.tenant,
            )
        except ValueError as exc:
            raise _refused("matchers", str(exc), body.matchers) from None
        with sessions.begin() as session:
            stored = store_silences.add_silence(session, made)
        return silence_out(stored, now)

    @api.get("/silences/{silence_id}", response_model=SilenceOut, responses=NOT_FOUND)
    def show_silence(who: Annotated[Caller, Depends(caller)], silence_id: SilenceId) -> SilenceOut:
        """One silence."""
        with sessions() as session:
            found = store_silences.get_silence(session, silence_id, who.tenant)
        if found is None:
            raise not_found("such silence")
        return silence_out(found, datetime.now(UTC))

    @api.post("/silences/{silence_id}/expire", response_model=ExpiredOut, responses=NOT_FOUND)
    def expire_silence(
        who: Annotated[Caller, Depends(caller)], silence_id: SilenceId
    ) -> ExpiredOut:
        """End a silence now; needs `review`. One already ended is left as it was."""
        now = datetime.now(UTC)
        with sessions.begin() as session:
            found = store_silences.expire_silence(session, silence_id, now, who.tenant)
        if found is None:
            raise not_found("such silence")
        ended, changed = found
        return ExpiredOut(**silence_out(ended, now).model_dump(), already_ended=not changed)

    return api
