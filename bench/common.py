"""What the benchmark scripts share: figures, alternating runs, tables, results, PostgreSQL.

Python runs each script with ``bench/`` on the path, so a plain ``import common``
finds this file (and ``import peers.presidio`` the peers' harnesses).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.pool import NullPool
from starlette.requests import Request
from starlette.responses import Response

RESULTS_DIR = Path(__file__).resolve().parent / "results"
PROTOBUF = "application/x-protobuf"
# A fixed key: the bench measures scrubbing, it protects nothing.
SCRUB_KEY = "faithmon-bench-scrub-key"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True, slots=True)
class Figure:
    """One row of the table: the median of ``samples`` against the median of its baseline.

    ``peak`` figures (memory) take the largest sample on both sides instead.
    """

    name: str
    unit: str
    samples: tuple[float, ...]
    baseline: str
    baseline_samples: tuple[float, ...]
    higher_is_better: bool
    peak: bool = False

    def _aggregate(self, samples: tuple[float, ...]) -> float:
        return max(samples) if self.peak else statistics.median(samples)

    @property
    def value(self) -> float:
        return self._aggregate(self.samples)

    @property
    def baseline_value(self) -> float:
        return self._aggregate(self.baseline_samples)

    @property
    def ratio(self) -> float:
        return self.value / self.baseline_value

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "unit": self.unit,
            "value": self.value,
            "baseline": self.baseline,
            "baseline_value": self.baseline_value,
            "ratio": self.ratio,
            "higher_is_better": self.higher_is_better,
            "aggregate": "max" if self.peak else "median",
            "samples": list(self.samples),
            "baseline_samples": list(self.baseline_samples),
        }


def alternate(
    repetitions: int, measure: Callable[[], float], baseline: Callable[[], float]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Run figure and baseline in turn, so slow drift of the machine hits both alike."""
    samples: list[float] = []
    baseline_samples: list[float] = []
    for _ in range(repetitions):
        samples.append(measure())
        baseline_samples.append(baseline())
    return tuple(samples), tuple(baseline_samples)


def number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio(value: float) -> str:
    """Two decimals, or two significant digits below 0.1 (so 0.0022x does not read 0.00x)."""
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def columns(
    titles: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None
) -> list[str]:
    """``rows`` under ``titles`` and a line of dashes, padded to columns.

    ``right`` says which columns align right; by default every one but the first.
    """
    aligned = right if right is not None else [i > 0 for i in range(len(titles))]
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, aligned, strict=True)
        ).rstrip()

    return [line(titles), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def render(figures: Sequence[Figure], header: str, notes: Sequence[str] = ()) -> str:
    """The figures as a plain-text table under ``header``, with ``notes`` below it."""
    rows = [
        (
            f.name,
            f"{number(f.value)} {f.unit}",
            f.baseline,
            f"{number(f.baseline_value)} {f.unit}",
            ratio(f.ratio),
        )
        for f in figures
    ]
    titles = ("figure", "value", "baseline", "baseline value", "ratio")
    out = [header, "", *columns(titles, rows, (False, True, False, True, True))]
    if notes:
        out.append("")
        out += notes
    return "\n".join(out)


async def accept(request: Request) -> Response:
    """The baseline endpoint: read the body, decode nothing, answer 200."""
    await request.body()
    return Response(b"", status_code=200, media_type=PROTOBUF)


def by_trace(spans: Sequence[ReadableSpan]) -> list[list[ReadableSpan]]:
    """Finished spans grouped by trace, in the order the traces first appear."""
    traces: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        context = span.context
        if context is None:
            raise RuntimeError("a finished span without a context")
        traces.setdefault(context.trace_id, []).append(span)
    return list(traces.values())


def encode_bodies(traces: Sequence[Sequence[ReadableSpan]], per_request: int) -> list[bytes]:
    """ExportTraceServiceRequest bodies of ``per_request`` whole traces each."""
    return [
        encode_spans(
            [span for trace in traces[i : i + per_request] for span in trace]
        ).SerializeToString()
        for i in range(0, len(traces), per_request)
    ]


def cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count()


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# Results: one JSON file per bench under bench/results/ (git-ignored).


def run_facts(mode: str, seconds: float) -> dict[str, Any]:
    """The head of a results file: when, how big a run, on what."""
    return {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "seconds": seconds,
    }


def write_results(path: Path, report: dict[str, Any]) -> None:
    """Write ``report`` as indented JSON to ``path`` and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {relative(path)}")


# PostgreSQL: a fresh database per run on the given server (ingest, workers, durability).


def postgres_admin(url: str) -> tuple[Engine | None, str]:
    """An AUTOCOMMIT engine on ``url``, or None and the reason it cannot be used."""
    if not url:
        return None, "no --postgres-url given"
    try:
        engine = create_engine(
            url,
            isolation_level="AUTOCOMMIT",
            poolclass=NullPool,
            connect_args={"connect_timeout": 5},
        )
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:  # no driver, no server, no access: all mean "skip"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"{make_url(url).render_as_string(hide_password=True)}: {reason}"
    return engine, ""


@contextmanager
def postgres_database(admin: Engine) -> Iterator[str]:
    """Create ``faithmon_bench_<random>``; yields its URL; drops it WITH (FORCE) afterwards."""
    name = f"faithmon_bench_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
