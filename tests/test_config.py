"""Settings: defaults, the environment, the settings file, and clear errors."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest

from faithmon.config import SETTINGS, Settings
from faithmon.config_values import default_of
from faithmon.errors import ConfigError


def test_defaults() -> None:
    """With nothing set, every setting has its documented default."""
    settings = Settings.from_env({})
    assert settings.sample_rate == 1.0 and settings.scrub_scope == "record"
    assert settings.sample_low_score is None and settings.retention_days == 30


def test_state_paths_are_inside_the_data_dir(tmp_path: Path) -> None:
    """The default database, scrub key file, spool and heartbeat are in FAITHMON_DATA_DIR, as
    is any relative path set for them; an absolute path, a database URL and an empty spool
    (off) are taken as given."""
    data = tmp_path / "data"
    settings = Settings.from_env({"FAITHMON_DATA_DIR": str(data)})
    assert settings.data_dir == str(data)
    assert settings.database_url == f"sqlite:///{data}/faithmon.db"
    assert settings.scrub_key_file == str(data / "faithmon-scrub.key")
    assert settings.spool_dir == str(data / "faithmon-spool")
    assert settings.worker_heartbeat_file == str(data / "faithmon-worker.heartbeat")
    environ = {
        "FAITHMON_DATA_DIR": str(data),
        "FAITHMON_DATABASE_URL": "sqlite:///here.db",
        "FAITHMON_SCRUB_KEY_FILE": "keys/scrub.key",
        "FAITHMON_WORKER_HEARTBEAT_FILE": "/run/beat",
        "FAITHMON_SPOOL_DIR": "",
    }
    given = Settings.from_env(environ)
    assert given.database_url == "sqlite:///here.db"
    assert given.scrub_key_file == str(data / "keys" / "scrub.key")
    assert (given.worker_heartbeat_file, given.spool_dir) == ("/run/beat", "")
    with pytest.raises(ConfigError, match="FAITHMON_DATA_DIR='': must name a folder"):
        Settings.from_env({"FAITHMON_DATA_DIR": ""})


def test_file_then_environment(tmp_path: Path) -> None:
    """The TOML file fills what the environment leaves; the environment wins."""
    path = tmp_path / "faithmon.toml"
    path.write_text(
        'sample_rate = 0.25\nFAITHMON_SAMPLE_EXCLUDE = ["route=internal"]\nscrub_scope = "tenant"\n'
    )
    settings = Settings.from_env({"FAITHMON_CONFIG": str(path), "FAITHMON_SCRUB_SCOPE": "global"})
    assert settings.sample_rate == 0.25
    assert settings.sample_exclude == (("route", "internal"),)
    assert settings.scrub_scope == "global"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"FAITHMON_SAMPLE_RATE": "2"}, "FAITHMON_SAMPLE_RATE='2': must be between 0.0 and 1.0"),
        ({"FAITHMON_SCRUB_SCOPE": "planet"}, "must be one of record, tenant, global"),
        ({"FAITHMON_SAMPLE_INCLUDE": "billing"}, "expected label=value items"),
        ({"FAITHMON_JUDGE_PRICE_INPUT": "-1"}, "FAITHMON_JUDGE_PRICE_INPUT='-1': must not be"),
        ({"FAITHMON_CONFIG": "/nonexistent/faithmon.toml"}, "No such file or directory"),
    ],
)
def test_bad_values_name_the_setting(environ: dict[str, str], message: str) -> None:
    """A value faithmon cannot use stops with the setting's name."""
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Settings.from_env(environ)


def test_judge_prices_reach_the_read_api() -> None:
    """Unset prices stay None (the API shows no cost, not a cost of 0); set ones are passed."""
    from faithmon.cli.run import _read_options

    unset = _read_options(Settings.from_env({}))
    assert (unset.price_input, unset.price_output) == (None, None)
    environ = {"FAITHMON_JUDGE_PRICE_INPUT": "0.15", "FAITHMON_JUDGE_PRICE_OUTPUT": "0"}
    priced = _read_options(Settings.from_env(environ))
    assert (priced.price_input, priced.price_output) == (0.15, 0.0)


def test_unknown_names_are_found_with_the_closest_setting(tmp_path: Path) -> None:
    """A typo in the settings file or the environment is named with the setting it was
    probably meant to be (the CLI warns, or refuses under --strict)."""
    from faithmon import config_check

    path = tmp_path / "faithmon.toml"
    path.write_text("sample_rat = 0.5\nFAITHMON_JUDGE_MODLE = 'x'\n")
    environ = {"FAITHMON_CONFIG": str(path), "FAITHMON_SAMPLE_RATIO": "0.5"}
    assert config_check.unknown_names(environ) == [
        "FAITHMON_SAMPLE_RATIO is not a faithmon setting (did you mean FAITHMON_SAMPLE_RATE?)",
        f"{path}: FAITHMON_JUDGE_MODLE is not a faithmon setting "
        "(did you mean FAITHMON_JUDGE_MODEL?)",
        f"{path}: sample_rat is not a faithmon setting (did you mean sample_rate?)",
    ]
    # The file's known keys still apply; the unknown ones change nothing.
    assert Settings.from_env(environ).sample_rate == 1.0
    assert config_check.unknown_names({"FAITHMON_API_KEY": "k", "FAITHMON_SAMPLE_RATE": "1"}) == []


def test_part_configs_are_built_from_their_settings() -> None:
    """Each part's config takes the settings of its fields' names, none copied by hand."""
    from faithmon.cli import wiring
    from faithmon.config import part_config
    from faithmon.drift import DriftConfig

    settings = Settings.from_env(
        {
            "FAITHMON_DRIFT_DIMENSIONS": "route",
            "FAITHMON_DRIFT_SHIFT": "0.2",
            "FAITHMON_DRIFT_BASELINE_RECORDS": "55",
            "FAITHMON_SAMPLE_RATE": "0.5",
            "FAITHMON_SAMPLE_NEGATIVE_FEEDBACK": "Thumbs_Down",
        }
    )
    config = wiring.drift_config(settings)
    assert (config.dimensions, config.shift, config.baseline_records) == (("route",), 0.2, 55)
    assert config.no_data_hours == settings.drift_no_data_hours
    policy = wiring.sampling_policy(settings)
    assert policy.rate == 0.5 and policy.negative_feedback == frozenset({"thumbs_down"})
    assert part_config(DriftConfig, settings, "drift_", shift=0.3, calibrated={}).shift == 0.3


@dataclass(frozen=True)
class _NewPart:
    shift: float = 0.08
    patience: int = 3  # a field added to a part with no setting of its name


def test_part_config_refuses_a_field_no_setting_fills() -> None:
    """A config field that no setting matches and the wiring does not give is an error
    naming the field and the settings tried, not a silent fall back to its own default."""
    from faithmon.config import part_config

    settings = Settings.from_env({})
    tried = r"_NewPart\.patience matches no setting \(drift_patience or patience\)"
    with pytest.raises(TypeError, match=tried):
        part_config(_NewPart, settings, "drift_")
    assert part_config(_NewPart, settings, "drift_", patience=5) == _NewPart(0.08, 5)


def _part_configs() -> list[tuple[type[Any], str]]:
    """Every part config the wiring fills from the settings, with its prefix."""
    from faithmon.alerts.sinks import SinkOptions
    from faithmon.drift import DriftConfig
    from faithmon.ingest.sampler import SamplingPolicy
    from faithmon.judge import JudgeOptions
    from faithmon.model.standing import ProofFloor

    return [
        (DriftConfig, "drift_"),
        (JudgeOptions, "judge_"),
        (ProofFloor, "sentinel_"),
        (SamplingPolicy, "sample_"),
        (SinkOptions, "alert_"),
    ]


@pytest.mark.parametrize("part, prefix", _part_configs(), ids=lambda p: getattr(p, "__name__", p))
def test_a_part_default_is_its_settings_default(part: type[Any], prefix: str) -> None:
    """Each field a setting fills has that setting's default as its own, so a part used
    without the settings (from Python, the read API's fallback) behaves as configured by
    default; the drift, judge and proof-floor settings read theirs off the part."""
    by_field = {declared.field: declared for declared in SETTINGS}
    checked = 0
    for item in fields(part):
        declared = by_field.get(prefix + item.name) or by_field.get(item.name)
        if declared is None or item.default is MISSING:
            continue  # not a setting (given by the wiring), or no default to agree with
        parsed = declared.parse(declared.default)
        if isinstance(item.default, frozenset):
            parsed = frozenset(parsed)
        assert parsed == item.default, f"{part.__name__}.{item.name} vs {declared.env}"
        checked += 1
    assert checked >= 2


def test_the_llm_judge_starts_from_the_judge_settings_defaults() -> None:
    """The LLM judge built from default settings tries as hard as its own config's
    defaults say: FAITHMON_JUDGE_*, JudgeOptions and OpenAIJudgeConfig agree."""
    from faithmon.cli import wiring
    from faithmon.judge.contracts import Checked
    from faithmon.judge.openai_config import OpenAIJudgeConfig
    from faithmon.judge.openai_judge import OpenAIJudge

    settings = Settings.from_env({"FAITHMON_JUDGE_API_KEY": "k"})
    built = wiring.make_judge(settings, "openai")
    assert isinstance(built, Checked) and isinstance(built.inner, OpenAIJudge)
    assert built.inner.config == OpenAIJudgeConfig(model=settings.judge_model, api_key="k")


def test_default_of_writes_a_default_as_the_settings_text() -> None:
    """A part's default becomes the text its setting is parsed from, as written by hand."""

    @dataclass(frozen=True)
    class Part:
        seconds: float = 30.0
        share: float = 0.07
        on: bool = True
        labels: tuple[str, ...] = ("service", "route")
        bound: float | None = None
        needed: int = field(default_factory=int)

    assert [default_of(Part, n) for n in ("seconds", "share", "on", "labels", "bound")] == [
        "30",
        "0.07",
        "true",
        "service,route",
        "",
    ]
    assert default_of(Part, "bound", none="auto") == "auto"
    with pytest.raises(TypeError, match=r"Part\.needed is not a field with a plain default"):
        default_of(Part, "needed")
