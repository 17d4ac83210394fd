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
from faithmon.model.review import Threshold
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
        # Four answers, two per model: enough here for a threshold of each segment.
        "FAITHMON_REVIEW_MIN_LABELS": "2",
    }.items():
        monkeypatch.setenv(name, value)
    engine = store_engine.make_engine(database_url)
    store_engine.upgrade(engine)
    with store_engine.session_factory(engine).begin() as session:
        store_records.save_records(session, _records())
    engine.dispose()
    return database_url


def _model(trace_id: str) -> str:
    """The segment _records gives the trace."""
    return "model=" + ("m1", "m2")[(int(trace_id, 16) - 1) % 2]


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
    # The judge passed these; ann fails the one of bad's model (a false acceptance), passes
    # the rest.
    failed = next(i for i in queue[1:] if _model(i["trace_id"]) == _model(bad["trace_id"]))
    for item in queue[1:]:
        label = "unsupported" if item is failed else "supported"
        ok("review", "label", item["trace_id"], f"--claim=0={label}", "--reviewer", "ann")

    figures = ok("review", "agreement", "--json")
    (judge,) = figures["judges"]
    answer = judge["answer_level"]
    assert answer["n"] == 4
    assert answer["false_acceptance"]["rate"] == 0.5  # 1 of the 2 answers ann failed
    assert answer["false_rejection"]["rate"] == 0.0
    assert {s["segment"] for s in judge["segments"]} == {"model=m1", "model=m2"}
    assert figures["reviewers"] == {"kappa": None, "n": 0}

    result = ok("review", "calibrate", "--json")
    calibrated = result["thresholds"]
    overall = next(t for t in calibrated if t["segment"] == "overall")
    # ann failed both answers of one model: no score separates them, so that model has
    # no threshold of its own and its traces fall back on the overall one.
    (waits,) = result["waiting"]
    assert waits["segment"] == _model(bad["trace_id"])
    assert waits["n"] == 2 and "passed none" in waits["reason"]
    own = {t["segment"] for t in calibrated} - {"overall"}
    assert len(own) == 1
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
        # The segment's own, over the overall one.
        model = _model(item["trace_id"])
        assert t["segment"] == (model if model in own else "overall")

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


def test_labels_that_leave_a_claim_out_are_refused_and_the_item_stays_open(store: str) -> None:
    """An item of several claims labelled in part: one line, exit 1, nothing stored; the
    item stays open and is labelled whole afterwards."""
    ok("worker", "--once")
    bad = ok("review", "queue", "--json")[0]
    claims = len(bad["claims"])
    assert claims >= 2
    part = run("review", "label", bad["trace_id"], "--claim=0=supported", "--reviewer", "ann")
    assert part.exit_code == 1
    assert part.output == (
        f"Error: claim{'s' if claims > 2 else ''} {', '.join(map(str, range(1, claims)))} "
        f"{'have' if claims > 2 else 'has'} no label: label every claim of the item "
        f"({claims}), as it closes once labelled\n"
    )
    still = next(i for i in ok("review", "queue", "--json") if i["trace_id"] == bad["trace_id"])
    assert (still["status"], still["reviews_done"]) == ("open", 0)
    every = [f"--claim={c['index']}=supported" for c in bad["claims"]]
    done = ok("review", "label", bad["trace_id"], *every, "--reviewer", "ann", "--json")
    assert done["status"] == "done" and done["labelled"] == claims


def _stored(url: str) -> dict[str, dict[str, dict[str, Any]]]:
    engine = store_engine.make_engine(url)
    with store_engine.session_factory(engine)() as session:
        kept = review_thresholds.latest_of_every_judge(session)
    engine.dispose()
    return kept


def test_calibrate_stores_a_threshold_only_on_enough_labels(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With FAITHMON_REVIEW_MIN_LABELS=3 the overall threshold (4 answers) is stored with
    its count and each model's (2) waits; --dry-run stores nothing; a threshold stored
    before stays in use until --reset removes every one."""
    ok("worker", "--once")
    for item in ok("review", "queue", "--json"):
        labels = [f"--claim={c['index']}=supported" for c in item["claims"]]
        ok("review", "label", item["trace_id"], *labels, "--reviewer", "ann")
    ok("review", "calibrate")  # under the fixture's 2: every segment gets one
    assert {s for kept in _stored(store).values() for s in kept} == {"", "model=m1", "model=m2"}
    ok("review", "calibrate", "--reset")
    assert _stored(store) == {}

    monkeypatch.setenv("FAITHMON_REVIEW_MIN_LABELS", "3")
    dry = ok("review", "calibrate", "--dry-run", "--json")
    assert dry["dry_run"] is True and dry["min_labels"] == 3
    (overall,) = dry["thresholds"]
    assert overall["segment"] == "overall" and overall["n"] == 4
    assert 0.0 <= overall["threshold"] <= 1.0
    assert [(w["segment"], w["n"], w["kept"]) for w in dry["waiting"]] == [
        ("model=m1", 2, None),
        ("model=m2", 2, None),
    ]
    assert "2 of the 3 labelled answers" in dry["waiting"][0]["reason"]
    assert _stored(store) == {}

    said = ok("review", "calibrate").splitlines()
    assert said[0].startswith(f"{overall['judge']} overall: threshold {overall['threshold']} (")
    assert "on 4 labelled answers" in said[0]
    assert said[1] == (
        f"{overall['judge']} model=m1: no threshold: 2 of the 3 labelled answers a threshold needs"
    )
    assert (
        said[-1]
        == "1 threshold stored; each needs 3 labelled answers (FAITHMON_REVIEW_MIN_LABELS)."
    )
    (kept,) = _stored(store).values()
    assert list(kept) == [""] and kept[""]["n"] == 4

    removed = ok("review", "calibrate", "--reset", "--json")
    assert removed == {"removed": 1} and _stored(store) == {}
    both = run("review", "calibrate", "--reset", "--dry-run")
    assert both.exit_code == 2 and "give one" in both.output


def test_a_threshold_outside_zero_to_one_is_never_stored(store: str) -> None:
    """1.0001 would fail every answer and -0.1 pass every one: the store refuses both."""
    engine = store_engine.make_engine(store)
    try:
        for bad in (1.0001, -0.1):
            found = Threshold(bad, 0.0, 1.0, None, None, 40, "by hand")
            sessions = store_engine.session_factory(engine)
            with sessions.begin() as session, pytest.raises(ValueError, match="outside 0 to 1"):
                review_thresholds.save_threshold(session, "j", "", found, "v", T0)
    finally:
        engine.dispose()
    assert _stored(store) == {}


def test_a_new_judge_is_calibrated_on_rescored_traces_and_the_old_goes_stale(
    store: str,
) -> None:
    """Reviewed under offline/v10, the traces scored again by another configuration: calibrate
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
