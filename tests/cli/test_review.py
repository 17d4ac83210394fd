"""The review loop from the command line on a real store (SQLite and PostgreSQL): the
worker queues every evaluation with FAITHMON_REVIEW_SAMPLE_RATE=1, a reviewer labels claims
by index, and the labels measure the judge, calibrate a stored threshold and export a
sentinel set that `faithmon sentinel add` reads back as the same version; every mistake
is one line and exit 1."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from faithmon.model import Chunk, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store import review_thresholds
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

T0 = days_ago(1)
CONTEXT = "Order A17 shipped on 3 March by courier."


def _records() -> list[RagRecord]:
    answers = [CONTEXT, CONTEXT, CONTEXT + " It arrives tomorrow by drone.", CONTEXT]
    return [
        RagRecord(
            trace_id=f"{n + 1:032x}",
            question="Where is order A17?",
            answer=answer,
            chunks=(Chunk(0, CONTEXT),),
            labels={"model": ("m1", "m2")[n % 2]},
            started_at=T0 + timedelta(minutes=n),
        )
        for n, answer in enumerate(answers)
    ]


@pytest.fixture
def store(database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.chdir(tmp_path)  # the worker's heartbeat file
    for name, value in {
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_REVIEW_SAMPLE_RATE": "1",
        "FAITHMON_REVIEW_DOUBLE_SHARE": "0",
        "FAITHMON_DRIFT_DIMENSIONS": "model",
    }.items():
        monkeypatch.setenv(name, value)
    engine = store_engine.make_engine(database_url)
    store_engine.upgrade(engine)
    with store_engine.session_factory(engine).begin() as session:
        store_records.save_records(session, _records())
    engine.dispose()
    return database_url


def run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    return result


def ok(*args: str) -> Any:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.stdout


def test_label_measure_calibrate_export(store: str, tmp_path: Path) -> None:
    ok("worker", "--once")
    queue = ok("review", "queue", "--json")
    assert len(queue) == 4 and queue[0]["reason"] == "low_score"
    assert {i["inclusion_probability"] for i in queue} == {1.0}
    bad = queue[0]
    verdicts = [c["verdict"] for c in bad["claims"]]
    assert [c["index"] for c in bad["claims"]] == list(range(len(verdicts)))
    wrong = verdicts.index("unsupported")

    labels = [f"{i}=supported" for i in range(len(verdicts)) if i != wrong]
    args = [f"--claim={x}" for x in [*labels, f"{wrong}=contradicted:critical"]]
    done = ok("review", "label", bad["trace_id"], *args, "--reviewer", "ann", "--json")
    assert done["status"] == "done" and done["labelled"] == len(verdicts)
    # The judge passed these; ann fails one of them (a false acceptance), passes the rest.
    for n, item in enumerate(queue[1:]):
        label = "unsupported" if n == 0 else "supported"
        ok("review", "label", item["trace_id"], f"--claim=0={label}", "--reviewer", "ann")

    figures = ok("review", "agreement", "--json")
    (judge,) = figures["judges"]
    answer = judge["answer_level"]
    assert answer["n"] == 4
    assert answer["false_acceptance"]["rate"] == 0.5  # 1 of the 2 answers ann failed
    assert answer["false_rejection"]["rate"] == 0.0
    assert {s["segment"] for s in judge["segments"]} == {"model=m1", "model=m2"}
    assert figures["reviewers"] == {"kappa": None, "n": 0}

    calibrated = ok("review", "calibrate", "--json")["thresholds"]
    overall = next(t for t in calibrated if t["segment"] == "overall")
    assert overall["n"] == 4 and overall["dataset_version"]
    engine = store_engine.make_engine(store)
    with store_engine.session_factory(engine)() as session:
        kept = review_thresholds.latest_thresholds(session, judge["judge"])
    engine.dispose()
    assert kept[""]["threshold"] == overall["threshold"]
    # The threshold in use gates each scored trace: its verdict is in `traces show`.
    for item in queue:
        shown = ok("traces", "show", item["trace_id"], "--json")
        (evaluation,) = shown["evaluations"]
        verdict = evaluation["gate"]["verdict"]
        score, t = evaluation["faithfulness"], evaluation["gate"]
        inside = t["guard_low"] <= score < t["guard_high"]
        assert verdict == ("review" if inside else "pass" if score >= t["threshold"] else "fail")
        assert t["segment"].startswith("model=")  # the segment's own, over the overall one

    out = tmp_path / "reviewed.jsonl"
    exported = run("review", "export", "--sentinel", "reviewed", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    assert "sentinel set reviewed version" in exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(x["expected"] for x in lines) == ["supported", "supported"] + ["unsupported"] * 2
    again = ok("sentinel", "add", str(out), "--name", "reviewed", "--json")
    assert again["added"] is False and again["cases"] == 4
    ragas = run("review", "export", "--format", "ragas")
    rows = [json.loads(line) for line in ragas.stdout.splitlines()]
    assert {"user_input", "retrieved_contexts", "response", "human_faithful"} <= set(rows[0])
    assert ok("review", "queue") == "the review queue is empty\n"


def test_every_mistake_is_one_line(store: str) -> None:
    ok("worker", "--once")
    trace = ok("review", "queue", "--json")[1]["trace_id"]
    for args, said in [
        (["label", "f" * 32, "--claim=0=supported"], "is not in the review queue"),
        (["label", trace, "--claim=0=maybe"], "the verdict must be one of"),
        (["label", trace, "--claim=9=supported"], "claim 9 does not exist"),
        (["label", trace, "--claim=0=supported:severe"], "critical or minor"),
        (["label", trace, "--claim=0=supported", "--claim=0=unsupported"], "labelled twice"),
        (["label", trace], "nothing to label"),
        (["label", trace, "--split=0=only one part"], "expected INDEX=first part|second"),
        (["label", trace, "--split=0=a|b", "--claim=0.0=supported"], "part 1 has no --claim 0.1"),
        (["label", trace, "--split=0=a|b", "--claim=0=supported"], "is split; label its parts"),
        (["label", trace, "--claim=0.1=supported"], "claim 0 has no --split part 1"),
        (["label", trace, "--merge=0=supported"], "a merge needs two claims or more"),
        (["export", "--sentinel", "s", "--format", "ragas"], "--sentinel needs --format"),
    ]:
        result = run("review", *args)
        assert result.exit_code != 0 and said in result.output, result.output
        assert "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1 or "Usage" in result.output
    ok("review", "label", trace, "--claim=0=supported", "--reviewer", "bo")
    twice = run("review", "label", trace, "--claim=0=supported", "--reviewer", "bo")
    assert twice.exit_code == 1 and "is done" in twice.output
    skipped = ok("review", "queue", "--json")[0]["trace_id"]
    ok("review", "skip", skipped)
    assert skipped not in [i["trace_id"] for i in ok("review", "queue", "--json")]


def test_a_new_judge_is_calibrated_on_rescored_traces_and_the_old_goes_stale(
    store: str,
) -> None:
    """Reviewed under offline/v9, the traces scored again by another configuration: calibrate
    stores thresholds for both from the same labels; with the other as the current judge,
    the other's are listed stale."""
    from faithmon.judge import OfflineJudge
    from faithmon.store import evaluations as store_evaluations
    from faithmon.store.tables import RecordRow

    ok("worker", "--once")
    for item in ok("review", "queue", "--json"):
        labels = [f"--claim={c['index']}=supported" for c in item["claims"]]
        ok("review", "label", item["trace_id"], *labels, "--reviewer", "ann")
    other = OfflineJudge(threshold=0.0)
    engine = store_engine.make_engine(store)
    with store_engine.session_factory(engine).begin() as session:
        for row in session.query(RecordRow).all():
            judged = other.judge(row.question, [c["text"] for c in row.chunks], row.answer)
            store_evaluations.settle(session, row.id, judged)
    engine.dispose()

    first = ok("review", "calibrate", "--json")
    assert {t["judge"] for t in first["thresholds"]} == {first["judge"], other.name}
    assert all(t["n"] == 4 for t in first["thresholds"] if t["segment"] == "overall")
    assert {s["judge"] for s in first["stale"]} == {other.name}
    versions = {t["dataset_version"] for t in first["thresholds"]}
    assert len(versions) == 1  # one reviewed set, whichever judge scored it


def test_a_reviewer_splits_a_claim_the_judge_left_whole(store: str) -> None:
    """Claim 0 split in two, its second part unsupported: the claim counts as not
    supported against the judge's supported (a false acceptance at claim level)."""
    ok("worker", "--once")
    bad = ok("review", "queue", "--json")[0]
    assert [c["verdict"] for c in bad["claims"]][:1] == ["supported"]
    rest = [f"--claim={c['index']}={c['verdict']}" for c in bad["claims"][1:]]
    ok(
        "review",
        "label",
        bad["trace_id"],
        "--split=0=Order A17 shipped on 3 March.|It went by courier.",
        "--claim=0.0=supported",
        "--claim=0.1=unsupported:critical",
        *rest,
    )
    (judge,) = ok("review", "agreement", "--json")["judges"]
    claims = judge["claim_level"]
    assert claims["n"] == len(bad["claims"])
    assert claims["confusion"]["judge_pass_human_fail"] == 1.0
