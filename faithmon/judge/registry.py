"""Every judge faithmon can build, by name: adding a judge is one module plus one entry.

A factory gets the same ``JudgeOptions`` whatever the judge, and uses what it
needs; the LLM judge's client library is imported only when that judge is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..model import Judge
from .contracts import Checked, Contracts, checked
from .offline import OfflineJudge
from .openai_config import OpenAIJudgeConfig

if TYPE_CHECKING:
    from .openai_judge import OpenAIJudge


def _llm(name: str) -> Any:
    # The LLM judge's own config declares how hard it tries; these options (and through
    # them FAITHMON_JUDGE_*, see config.default_of) start from it rather than copy it.
    return next(item.default for item in fields(OpenAIJudgeConfig) if item.name == name)


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """What a judge may be configured with (``FAITHMON_JUDGE_*``)."""

    model: str = "gpt-4o-mini"
    base_url: str = ""
    """Empty: OpenAI's endpoint (the LLM judge's ``base_url=None``)."""
    api_key: str = ""
    mode: str = _llm("mode")
    timeout: float = _llm("timeout")
    deadline: float = _llm("deadline")
    max_attempts: int = _llm("max_attempts")
    concurrency: int = _llm("max_concurrency")
    rpm: float = _llm("requests_per_minute")
    cascade_bar: float = 0.8
    """The cascade's bar: offline claims at least this confident are not sent to the LLM.

    0.8 is read off the calibration (``bench/judge_quality.py`` prints it): the lowest
    bar, in steps of 0.05, at which the claims it settles on RAGTruth's tuning half are
    at least 0.95 precise when ``supported`` and 0.85 when ``unsupported`` or
    ``contradicted``."""
    severity_rules: str = ""
    policy_rules: str = ""
    citation_style: str = "all"


def _offline(options: JudgeOptions) -> Judge:
    return OfflineJudge()


def _openai(options: JudgeOptions) -> OpenAIJudge:
    from .openai_judge import OpenAIJudge

    if not options.api_key:
        raise ConfigError("the openai judge needs FAITHMON_JUDGE_API_KEY or OPENAI_API_KEY")
    if options.mode not in ("one_call", "two_call"):
        raise ConfigError(f"unknown judge mode {options.mode!r}")
    return OpenAIJudge(
        OpenAIJudgeConfig(
            model=options.model,
            base_url=options.base_url or None,
            api_key=options.api_key,
            mode=options.mode,  # type: ignore[arg-type]
            timeout=options.timeout,
            deadline=options.deadline,
            max_attempts=options.max_attempts,
            max_concurrency=options.concurrency,
            requests_per_minute=options.rpm,
        )
    )


def _cascade(options: JudgeOptions) -> Judge:
    from .cascade import CascadeJudge

    if not 0 < options.cascade_bar <= 1:
        raise ConfigError("FAITHMON_JUDGE_CASCADE_BAR must be in (0, 1]")
    return CascadeJudge(OfflineJudge(), _openai(options), options.cascade_bar)


JUDGES: Mapping[str, Callable[[JudgeOptions], Judge]] = {
    "offline": _offline,
    "openai": _openai,
    "cascade": _cascade,
}
"""Judge names (``FAITHMON_JUDGE``, ``faithmon score --judge``) and their factories."""


def make_judge(kind: str, options: JudgeOptions) -> Checked:
    """The judge ``kind`` with the contracts (citations, quotes, severity, policy) applied."""
    try:
        factory = JUDGES[kind]
    except KeyError:
        raise ConfigError(f"unknown judge {kind!r}; known: {', '.join(JUDGES)}") from None
    contracts = Contracts.load(options.severity_rules, options.policy_rules, options.citation_style)
    return checked(factory(options), contracts)
