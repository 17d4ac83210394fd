"""Judges are found by name: the settings, ``faithmon score --judge`` and the wiring read
the one registry."""

from __future__ import annotations

import pytest

from faithmon.cli import wiring
from faithmon.config import SETTINGS, Settings
from faithmon.errors import ConfigError
from faithmon.judge import JUDGES, JudgeOptions, OfflineJudge, make_judge


def test_every_registered_judge_is_a_valid_setting() -> None:
    for name in JUDGES:
        assert Settings.from_env({"FAITHMON_JUDGE": name}).judge == name
    with pytest.raises(ConfigError, match="FAITHMON_JUDGE"):
        Settings.from_env({"FAITHMON_JUDGE": "oracle"})


def test_an_unknown_judge_names_the_known_ones() -> None:
    known = "known: offline, openai, cascade"
    with pytest.raises(ConfigError, match=f"unknown judge 'oracle'; {known}"):
        make_judge("oracle", JudgeOptions())


def test_the_openai_judge_needs_a_key() -> None:
    with pytest.raises(ConfigError, match="FAITHMON_JUDGE_API_KEY or OPENAI_API_KEY"):
        make_judge("openai", JudgeOptions(api_key=""))


def test_the_wiring_builds_the_llm_judge_from_its_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = Settings.from_env(
        {
            "FAITHMON_JUDGE": "openai",
            "FAITHMON_JUDGE_API_KEY": "sk-test",
            "FAITHMON_JUDGE_MODEL": "judge-model-7",
            "FAITHMON_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
            "FAITHMON_JUDGE_CONCURRENCY": "3",
            "FAITHMON_JUDGE_RPM": "120",
            "FAITHMON_JUDGE_MODE": "two_call",
        }
    )
    judge = wiring.make_judge(settings).inner
    config = judge.config  # type: ignore[attr-defined]
    assert (config.model, config.base_url, config.mode) == (
        "judge-model-7",
        "http://127.0.0.1:9/v1",
        "two_call",
    )
    assert (config.max_concurrency, config.requests_per_minute) == (3, 120.0)
    assert isinstance(wiring.make_judge(settings, "offline").inner, OfflineJudge)


def test_every_judge_option_has_a_setting() -> None:
    # A JudgeOptions field without a FAITHMON_JUDGE_* setting would silently keep its default.
    fields = {setting.field for setting in SETTINGS}
    for name in JudgeOptions.__dataclass_fields__:
        # The contracts' rules are settings of their own (FAITHMON_SEVERITY_RULES, ...).
        assert f"judge_{name}" in fields or name in fields, name
