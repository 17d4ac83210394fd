"""Drive the sample app through faithmon's in-process pipeline and report."""

from __future__ import annotations

import os
import random
import secrets
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import faithmon_instrumentation as fm

from .. import drift, jobs
from ..alerts import ListSink, describe
from ..cli import wiring
from ..cli.worker_process import WorkerJobs, worker_jobs
from ..config import Settings
from ..errors import ConfigError
from ..ingest.processor import PipelineSpanProcessor
from ..judge import OfflineJudge
from ..model import segment_key
from ..model.standing import ProofFloor
from ..report import write_report
from ..store import Sessions, opening
from ..store import alerts as store_alerts
from ..store import records as stored_records
from ..store import sentinels as store_sentinels
from . import app

SEVERITY_RULES = Path(__file__).with_name("severity.toml")
"""The help centre's own severity rules. The demo scores with the shipped rules, so that
the commands it suggests afterwards (which read the configured judge's scores) find its
scores; ``FAITHMON_SEVERITY_RULES`` set to this file runs it with these."""
PHASES = 4  # the second half of the traffic arrives in this many steps
RETRIEVER_FROM = 1
"""The rollout step from which most shipping questions go to the new retriever."""
RETRIEVER_SHARE = 0.8


def demo_settings(settings: Settings, requests: int) -> Settings:
    """Baseline sizes that fit a few hundred requests; everything else as configured."""
    return replace(
        settings,
        # Its whole history takes seconds, so a false-alarm budget per 30 days
        # would ask for an absurd threshold: the demo pins one instead.
        drift_threshold=settings.drift_threshold or 15.0,
        baseline_records=max(20, int(requests * 0.35)),
        baseline_days=0.0,
        segment_min_baseline=max(5, requests // 20),
    )


def run_demo(
    settings: Settings, requests: int, seed: int, out: TextIO, report: Path | None = None
) -> int:
    """Returns the number of alerts firing at the end; writes the HTML report to ``report``."""
    started = time.perf_counter()
    settings = demo_settings(settings, requests)
    if not settings.scrub_key:
        # The demo's traffic is synthetic; a throwaway key keeps its output quiet.
        settings = replace(settings, scrub_key=secrets.token_hex(16))
    with wiring.open_store(settings) as sessions:
        firing = _run(settings, sessions, requests, seed, out, started)
        if report is not None:
            write_report(
                sessions,
                wiring.make_judge(settings).name,
                report,
                floor=wiring.proof_floor(settings),
            )
            out.write(f"report: {report}\n")
        return firing


def _run(
    settings: Settings,
    sessions: Sessions,
    requests: int,
    seed: int,
    out: TextIO,
    started: float,
) -> int:
    pipeline = wiring.store_pipeline(settings, sessions, quiet_seconds=0)
    judge = wiring.make_judge(settings)
    config = wiring.drift_config(settings)
    sink = ListSink()
    # The worker's own jobs, run here one step at a time rather than on a schedule.
    work = worker_jobs(settings, sessions, judge, config, [sink])
    fm.setup(
        service_name=app.SERVICE,
        processors=[PipelineSpanProcessor(pipeline.submit)],
        export=False,
    )
    rng = random.Random(seed)
    half = requests // 2
    steps = [(half, 0.0, 0.0, "baseline: all traffic on " + app.STABLE_MODEL)]
    rest = requests - half
    for i in range(PHASES):
        size = rest // PHASES + (1 if i < rest % PHASES else 0)
        retriever = RETRIEVER_SHARE if i + 1 >= RETRIEVER_FROM else 0.0
        title = f"rollout step {i + 1}: 40% of traffic on {app.NEW_MODEL}"
        steps.append((size, 0.4, retriever, title))

    out.write(
        f"faithmon demo: {requests} requests into {opening.shown_url(settings.database_url)}\n\n"
    )
    try:
        for index, (size, share, retriever, title) in enumerate(steps):
            if index == RETRIEVER_FROM:  # steps[0] is the baseline
                out.write(
                    f"  and from here {retriever:.0%} of the {app.NEW_RETRIEVER_ROUTE} questions"
                    f" go to the re-indexed retriever {app.NEW_RETRIEVER_VERSION}\n"
                )
            for _ in range(size):
                app.handle(app.make_request(rng, share, retriever), rng)
            pipeline.flush_all()
            scored = work.score()
            result = _ran(work.detect())
            state = "baseline frozen" if result.baseline_ready else "building baseline"
            out.write(f"  {title:<52} sent {size:>4}, scored {scored:>4}, {state}\n")
            for alert in result.changed:
                out.write(f"      alert: {describe(alert)}\n")
    finally:
        fm.shutdown()
    broken = worker_jobs(settings, sessions, BROKEN_JUDGE, config, [sink])
    _judge_drift(sessions, work, broken, sink, out, wiring.proof_floor(settings))
    # What the worker does after scoring: a sample of the answers goes to people.
    queued = work.review()

    with sessions() as session:
        counts = stored_records.counts_by_status(session)
        firing = [a for a in store_alerts.list_alerts(session) if a.state == "firing"]
    out.write("\nrecords by status: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if counts.get("no_context"):
        out.write(
            "\n  (no_context: questions the retriever found no chunk for, such as the weather;"
            " with nothing given to the model there is nothing to judge)"
        )
    out.write("\n\n")
    _print_table(result.readings, out)
    out.write("\n")
    if firing:
        for alert in firing:
            out.write(f"FIRING  {describe(alert)}\n")
            change = alert.details.get("change_at")
            if change:
                out.write(f"        since {change}\n")
            for example in alert.details.get("examples", [])[:2]:
                # A citation alert's examples are the claims that cite the wrong chunk.
                said = example.get("miscited_claims") if alert.rule == "citation_drift" else None
                claims = "; ".join(said or example.get("unsupported_claims", []))
                out.write(f"        trace {example['trace_id']}: {claims}\n")
    else:
        out.write("no alert is firing\n")
    shown = opening.shown_url(settings.database_url)
    command = invoked_as()
    out.write(
        f"\nfinished in {time.perf_counter() - started:.1f}s. Look inside with "
        f"`{command} traces list --database-url {shown}` and "
        f"`{command} alerts list --database-url {shown}`; {queued} answers wait for people in "
        f"`{command} review queue --database-url {shown}`\n"
    )
    return len(firing)


BROKEN_JUDGE = OfflineJudge(threshold=0.0)
"""A judge configuration broken on purpose: one word of a claim missing from the
chunks makes it unsupported, so paraphrases fail."""


def _judge_drift(
    sessions: Sessions,
    work: WorkerJobs,
    broken: WorkerJobs,
    sink: ListSink,
    out: TextIO,
    floor: ProofFloor,
) -> None:
    """Sentinel runs with the configured judge, then with a broken configuration (the
    worker's jobs for each); a judge they do not prove is said to be so in one line, from
    the figures just measured."""
    out.write("\n")
    for current, title in (
        (work, f"sentinel run with {work.judge}"),
        (broken, f"swap in a broken judge: {broken.judge}"),
    ):
        told = len(sink.alerts)
        runs = current.sentinel()
        with sessions() as session:
            standing = store_sentinels.standing(session, current.judge, floor)
        for run in runs:
            verdict = f", judge {run.drift.direction}" if run.drift.drifting else ""
            if not verdict and standing.state == "proven":
                verdict = ", judge steady"
            out.write(
                f"  {title:<52} set {run.name} ({run.result.cases} cases): accuracy "
                f"{run.result.accuracy:.0%}{verdict}\n"
            )
        if standing.state != "proven":
            out.write(f"      {standing.line}\n")
        for alert in sink.alerts[told:]:
            out.write(f"      alert: {describe(alert)}\n")
    held = _ran(broken.detect())
    out.write(
        f"  production drift on the broken judge's scores: "
        f"{'held back' if held.held_back else 'checked'}, its evaluations are not trusted\n"
    )


def invoked_as(argv0: str | None = None) -> str:
    """How to run faithmon again from this shell, as the README spells it: ``faithmon``
    when that is on PATH, else the path the demo was started by (``.venv/bin/faithmon``)."""
    started = Path(argv0 if argv0 is not None else sys.argv[0])
    if started.name != "faithmon" or not started.exists():
        return "faithmon"  # python -m faithmon, or an embedding: the name will do
    found = shutil.which("faithmon")
    if found is not None and Path(found).resolve() == started.resolve():
        return "faithmon"
    try:
        near = os.path.relpath(started)
    except ValueError:  # another drive
        near = ".."
    return near if not near.startswith("..") else str(started.absolute())


def _ran(run: jobs.DriftRun | None) -> jobs.DriftRun:
    if run is None:
        # The demo's own database: only a worker pointed at it could hold the drift job.
        raise ConfigError("a worker is running drift on the demo's database; stop it first")
    return run


def _print_table(readings: tuple[drift.Reading, ...], out: TextIO) -> None:
    """Every detector, segments aligned however long their names; the unsupported rate's
    points by cause (retrieval, generation) beside it."""
    width = max([len("segment"), *(len(segment_key(r.segment) or "overall") for r in readings)])
    header = (
        f"{'segment':<{width}} {'stream':<11} {'baseline':>8} {'current':>8} {'records':>7}"
        f" {'cusum':>7} {'h':>5}  {'by cause':<17} state"
    )
    out.write(header + "\n" + "-" * len(header) + "\n")
    for r in readings:
        if r.stream != "unsupported" and r.level == "ok":
            continue  # the other streams where they have something to say
        state = r.level if r.explained_by is None else f"explained by {segment_key(r.explained_by)}"
        if r.folded:
            state = "folded into overall"
        causes = r.cause_rates if r.stream == "unsupported" else {}
        split = " ".join(f"{c[:3]} {p:.1%}" for c, p in causes.items())
        out.write(
            f"{segment_key(r.segment) or 'overall':<{width}} {r.stream:<11}"
            f" {r.baseline_rate:>8.1%} {r.rate:>8.1%} {r.records:>7} {r.statistic:>7.2f}"
            f" {r.threshold:>5.1f}  {split:<17} {state}\n"
        )
