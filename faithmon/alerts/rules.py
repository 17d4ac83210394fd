"""Alert rules as code: a TOML file of sinks, routes and per-kind rules, checked as strictly
as ``amtool check-config`` (every unknown key, bad matcher, bad duration, missing sink,
inline secret, unset secret variable and broken template is a problem).

::

    [sinks.oncall]
    type = "webhook"
    url = "https://hooks.example.com/faithmon"
    secret_env = "ONCALL_WEBHOOK_SECRET"

    [[routes]]
    match = ["tenant=~acme|globex", "severity=critical"]
    sinks = ["oncall"]
    continue = false
    group_by = ["kind", "tenant"]
    repeat_interval = "4h"

    [rules.faithfulness_drift]
    for = "10m"
    severity = "critical"
    runbook_url = "https://runbooks.example.com/faithfulness"
    summary = "{{ segment }}: {{ current.rate }} unsupported (baseline {{ baseline.rate }})"

:func:`check` returns every problem as one line naming the file and the key
(``FILE: routes[2].match[0]: ...``); :func:`load` raises ConfigError with the first ones.
Secrets stay in the environment: the file names the variable (``secret_env``,
``password_env``), read when the sinks are built (:mod:`.routing`).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model.silences import parse_duration as parse_any_duration
from . import egress
from .matchers import Matcher
from .matchers import parse as parse_matcher
from .rules_templates import problem as template_problem
from .rules_templates import sample_context

KINDS = (
    "faithfulness_drift",
    "critical_drift",
    "citation_drift",
    "retrieval_drift",
    "faithfulness_ceiling",
    "judge_drift",
    "no_data",
    "judge_error",
    "ingest_error",
    "judge_disagreement",
    "policy_violation",
)
SEVERITIES = ("info", "warning", "critical")
SINK_TYPES = ("webhook", "slack", "alertmanager", "email", "log")
_SINK_KEYS: dict[str, tuple[str, ...]] = {
    "webhook": ("url", "secret_env"),
    "slack": ("url",),
    "alertmanager": ("url",),
    "email": ("host", "port", "from", "to", "user", "password_env"),
    "log": (),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "webhook": ("url", "secret_env"),
    "slack": ("url",),
    "alertmanager": ("url",),
    "email": ("host", "to"),
    "log": (),
}
_INLINE_SECRETS = {"secret": "secret_env", "password": "password_env", "token": "secret_env"}
_ROUTE_KEYS = (
    "match",
    "sinks",
    "continue",
    "group_by",
    "group_wait",
    "group_interval",
    "repeat_interval",
)
_RULE_KEYS = ("for", "keep_firing_for", "severity", "runbook_url", "summary", "description")
TEMPLATES = ("summary", "description")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class SinkSpec:
    """One ``[sinks.NAME]``: where it sends, and the names of the variables holding secrets."""

    name: str
    type: str
    url: str = ""
    secret_env: str = ""
    host: str = ""
    port: int = 25
    sender: str = "faithmon@localhost"
    """The e-mail's ``from``."""
    to: tuple[str, ...] = ()
    user: str = ""
    password_env: str = ""


@dataclass(frozen=True, slots=True)
class Route:
    """One ``[[routes]]``: an alert whose labels satisfy every matcher goes to ``sinks``;
    the walk stops at the first match unless ``continue_``. The grouping fields are parsed
    and checked here and applied by the notifier (None: not set)."""

    matchers: tuple[Matcher, ...]
    sinks: tuple[str, ...]
    continue_: bool = False
    group_by: tuple[str, ...] = ()
    group_wait: timedelta | None = None
    group_interval: timedelta | None = None
    repeat_interval: timedelta | None = None


@dataclass(frozen=True, slots=True)
class KindRule:
    """One ``[rules.KIND]``. ``for_`` and ``keep_firing_for`` are parsed and checked here and
    applied by the lifecycle (None: not set); the rest is applied when an alert is sent."""

    kind: str
    for_: timedelta | None = None
    keep_firing_for: timedelta | None = None
    severity: str = ""
    """Empty: the alert's own."""
    runbook_url: str = ""
    summary: str = ""
    """A template (see :mod:`.rules_templates`); empty: none."""
    description: str = ""


@dataclass(frozen=True, slots=True)
class Rules:
    path: str
    sinks: Mapping[str, SinkSpec] = field(default_factory=dict)
    routes: tuple[Route, ...] = ()
    kinds: Mapping[str, KindRule] = field(default_factory=dict)


def parse_duration(text: str) -> timedelta:
    """A duration of the rules file (see :func:`model.silences.parse_duration`)."""
    return parse_any_duration(text, longest=None)


class _Reader:
    """Walks the document once, keeping every problem with the key it is at."""

    def __init__(self, path: str, environ: Mapping[str, str], allow_link_local: bool) -> None:
        self.path, self.environ, self.allow_link_local = path, environ, allow_link_local
        self.problems: list[str] = []

    def bad(self, where: str, what: str) -> None:
        self.problems.append(f"{self.path}: {where}: {what}")

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.bad(where, "expected a table")
            return {}
        return value

    def table(self, value: Any, where: str, known: tuple[str, ...]) -> dict[str, Any]:
        """``value`` as a table, each key not in ``known`` a problem."""
        table = self.mapping(value, where or "file")
        for key in table:
            if key not in known:
                self.bad(
                    f"{where}.{key}" if where else key,
                    f"unknown key; expected one of {', '.join(known)}",
                )
        return table

    def string(self, table: dict[str, Any], key: str, where: str) -> str:
        value = table.get(key, "")
        if not isinstance(value, str):
            self.bad(f"{where}.{key}", "expected a string")
            return ""
        return value

    def strings(self, table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.bad(f"{where}.{key}", "expected a list of strings")
            return ()
        return tuple(value)

    def duration(self, table: dict[str, Any], key: str, where: str) -> timedelta | None:
        if key not in table:
            return None
        try:
            return parse_duration(table[key])
        except ValueError as exc:
            self.bad(f"{where}.{key}", str(exc))
            return None

    def env_name(self, table: dict[str, Any], key: str, where: str) -> str:
        name = self.string(table, key, where)
        if not name:
            return ""
        if not _ENV_NAME.fullmatch(name):
            self.bad(f"{where}.{key}", f"{name!r} is not an environment variable name")
        elif not self.environ.get(name):
            self.bad(f"{where}.{key}", f"environment variable {name} is not set")
        return name

    def sink(self, name: str, value: Any) -> SinkSpec | None:
        where = f"sinks.{name}"
        if not isinstance(value, dict):
            self.bad(where, "expected a table")
            return None
        for key, instead in _INLINE_SECRETS.items():
            if key in value:
                # Never echo the value: it is the secret.
                self.bad(f"{where}.{key}", f"secrets are never inline; name a variable: {instead}")
        kind = value.get("type")
        if kind is None:
            self.bad(where, f"needs type ({', '.join(SINK_TYPES)})")
            return None
        if kind not in SINK_TYPES:
            self.bad(f"{where}.type", f"{kind!r}: expected one of {', '.join(SINK_TYPES)}")
            return None
        known = ("type", *_SINK_KEYS[kind])
        self.table({k: v for k, v in value.items() if k not in _INLINE_SECRETS}, where, known)
        for key in _REQUIRED[kind]:
            if key not in value:
                self.bad(where, f"needs {key}")
        url = self.string(value, "url", where)
        host = self.string(value, "host", where)
        # A webhook's URL and a mail relay's host pass the same egress check.
        for key, found, check in (
            ("url", url, egress.check_url),
            ("host", host, egress.check_host),
        ):
            if not found:
                continue
            try:
                check(found, self.allow_link_local)
            except egress.RefusedAddress as exc:
                self.bad(
                    f"{where}.{key}", f"{exc} (FAITHMON_ALERT_ALLOW_LINK_LOCAL=true allows it)"
                )
            except egress.RefusedDestination as exc:
                self.bad(f"{where}.{key}", str(exc))
        port = value.get("port", 25)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            self.bad(f"{where}.port", f"{port!r}: expected a port number")
            port = 25
        to = self.strings(value, "to", where)
        if kind == "email" and "to" in value and not to:
            self.bad(f"{where}.to", "needs at least one recipient")
        return SinkSpec(
            name=name,
            type=kind,
            url=url,
            secret_env=self.env_name(value, "secret_env", where),
            host=host,
            port=port,
            sender=self.string(value, "from", where) or "faithmon@localhost",
            to=to,
            user=self.string(value, "user", where),
            password_env=self.env_name(value, "password_env", where),
        )

    def route(self, index: int, value: Any, sinks: Mapping[str, SinkSpec]) -> Route | None:
        where = f"routes[{index}]"
        table = self.table(value, where, _ROUTE_KEYS)
        if not table and not isinstance(value, dict):
            return None
        matchers = []
        for i, text in enumerate(self.strings(table, "match", where)):
            try:
                matchers.append(parse_matcher(text))
            except ValueError as exc:
                self.bad(f"{where}.match[{i}]", str(exc))
        if "sinks" not in table:
            self.bad(where, "needs sinks")
        names = self.strings(table, "sinks", where)
        if "sinks" in table and not names and isinstance(table["sinks"], list):
            self.bad(f"{where}.sinks", "needs at least one sink")
        for i, name in enumerate(names):
            if name not in sinks:
                self.bad(f"{where}.sinks[{i}]", f"no sink named {name!r} in [sinks]")
        go_on = table.get("continue", False)
        if not isinstance(go_on, bool):
            self.bad(f"{where}.continue", "expected true or false")
            go_on = False
        return Route(
            matchers=tuple(matchers),
            sinks=names,
            continue_=go_on,
            group_by=self.strings(table, "group_by", where),
            group_wait=self.duration(table, "group_wait", where),
            group_interval=self.duration(table, "group_interval", where),
            repeat_interval=self.duration(table, "repeat_interval", where),
        )

    def rule(self, kind: str, value: Any) -> KindRule | None:
        where = f"rules.{kind}"
        if kind not in KINDS:
            self.bad(where, f"unknown alert kind; expected one of {', '.join(KINDS)}")
            return None
        table = self.table(value, where, _RULE_KEYS)
        severity = self.string(table, "severity", where)
        if severity and severity not in SEVERITIES:
            self.bad(f"{where}.severity", f"{severity!r}: expected one of {', '.join(SEVERITIES)}")
            severity = ""
        runbook = self.string(table, "runbook_url", where)
        texts = {key: self.string(table, key, where) for key in TEMPLATES}
        sample = sample_context(kind, runbook)
        for key, source in texts.items():
            found = template_problem(source, sample) if source else None
            if found:
                self.bad(f"{where}.{key}", found)
        return KindRule(
            kind=kind,
            for_=self.duration(table, "for", where),
            keep_firing_for=self.duration(table, "keep_firing_for", where),
            severity=severity,
            runbook_url=runbook,
            summary=texts["summary"],
            description=texts["description"],
        )


def read_rules(
    path: str | Path, environ: Mapping[str, str] | None, allow_link_local: bool
) -> tuple[Rules, list[str]]:
    """The rules of ``path`` as far as they could be read, and every problem."""
    name = str(path)
    reader = _Reader(name, os.environ if environ is None else environ, allow_link_local)
    try:
        document = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        return Rules(name), [f"{name}: {exc.strerror or exc}"]
    except UnicodeDecodeError:
        return Rules(name), [f"{name}: not UTF-8 text"]
    except tomllib.TOMLDecodeError as exc:
        return Rules(name), [f"{name}: not TOML ({exc})"]
    reader.table(document, "", ("sinks", "routes", "rules"))
    sinks: dict[str, SinkSpec] = {}
    for sink_name, value in reader.mapping(document.get("sinks", {}), "sinks").items():
        spec = reader.sink(sink_name, value)
        if spec is not None:
            sinks[sink_name] = spec
    routes_value = document.get("routes", [])
    routes: list[Route] = []
    if not isinstance(routes_value, list):
        reader.bad("routes", "expected [[routes]] tables")
        routes_value = []
    for index, value in enumerate(routes_value):
        route = reader.route(index, value, sinks)
        if route is not None:
            routes.append(route)
    kinds: dict[str, KindRule] = {}
    for kind, value in reader.mapping(document.get("rules", {}), "rules").items():
        rule = reader.rule(kind, value)
        if rule is not None:
            kinds[kind] = rule
    return Rules(name, sinks, tuple(routes), kinds), reader.problems


def check(
    path: str | Path, environ: Mapping[str, str] | None = None, allow_link_local: bool = False
) -> list[str]:
    """Every problem of the rules file at ``path``, one line each (none: it is good)."""
    return read_rules(path, environ, allow_link_local)[1]


def load(
    path: str | Path, environ: Mapping[str, str] | None = None, allow_link_local: bool = False
) -> Rules:
    """The rules of ``path``; ConfigError with the first problems when it has any."""
    rules, problems = read_rules(path, environ, allow_link_local)
    if problems:
        more = f" (and {len(problems) - 3} more; faithmon rules check)" if len(problems) > 3 else ""
        raise ConfigError("; ".join(problems[:3]) + more)
    return rules
