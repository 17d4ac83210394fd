"""A rules file is read into typed rules, and every kind of mistake in it is one problem line
naming the file and the key: what `faithmon rules check` and the worker's start rely on."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from faithmon.alerts.rules import KINDS, check, load, parse_duration
from faithmon.errors import ConfigError
from tests.alerts.factory import GOOD

ENV = {"ONCALL_SECRET": "s3cr3t-value", "SMTP_PASSWORD": "pw"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


def problems_of(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    return check(write(tmp_path, text), ENV if env is None else env)


def test_a_good_file_loads_into_typed_rules(tmp_path: Path) -> None:
    """Sinks, routes in order and per-kind rules come back typed, durations as timedeltas."""
    path = write(tmp_path, GOOD)
    assert check(path, ENV) == []
    rules = load(path, ENV)
    assert list(rules.sinks) == ["oncall", "mail", "log"]
    mail = rules.sinks["mail"]
    assert (mail.host, mail.port, mail.sender, mail.to) == (
        "smtp.example.com",
        587,
        "faithmon@example.com",
        ("oncall@example.com",),
    )
    assert mail.password_env == "SMTP_PASSWORD"
    first, last = rules.routes
    assert [str(m) for m in first.matchers] == ["tenant=~acme|globex", "severity!=info"]
    assert first.sinks == ("oncall", "mail") and first.continue_
    assert first.group_by == ("kind", "tenant")
    assert (first.group_wait, first.group_interval, first.repeat_interval) == (
        timedelta(seconds=30),
        timedelta(minutes=5),
        timedelta(hours=4),
    )
    assert last.matchers == () and not last.continue_ and last.group_wait is None
    drift = rules.kinds["faithfulness_drift"]
    assert drift.for_ == timedelta(minutes=10) and drift.keep_firing_for == timedelta(days=1)
    assert drift.severity == "critical" and drift.runbook_url.startswith("https://")
    assert set(rules.kinds) == {"faithfulness_drift", "judge_drift", "no_data"}


def test_the_secret_is_never_kept_on_the_rules(tmp_path: Path) -> None:
    """The rules hold the variable's name; the secret is read only when sinks are built."""
    rules = load(write(tmp_path, GOOD), ENV)
    assert "s3cr3t-value" not in repr(rules)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30s", timedelta(seconds=30)),
        ("10m", timedelta(minutes=10)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(minutes=90)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    """Durations are written as Prometheus writes them."""
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["10", "5 minutes", "1w", "0s", "-1m", ""])
def test_bad_durations(text: str) -> None:
    """Anything else is refused with the text it was given."""
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


SINK = '[sinks.s]\ntype = "log"\n'
CASES = [
    ("unknown top-level key", 'colour = "red"\n', "colour: unknown key"),
    (
        "unknown sink key",
        '[sinks.s]\ntype = "slack"\nurl = "https://h.example.com/x"\nchannel = "#a"\n',
        "sinks.s.channel: unknown key",
    ),
    ("unknown sink type", '[sinks.s]\ntype = "pager"\n', "sinks.s.type: 'pager': expected one"),
    ("type missing", '[sinks.s]\nurl = "https://h.example.com"\n', "sinks.s: needs type (webhook,"),
    ("url missing", '[sinks.s]\ntype = "alertmanager"\n', "sinks.s: needs url"),
    (
        "url scheme",
        '[sinks.s]\ntype = "slack"\nurl = "file:///etc/passwd"\n',
        "sinks.s.url: scheme 'file'",
    ),
    (
        "metadata address",
        '[sinks.s]\ntype = "slack"\nurl = "http://169.254.169.254/x"\n',
        "sinks.s.url: 169.254.169.254 is",
    ),
    (
        "inline secret",
        '[sinks.s]\ntype = "webhook"\nurl = "https://h.example.com"\nsecret = "hunter2"\n'
        'secret_env = "ONCALL_SECRET"\n',
        "sinks.s.secret: secrets are never inline; name a variable: secret_env",
    ),
    (
        "inline password",
        '[sinks.s]\ntype = "email"\nhost = "h"\nto = ["a@b.c"]\npassword = "hunter2"\n',
        "sinks.s.password: secrets are never inline; name a variable: password_env",
    ),
    (
        "unset secret_env",
        '[sinks.s]\ntype = "webhook"\nurl = "https://h.example.com"\nsecret_env = "NOPE"\n',
        "sinks.s.secret_env: environment variable NOPE is not set",
    ),
    (
        "metadata mail host",
        '[sinks.s]\ntype = "email"\nhost = "169.254.169.254"\nto = ["a@b.c"]\n',
        "sinks.s.host: 169.254.169.254 is",
    ),
    (
        "metadata mail host by name",
        '[sinks.s]\ntype = "email"\nhost = "metadata.google.internal"\nto = ["a@b.c"]\n',
        "sinks.s.host: metadata.google.internal is a cloud metadata host",
    ),
    (
        "email without recipients",
        '[sinks.s]\ntype = "email"\nhost = "h"\nto = []\n',
        "sinks.s.to: needs at least one recipient",
    ),
    (
        "bad regex",
        SINK + '[[routes]]\nmatch = ["tenant=~("]\nsinks = ["s"]\n',
        "routes[0].match[0]: 'tenant=~(': not a regular expression (",
    ),
    (
        "bad label name",
        SINK + '[[routes]]\nmatch = ["a b=c"]\nsinks = ["s"]\n',
        "routes[0].match[0]: 'a b=c': 'a b' is not a label name",
    ),
    (
        "no operator",
        SINK + '[[routes]]\nmatch = ["model"]\nsinks = ["s"]\n',
        "routes[0].match[0]: 'model': expected name=value",
    ),
    (
        "missing sink",
        SINK + '[[routes]]\nsinks = ["s", "pager"]\n',
        "routes[0].sinks[1]: no sink named 'pager' in [sinks]",
    ),
    ("route without sinks", SINK + "[[routes]]\nmatch = []\n", "routes[0]: needs sinks"),
    (
        "unknown route key",
        SINK + '[[routes]]\nsinks = ["s"]\nreceiver = "x"\n',
        "routes[0].receiver: unknown key",
    ),
    (
        "continue not a flag",
        SINK + '[[routes]]\nsinks = ["s"]\ncontinue = "yes"\n',
        "routes[0].continue: expected true or false",
    ),
    (
        "bad route duration",
        SINK + '[[routes]]\nsinks = ["s"]\nrepeat_interval = "4 hours"\n',
        "routes[0].repeat_interval: '4 hours': not a duration",
    ),
    ("bad rule duration", '[rules.no_data]\nfor = "10x"\n', "rules.no_data.for: '10x': not a"),
    ("unknown kind", '[rules.cpu_high]\nfor = "1m"\n', "rules.cpu_high: unknown alert kind"),
    ("unknown rule key", '[rules.no_data]\nlabels = "x"\n', "rules.no_data.labels: unknown key"),
    (
        "bad severity",
        '[rules.no_data]\nseverity = "urgent"\n',
        "rules.no_data.severity: 'urgent': expected one of info, warning, critical",
    ),
    (
        "unknown template field",
        '[rules.faithfulness_drift]\nsummary = "{{ current.rat }}"\n',
        "rules.faithfulness_drift.summary: unknown field current.rat",
    ),
    (
        "unknown template name",
        '[rules.critical_drift]\ndescription = "{{ segmnt }}"\n',
        "rules.critical_drift.description: unknown field segmnt",
    ),
    (
        "template syntax error",
        '[rules.judge_drift]\nsummary = "{{ segment "\n',
        "rules.judge_drift.summary: template syntax error: ",
    ),
    (
        "sandboxed",
        "[rules.no_data]\nsummary = \"{{ ''.__class__.__mro__ }}\"\n",
        "rules.no_data.summary: not allowed in the sandbox",
    ),
    (
        "fails on the sample",
        '[rules.no_data]\nsummary = "{{ current.rate * 100 }}"\n',
        "rules.no_data.summary: template fails on a sample alert (TypeError",
    ),
    ("not TOML", "[sinks\n", "not TOML ("),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_problem_is_one_line_naming_the_file_and_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    """The mistake is reported once, as `FILE: key: what`, and nothing else is."""
    problems = problems_of(tmp_path, text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{tmp_path / 'rules.toml'}: {expected}"), problems
    assert "\n" not in problems[0]


def test_an_inline_secret_is_never_echoed(tmp_path: Path) -> None:
    """The problem names the key, not the value it holds."""
    text = '[sinks.s]\ntype = "webhook"\nurl = "https://h.example.com"\ntoken = "hunter2"\n'
    problems = problems_of(tmp_path, text)
    assert problems and all("hunter2" not in p for p in problems)


def test_every_problem_is_reported_and_load_raises_with_the_first(tmp_path: Path) -> None:
    """check() lists all of them; load() raises ConfigError naming the first ones."""
    text = (
        'colour = 1\n[sinks.s]\ntype = "pager"\n[[routes]]\nmatch = ["x=~("]\nsinks = ["t"]\n'
        '[rules.no_data]\nfor = "soon"\n'
    )
    path = write(tmp_path, text)
    assert len(check(path, ENV)) == 5
    with pytest.raises(ConfigError, match=r"colour: unknown key.*\(and 2 more; faithmon rules"):
        load(path, ENV)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    """A path that is not there says so, with no traceback."""
    missing = tmp_path / "nope.toml"
    assert check(missing, ENV) == [f"{missing}: No such file or directory"]


ALL_FIELDS = (
    "{{ segment }} {{ labels.kind }} {{ kind }} {{ severity }} {{ state }} {{ opened_at }}"
    " {{ runbook_url }} {{ current.rate }} {{ current.interval }} {{ current.records }}"
    " {{ baseline.rate }} {{ baseline.interval }} {{ baseline.records }} {{ statistic }}"
    " {{ threshold }} {{ examples }} {{ details }}"
)


@pytest.mark.parametrize("kind", KINDS)
def test_every_documented_field_exists_for_every_kind(tmp_path: Path, kind: str) -> None:
    """A template over every field of docs/alerts.md checks clean for each alert kind."""
    text = f"[rules.{kind}]\nsummary = {json.dumps(ALL_FIELDS)}\ndescription = 'x'\n"
    assert problems_of(tmp_path, text) == []
