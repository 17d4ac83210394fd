"""``policy_violation`` signals: the most concentrated segment raises, the segments it
covers are explained, partitions stay apart, and an open alert with no findings left
gets an ok signal; the words sinks and the CLI print of it."""

from __future__ import annotations

from datetime import timedelta

from faithmon.alerts import describe, example_words
from faithmon.alerts.rules_templates import sample_context
from faithmon.alerts.violations import RULE, violation_signals
from faithmon.model import Alert, RuleCount, SegmentFindings
from tests.timing import days_ago

HOUR = timedelta(hours=1)
AT = days_ago(1)


def found(segment: dict[str, str], root: str, evaluations: int, *ids: int) -> SegmentFindings:
    return SegmentFindings(
        segment=segment,
        root=root,
        evaluations=evaluations,
        flagged=frozenset(ids),
        rules=(RuleCount("pii", len(ids), len(ids)),),
        examples=tuple((f"trace-{i}", ("pii",)) for i in ids),
    )


def test_the_most_concentrated_segment_raises_and_explains_the_rest() -> None:
    """Route a (2 of 10 flagged) raises; its model and overall, holding the same leaks
    among more answers, are explained by it; route b's leak is its own. Another tenant's
    overall is never explained by this tenant's routes."""
    acme = "tenant=acme"
    signals = violation_signals(
        [
            found({"tenant": "acme"}, acme, 100, 1, 2, 3),
            found({"tenant": "acme", "model": "m1"}, acme, 60, 1, 2),
            found({"tenant": "acme", "route": "a"}, acme, 10, 1, 2),
            found({"tenant": "acme", "route": "b"}, acme, 50, 3),
            found({"tenant": "globex"}, "tenant=globex", 100, 9),
        ],
        [],
        HOUR,
    )

    levels = {
        ",".join(sorted(s.segment.values())): (s.level, s.details.get("explained_by"))
        for s in signals
    }
    assert levels == {
        "a,acme": ("firing", None),
        "acme,b": ("firing", None),
        "acme,m1": ("ok", {"tenant": "acme", "route": "a"}),
        "acme": ("ok", {"tenant": "acme", "route": "a"}),
        "globex": ("firing", None),
    }
    assert all(s.rule == RULE and s.severity == "critical" for s in signals)


def test_an_open_alert_without_findings_gets_an_ok_signal() -> None:
    """The window passed without findings in route a: its open alert is told ok."""
    alert = Alert(RULE, {"route": "a"}, "firing", "critical", AT, AT, details={"with_findings": 2})

    (signal,) = violation_signals([], [alert], HOUR)

    assert (signal.segment, signal.level) == ({"route": "a"}, "ok")
    assert signal.details["with_findings"] == 0


def test_the_words_name_rules_and_counts_never_findings() -> None:
    """describe() and an example's line say which rules hit how many answers."""
    context = sample_context(RULE)
    alert = Alert(RULE, {"route": "a"}, "firing", "critical", AT, AT, details=context["details"])

    assert describe(alert) == (
        "policy_violation [firing] route=a: 3 of 240 answers in the last 1.0 h carry policy"
        " findings (pii 3)"
    )
    assert example_words(alert.details["examples"][0]) == "policy: pii"
    assert context["current"]["rate"] == 0.0125 and context["baseline"]["rate"] is None
    assert example_words({"trace_id": "t", "kind": "false_acceptance", "claims": []}) == ""
    assert example_words({"unsupported_claims": [], "miscited_claims": ["x"]}) == "miscited: x"
