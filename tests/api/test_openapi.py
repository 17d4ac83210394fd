"""The read API against its own OpenAPI spec with schemathesis, on SQLite and PostgreSQL:
generated requests to every operation, valid and not, never get a 5xx, and every
response matches the status codes, media type and schema the spec declares for it."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.seed import Seeded

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

EXAMPLES = 10
"""Per operation and mode: enough to reach every parameter, a few seconds in all."""

CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Not negative_data_rejection: a scalar parameter sent twice is taken once (the last), as
# FastAPI reads queries, which the spec has no way to say.


def _without_cursor(case: Any) -> bool:
    # A cursor is opaque: only one this API gave is valid, which no schema can describe.
    return not (case.query or {}).get("cursor")


# A silence's rules span its fields and the clock (a regex that compiles, an end after its
# start and after now), which no schema can say: a schema-valid body may rightly get 422.
_RULES_BEYOND_THE_SCHEMA = {("POST", "/api/v1/silences")}


def _accepts(operation: Any, mode: GenerationMode) -> bool:
    return mode.is_positive and (operation.method.upper(), operation.path) not in (
        _RULES_BEYOND_THE_SCHEMA
    )


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_keeps_its_spec(api: Seeded, mode: GenerationMode) -> None:
    """No generated request gets a 5xx, and each response matches its declared schema;
    schema-valid requests are accepted (or name an id that is not there: 404)."""
    headers = {"Authorization": f"Bearer {api.keys['admin']}"}
    schema = schemathesis.openapi.from_url(f"{api.url}/openapi.json", headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/api/v1/traces",
        "/api/v1/traces/{trace_id}",
        "/api/v1/segments",
        "/api/v1/segments/{segment}/series",
        "/api/v1/alerts",
        "/api/v1/alerts/{alert_id}",
        "/api/v1/alerts/{alert_id}/ack",
        "/api/v1/silences",
        "/api/v1/silences/{silence_id}/expire",
        "/api/v1/documents",
        "/api/v1/sentinels",
        "/api/v1/judges",
        "/api/v1/review/queue",
        "/api/v1/review/next",
        "/api/v1/review/items/{trace_id}/labels",
        "/api/v1/review/items/{trace_id}/skip",
        "/api/v1/review/agreement",
    }
    for operation in operations:
        checks = CONFORMANCE + ([positive_data_acceptance] if _accepts(operation, mode) else [])
        cases = operation.as_strategy(mode)
        if mode.is_positive:
            cases = cases.filter(_without_cursor)

        @given(case=cases)
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def keeps_its_spec(case: Any) -> None:
            # Run at once below, within this iteration: `checks` is this operation's.
            case.call_and_validate(headers=headers, checks=checks)  # noqa: B023

        keeps_its_spec()
