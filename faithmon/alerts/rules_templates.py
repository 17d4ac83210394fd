"""The ``summary`` and ``description`` templates of a rules file: Jinja2 in its sandbox, over
the fields of one alert.

Messages are plain text (each sink escapes for its format), so autoescape is off. A name
the context does not have is an error (``StrictUndefined``): :func:`check` renders every
template against a sample alert of its kind, so ``{{ current.rat }}`` fails at check time,
not at 3 a.m. The fields, the same for every kind (None where a kind has no such figure):

- ``segment`` (``"model=m2,route=/ask"`` or ``"overall"``), ``labels`` (what route matchers
  see), ``kind``, ``severity``, ``state``, ``opened_at`` (a UTC datetime), ``runbook_url``;
- ``current`` and ``baseline``: ``rate``, ``interval`` ([low, high], 95%) and ``records``.
  For ``judge_drift`` the rate is the judge's error rate on its sentinel set (1 − accuracy)
  and ``records`` the cases; the baseline is the trusted configuration it replaces. For
  ``policy_violation`` the rate is the share of the window's evaluations with findings,
  ``records`` those evaluations, and there is no baseline;
- ``statistic`` and ``threshold`` (the detector's CUSUM and where it fires);
- ``examples``: example trace ids; ``details``: everything the alert carries, as stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from ..model import Alert, segment_name
from .matchers import alert_labels


class Fields(dict[str, Any]):
    """A dict that knows its name in the context, so an unknown field says where it is."""

    def __init__(self, name: str, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.field_name = name


class _Undefined(jinja2.StrictUndefined):
    @property
    def _undefined_message(self) -> str:
        owner = self._undefined_obj
        if isinstance(owner, Fields):
            return f"unknown field {owner.field_name}.{self._undefined_name}"
        if owner is jinja2.utils.missing:
            return f"unknown field {self._undefined_name}"
        return super()._undefined_message


_ENV = SandboxedEnvironment(undefined=_Undefined, autoescape=False, keep_trailing_newline=False)


def compile_template(source: str) -> jinja2.Template:
    """The template of ``source``; TemplateSyntaxError when it is not one."""
    return _ENV.from_string(source)


def problem(source: str, context: Mapping[str, Any]) -> str | None:
    """What is wrong with ``source`` rendered over ``context``, or None."""
    try:
        compile_template(source).render(context)
    except jinja2.TemplateSyntaxError as exc:
        return f"template syntax error: {exc.message} (line {exc.lineno})"
    except jinja2.UndefinedError as exc:
        return str(exc)
    except SecurityError as exc:
        return f"not allowed in the sandbox ({exc})"
    except Exception as exc:  # a filter or an operation on a field: still the file's fault
        return f"template fails on a sample alert ({type(exc).__name__}: {exc})"
    return None


def _pair(value: Any) -> list[float] | None:
    return list(value) if isinstance(value, list | tuple) and len(value) == 2 else None


def _error_rate(accuracy: Any) -> float | None:
    return round(1 - float(accuracy), 4) if isinstance(accuracy, int | float) else None


def context(alert: Alert, runbook_url: str = "") -> dict[str, Any]:
    """The fields a template sees of ``alert`` (see the module's docstring)."""
    d = alert.details
    current: dict[str, Any]
    baseline: dict[str, Any]
    if alert.rule == "judge_drift":
        current = {
            "rate": _error_rate(d.get("accuracy")),
            "interval": None,
            "records": d.get("cases"),
        }
        baseline = {
            "rate": _error_rate(d.get("reference_accuracy")),
            "interval": None,
            "records": None,
        }
    elif alert.rule == "policy_violation":
        current = {"rate": d.get("share"), "interval": None, "records": d.get("evaluations")}
        baseline = {"rate": None, "interval": None, "records": None}
    else:
        current = {
            "rate": d.get("current_rate"),
            "interval": _pair(d.get("current_interval")),
            "records": d.get("records"),
        }
        baseline = {
            "rate": d.get("baseline_rate"),
            "interval": _pair(d.get("baseline_interval")),
            "records": d.get("baseline_records"),
        }
    examples = [e["trace_id"] for e in d.get("examples", []) if isinstance(e, Mapping)]
    return {
        "segment": segment_name(alert.segment),
        "labels": Fields("labels", alert_labels(alert)),
        "kind": alert.rule,
        "severity": alert.severity,
        "state": alert.state,
        "opened_at": alert.opened_at,
        "runbook_url": runbook_url,
        "current": Fields("current", current),
        "baseline": Fields("baseline", baseline),
        "statistic": d.get("statistic"),
        "threshold": d.get("threshold"),
        "examples": examples,
        "details": Fields("details", d),
    }


_AT = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
_EXAMPLES = [{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "unsupported_claims": ["x"]}]
_DRIFT = {
    "stream": "unsupported",
    "baseline_rate": 0.05,
    "baseline_interval": [0.04, 0.06],
    "baseline_records": 2000,
    "current_rate": 0.31,
    "current_interval": [0.22, 0.41],
    "records": 80,
    "statistic": 9.2,
    "threshold": 8.0,
    "examples": _EXAMPLES,
}
SAMPLE_DETAILS: dict[str, dict[str, Any]] = {
    "faithfulness_drift": _DRIFT,
    "critical_drift": {**_DRIFT, "stream": "critical"},
    "citation_drift": {
        **_DRIFT,
        "stream": "citation",
        "examples": [{**_EXAMPLES[0], "unsupported_claims": [], "miscited_claims": ["x"]}],
    },
    "faithfulness_ceiling": {
        "stream": "unsupported",
        "ceiling": 0.25,
        "window_hours": 1.0,
        "records": 40,
        "unsupported": 14,
        "current_rate": 0.35,
        "min_records": 30,
        "examples": _EXAMPLES,
    },
    "retrieval_drift": {
        **_DRIFT,
        "stream": "retrieval",
        "examples": [{**_EXAMPLES[0], "cause": "retrieval", "context_relevance": 0.1}],
    },
    "policy_violation": {
        "window_hours": 1.0,
        "evaluations": 240,
        "with_findings": 3,
        "share": 0.0125,
        "rules": [{"rule": "pii", "answers": 3, "findings": 4}],
        "examples": [{"trace_id": _EXAMPLES[0]["trace_id"], "rules": ["pii"]}],
    },
    "judge_drift": {
        "direction": "stricter",
        "statistic": 5.1,
        "tripwire": False,
        "cases": 40,
        "accuracy": 0.8,
        "false_flag_rate": 0.3,
        "miss_rate": 0.1,
        "reference_judge": "offline",
        "reference_accuracy": 0.95,
    },
    "no_data": {"silent_hours": 7.5, "usual_per_day": 1200.0, "no_data_hours": 6},
    "judge_error": {"reason": "401 invalid api key", "action": "faithmon judge unblock"},
    "ingest_error": {"reason": "the database refuses writes"},
}
"""A typical alert's details per kind: what templates are checked against."""

SAMPLE_SEGMENTS: dict[str, dict[str, str]] = {
    "judge_drift": {"judge": "openai:gpt-4o-mini", "sentinel": "starter"},
    "judge_error": {"judge": "openai:gpt-4o-mini"},
    "judge_disagreement": {"judge": "openai:gpt-4o-mini"},
    "ingest_error": {"receiver": "receiver-1:4318"},
}


def sample_context(kind: str, runbook_url: str = "") -> dict[str, Any]:
    """The context of a typical firing alert of ``kind``."""
    alert = Alert(
        rule=kind,
        segment=SAMPLE_SEGMENTS.get(kind, {"tenant": "acme", "model": "gpt-4o"}),
        state="firing",
        severity="critical",
        opened_at=_AT,
        updated_at=_AT,
        details=SAMPLE_DETAILS.get(kind, {}),
    )
    return context(alert, runbook_url)
