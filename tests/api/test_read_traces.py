"""``/api/v1/traces`` over real HTTP on SQLite and PostgreSQL: pages that lose and repeat
nothing, every filter against what the seed says, one trace whole, 404s and 422s."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from faithmon.model import CLAIM_VERSION, Claim, claim_to_json, parse_label
from tests.api.client import call, every_page, get, send
from tests.api.seed import (
    JUDGE,
    MISSED_RETRIEVAL,
    OTHER_JUDGE,
    POLICY,
    RECORDS,
    T0,
    Seeded,
    make_record,
    shown,
    status_of,
)


def trace_id(n: int) -> str:
    return make_record(n).trace_id


def newest_first(ns: list[int]) -> list[str]:
    return [trace_id(n) for n in sorted(ns, key=lambda n: make_record(n).started_at, reverse=True)]


@pytest.mark.parametrize("limit", [1, 7, 90, 500])
def test_pages_hold_every_trace_once_newest_first(api: Seeded, limit: int) -> None:
    """Following next_cursor from the first page yields every trace once, newest first."""
    items = every_page(api.url, "/api/v1/traces", api.keys["admin"], limit)
    assert [i["trace_id"] for i in items] == newest_first(list(range(RECORDS)))


def test_pages_under_a_filter_hold_every_match_once(api: Seeded) -> None:
    """A cursor keeps the filter's place: filtered pages neither repeat nor skip."""
    items = every_page(
        api.url, "/api/v1/traces", api.keys["admin"], 4, label=["route:search"], max_score=0.5
    )
    expected = [
        n
        for n in range(RECORDS)
        if make_record(n).labels["route"] == "search"
        and (s := shown(n)) is not None
        and s.faithfulness is not None
        and s.faithfulness <= 0.5
    ]
    assert [i["trace_id"] for i in items] == newest_first(expected)


def _score_at_most(limit: float, judge: str | None = None) -> Callable[[int], bool]:
    def test(n: int) -> bool:
        s = shown(n, judge)
        return s is not None and s.faithfulness is not None and s.faithfulness <= limit

    return test


WINDOW = (T0 + timedelta(hours=10), T0 + timedelta(hours=20))
FILTERS: list[tuple[dict[str, Any], Callable[[int], bool]]] = [
    ({"status": "pending"}, lambda n: status_of(n) == "pending"),
    ({"status": "judge_error"}, lambda n: status_of(n) == "judge_error"),
    ({"label": ["route:search"]}, lambda n: make_record(n).labels["route"] == "search"),
    (
        {"label": ["route:billing", "tenant:globex"]},
        lambda n: dict(make_record(n).labels) == {"route": "billing", "tenant": "globex"},
    ),
    ({"label": ["model:none-has-it"]}, lambda n: False),
    # key=value as everywhere else; key:value stays its alias, and the two mix.
    ({"label": ["route=search"]}, lambda n: make_record(n).labels["route"] == "search"),
    (
        {"label": ["route=billing", "tenant:globex"]},
        lambda n: dict(make_record(n).labels) == {"route": "billing", "tenant": "globex"},
    ),
    (
        {"since": WINDOW[0].isoformat(), "until": WINDOW[1].isoformat()},
        lambda n: WINDOW[0] <= make_record(n).started_at < WINDOW[1],
    ),
    (
        # An offset is honoured, and a time without one is UTC.
        {"since": WINDOW[0].replace(tzinfo=None).isoformat()},
        lambda n: WINDOW[0] <= make_record(n).started_at,
    ),
    (
        {"until": WINDOW[1].astimezone(datetime.now().astimezone().tzinfo).isoformat()},
        lambda n: make_record(n).started_at < WINDOW[1],
    ),
    ({"max_score": 0.5}, _score_at_most(0.5)),
    ({"max_score": 0}, _score_at_most(0)),
    ({"critical": "true"}, lambda n: (s := shown(n)) is not None and s.critical),
    ({"critical": "false"}, lambda n: not ((s := shown(n)) is not None and s.critical)),
    ({"judge": OTHER_JUDGE}, lambda n: shown(n, OTHER_JUDGE) is not None),
    ({"judge": JUDGE, "max_score": 0.5}, _score_at_most(0.5, JUDGE)),
    (
        {"judge": JUDGE, "critical": "true", "label": ["tenant:acme"]},
        lambda n: (
            (s := shown(n, JUDGE)) is not None
            and s.critical
            and make_record(n).labels.get("tenant") == "acme"
        ),
    ),
    ({"judge": "no/such-judge"}, lambda n: False),
]


@pytest.mark.parametrize(
    ("params", "expected"), FILTERS, ids=[str(sorted(f.items())) for f, _ in FILTERS]
)
def test_each_filter_selects_what_it_names(
    api: Seeded, params: dict[str, Any], expected: Callable[[int], bool]
) -> None:
    """Each filter (and combinations) yields exactly the seeded traces it describes."""
    items = every_page(api.url, "/api/v1/traces", api.keys["admin"], 500, **params)
    assert [i["trace_id"] for i in items] == newest_first(
        [n for n in range(RECORDS) if expected(n)]
    )


def test_list_items_show_the_newest_evaluation_or_the_judges_own(api: Seeded) -> None:
    """An item shows its newest evaluation; with `judge`, that configuration's instead."""
    key = api.keys["admin"]
    first = get(api.url, "/api/v1/traces", key, until=(T0 + timedelta(minutes=1)).isoformat())
    (item,) = first["items"]
    assert item["trace_id"] == trace_id(0)
    assert (item["judge"], item["faithfulness"], item["critical"]) == (OTHER_JUDGE, 1.0, False)
    assert item["labels"] == {"route": "billing", "tenant": "acme"}
    assert item["question"] == "question 0 of acme" and item["status"] == "scored"
    assert datetime.fromisoformat(item["started_at"]) == T0
    by_judge = get(
        api.url, "/api/v1/traces", key, judge=JUDGE, until=(T0 + timedelta(minutes=1)).isoformat()
    )
    (item,) = by_judge["items"]
    assert (item["judge"], item["faithfulness"], item["lenient"], item["critical"]) == (
        JUDGE,
        0.5,
        0.5,
        True,
    )
    pending = get(api.url, "/api/v1/traces", key, status="pending", limit=1)["items"][0]
    assert pending["judge"] is None and pending["faithfulness"] is None


def test_a_trace_is_shown_whole(api: Seeded) -> None:
    """The detail holds the record as stored and every evaluation with its claims."""
    trace = get(api.url, f"/api/v1/traces/{trace_id(0)}", api.keys["admin"])
    record = make_record(0)
    assert trace["question"] == record.question and trace["answer"] == record.answer
    assert [(c["position"], c["id"], c["score"], c["text"]) for c in trace["chunks"]] == [
        (c.position, c.id, c.score, c.text) for c in record.chunks
    ]
    assert trace["labels"] == dict(record.labels)
    assert trace["sampling"] == {"decision": "kept", "reason": "sampled", "keep_requested": None}
    assert trace["status"] == "scored"
    assert [f["value"] for f in trace["feedback"]] == ["thumbs_down"]
    first, second = trace["evaluations"]
    assert (first["judge"], second["judge"]) == (JUDGE, OTHER_JUDGE)
    assert first["status"] == "ok" and first["faithfulness"] == 0.5
    assert first["unsupported"] and first["critical_unsupported"]
    assert [(c["verdict"], c["chunk"], c["quote"], c["critical"]) for c in first["claims"]] == [
        ("supported", 0, "3 March", False),
        ("contradicted", 1, None, True),
    ]
    assert [
        (c["critical_rule"], c["citations"], c["citation"], c["missing"]) for c in first["claims"]
    ] == [(None, [0], "correct", None), ("amount", [2], "wrong", None)]
    assert (first["citation_accuracy"], first["unresolved_citations"]) == (0.5, 1)
    assert first["policy"] == [{"rule": POLICY.rule, "text": POLICY.text}]
    # An evaluation whose answer cited nothing: no accuracy, nothing unresolved, no finding.
    assert (second["citation_accuracy"], second["unresolved_citations"], second["policy"]) == (
        None,
        0,
        [],
    )
    (fine,) = second["claims"]
    assert (fine["critical_rule"], fine["citations"], fine["citation"], fine["missing"]) == (
        None,
        [],
        None,
        None,
    )
    assert first["usage"] == {
        "calls": 1,
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "retries": 0,
    }
    assert first["latency_ms"] == 12.5
    made = datetime.fromisoformat(first["created_at"])
    assert made.tzinfo is not None
    assert made <= datetime.fromisoformat(second["created_at"])
    assert datetime.fromisoformat(trace["ingested_at"]) <= made
    kept_by_rule = get(api.url, f"/api/v1/traces/{trace_id(3)}", api.keys["admin"])
    assert kept_by_rule["sampling"]["reason"] == "rule:error"
    failed = get(api.url, f"/api/v1/traces/{trace_id(8)}", api.keys["admin"])
    (evaluation,) = failed["evaluations"]
    assert evaluation["status"] == "judge_error" and evaluation["error"] == "timeout"
    assert evaluation["faithfulness"] is None and evaluation["claims"] == []
    assert (evaluation["citation_accuracy"], evaluation["policy"]) == (None, [])


def test_a_partial_claim_says_what_is_missing(api: Seeded) -> None:
    """A partial verdict comes through as itself, with the part the chunks do not support;
    it fails the strict score and passes the lenient one."""
    trace = get(api.url, f"/api/v1/traces/{trace_id(5)}", api.keys["admin"])
    (evaluation,) = trace["evaluations"]
    assert [(c["verdict"], c["missing"]) for c in evaluation["claims"]] == [
        ("supported", None),
        ("partial", "40 euros"),
    ]
    assert (evaluation["faithfulness"], evaluation["lenient"]) == (0.5, 1.0)
    assert evaluation["unsupported"] and not evaluation["critical_unsupported"]
    assert evaluation["citation_accuracy"] is None and evaluation["unresolved_citations"] == 0


def test_each_evaluation_carries_its_relevance(api: Seeded) -> None:
    """Context and answer relevance, cause and abstention come with each evaluation, and
    are null where the judge did not measure them; the spec declares them."""
    trace = get(api.url, f"/api/v1/traces/{trace_id(1)}", api.keys["admin"])
    (measured,) = trace["evaluations"]
    assert (
        measured["context_relevance"],
        measured["answer_relevance"],
        measured["cause"],
        measured["abstention"],
    ) == (0.25, 0.75, "retrieval", None)
    (plain,) = get(api.url, f"/api/v1/traces/{trace_id(2)}", api.keys["admin"])["evaluations"]
    relevance = ("context_relevance", "answer_relevance", "cause", "abstention")
    assert [plain[k] for k in relevance] == [None] * 4
    spec = get(api.url, "/openapi.json", api.keys["admin"])["components"]["schemas"]
    assert set(relevance) <= set(spec["EvaluationOut"]["properties"])


def test_the_trace_page_shows_relevance_beside_the_scores(api: Seeded) -> None:
    """The trace page's evaluations table has the relevance columns, filled where measured."""
    headers = {"Accept": "text/html", "Authorization": f"Bearer {api.keys['admin']}"}
    status, body, _ = send(f"{api.url}/traces/{trace_id(1)}", headers=headers, timeout=10)
    page = body.decode()
    assert status == 200
    assert "<th>context relevance</th><th>answer relevance</th><th>cause</th>" in page
    assert MISSED_RETRIEVAL.cause is not None
    assert f"<td>0.25</td><td>0.75</td><td>{MISSED_RETRIEVAL.cause}</td>" in page
    _, body, _ = send(f"{api.url}/traces/{trace_id(2)}", headers=headers, timeout=10)
    assert "<td>—</td><td>—</td><td>—</td>" in body.decode()


def test_the_spec_declares_the_contracts(api: Seeded) -> None:
    """The OpenAPI spec names partial among the verdicts and the contract fields."""
    spec = get(api.url, "/openapi.json", api.keys["admin"])["components"]["schemas"]
    claim, evaluation = spec["ClaimOut"]["properties"], spec["EvaluationOut"]["properties"]
    assert "partial" in claim["verdict"]["enum"]
    assert {"critical_rule", "missing", "citations", "citation"} <= set(claim)
    assert {"citation_accuracy", "unresolved_citations", "policy"} <= set(evaluation)
    assert spec["PolicyOut"]["required"] == ["rule", "text"]


def test_the_spec_declares_the_claim_the_serializer_writes(api: Seeded) -> None:
    """ClaimOut names every key ``model.claim_to_json`` writes and nothing else, so the
    API neither drops a field the store keeps nor promises one it does not."""
    spec = get(api.url, "/openapi.json", api.keys["admin"])["components"]["schemas"]
    assert set(spec["ClaimOut"]["properties"]) == set(claim_to_json(Claim("x", "supported")))
    trace = get(api.url, f"/api/v1/traces/{trace_id(0)}", api.keys["admin"])
    assert {c["v"] for e in trace["evaluations"] for c in e["claims"]} == {CLAIM_VERSION}


@pytest.mark.parametrize("unknown", ["f" * 32, "0" * 31, "x" * 40, "%00"])
def test_an_unknown_trace_is_404(api: Seeded, unknown: str) -> None:
    """A trace id the store does not hold answers 404 with a reason."""
    status, body, _ = call(api.url, f"/api/v1/traces/{unknown}", api.keys["admin"])
    assert status == 404 and body == {"detail": "no such trace"}


@pytest.mark.parametrize(
    "params",
    [
        {"status": "lost"},
        {"label": "route"},
        {"label": "a b:c"},
        {"label": "a b=c"},
        {"label": "=c"},
        {"since": "yesterday"},
        {"max_score": "1.5"},
        {"max_score": "nan"},
        {"critical": "maybe"},
        {"limit": "0"},
        {"limit": "501"},
        {"cursor": "not-a-cursor"},
        {"cursor": "WyJ4IiwxXQ"},  # ["x", 1]: a cursor's shape, not its values
        {"judge": "a\x00b"},
    ],
)
def test_a_bad_query_value_is_422_with_its_reason(api: Seeded, params: dict[str, str]) -> None:
    """Bad values are refused before any query runs, naming the parameter."""
    status, body, _ = call(api.url, "/api/v1/traces", api.keys["admin"], **params)
    assert status == 422, body
    (problem,) = body["detail"]
    assert next(iter(params)) in problem["loc"] and problem["msg"]


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("route=billing", ("route", "billing")),
        ("route:billing", ("route", "billing")),
        # A name holds neither separator, so the first one ends it: the value keeps the rest.
        ("url=http://host:80/a?b=c", ("url", "http://host:80/a?b=c")),
        ("at:12:00=noon", ("at", "12:00=noon")),
        ("route=", ("route", "")),
        ("route", None),
        ("=billing", None),
        ("a b=c", None),
        ("route=a\x00b", None),
    ],
)
def test_one_parser_reads_both_spellings_of_a_label(
    text: str, pair: tuple[str, str] | None
) -> None:
    """`key=value`, and `key:value` as its alias, as the CLI, the API and the page take it."""
    assert parse_label(text) == pair


@pytest.mark.parametrize(
    "since", ["0001-01-01T00:00:00+05:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59-05:00"]
)
def test_times_at_the_ends_of_the_calendar_still_answer(api: Seeded, since: str) -> None:
    """A time before year 1 once in UTC is as early as a time can be; one after 9999 as late."""
    items = get(api.url, "/api/v1/traces", api.keys["admin"], since=since, limit=500)["items"]
    assert len(items) == (0 if since.startswith("9999") else RECORDS)
