"""Severity rules, quotations checked by string, policy findings and partial support."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithmon.errors import ConfigError
from faithmon.judge import JudgeOptions, OfflineJudge, make_judge
from faithmon.judge.contracts import Contracts, checked
from faithmon.judge.rulebook import load
from faithmon.judge.severity import default_rules, rule_for

CHUNKS = [
    "Our returns policy: “Items may be returned within 30 days of delivery.”",
    "Refunds go back to the original card within 5 business days.",
]


@pytest.mark.parametrize(
    ("claim", "rule"),
    [
        ("The plan costs €12 per user.", "amount"),
        ("It costs 40 dollars.", "amount"),
        ("Take 500 mg twice a day.", "dosage"),
        ("The cable is 3 m long.", "unit"),
        ("Annual billing saves 15%.", "percentage"),
        ("The APR is variable.", "percentage"),
        ("The offer ends on March 3.", "date"),
        ("The desk opens at 8:00.", "date"),
        ("Refunds take five business days.", "duration"),
        ("Your order number is A-99812.", "identifier"),
        ("Order #77120 shipped.", "identifier"),
        ("Quote policy no. PX7731 when you call.", "identifier"),
        ("This drug is contraindicated in pregnancy.", "safety"),
        ("Print the label from the Orders page.", None),
        ("The Nimbus Pro supports Bluetooth.", None),
        ("There are three options on the Settings screen.", None),
    ],
)
def test_each_default_rule_and_what_is_not_critical(claim: str, rule: str | None) -> None:
    assert rule_for(claim) == rule


def test_claims_record_the_rule_that_made_them_critical() -> None:
    judgement = checked(OfflineJudge()).judge(
        "q", CHUNKS, "Refunds go back to the original card within 5 business days."
    )
    [claim] = judgement.claims
    assert (claim.critical, claim.critical_rule) == (True, "duration")


def test_a_rules_file_extends_the_defaults_and_names_a_new_configuration(tmp_path: Path) -> None:
    rules = tmp_path / "severity.toml"
    rules.write_text('extends = "default"\n[[rule]]\nname = "brand"\nterms = ["Orders page"]\n')
    loaded = load(rules, "severity.toml")
    assert [r.name for r in loaded.rules][: len(default_rules().rules)] == [
        r.name for r in default_rules().rules
    ]
    assert loaded.first("Print the label from the orders page.") == "brand"
    judge = make_judge("offline", JudgeOptions(severity_rules=str(rules)))
    assert judge.name == f"{OfflineJudge().name} severity={loaded.digest}"
    [claim] = judge.judge(
        "q", ["Print it from the Orders page."], "Print it from the Orders page."
    ).claims
    assert claim.critical_rule == "brand"
    rules.write_text('extends = "default"\n[[rule]]\nname = "brand"\nterms = ["Billing page"]\n')
    assert make_judge("offline", JudgeOptions(severity_rules=str(rules))).name != judge.name


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[[rule]]\nname = 'x'\n", "needs exactly one of pattern or terms"),
        ("[[rule]]\nname = 'x'\npattern = '('\n", "bad pattern"),
        ("[[rule]]\nname = 'x'\npattern = 'a*'\n", "matches empty text"),
        ("[[rule]]\nname = 'x'\nterms = 'refund'\n", "terms must be a list"),
        ("[[rule]]\nname = 'x'\nwords = ['a']\n", "unknown key 'words'"),
        ("rule = [", "not valid TOML"),
        ("extends = 'mine'\n", "extends may only name"),
    ],
)
def test_a_broken_rules_file_is_one_clear_line(tmp_path: Path, text: str, error: str) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(text)
    with pytest.raises(ConfigError, match=error) as caught:
        Contracts.load(severity_rules=rules)
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="cannot read rules file"):
        Contracts.load(policy_rules=tmp_path / "missing.toml")


def test_a_quotation_in_curly_quotes_and_another_case_is_found() -> None:
    answer = "The policy says “ITEMS MAY BE RETURNED within 30 days of delivery”."
    [claim] = checked(OfflineJudge()).judge("q", CHUNKS, answer).claims
    assert (claim.verdict, claim.chunk) == ("supported", 0)
    assert claim.quote == "ITEMS MAY BE RETURNED within 30 days of delivery"


def test_a_misquote_is_contradicted_and_critical_with_no_judge() -> None:
    answer = 'The policy says "items may be returned within 60 days of delivery".'
    [claim] = checked(OfflineJudge()).judge("q", CHUNKS, answer).claims
    assert (claim.verdict, claim.critical, claim.critical_rule) == (
        "contradicted",
        True,
        "misquote",
    )
    assert "misquote" in claim.flags


def test_a_quotation_must_be_in_the_chunk_its_sentence_cites() -> None:
    answer = 'Refunds: "items may be returned within 30 days of delivery" [2].'
    [claim] = checked(OfflineJudge()).judge("q", CHUNKS, answer).claims
    assert claim.critical_rule == "misquote"


def test_a_short_quotation_is_left_to_the_judge() -> None:
    [claim] = checked(OfflineJudge()).judge("q", CHUNKS, 'Refunds are "quick".').claims
    assert claim.critical_rule != "misquote"


def test_policy_findings_never_change_the_score() -> None:
    chunks = ["Contact <EMAIL_aaaa1111> for refunds. Refunds take 5 business days."]
    answer = (
        "Refunds take 5 business days. Write to <EMAIL_aaaa1111> or to <EMAIL_bbbb2222>. "
        "This note is internal-only."
    )
    judge = checked(OfflineJudge())
    with_findings = judge.judge("q", chunks, answer)
    assert [(f.rule, f.text) for f in with_findings.policy] == [
        ("internal_only", "internal-only"),
        ("pii", "<EMAIL_bbbb2222>"),
    ]
    assert with_findings.faithfulness == OfflineJudge().judge("q", chunks, answer).faithfulness


def test_pii_the_chunks_contained_is_no_finding() -> None:
    chunks = ["Call the courier desk at +44 20 7946 0958 on weekdays."]
    judgement = checked(OfflineJudge()).judge("q", chunks, "Call +44 20 7946 0958 on weekdays.")
    assert judgement.policy == ()
    other = checked(OfflineJudge()).judge("q", chunks, "Call +44 20 7946 0999 on weekdays.")
    assert [f.rule for f in other.policy] == ["pii"]


def test_a_claim_with_one_fact_supported_and_one_not_is_partial() -> None:
    chunks = ["The Team plan costs 12 euros per user per month and includes priority support."]
    answer = "The Team plan includes priority support, and it adds a dedicated account manager."
    [claim] = OfflineJudge().judge("What does the Team plan include?", chunks, answer).claims
    assert claim.verdict == "partial"
    assert claim.quote and "priority support" in claim.quote
    assert claim.missing and "account manager" in claim.missing
    judgement = OfflineJudge().judge("What does the Team plan include?", chunks, answer)
    assert (judgement.faithfulness, judgement.lenient) == (0.0, 1.0)


def test_the_demo_s_domain_rules_mark_a_help_centre_s_harms() -> None:
    from faithmon.demo.run import SEVERITY_RULES

    rules = load(SEVERITY_RULES, "severity.toml")
    assert rules.first("After three failed attempts the account is paused.") == "help_centre"
    assert rules.first("Refunds go back to the original card.") == "help_centre"
    assert rules.first("Print the label from the Orders page.") is None
    assert rules.first("Standard shipping takes 3 to 5 business days.") == "duration"


def test_a_claim_that_drops_the_chunk_s_condition_is_partial() -> None:
    chunks = [
        "Express shipping arrives the next business day, only for orders placed before 14:00."
    ]
    judge = OfflineJudge()
    [claim] = judge.judge("q", chunks, "Express shipping arrives the next business day.").claims
    assert claim.verdict == "partial" and claim.quote == chunks[0]
    assert claim.missing == "without the condition “only for orders placed before 14:00”"
    kept = "Express shipping arrives the next business day for orders placed before 14:00."
    assert [c.verdict for c in judge.judge("q", chunks, kept).claims] == ["supported"]
    # A one-word answer names something; it states no rule a condition could qualify.
    named = judge.judge("q", ["Panzer was sold everywhere except for Albania."], "Panzer")
    assert [c.verdict for c in named.claims] != ["partial"]


def test_personal_data_the_user_gave_is_no_finding() -> None:
    chunks = ["We call back within one business day."]
    answer = "We will call you back at <PHONE_abcd1234> within one business day."
    judge = checked(OfflineJudge())
    assert judge.judge("Call me at <PHONE_abcd1234>, please.", chunks, answer).policy == ()
    assert [f.rule for f in judge.judge("Call me back.", chunks, answer).policy] == ["pii"]
