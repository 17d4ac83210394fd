"""The LLM judge: any OpenAI-compatible endpoint through the ``openai`` client.

One call per trace for every sentence the deterministic pre-checks leave open
(or two, decompose then verify, in ``two_call`` mode). Replies climb a ladder:
strict JSON schema, then JSON mode, then plain text parsed tolerantly, then one
short repair call carrying only the bad output and the error. Every quote is
verified against its chunk. The same call rates the answer's context and answer
relevance and names the cause of an unfaithful answer (``relevance_of``); where no
call asks (nothing left to judge, an empty context, ``two_call`` mode) the offline
judge's word measures say them. One retry layer lives here (the client's own is
off): up to ``max_attempts`` with jittered backoff honouring ``Retry-After``
on 408, 429, 5xx, timeouts and connection errors; 400, 401, 403 and exhausted
quota are permanent. A failure is a ``judge_error`` with its cause, never a score.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, get_args
from urllib.parse import urlparse

from openai import OpenAI

from ..model import Citation, Claim, Judgement, Verdict, claim_supported
from ..model.judgement import Abstention, Cause, Relevance
from . import prompts
from . import relevance as lexical
from . import text as t
from .cache import VerdictCache
from .openai_calls import CallUsage, JudgeFailure, RateLimiter, RetryLayer
from .openai_config import OpenAIJudgeConfig
from .openai_ladder import Ladder
from .precheck import Prepared, is_critical, mark_cited, prepare
from .verify import SchemaError, verify

NOT_JUDGED = "not_judged"

_CAUSES: dict[str, Cause] = {c: c for c in get_args(Cause)}
_ABSTENTIONS: dict[str, Abstention] = {a: a for a in get_args(Abstention)}

Judged = tuple[tuple[Claim, ...], Relevance | None]
"""What one request came to: the claims it judged, and the relevance it gave (None in
two-call mode, which does not ask)."""


def relevance_of(reply: Mapping[str, Any], question: str) -> Relevance | None:
    """A reply's answer-level fields, each read on its own: a number off the 0-1 scale
    (a model answering on another scale is not guessed at), a word outside its
    enumeration or a field left out is None, and never voids the claims beside it. None
    without a question, as the offline measure: there is nothing to be relevant to."""
    if not question.strip():
        return None
    found = Relevance(
        context_relevance=_scale(reply.get("context_relevance")),
        answer_relevance=_scale(reply.get("answer_relevance")),
        cause=_CAUSES.get(_word(reply.get("cause"))),
        abstention=_ABSTENTIONS.get(_word(reply.get("abstention"))),
    )
    return None if found == Relevance() else found


def _scale(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return round(number, 4) if 0.0 <= number <= 1.0 else None  # NaN fails too


def _word(value: object) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


class OpenAIJudge:
    """Judge with an LLM behind an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, config: OpenAIJudgeConfig, client: OpenAI | None = None) -> None:
        self.config = config
        self._client = client or OpenAI(
            api_key=config.api_key,
            base_url=config.base_url,
            max_retries=0,  # the one retry layer is ours
            timeout=config.timeout,
        )
        retries = RetryLayer(
            config.max_attempts,
            config.backoff,
            RateLimiter(config.requests_per_minute),
            threading.BoundedSemaphore(config.max_concurrency),
        )
        self._ladder = Ladder(self._client, config, retries)
        self._cache: VerdictCache[Judged] = VerdictCache(config.cache_entries)
        host = urlparse(str(self._client.base_url)).netloc or "default"
        suffix = "/2call" if config.mode == "two_call" else ""
        self._name = (
            f"openai:{config.model}@{host}/{prompts.PROMPT_ID}#{prompts.PROMPT_HASH}{suffix}"
        )

    @property
    def name(self) -> str:
        """The judge configuration's fingerprint: kind, model, endpoint, prompt id and hash."""
        return self._name

    def _finisher(self, started: float, usage: CallUsage) -> Callable[..., Judgement]:
        """How a judgement of this call ends: its status and claims, the usage and time."""

        def done(status: Any, claims: Sequence[Claim] = (), **extra: Any) -> Judgement:
            return Judgement(
                judge=self.name,
                status=status,
                claims=tuple(claims),
                usage=usage.frozen(),
                latency_ms=(time.perf_counter() - started) * 1000,
                **extra,
            )

        return done

    # -- the Judge protocol ------------------------------------------------

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        usage = CallUsage()
        prepared = prepare(chunks, answer)

        done = self._finisher(started, usage)

        if not prepared.has_claims:
            return _measured(question, chunks, answer, done("no_claims"))
        if not any(chunk.strip() for chunk in chunks):
            claims = [
                Claim(s, "unsupported", critical=is_critical(s))
                for i, s in enumerate(prepared.sentences)
                if i in prepared.resolved or i in prepared.targets
            ]
            return _measured(question, chunks, answer, done("empty_context", claims))
        if not prepared.targets:
            settled = [prepared.resolved[i] for i in sorted(prepared.resolved)]
            return _measured(question, chunks, answer, done("ok", settled))
        return self._judge_prepared(question, chunks, prepared, answer, done, usage)

    def judge_cited(
        self,
        question: str,
        chunks: Sequence[str],
        answer: str,
        cited: Mapping[str, Sequence[int]],
    ) -> Judgement:
        """``judge``, also asking in the same request whether each cited sentence's chunks
        (``cited``: sentence → chunk indices) support it on their own; its claims come back
        with ``citation`` where the reply said. A sentence the pre-checks found verbatim in
        a chunk it does not cite is asked about for its citation alone. Two-call mode asks
        nothing more (the caller checks citations itself)."""
        if self.config.mode == "two_call" or not cited:
            return self.judge(question, chunks, answer)
        started = time.perf_counter()
        usage = CallUsage()
        prepared = mark_cited(prepare(chunks, answer), cited)
        done = self._finisher(started, usage)
        if not prepared.has_claims or not any(chunk.strip() for chunk in chunks):
            return self.judge(question, chunks, answer)
        if not prepared.targets and not prepared.recheck:
            settled = [prepared.resolved[i] for i in sorted(prepared.resolved)]
            return _measured(question, chunks, answer, done("ok", settled))
        return self._judge_prepared(question, chunks, prepared, answer, done, usage)

    def judge_claims(
        self, question: str, chunks: Sequence[str], sentences: Sequence[str]
    ) -> Judgement:
        """Judge the given claim sentences, and only those, against the chunks: one call
        (two in ``two_call`` mode) with the context sent once, no pre-checks.

        A cascade's second stage: the first settled the rest of the answer, which the
        request does not carry. Quotes are verified, and retries, the rate limit and
        failures are those of ``judge``.
        """
        started = time.perf_counter()
        usage = CallUsage()
        given = [s for s in sentences if s.strip()]
        prepared = Prepared(given, targets=list(range(len(given))))

        done = self._finisher(started, usage)

        if not given:
            return done("no_claims")
        if not any(chunk.strip() for chunk in chunks):
            return done(
                "empty_context", [Claim(s, "unsupported", critical=is_critical(s)) for s in given]
            )
        return self._judge_prepared(question, chunks, prepared, None, done, usage, claims_only=True)

    def _judge_prepared(
        self,
        question: str,
        chunks: Sequence[str],
        prepared: Prepared,
        answer: str | None,
        done: Callable[..., Judgement],
        usage: CallUsage,
        claims_only: bool = False,
    ) -> Judgement:
        """Judge ``prepared.targets`` (cached), then put every claim in sentence order; the
        relevance is the reply's, its cause settled by the claims of the whole answer."""
        key = self._cache_key(
            question,
            chunks,
            answer if answer is not None else "\n".join(prepared.sentences),
            claims_only,
            prepared.cites,
        )
        cached = self._cache.get(key)
        if cached is None:
            deadline = time.monotonic() + self.config.deadline
            try:
                judged = self._judge_targets(question, chunks, prepared, usage, deadline)
            except JudgeFailure as failure:
                blocks = failure.cause.startswith(("HTTP 401", "HTTP 403", "insufficient_quota"))
                return done(
                    "judge_error",
                    error=failure.cause,
                    retryable=failure.retryable,
                    raw=failure.raw,
                    blocks_judge=blocks,
                )
            self._cache.put(key, judged)
            cached = judged
        judged_claims, measured = cached
        by_sentence: dict[int, list[Claim]] = {i: [c] for i, c in prepared.resolved.items()}
        for claim in judged_claims:
            index = prepared.sentences.index(claim.text) if claim.text in prepared.sentences else -1
            if index in prepared.recheck:
                # Asked for its citation alone: the pre-checks' verdict stands.
                stood = by_sentence[index][0]
                if claim.citation is not None and stood.citation != "wrong":
                    by_sentence[index] = [replace(stood, citation=claim.citation)]
                continue
            by_sentence.setdefault(index, []).append(claim)
        ordered = [c for i in sorted(by_sentence) for c in by_sentence[i]]
        if answer is not None and self.config.mode == "two_call":
            # Its requests do not ask; a cascade's stage (no answer) leaves it to the first.
            return _measured(question, chunks, answer, done("ok", ordered))
        return done("ok", ordered).with_relevance(measured)

    # -- one or two calls ------------------------------------------------------

    def _judge_targets(
        self,
        question: str,
        chunks: Sequence[str],
        prepared: Prepared,
        usage: CallUsage,
        deadline: float,
    ) -> Judged:
        if self.config.mode == "two_call":
            return self._two_calls(question, chunks, prepared, usage, deadline), None
        asked = sorted({*prepared.targets, *prepared.recheck})
        message = prompts.claims_message(
            question, chunks, prepared.sentences, asked, prepared.cites
        )

        def claims_from(reply: dict[str, Any]) -> Judged:
            claims = []
            for item in reply["claims"]:
                sentence = int(item["sentence"])
                if sentence not in asked:
                    raise SchemaError(f"claim for sentence S{sentence}, which was not asked")
                claim = self._claim(item, prepared.sentences[sentence], item["claim"])
                if sentence in prepared.cites and isinstance(item.get("cited"), bool):
                    claim = replace(claim, citation="correct" if item["cited"] else "wrong")
                if sentence in prepared.recheck:
                    # Only its citation was asked: never a verdict, so never verified.
                    recheck.append(replace(claim, verdict="unsupported", chunk=None))
                    continue
                claims.append(claim)
            if not claims and not recheck:
                raise ValueError("no claims for the sentences asked")
            # A sentence the reply skipped is not judged supported: it counts as
            # unsupported, flagged, rather than vanishing from the score.
            answered = {c.text for c in claims}
            for index in prepared.targets:
                skipped = prepared.sentences[index]
                if skipped not in answered:
                    claims.append(
                        Claim(
                            skipped,
                            "unsupported",
                            critical=is_critical(skipped),
                            flags=(NOT_JUDGED,),
                        )
                    )
            # A sentence asked again for its citation is correct only when every claim
            # the reply made of it is.
            for index in prepared.recheck:
                mine = [c.citation for c in recheck if c.text == prepared.sentences[index]]
                if mine and None not in mine:
                    citation: Citation = "correct" if set(mine) == {"correct"} else "wrong"
                    claims.append(
                        Claim(prepared.sentences[index], "unsupported", citation=citation)
                    )
            return verify(claims, chunks), relevance_of(reply, question)

        recheck: list[Claim] = []
        return self._ladder.structured(
            prompts.SYSTEM, message, prompts.CLAIMS_SCHEMA, "claims", usage, deadline, claims_from
        )

    def _two_calls(
        self,
        question: str,
        chunks: Sequence[str],
        prepared: Prepared,
        usage: CallUsage,
        deadline: float,
    ) -> tuple[Claim, ...]:
        message = prompts.decompose_message(question, prepared.sentences, prepared.targets)

        def pending_from(reply: dict[str, Any]) -> list[tuple[str, str]]:
            pending = []
            for item in reply["claims"]:
                sentence = int(item["sentence"])
                if sentence not in prepared.targets:
                    raise SchemaError(f"claim for sentence S{sentence}, which was not asked")
                pending.append((prepared.sentences[sentence], str(item["claim"])))
            if not pending:
                raise ValueError("no claims for the sentences asked")
            return pending

        pending = self._ladder.structured(
            prompts.DECOMPOSE_SYSTEM,
            message,
            prompts.DECOMPOSE_SCHEMA,
            "decompose",
            usage,
            deadline,
            pending_from,
        )

        def claims_from(reply: dict[str, Any]) -> tuple[Claim, ...]:
            claims = []
            for item in reply["verdicts"]:
                index = int(item["claim"])
                if not 0 <= index < len(pending):
                    raise SchemaError(f"verdict for claim K{index}, which was not asked")
                sentence, claim = pending[index]
                claims.append(self._claim(item, sentence, claim))
            return verify(claims, chunks)

        return self._ladder.structured(
            prompts.VERIFY_SYSTEM,
            prompts.verify_message(chunks, [claim for _, claim in pending]),
            prompts.VERIFY_SCHEMA,
            "verify",
            usage,
            deadline,
            claims_from,
        )

    @staticmethod
    def _claim(item: dict[str, Any], sentence: str, claim_text: str) -> Claim:
        verdict = item["verdict"]
        if verdict not in prompts.VERDICTS:
            raise SchemaError(f"unknown verdict {verdict!r}")
        chunk = item.get("chunk")
        quote = item.get("quote") or None
        reason = item.get("reason")
        typed: Verdict = verdict
        return Claim(
            text=sentence,
            verdict=typed,
            chunk=int(chunk) if chunk is not None else None,
            quote=quote,
            critical=is_critical(str(claim_text)),
            # A reason for a supported claim adds nothing a reviewer needs.
            rationale=str(reason)[:500] if reason and not claim_supported(verdict) else None,
            # For a partial claim the reason names the part the context does not hold.
            missing=str(reason)[:500] if reason and verdict == "partial" else None,
        )

    # -- cache of verdicts ---------------------------------------------------------

    def _cache_key(
        self,
        question: str,
        chunks: Sequence[str],
        answer: str,
        claims_only: bool = False,
        cites: Mapping[int, Sequence[int]] | None = None,
    ) -> str:
        document: dict[str, Any] = {
            "prompt": prompts.PROMPT_HASH,
            "mode": self.config.mode,
            "model": self.config.model,
            "endpoint": str(self._client.base_url),
            "temperature": self.config.temperature,
            "seed": self.config.seed,
            "max_completion_tokens": self.config.max_completion_tokens,
            "question": t.normalise(question),
            "answer": t.normalise(answer),
            "chunks": [hashlib.sha256(t.normalise(c).encode()).hexdigest() for c in chunks],
        }
        if cites:
            # The citations asked about change the request, so the reply.
            document["cites"] = {str(i): list(c) for i, c in sorted(cites.items())}
        if claims_only:
            # The given sentences, without the pre-checks: never the same entry as an answer's.
            document["claims_only"] = True
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def _measured(question: str, chunks: Sequence[str], answer: str, judgement: Judgement) -> Judgement:
    """``judgement`` with the offline judge's word measures, for an answer no request rated
    (read, as that judge reads them, without the chunks' instructions to the assistant)."""
    facts = [t.without_instructions(chunk) for chunk in chunks]
    return judgement.with_relevance(lexical.measure(question, facts, answer, judgement))
