"""Judge cost: LLM calls and prompt tokens per trace for faithmon, RAGAS and DeepEval.

Run from the repository root::

    python bench/judge_cost.py           # 13 samples
    python bench/judge_cost.py --quick   # 4 samples
    python bench/judge_cost.py --ragtruth-limit 0   # the cascade on all of RAGTruth

The cascade (``FAITHMON_JUDGE=cascade``: the offline judge, then the LLM judge for
the claims below the bar) runs on RAGTruth (``--ragtruth``, the first
``--ragtruth-limit`` traces) against the LLM-only judge and RAGAS, through the same
server; see ``judge_cost_cascade.py`` for its figures and goals.

All three judges score the same samples against one counting OpenAI-compatible
server on 127.0.0.1, in one run:

- faithmon: ``OpenAIJudge`` in this process, one judge per sample;
- RAGAS 0.4.3 ``ragas.metrics.collections.Faithfulness`` and DeepEval 4.3.1
  ``FaithfulnessMetric`` (defaults, reason included) in a separate venv
  (``/tmp/peers-venv``, made and filled by this script if missing), driven by
  ``bench/peers/ragas_deepeval_worker.py`` in a subprocess with telemetry off.

Each client's base URL is ``http://127.0.0.1:PORT/<judge>/<sample>/v1``, so the
server logs every request under the judge and the sample that sent it. Its
estimate of prompt tokens is the same for every judge: characters / 4, rounded
up, over the text of all messages plus the compact JSON of ``response_format``
and ``tools`` when the request has them (a schema sent there is billed as prompt).
Its replies are schema-valid JSON: it reads the schema from ``response_format``
(or, for JSON mode, the first JSON schema in the messages) and builds an instance,
filling the fields the libraries look at: every statement, claim and verdict is
supported, and faithmon's quote is the first 20 characters of chunk C0.

Goals (from the issue): faithmon makes at most 1 call per trace and sends at
most 0.3 times RAGAS's prompt tokens per trace (mean over the samples). The
table goes to stdout, everything measured to ``bench/results/judge_cost.json``.
If the peers cannot be installed or run, the script says why, prints faithmon's
figures alone and still exits 0.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import judge_cost_cascade
from common import RESULTS_DIR, number, ratio, write_results
from judge_cost_mock import CountingJudge
from judge_cost_samples import QUICK_IDS, SAMPLES, Sample
from judge_cost_table import CALLS_GOAL, TOKENS_GOAL, Row, Summary, per_sample_table, table
from loopback import serve_in_thread
from peers.ragas_deepeval import DEFAULT_VENV, PEERS, Peers, run_peer, setup_peers

from faithmon.judge.openai_judge import OpenAIJudge, OpenAIJudgeConfig

RESULTS = RESULTS_DIR / "judge_cost.json"
FAITHMON_MODEL = "bench-judge"


def run_faithmon(mock: CountingJudge, base: str, samples: Sequence[Sample]) -> list[Row]:
    rows = []
    for sample in samples:
        judge = OpenAIJudge(
            OpenAIJudgeConfig(
                model=FAITHMON_MODEL, base_url=f"{base}/faithmon/{sample.id}/v1", api_key="x"
            )
        )
        judgement = judge.judge(sample.question, sample.chunks, sample.answer)
        logged = mock.requests_of("faithmon", sample.id)
        rows.append(
            Row(
                sample=sample.id,
                calls=len(logged),
                prompt_tokens=sum(r.prompt_tokens for r in logged),
                score=judgement.faithfulness,
                error=judgement.error,
                extra={
                    "status": judgement.status,
                    "usage_calls": judgement.usage.calls,
                    "usage_prompt_tokens": judgement.usage.prompt_tokens,
                    "verdicts": [c.verdict for c in judgement.claims],
                    "flags": sorted({f for c in judgement.claims for f in c.flags}),
                },
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"only samples {QUICK_IDS}")
    parser.add_argument(
        "--peers-venv",
        type=Path,
        default=DEFAULT_VENV,
        help=f"the venv with ragas and deepeval (made if missing; default {DEFAULT_VENV})",
    )
    parser.add_argument("--no-peers", action="store_true", help="measure faithmon alone")
    parser.add_argument(
        "--ragtruth", type=Path, default=judge_cost_cascade.RAGTRUTH, help="RAGTruth JSONL"
    )
    parser.add_argument(
        "--ragtruth-limit", type=int, default=200, help="RAGTruth traces for the cascade; 0: all"
    )
    parser.add_argument("--cascade-bar", type=float, default=0.8, help="the cascade's bar")
    parser.add_argument("--no-cascade", action="store_true", help="skip the cascade on RAGTruth")
    args = parser.parse_args(argv)
    samples = [s for s in SAMPLES if not args.quick or s.id in QUICK_IDS]
    labelled = []
    if not args.no_cascade and args.ragtruth.exists():
        labelled = judge_cost_cascade.load(args.ragtruth, args.ragtruth_limit or None)

    mock = CountingJudge({s.id: s for s in [*samples, *(item.sample for item in labelled)]})
    cascade: dict[str, object] | None = None
    ragas_on_ragtruth: list[Row] = []
    notes: list[str] = []
    peer_rows: dict[str, list[Row]] = {}
    peers = Peers(python=None, problem="--no-peers given")
    with serve_in_thread(mock.server.app) as port:
        base = f"http://127.0.0.1:{port}"
        faithmon_rows = run_faithmon(mock, base, samples)
        if not args.no_peers:
            peers = setup_peers(args.peers_venv)
        if peers.problem is None:
            for judge in PEERS:
                rows, problem = run_peer(peers, judge, mock, base, samples)
                if problem is None:
                    peer_rows[judge] = rows
                else:
                    notes.append(f"{judge} not measured: {problem}")
        else:
            notes.append(f"peers not measured: {peers.problem}")
        if labelled:
            cascade = judge_cost_cascade.run(mock, base, labelled, args.cascade_bar, FAITHMON_MODEL)
            if peers.problem is None:
                rows, problem = run_peer(
                    peers, "ragas", mock, base, [item.sample for item in labelled]
                )
                ragas_on_ragtruth = rows
                if problem is not None:
                    notes.append(f"ragas on RAGTruth not measured: {problem}")

    summaries = [Summary("faithmon", tuple(faithmon_rows))]
    for judge in PEERS:
        if judge in peer_rows:
            label = f"{judge} {peers.versions.get(judge) or ''}".strip()
            summaries.append(Summary(label, tuple(peer_rows[judge])))
    baseline = next((s for s in summaries if s.name.startswith("ragas")), None)

    header = (
        f"judge cost: {len(samples)} samples, one counting server on 127.0.0.1; "
        "≈tokens = ceil(characters / 4) over all message text + compact JSON of "
        "response_format/tools, the same estimator for every judge"
    )
    print(table(summaries, baseline, header))
    print()
    print(per_sample_table(samples, summaries))
    print()
    faithmon = summaries[0]
    called = [r for r in faithmon.rows if r.calls]
    mismatch = [
        r.sample
        for r in faithmon.rows
        if r.extra["usage_calls"] != r.calls or r.extra["usage_prompt_tokens"] != r.prompt_tokens
    ]
    zero = len(faithmon.rows) - len(called)
    note = (
        f"faithmon: {zero} of {len(faithmon.rows)} traces made no call (every sentence "
        "verbatim in a chunk or a non-claim)"
    )
    if called:
        called_mean = statistics.fmean(r.prompt_tokens for r in called)
        note += f"; the {len(called)} traces that called sent {number(called_mean)} ≈tok each"
        if baseline:
            note += f" = {ratio(called_mean / baseline.tokens_mean)} RAGAS's mean"
    notes.append(note)
    notes.append(
        "faithmon Judgement.usage agrees with the server log on every sample"
        if not mismatch
        else f"faithmon Judgement.usage disagrees with the server log on {mismatch}"
    )
    flagged = [r.sample for r in faithmon.rows if r.extra["flags"] or r.error]
    if flagged:
        notes.append(f"faithmon claims flagged or errors on {flagged}")
    for s in summaries:
        if s.errors:
            notes.append(f"{s.name}: {s.errors} samples raised (see the JSON)")
    if mock.stray:
        notes.append(f"stray requests to the server: {mock.stray[:5]}")
    notes += [f"peers: {n}" for n in peers.notes]
    notes.append(
        "the mock marks every claim supported: calls and prompt tokens are the cost of the "
        "judges' own protocols; completion tokens depend on a real model and are only logged"
    )
    if cascade is not None:
        print()
        print(
            judge_cost_cascade.report(
                cascade,
                statistics.fmean(r.calls for r in ragas_on_ragtruth) if ragas_on_ragtruth else None,
                (
                    statistics.fmean(r.prompt_tokens for r in ragas_on_ragtruth)
                    if ragas_on_ragtruth
                    else None
                ),
            )
        )
        if ragas_on_ragtruth:
            cascade["ragas_calls_mean"] = statistics.fmean(r.calls for r in ragas_on_ragtruth)
            cascade["ragas_prompt_tokens_mean"] = statistics.fmean(
                r.prompt_tokens for r in ragas_on_ragtruth
            )
    elif not args.no_cascade:
        notes.append(f"cascade not measured: {args.ragtruth} is missing")
    print()
    for n in notes:
        print(f"- {n}")

    steps: dict[str, dict[str, list[int]]] = {}
    for r in mock.log:
        steps.setdefault(r.judge, {}).setdefault(r.step, []).append(r.prompt_tokens)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "python": platform.python_version(),
        "estimator": "prompt tokens = ceil(chars/4) over all message text plus compact JSON "
        "of response_format and tools; completion tokens likewise over the mock's reply",
        "samples": [s.as_json() for s in samples],
        "peers": {
            "venv": str(args.peers_venv),
            "versions": peers.versions,
            "notes": peers.notes,
            "problem": peers.problem,
        },
        "judges": {
            s.name: {
                "calls_mean": s.calls_mean,
                "calls_max": s.calls_max,
                "prompt_tokens_mean": s.tokens_mean,
                "prompt_tokens_min": min(r.prompt_tokens for r in s.rows),
                "prompt_tokens_max": max(r.prompt_tokens for r in s.rows),
                "prompt_tokens_vs_ragas": (
                    s.tokens_mean / baseline.tokens_mean if baseline else None
                ),
                "rows": [r.as_json() for r in s.rows],
            }
            for s in summaries
        },
        "steps_mean_prompt_tokens": {
            judge: {step: statistics.fmean(v) for step, v in by_step.items()}
            for judge, by_step in steps.items()
        },
        "goals": {
            "faithmon_calls_max": faithmon.calls_max,
            "calls_met": faithmon.calls_max <= CALLS_GOAL,
            "tokens_ratio": faithmon.tokens_mean / baseline.tokens_mean if baseline else None,
            "tokens_met": (
                faithmon.tokens_mean / baseline.tokens_mean <= TOKENS_GOAL if baseline else None
            ),
        },
        "notes": notes,
        "cascade_ragtruth": cascade,
        "requests": [r.as_json() for r in mock.log if not r.sample.startswith("rt")],
        "stray": mock.stray,
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
