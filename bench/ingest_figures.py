"""The ingest bench's runs by payload, backend and mode, its table and its goal lines."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

from common import Figure, number
from ingest_payload import Payload
from ingest_runs import Run

# Payload name → share of chunks repeated across traces.
PAYLOADS = {"unique": 0.0, "30% repeated": 0.3}
GOALS = {"traces_per_second": 1500, "times_phoenix": 40, "rss_share_of_phoenix": 1 / 3}
BACKENDS = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
# FAITHMON_INGEST_PROCESSES: the default, judged against the goals, and the other setting.
DEFAULT, OTHER = "0", "auto"


@dataclass(slots=True)
class Results:
    # (payload, backend, mode) → runs; backend "phoenix" or "bare" has mode "".
    runs: dict[tuple[str, str, str], list[Run]] = field(default_factory=lambda: defaultdict(list))
    notes: list[str] = field(default_factory=list)

    def add(self, payload: str, backend: str, mode: str, run: Run) -> None:
        self.runs[(payload, backend, mode)].append(run)

    def get(self, payload: str, backend: str, mode: str = "") -> list[Run]:
        return self.runs.get((payload, backend, mode), [])

    def retries(self) -> dict[str, int]:
        return {
            "/".join(p for p in key if p): sum(r.retries_503 for r in runs)
            for key, runs in self.runs.items()
        }

    def not_pending(self) -> int:
        return sum(r.not_pending for runs in self.runs.values() for r in runs)

    def as_json(self) -> dict[str, list[dict[str, float]]]:
        return {
            "/".join(p for p in key if p): [r.as_json() for r in runs]
            for key, runs in self.runs.items()
        }


def _rates(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(items / r.seconds for r in runs)


def _cpu(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(r.cpu_seconds / items * 1e3 for r in runs)


def _rss(runs: Sequence[Run]) -> tuple[float, ...]:
    return tuple(r.peak_rss_mib for r in runs)


def _peer(results: Results, payload: str) -> tuple[str, list[Run]]:
    phoenix = results.get(payload, "phoenix")
    if phoenix:
        return f"phoenix serve → SQLite ({payload})", phoenix
    return f"bare Starlette 200 ({payload})", results.get(payload, "bare")


def figures(results: Results, payloads: dict[str, Payload]) -> list[Figure]:
    out = []
    for name, payload in payloads.items():
        traces = payload.traces
        peer, peer_runs = _peer(results, name)
        for backend, shown in BACKENDS.items():
            runs = results.get(name, backend, DEFAULT)
            if not runs:
                continue
            label = f"faithmon → {shown} ({name}), stored"
            rates = _rates(runs, traces)
            if peer_runs:
                out.append(Figure(label, "traces/s", rates, peer, _rates(peer_runs, traces), True))
            other = results.get(name, backend, OTHER)
            if other:
                setting = f"same, FAITHMON_INGEST_PROCESSES={OTHER}"
                out.append(Figure(label, "traces/s", rates, setting, _rates(other, traces), True))
                cpu = f"faithmon → {shown} ({name}), server CPU per trace"
                out.append(
                    Figure(cpu, "ms", _cpu(runs, traces), setting, _cpu(other, traces), False)
                )
        for backend, shown in BACKENDS.items():
            runs = results.get(name, backend, DEFAULT)
            if runs and peer_runs:
                label = f"faithmon → {shown} ({name}), peak RSS"
                peer_rss = " ".join(peer.replace("→ SQLite", "").split()) + ", peak RSS"
                out.append(
                    Figure(label, "MiB", _rss(runs), peer_rss, _rss(peer_runs), False, peak=True)
                )
    return out


def _rate(results: Results, payload: Payload, name: str, backend: str, mode: str) -> float:
    runs = results.get(name, backend, mode)
    return median(_rates(runs, payload.traces)) if runs else 0.0


def goal_notes(results: Results, payloads: dict[str, Payload]) -> list[str]:
    """A line per payload and backend: each goal met or MISSED by the default setting,
    with the figures it was judged on, and what the other setting gives."""
    lines = []
    for name, payload in payloads.items():
        phoenix = results.get(name, "phoenix")
        phoenix_rate = median(_rates(phoenix, payload.traces)) if phoenix else 0.0
        phoenix_rss = max(_rss(phoenix)) if phoenix else 0.0
        for backend, shown in BACKENDS.items():
            runs = results.get(name, backend, DEFAULT)
            if not runs:
                continue
            rate = _rate(results, payload, name, backend, DEFAULT)
            goal = GOALS["traces_per_second"]
            parts = [f"{number(rate)} traces/s vs ≥ {goal:,}: {_met(rate >= goal)}"]
            if phoenix_rate:
                times = rate / phoenix_rate
                goal_x = GOALS["times_phoenix"]
                parts.append(f"{times:.1f}× Phoenix vs ≥ {goal_x}×: {_met(times >= goal_x)}")
                share = max(_rss(runs)) / phoenix_rss
                parts.append(f"peak RSS {share:.2f} of Phoenix's vs ≤ 0.33: {_met(share <= 1 / 3)}")
            other = results.get(name, backend, OTHER)
            if other:
                ratio = _rate(results, payload, name, backend, OTHER) / rate
                memory = max(_rss(other)) / max(_rss(runs))
                parts.append(f"processes {OTHER}: {ratio:.2f}× the rate at {memory:.2f}× the RSS")
            lines.append(f"goal, {shown} ({name}): " + "; ".join(parts))
    return lines


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"
