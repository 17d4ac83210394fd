"""The contracts beside the score: citations, quotations, severity and policy.

``Checked`` wraps any judge. Before it: citation markers are cut from the answer (the
judge reads the clean answer) and policy rules run. After it: quotations are checked
by string (``quotes``), every claim is rated by the severity rules, and each claim
inherits its sentence's markers. A cited claim's citation is ``correct`` when the
chunks it cites support it: settled with no call when its verified quote lies in a
cited chunk, ``wrong`` when no chunk supports it at all, and otherwise by the same
judge with the cited chunks alone. The LLM judge is asked in the very request that
judges the claims (``judge_cited``), so citations cost it no request of their own; any
other judge, or a reply that did not say, is asked again with the cited chunks alone
(one request per set of cited chunks; a cascade's first stage settles what it can).

The rules are part of the judge configuration: non-default rules or styles add their
digests to the judge's name, so changing them starts a new configuration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..model import Chunk, Citation, Claim, Judge, Judgement, claim_supported
from . import citations as cite
from . import policy, quotes, severity
from . import text as t
from .cascade import SettlesOffline
from .rulebook import RuleSet

MISQUOTE = severity.MISQUOTE
ATTRIBUTION_WORDS = 3
"""A sentence that is a verified quotation and at most this many words more ("the
returns policy says") is supported by the quotation alone."""


@dataclass(frozen=True, slots=True)
class Contracts:
    severity: RuleSet
    policy: RuleSet
    styles: frozenset[str] = frozenset(cite.STYLES)

    @classmethod
    def load(
        cls,
        severity_rules: str | Path | None = None,
        policy_rules: str | Path | None = None,
        style: str = "all",
    ) -> Contracts:
        try:
            styles = cite.styles_of(style)
        except ValueError as exc:
            from ..errors import ConfigError

            raise ConfigError(f"FAITHMON_CITATION_STYLE: {exc}") from None
        return cls(severity.load_rules(severity_rules), policy.load_rules(policy_rules), styles)

    @property
    def suffix(self) -> str:
        parts = []
        if self.severity.digest != severity.default_rules().digest:
            parts.append(f"severity={self.severity.digest}")
        if self.policy.digest != policy.default_rules().digest:
            parts.append(f"policy={self.policy.digest}")
        if self.styles != frozenset(cite.STYLES):
            parts.append(f"citations={'+'.join(sorted(self.styles)) or 'off'}")
        return "".join(f" {p}" for p in parts)


def _sentence_of(claim: Claim, sentences: Sequence[cite.Sentence]) -> cite.Sentence | None:
    """The answer sentence a claim came from: itself, or the one sharing most words."""
    exact = t.normalise(t.strip_end(claim.text))
    for sentence in sentences:
        if t.normalise(t.strip_end(sentence.text)) == exact:
            return sentence
    words = t.content_words(claim.text) | t.numbers(claim.text)
    if not words:
        return None
    best = max(
        sentences,
        key=lambda s: len(words & (t.content_words(s.text) | t.numbers(s.text))),
        default=None,
    )
    if best is None or not words & (t.content_words(best.text) | t.numbers(best.text)):
        return None
    return best


@runtime_checkable
class CitesInOneCall(Protocol):
    """A judge that checks citations in the same request as the claims (the LLM judge)."""

    def judge_cited(
        self,
        question: str,
        chunks: Sequence[str],
        answer: str,
        cited: Mapping[str, Sequence[int]],
    ) -> Judgement: ...


MAX_NAME = 200
"""The store keeps a judge configuration's name in 200 characters."""


def bounded(name: str) -> str:
    """``name``, or a cut of it that ends in a digest of the whole when it is too long
    (a long model name and endpoint, with rules of one's own): still one name per
    configuration."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{name[: MAX_NAME - 14]}~#{digest}"


class Checked:
    """A judge with the contracts applied (see the module docstring)."""

    def __init__(self, inner: Judge, contracts: Contracts) -> None:
        self.inner = inner
        self.contracts = contracts
        self._name = bounded(f"{inner.name}{contracts.suffix}")

    @property
    def name(self) -> str:
        return self._name

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        return self.judge_sources(question, [cite.Source(c) for c in chunks], answer)

    def judge_chunks(self, question: str, chunks: Sequence[Chunk], answer: str) -> Judgement:
        """Judge a stored record's chunks: their ids, URLs and displayed numbers name them."""
        return self.judge_sources(
            question,
            [cite.source_of(c.position, c.text, c.id, c.metadata) for c in chunks],
            answer,
        )

    def judge_sources(
        self, question: str, sources: Sequence[cite.Source], answer: str
    ) -> Judgement:
        texts = [s.text for s in sources]
        marked = cite.parse(answer, sources, self.contracts.styles)
        cited = {s.text: s.cited for s in marked.sentences if s.cited}
        if cited and isinstance(self.inner, CitesInOneCall):
            judgement = self.inner.judge_cited(question, texts, marked.answer, cited)
        else:
            judgement = self.inner.judge(question, texts, marked.answer)
        return self._finish(judgement, question, texts, answer, marked, offline_only=False)

    def _finish(
        self,
        judgement: Judgement,
        question: str,
        texts: Sequence[str],
        answer: str,
        marked: cite.Marked,
        offline_only: bool,
    ) -> Judgement:
        found = policy.findings(answer, texts, self.contracts.policy, question)
        judgement = replace(
            judgement,
            judge=self.name,
            unresolved_citations=marked.unresolved,
            policy=found,
        )
        if judgement.status not in ("ok", "empty_context"):
            return judgement
        # Each claim's sentence, found once: the quotation and citation checks both ask.
        homes = [_sentence_of(c, marked.sentences) for c in judgement.claims]
        claims = [self._quoted(c, s, texts) for c, s in zip(judgement.claims, homes, strict=True)]
        claims = [severity.rated(c, self.contracts.severity) for c in claims]
        if any(s.has_markers for s in marked.sentences):
            claims = self._cite(claims, homes, question, texts, offline_only)
        else:
            claims = [replace(c, citation="none") for c in claims]
        return replace(judgement, claims=tuple(claims))

    def _quoted(self, claim: Claim, sentence: cite.Sentence | None, texts: Sequence[str]) -> Claim:
        passages = quotes.quotations(claim.text)
        if not passages:
            return claim
        allowed = list(sentence.cited) if sentence and sentence.cited else list(range(len(texts)))
        for passage in passages:
            chunk = quotes.source_of(passage, texts, allowed)
            if chunk is None:
                return replace(
                    claim,
                    verdict="contradicted",
                    chunk=None,
                    quote=passage.passage,
                    critical=True,
                    critical_rule=MISQUOTE,
                    flags=(*claim.flags, MISQUOTE),
                    rationale="The quoted passage is not in the cited source.",
                )
        rest = claim.text
        for passage in passages:
            rest = rest.replace(passage.passage, " ")
        if len(t.content_words(rest) | t.numbers(rest)) > ATTRIBUTION_WORDS:
            # The sentence says more than its quotation: the rest is the judge's to settle.
            return claim
        return replace(
            claim, verdict="supported", chunk=chunk, quote=passages[0].passage, missing=None
        )

    def _cite(
        self,
        claims: list[Claim],
        homes: Sequence[cite.Sentence | None],
        question: str,
        texts: Sequence[str],
        offline_only: bool,
    ) -> list[Claim]:
        """Each claim's citation, from the sentence it came from (``homes``)."""
        settled: list[Claim] = []
        ask: dict[tuple[int, ...], list[int]] = {}
        for number, (claim, sentence) in enumerate(zip(claims, homes, strict=True)):
            if sentence is None or not sentence.has_markers:
                settled.append(replace(claim, citation="none"))
                continue
            cited = sentence.cited
            claim = replace(claim, citations=cited)
            if not cited:
                settled.append(replace(claim, citation="unresolved"))
            elif claim.verdict in ("supported", "partial") and claim.chunk in cited:
                settled.append(replace(claim, citation="correct"))
            elif not claim_supported(claim.verdict):
                settled.append(replace(claim, citation="wrong"))
            elif claim.citation in ("correct", "wrong"):
                settled.append(claim)  # the judge said so in the same request
            else:
                ask.setdefault(cited, []).append(number)
                settled.append(claim)
        for cited, numbers in ask.items():
            verdicts = self._against(
                question, [texts[i] for i in cited], [claims[n] for n in numbers], offline_only
            )
            for n, verdict in zip(numbers, verdicts, strict=True):
                settled[n] = replace(settled[n], citation=verdict)
        return settled

    def _against(
        self, question: str, cited: Sequence[str], claims: Sequence[Claim], offline_only: bool
    ) -> list[Citation | None]:
        """Whether the cited chunks alone support each claim; None: the judge could not say."""
        answer = "\n".join(dict.fromkeys(c.text for c in claims))
        if offline_only:
            if not isinstance(self.inner, SettlesOffline):
                return [None] * len(claims)
            result = self.inner.settle_offline(question, cited, answer)
            if result is None:
                return [None] * len(claims)
        else:
            result = self.inner.judge(question, cited, answer)
        if result.status != "ok":
            return [None] * len(claims)
        out: list[Citation | None] = []
        for claim in claims:
            mine = [c for c in result.claims if _sentence_of(c, [cite.Sentence(claim.text)])]
            if not mine:
                out.append(None)
            else:
                out.append("correct" if all(claim_supported(c.verdict) for c in mine) else "wrong")
        return out


class CheckedCascade(Checked):
    """``Checked`` over a cascade: it can still settle a trace without a call."""

    def settle_offline(self, question: str, chunks: Sequence[str], answer: str) -> Judgement | None:
        return self.settle_sources(question, [cite.Source(c) for c in chunks], answer)

    def settle_sources(
        self, question: str, sources: Sequence[cite.Source], answer: str
    ) -> Judgement | None:
        assert isinstance(self.inner, SettlesOffline)
        texts = [s.text for s in sources]
        marked = cite.parse(answer, sources, self.contracts.styles)
        first = self.inner.settle_offline(question, texts, marked.answer)
        if first is None:
            return None
        return self._finish(first, question, texts, answer, marked, offline_only=True)


def checked(judge: Judge, contracts: Contracts | None = None) -> Checked:
    """``judge`` with the contracts (the default rules when none are given); a judge
    already checked is returned as it is."""
    if isinstance(judge, Checked):
        return judge
    contracts = contracts or Contracts.load()
    if isinstance(judge, SettlesOffline):
        return CheckedCascade(judge, contracts)
    return Checked(judge, contracts)
