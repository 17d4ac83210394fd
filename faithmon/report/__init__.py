"""The self-contained HTML report: faithfulness over time per segment, and the alerts.

Usage::

    from faithmon.report import write_report

    write_report(sessions, judge.name, "faithmon-report.html")

``faithmon demo`` writes it at the end of its run and ``faithmon report`` writes it
from the configured database. The page needs no network and runs no script: open it
from disk, attach it to a ticket, mail it.

Layout: :mod:`faithmon.store.report` gathers plain data in one session,
:mod:`.html` renders it (pure), :mod:`.chart` draws one segment's SVG chart and
:mod:`.traces` an alert's example traces.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ..model.standing import ProofFloor
from ..store import Sessions
from ..store.report import load_report
from .html import render_report

__all__ = ["render_report", "write_report"]


def write_report(
    sessions: Sessions,
    judge_name: str,
    path: str | Path,
    now: datetime | None = None,
    floor: ProofFloor | None = None,
) -> Path:
    """Write the report of ``judge_name``'s evaluations to ``path``; returns the path.

    Its header says whether the judge's sentinels prove it, against ``floor``."""
    with sessions() as session:
        data = load_report(session, judge_name, now, floor=floor)
    target = Path(path)
    target.write_text(render_report(data), encoding="utf-8")
    return target
