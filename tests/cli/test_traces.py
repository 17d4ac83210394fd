"""`faithmon traces list|show` over a real SQLite store seeded as the read API tests seed it
(two judges, one of them drifting, unscored and failed records): what each prints agrees
with the read API served from the same file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient

from faithmon.api.app import create_app
from faithmon.cli import main, wiring
from faithmon.cli.views import record_json
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.judge.contracts import checked
from faithmon.judge.offline import OfflineJudge
from faithmon.model import CLAIM_VERSION, claim_from_json, claim_to_json
from faithmon.store import engine as store_engine
from faithmon.store import evaluations, records
from tests.api.seed import CITED_TRACE, RECORDS, SECRET, cited_record, make_record, seed
from tests.store.factory import stored_records

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

ONE_OF_EACH = [0, 1, 3, 5, 8, 9]
"""Two evaluations (the newer by the drifting judge; the older with citations, a wrong one,
and a policy finding), an unsupported claim, keep-always sampling, a partial claim, a judge
error, unscored."""


@dataclass
class Store:
    url: str
    api: TestClient


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path_factory.mktemp('traces')}/store.db"
    engine = store_engine.make_engine(url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        seed(sessions)
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        with TestClient(create_app(pipeline, sessions=sessions)) as api:
            yield Store(url, api)
    finally:
        engine.dispose()


def run(store: Store, *args: str, color: bool = False) -> Result:
    return CliRunner().invoke(main, ["traces", *args, "--database-url", store.url], color=color)


def trace_id(n: int) -> str:
    return make_record(n).trace_id


@pytest.mark.parametrize("n", ONE_OF_EACH)
def test_show_json_is_the_read_apis_trace_detail(store: Store, n: int) -> None:
    """`traces show --json` prints the very object GET /api/v1/traces/{id} answers."""
    result = run(store, "show", trace_id(n), "--json")
    assert result.exit_code == 0, result.output
    served = store.api.get(f"/api/v1/traces/{trace_id(n)}")
    assert served.status_code == 200
    assert json.loads(result.stdout) == served.json()


def test_show_json_says_which_evaluations_are_trusted(store: Store) -> None:
    """The judges' standings come from the store: the drifting judge's score is untrusted."""
    shown = json.loads(run(store, "show", trace_id(0), "--json").stdout)
    assert [(e["judge"], e["trusted"]) for e in shown["evaluations"]] == [
        ("offline/test-a", True),
        ("offline/test-b", False),
    ]


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_show_marks_each_claim_on_the_chunk_it_cites(store: Store) -> None:
    """Claims sit under the chunk they cite with their verdict; a failed verdict is in
    capitals, so it shows at a glance with colour off (piped: no escape codes)."""
    result = run(store, "show", trace_id(0))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b[" not in out
    assert out.startswith(f"trace {trace_id(0)}  scored\n")
    assert "question 0 of acme" in out and "thumbs_down" in out
    assert "  sampler  kept by the sampling ratio\n" in out
    first = _section(out, "[1] acme-doc-0", "[2] acme-faq")
    assert '#1 + supported    Order A17 shipped on 3 March. ("3 March")  cites [1]: correct\n' in (
        first
    )
    # The second judge's answer had no markers: its claim says nothing of citations.
    assert "#2 + supported    All fine.\n" in first
    second = _section(out, "[2] acme-faq", "[3] (no id)")
    assert "Order A17 costs 50 euros." in second
    assert (
        "#1 ! CONTRADICTED critical (amount) It costs 40 euros.  "
        "cites [3]: WRONG, not supported there\n"
    ) in second
    assert "UNTRUSTED" in out and "1 contradicted, 1 critical" in out


def test_show_gives_each_evaluations_citation_accuracy_and_policy_findings(store: Store) -> None:
    """Under an evaluation: its citation accuracy and unresolved markers, then each policy
    finding with the trace's text made inert (a terminal escape shown, not sent)."""
    out = run(store, "show", trace_id(0)).stdout
    evaluations = _section(out, "evaluations (2", "chunks (3")
    first, second = evaluations.split("  #2 ")
    assert first.splitlines()[2:] == [
        "      citation accuracy 0.50 (1 of 2 citing claims correct), "
        "1 unresolved marker (no such chunk)",
        '      policy internal_only: "internal only \\x1b[2J<b>do not share</b>"',
    ]
    assert "citation" not in second and "policy" not in second
    plain = run(store, "show", trace_id(2)).stdout
    assert "citation" not in plain and "policy" not in plain and "cites" not in plain


def test_show_marks_a_partial_claim_with_what_is_missing(store: Store) -> None:
    """A partial verdict is its own word, with the part the chunks do not support."""
    out = run(store, "show", trace_id(5)).stdout
    faq = _section(out, "[2] shared-faq", "[3] (no id)")
    assert '~ PARTIAL      It costs 40 euros. ("costs") missing: "40 euros"\n' in faq
    assert "strict 0.50  lenient 1.00" in out and "2 claims: 1 supported, 1 partial" in out


def test_show_json_carries_the_contracts(store: Store) -> None:
    """--json has each claim's critical rule, citations, citation and missing part, and
    each evaluation's citation accuracy, unresolved markers and policy findings."""
    first, second = json.loads(run(store, "show", trace_id(0), "--json").stdout)["evaluations"]
    contracts = ("critical_rule", "citations", "citation", "missing")
    assert [tuple(c[k] for k in contracts) for c in first["claims"]] == [
        (None, [0], "correct", None),
        ("amount", [2], "wrong", None),
    ]
    assert (first["citation_accuracy"], first["unresolved_citations"]) == (0.5, 1)
    assert first["policy"] == [
        {"rule": "internal_only", "text": "internal only \x1b[2J<b>do not share</b>"}
    ]
    assert [tuple(c[k] for k in contracts) for c in second["claims"]] == [(None, [], None, None)]
    assert (second["citation_accuracy"], second["unresolved_citations"]) == (None, 0)
    assert second["policy"] == []
    (partial,) = json.loads(run(store, "show", trace_id(5), "--json").stdout)["evaluations"]
    assert [(c["verdict"], c["missing"]) for c in partial["claims"]] == [
        ("supported", None),
        ("partial", "40 euros"),
    ]


def test_show_gives_each_evaluations_relevance(store: Store) -> None:
    """Text and --json carry context and answer relevance and the cause where the judge
    measured them; --json has them null elsewhere, and the text says nothing there."""
    (measured,) = json.loads(run(store, "show", trace_id(1), "--json").stdout)["evaluations"]
    relevance = ("context_relevance", "answer_relevance", "cause", "abstention")
    assert [measured[k] for k in relevance] == [0.25, 0.75, "retrieval", None]
    (plain,) = json.loads(run(store, "show", trace_id(2), "--json").stdout)["evaluations"]
    assert [plain[k] for k in relevance] == [None] * 4
    line = "      context relevance 0.25, answer relevance 0.75, cause retrieval"
    assert line in run(store, "show", trace_id(1)).stdout.splitlines()
    assert "relevance" not in run(store, "show", trace_id(2)).stdout


def test_show_lists_claims_that_cite_no_chunk(store: Store) -> None:
    """An unsupported claim cites no chunk: it gets its own section after the chunks."""
    out = run(store, "show", trace_id(1)).stdout
    tail = out[out.index("claims citing no chunk") :]
    assert "? UNSUPPORTED  It costs 40 euros." in tail
    assert "1 supported, 1 unsupported" in out


def test_show_a_trace_the_contracts_checked(tmp_path: Path) -> None:
    """A trace whose answer cites its chunks, scored by the offline judge with the
    contracts: each claim says whether what it cites supports it, the misquote names its
    rule, and the evaluation counts the unresolved marker and shows the leaked secret."""
    url = f"sqlite:///{tmp_path}/cited.db"
    engine = store_engine.make_engine(url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        with sessions.begin() as session:
            records.save_records(session, [cited_record({"route": "refunds"})])
        with sessions.begin() as session:
            ((record_id, record),) = records.claim_pending(session, "test", 10, 60)
            texts = [c.text for c in record.chunks]
            judged = checked(OfflineJudge()).judge(record.question, texts, record.answer)
            evaluations.save_evaluation(session, record_id, judged)
    finally:
        engine.dispose()
    result = CliRunner().invoke(main, ["traces", "show", CITED_TRACE, "--database-url", url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    evaluation = lines[lines.index("evaluations (1, oldest first)") + 2 :]
    assert evaluation[:2] == [
        "      citation accuracy 0.25 (1 of 4 citing claims correct), "
        "1 unresolved marker (no such chunk)",
        f'      policy secret: "{SECRET}"',
    ]
    claims = [line.strip() for line in lines if line.startswith("      ") and "cites" in line]
    assert claims == [
        "+ supported    critical (duration) Refunds take 5 days to reach your card. "
        '("Refunds take 5 days to reach your card")  cites [2]: WRONG, not supported there',
        "+ supported    critical (amount) Shipping is free over 40 euros. "
        '("Shipping is free over 40 euros")  cites [1] [2]: correct',
        "+ supported    Support is open Monday to Friday. "
        '("Support is open Monday to Friday")  cites no chunk it was given',
        '! CONTRADICTED critical (misquote) The terms say "refunds are paid back the same day". '
        '("refunds are paid back the same day")  cites [1]: WRONG, not supported there',
        f"? UNSUPPORTED  Call us {SECRET} now.  cites nothing",
    ]


def test_show_unscored_and_failed_records(store: Store) -> None:
    """A pending record says it is not scored; a judge error shows the error, not a score."""
    assert "  not scored yet\n" in run(store, "show", trace_id(9)).stdout
    failed = run(store, "show", trace_id(8)).stdout
    assert "judge_error  strict -  lenient -" in failed and "error: timeout" in failed


def test_show_colours_only_on_a_terminal(store: Store) -> None:
    """With colour on, verdicts are styled; the words are the same as without."""
    plain = run(store, "show", trace_id(1)).stdout
    coloured = run(store, "show", trace_id(1), color=True).stdout
    assert "\x1b[33m\x1b[1m? UNSUPPORTED" in coloured
    assert "\x1b[" not in plain and len(coloured) > len(plain)
    cited = run(store, "show", trace_id(0), color=True).stdout
    assert "\x1b[31m\x1b[1mcites [3]: WRONG, not supported there\x1b[0m" in cited
    assert "\x1b[32mcites [1]: correct\x1b[0m" in cited
    # The finding's own escape is shown as text even when colour is on.
    assert "\x1b[2J" not in cited and "\\x1b[2J" in cited


def test_show_refuses_unknown_and_malformed_ids(store: Store) -> None:
    """One line on stderr and exit 1, for an id never stored and for one that is no id."""
    missing = run(store, "show", "f" * 32)
    assert missing.exit_code == 1
    assert missing.stderr == f"Error: no trace {'f' * 32}\n"
    for bad in ("xyz", "0" * 33, "g" * 32, "\x1b[2J" + "0" * 28):
        result = run(store, "show", bad)
        assert result.exit_code == 1, bad
        assert len(result.stderr.splitlines()) == 1 and "malformed trace id" in result.stderr
        assert "\x1b" not in result.stderr


def test_show_and_list_refuse_a_missing_database(tmp_path: Path) -> None:
    """Read-only commands do not create an empty store."""
    url = f"sqlite:///{tmp_path}/absent.db"
    for args in (["show", trace_id(0)], ["list"]):
        result = CliRunner().invoke(main, ["traces", *args, "--database-url", url])
        assert result.exit_code != 0
        assert not (tmp_path / "absent.db").exists()


def _ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["trace_id"] for item in items]


SINCE = make_record(10).started_at.isoformat()
UNTIL = make_record(20).started_at.isoformat()
FILTERS: list[tuple[list[str], dict[str, Any]]] = [
    ([], {}),
    (["--status", "judge_error"], {"status": "judge_error"}),
    (["--label", "route:search"], {"label": "route:search"}),
    (
        ["--label", "route:billing", "--label", "tenant:acme"],
        {"label": ["route:billing", "tenant:acme"]},
    ),
    # key=value as everywhere else; key:value stays its alias, in either place.
    (["--label", "route=search"], {"label": "route=search"}),
    (
        ["--label", "route=billing", "--label", "tenant:acme"],
        {"label": ["route:billing", "tenant=acme"]},
    ),
    (["--max-score", "0.5"], {"max_score": 0.5}),
    (["--critical"], {"critical": "true"}),
    (
        ["--no-critical", "--label", "tenant:globex"],
        {"critical": "false", "label": "tenant:globex"},
    ),
    (["--since", SINCE, "--until", UNTIL], {"since": SINCE, "until": UNTIL}),
    # No offset: UTC, as the API takes it.
    (["--since", SINCE[: -len("+00:00")]], {"since": SINCE}),
]


@pytest.mark.parametrize(("args", "query"), FILTERS)
def test_list_filters_match_the_read_api(
    store: Store, args: list[str], query: dict[str, Any]
) -> None:
    """Each filter picks the records the read API's list picks, newest first."""
    result = run(store, "list", *args, "--json", "--limit", "500")
    assert result.exit_code == 0, result.output
    served = store.api.get("/api/v1/traces", params={**query, "limit": 500})
    assert served.status_code == 200, served.text
    expected = _ids(served.json()["items"])
    assert expected, "the filter should match something"
    assert _ids(json.loads(result.stdout)) == expected


def test_list_json_keeps_the_record_shape(store: Store) -> None:
    """`list --json` is still the array of whole records (evaluations, feedback and all)
    that it printed before it took filters."""
    rows = json.loads(run(store, "list", "--json", "--limit", str(RECORDS)).stdout)
    judge = wiring.make_judge(Settings.from_env({})).name
    engine = store_engine.make_engine(store.url)
    try:
        with store_engine.session_factory(engine)() as session:
            stored = stored_records(session, limit=RECORDS)
    finally:
        engine.dispose()
    assert rows == [record_json(s, judge) for s in stored]
    [first] = [row for row in rows if row["trace_id"] == trace_id(0)]
    assert [f["value"] for f in first["feedback"]] == ["thumbs_down"]


@pytest.mark.parametrize("n", ONE_OF_EACH)
def test_list_and_show_print_each_claim_alike(store: Store, n: int) -> None:
    """Both print each claim as the store keeps it (``model.claim_to_json``): the same
    keys, versioned, and the same values for the same claim of the same evaluation."""
    [listed] = [
        row
        for row in json.loads(run(store, "list", "--json", "--limit", str(RECORDS)).stdout)
        if row["trace_id"] == trace_id(n)
    ]
    shown = json.loads(run(store, "show", trace_id(n), "--json").stdout)
    listed_claims = [e["claims"] for e in listed["evaluations"]]
    assert listed_claims == [e["claims"] for e in shown["evaluations"]]
    for claim in (c for claims in listed_claims for c in claims):
        assert set(claim) == set(claim_to_json(claim_from_json(claim)))
        assert claim["v"] == CLAIM_VERSION


def test_list_prints_a_header_then_rows_newest_first(store: Store) -> None:
    """A header row, then one row per record with its start time, newest first; asking
    for fewer than there are says so on stderr."""
    result = run(store, "list", "--limit", "4")
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split()[:5] == ["TRACE", "ID", "STARTED", "(UTC)", "STATUS"]
    newest = sorted(range(RECORDS), key=lambda n: make_record(n).started_at, reverse=True)[:4]
    assert [row.split()[0] for row in rows] == [trace_id(n) for n in newest]
    started = make_record(newest[0]).started_at
    assert f"{started:%Y-%m-%d %H:%M:%S}" in rows[0]
    assert "more than 4" in result.stderr


def test_list_marks_critical_rows(store: Store) -> None:
    """A record whose newest evaluation has a critical unsupported claim says so."""
    rows = run(store, "list", "--critical", "--limit", "500").stdout.splitlines()[1:]
    assert rows and all("  0.50  yes " in row for row in rows)


@pytest.mark.parametrize(
    "args",
    [
        ["--limit", "0"],
        ["--limit", "-1"],
        ["--label", "route"],
        ["--label", "bad name:x"],
        ["--label", "bad name=x"],
        ["--label", "=x"],
        ["--since", "yesterday"],
        ["--max-score", "2"],
        ["--status", "lost"],
    ],
)
def test_list_refuses_bad_options(store: Store, args: list[str]) -> None:
    """A bad option is a usage error (exit 2), before any query."""
    result = run(store, "list", *args)
    assert result.exit_code == 2, result.output
