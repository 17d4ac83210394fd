"""The worker's jobs, built once from the settings (``worker_jobs``): the worker schedules
them, and the demo runs the same ones step by step."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from faithmon.config import Settings
from faithmon.demo.run import run_demo

pytestmark = pytest.mark.one_backend


def test_the_demo_runs_the_workers_jobs(tmp_path: Path) -> None:
    """A setting the worker's drift job follows holds in the demo too: with a rules file
    that keeps faithfulness_drift pending for an hour, the demo fires no such alert (its
    other detectors still fire), as the worker would not."""
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules.faithfulness_drift]\nfor = "1h"\n')
    settings = Settings.from_env(
        {
            "FAITHMON_DATABASE_URL": f"sqlite:///{tmp_path}/demo.db",
            "FAITHMON_DATA_DIR": str(tmp_path / "data"),
            "FAITHMON_ALERT_RULES": str(rules),
        }
    )
    out = io.StringIO()
    run_demo(settings, requests=1000, seed=7, out=out)
    printed = out.getvalue()
    assert "alert: faithfulness_drift [pending]" in printed
    assert "faithfulness_drift [firing]" not in printed
    assert "FIRING  critical_drift" in printed
