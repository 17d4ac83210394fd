"""Agreement and calibration figures against values computed by hand on small fixtures,
including the correction for how the queue sampled (weights 1 / inclusion probability)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from faithmon.judge.offline import OfflineJudge
from faithmon.model import Claim, Judgement
from faithmon.model.judgement import OVERRULED_OFFLINE
from faithmon.model.review import Reviewed
from faithmon.review.agreement import agreement, binary, cohen_kappa, wilson
from faithmon.review.calibrate import calibrate, shortfall
from faithmon.review.queue import QueuePolicy, pick
from tests.timing import days_ago

T = days_ago(1)


def item(judge: str, human: str, p: float, segment: str = "m1") -> Reviewed:
    return Reviewed(
        judge="j",
        judge_verdicts=(judge,),
        labels={"ann": {0: human}},
        inclusion_probability=p,
        segment={"model": segment},
    )


# Answer and claim level alike (one claim each): judge pass/human pass weighs 2, judge
# pass/human fail 2 (a false acceptance), judge fail/human fail 1 + 1.
FIXTURE = [
    item("supported", "supported", 0.5),
    item("supported", "contradicted", 0.5),
    item("unsupported", "not_verifiable", 1.0, "m2"),
    item("contradicted", "unsupported", 1.0, "m2"),
]


def test_weighted_agreement_by_hand() -> None:
    """po = 4/6, pe = (4·2 + 2·4)/36, κ = 0.4 (unweighted it would be 0.5); false
    acceptance 2/4 (unweighted 1/3); balanced accuracy (0.5 + 1) / 2."""
    figures = agreement(FIXTURE, ["model"])
    (judge,) = figures["judges"]
    answer = judge["answer_level"]
    assert answer["kappa"] == 0.4
    assert answer["false_acceptance"]["rate"] == 0.5 and answer["false_acceptance"]["n"] == 3
    assert answer["false_rejection"]["rate"] == 0.0 and answer["false_rejection"]["n"] == 1
    assert answer["balanced_accuracy"] == 0.75
    assert answer["n"] == 4 and answer["effective_n"] == 3.6  # 6² / (4 + 4 + 1 + 1)
    assert answer["confusion"] == {
        "judge_pass_human_pass": 2.0,
        "judge_pass_human_fail": 2.0,
        "judge_fail_human_pass": 0.0,
        "judge_fail_human_fail": 2.0,
    }
    # κ ± 1.96·sqrt(po(1 - po) / (n_eff (1 - pe)²)) = 0.4 ± 0.8765, clipped at 1.
    assert answer["ci95"] == [-0.4765, 1.0]
    assert judge["claim_level"]["kappa"] == 0.4
    unweighted = binary([(j, h, 1.0) for j, h, _ in [(True, True, 0), (True, False, 0)]])
    assert unweighted["false_acceptance"]["rate"] == 1.0
    plain = agreement([item(i.judge_verdicts[0], i.first()[0], 1.0) for i in FIXTURE], [])
    assert plain["judges"][0]["answer_level"]["kappa"] == 0.5
    m2 = next(s for s in judge["segments"] if s["segment"] == "model=m2")
    assert m2["answer_level"]["false_acceptance"]["rate"] == 0.0


def test_kappa_between_reviewers_by_hand() -> None:
    """Pairs (s, s), (u, c), (s, s): po = 2/3, pe = 4/9, κ = 0.4; single reviews don't count."""
    two = Reviewed(
        judge="j",
        judge_verdicts=("supported", "unsupported"),
        labels={
            "ann": {0: "supported", 1: "unsupported"},
            "bo": {0: "supported", 1: "contradicted"},
        },
    )
    other = Reviewed(
        judge="j",
        judge_verdicts=("supported",),
        labels={"ann": {0: "supported"}, "bo": {0: "supported"}},
    )
    assert agreement([two, other, *FIXTURE], [])["reviewers"] == {"kappa": 0.4, "n": 3}


def test_kappa_and_wilson_edges() -> None:
    """One category only: κ is undefined, not 1; Wilson's interval of 0 of 10 by hand."""
    assert cohen_kappa([("a", "a", 1.0)] * 3)[0] is None
    low, high = wilson(0.0, 10) or [0, 0]
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)


POINTS = [
    (1.0, True, 1.0),
    (1.0, False, 2.0),
    (0.8, True, 1.0),
    (0.5, False, 1.0),
    (0.5, True, 1.0),
]


def test_calibration_by_hand() -> None:
    """Failed answers weigh 3, passed 3. t = 0.5: FA 3/3, FR 0; t = 0.8: FA 2/3, FR 1/3;
    t = 1: FA 2/3, FR 2/3. Under FR ≤ 0.4 the best is 0.8; with no bound on rejection it is
    still 0.8, never a threshold above 1 that would fail every answer."""
    found = calibrate(POINTS, max_false_rejection=0.4, guard=0.05)
    assert found is not None
    assert (found.threshold, found.guard_low, found.guard_high) == (0.8, 0.75, 0.85)
    assert (found.false_acceptance, found.false_rejection) == (0.6667, 0.3333)
    assert "within 40%" in found.rationale and found.n == 5
    strict = calibrate(POINTS, max_false_rejection=0.0, guard=0.05)
    assert strict is not None and (strict.threshold, strict.false_acceptance) == (0.5, 1.0)
    loose = calibrate(POINTS, max_false_rejection=1.0, guard=0.05)
    assert loose is not None and (loose.threshold, loose.false_acceptance) == (0.8, 0.6667)
    assert calibrate([], 0.1, 0.05) is None


def test_a_threshold_waits_for_enough_answers_and_one_the_reviewers_passed() -> None:
    """Five answers carry a threshold under a minimum of five, not of six; answers the
    reviewers all failed carry none, as no score separates them."""
    assert shortfall(POINTS, 5) is None
    assert shortfall(POINTS, 6) == "5 of the 6 labelled answers a threshold needs"
    failed = [(score, False, w) for score, _, w in POINTS]
    assert shortfall(failed, 5) == (
        "the reviewers passed none of its 5 answers: no score separates them"
    )


def judgement(*verdicts: str, critical: bool = False, flags: tuple[str, ...] = ()) -> Judgement:
    claims = tuple(
        Claim(f"c{i}", v, critical=critical, flags=flags)  # type: ignore[arg-type]
        for i, v in enumerate(verdicts)
    )
    return Judgement(OfflineJudge().name, "ok", claims)


def test_the_queue_picks_by_stratum() -> None:
    """Critical and overruled always, with probability 1; low and high scores at their
    shares; nothing without a score; the same pick for the same trace."""
    policy = QueuePolicy(sample_rate=0.0, low_share=0.0, double_share=0.0)
    critical = pick("a" * 32, judgement("supported", "unsupported", critical=True), policy)
    assert critical is not None and (critical.reason, critical.priority) == ("critical", 0)
    assert critical.inclusion_probability == 1.0 and critical.reviews == 1
    overruled = pick("b" * 32, judgement("supported", flags=(OVERRULED_OFFLINE,)), policy)
    assert overruled is not None and overruled.reason == "cascade_overruled"
    assert pick("c" * 32, judgement("unsupported"), policy) is None
    assert pick("c" * 32, judgement("supported"), policy) is None
    assert pick("d" * 32, Judgement("j", "judge_error"), QueuePolicy(sample_rate=1)) is None
    everything = QueuePolicy(sample_rate=1.0, double_share=1.0)
    high = pick("e" * 32, judgement("supported"), everything)
    assert high is not None and (high.reason, high.inclusion_probability, high.reviews) == (
        "high_score",
        1.0,
        2,
    )
    shares = QueuePolicy(sample_rate=0.1, low_share=0.5)
    picked = [pick(f"{n:032x}", judgement("supported"), shares) for n in range(2000)]
    chosen = [p for p in picked if p is not None]
    assert 150 < len(chosen) < 250 and all(p.inclusion_probability == 0.1 for p in chosen)
    assert picked == [pick(f"{n:032x}", judgement("supported"), shares) for n in range(2000)]


def test_disagreement_fires_under_the_bound_with_the_worst_examples() -> None:
    """κ 0.4 over 4 answers: under a 0.5 bound with 4 labels it fires, the false
    acceptance first; with a minimum of 5 answers, or a bound of 0.3, it does not."""
    from faithmon.alerts.lifecycle import describe
    from faithmon.model import Alert
    from faithmon.review.alerting import disagreement_signal

    items = [replace(i, trace_id=f"t{n}") for n, i in enumerate(FIXTURE)]
    signal = disagreement_signal("j", items, min_kappa=0.5, min_labels=4)
    assert signal.level == "firing" and signal.segment == {"judge": "j"}
    assert signal.details["kappa"] == 0.4 and signal.details["answers"] == 4
    (example,) = signal.details["examples"]
    assert example == {
        "trace_id": "t1",
        "kind": "false_acceptance",
        "claims": [{"index": 0, "judge": "supported", "reviewer": "contradicted"}],
    }
    assert disagreement_signal("j", items, 0.5, 5).level == "ok"
    assert disagreement_signal("j", items, 0.3, 4).level == "ok"
    assert disagreement_signal("other", items, 0.5, 4).level == "ok"
    alert = Alert(
        "judge_disagreement", {"judge": "j"}, "firing", "warning", T, T, details=signal.details
    )
    assert "kappa 0.4 over 4 reviewed answers" in describe(alert)


def test_the_guard_band_sends_close_scores_to_people() -> None:
    """A score inside the threshold's guard band is queued with probability 1; outside it,
    the score's own stratum applies."""
    nothing = QueuePolicy(sample_rate=0.0, low_share=0.0)
    half = judgement("supported", "unsupported")
    banded = pick("f" * 32, half, nothing, band=(0.45, 0.55))
    assert banded is not None and (banded.reason, banded.inclusion_probability) == (
        "guard_band",
        1.0,
    )
    assert pick("f" * 32, half, nothing, band=(0.6, 0.7)) is None


def test_the_shape_of_a_reviewers_labels() -> None:
    """A claim once, or split into parts 0..n-1 with their texts, or merged with others
    under one verdict; a split claim reads as its first failing part."""
    from faithmon.model.review import ClaimLabel, combined, shape_problem

    whole = [ClaimLabel(0, "supported"), ClaimLabel(1, "unsupported")]
    split = [
        ClaimLabel(0, "supported", part=0, text="a"),
        ClaimLabel(0, "unsupported", part=1, text="b"),
    ]
    merge = [ClaimLabel(i, "contradicted", merged=(0, 1), text="ab") for i in (0, 1)]
    assert shape_problem(whole, 2) is None
    assert shape_problem(split, 2) is None and shape_problem(merge, 2) is None
    assert (
        shape_problem([ClaimLabel(2, "supported")], 2) == "claim 2 does not exist (claims: 0 to 1)"
    )
    assert shape_problem([*whole, ClaimLabel(1, "supported")], 2) == "claim 1 is labelled twice"
    assert shape_problem([split[1]], 2) == "the parts of claim 0 must be numbered 0 to 0"
    assert (
        shape_problem([split[0], replace(split[1], text=" ")], 2)
        == "each part of claim 0 needs its text"
    )
    assert shape_problem(merge[:1], 2) == "the merge of claims 0+1 misses claim 1"
    assert shape_problem([merge[0], replace(merge[1], verdict="supported")], 2) == (
        "merged claims 0+1 need one verdict"
    )
    assert shape_problem([*merge, ClaimLabel(0, "supported")], 2) == "claim 0 is labelled twice"
    assert combined([(1, "unsupported"), (0, "supported")]) == "unsupported"
    assert combined([(0, "supported"), (1, "supported")]) == "supported"
