"""Routing by labels: the sink that stands for a rules file's sinks and routes.

:class:`Router` is one ``AlertSink``. For each alert it applies the ``[rules.KIND]`` of its
kind (the severity override; the rendered ``summary``, ``description`` and ``runbook_url``
added to its details, so every sink's payload carries them), then walks the routes in
order on :func:`~.matchers.alert_labels`: a matching route sends to its sinks and the
walk stops unless the route says ``continue``. An alert no route matches goes to the log
sink. A sink named by two matching routes hears of the alert once.

A grouped route (one that sets ``group_by`` or a grouping interval, see :mod:`.grouping`)
hands its alerts to the outbox the worker binds with :meth:`Router.queue_to`, and the
worker's notify job sends each group as one message through :meth:`Router.send_group`;
with no outbox bound (``faithmon alerts test``), a grouped route sends at once too.

A template that fails on a real alert (a field its kind's sample had and this alert has
not) does not cost the notification: the alert goes out with the plain ``describe()``
text, and one log line names the kind and the template, never the content.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import jinja2

from ..errors import ConfigError
from ..model import Alert, AlertGroup, AlertSink
from .egress import RefusedAddress, RefusedDestination
from .grouping import group_labels, grouped, route_key
from .lifecycle import describe
from .matchers import alert_labels, match_all
from .rules import TEMPLATES, KindRule, Route, Rules, SinkSpec, load
from .rules_templates import compile_template, context
from .sinks import AlertmanagerSink, EmailSink, LogSink, SlackSink, WebhookSink, make_sinks
from .sinks.options import SinkOptions

logger = logging.getLogger(__name__)

Enqueue = Callable[[str, Mapping[str, str], Alert], None]
"""Keeps an alert for a grouped route's group: (route key, group labels, alert)."""


class Router:
    """Sends each alert to the sinks of the routes it matches (see the module's docstring)."""

    def __init__(
        self,
        routes: tuple[Route, ...],
        sinks: Mapping[str, AlertSink],
        kinds: Mapping[str, KindRule] | None = None,
        fallback: AlertSink | None = None,
    ) -> None:
        self.routes, self.sinks = routes, dict(sinks)
        self.kinds = dict(kinds or {})
        self.fallback = fallback or LogSink()
        self._enqueue: Enqueue | None = None
        self.by_key = {route_key(route): route for route in routes}
        self._templates: dict[tuple[str, str], jinja2.Template] = {
            (kind, key): compile_template(getattr(rule, key))
            for kind, rule in self.kinds.items()
            for key in TEMPLATES
            if getattr(rule, key)
        }

    def prepare(self, alert: Alert) -> Alert:
        """``alert`` as its kind's rule has it sent: severity, summary, description, runbook."""
        rule = self.kinds.get(alert.rule)
        if rule is None:
            return alert
        if rule.severity:
            alert = replace(alert, severity=rule.severity)
        added: dict[str, Any] = {}
        if rule.runbook_url:
            added["runbook_url"] = rule.runbook_url
        fields = context(alert, rule.runbook_url)
        for key in TEMPLATES:
            template = self._templates.get((alert.rule, key))
            if template is None:
                continue
            try:
                added[key] = template.render(fields).strip()
            except Exception as exc:
                logger.warning(
                    "faithmon: the %s template of [rules.%s] failed on an alert (%s); "
                    "it is sent with the plain text",
                    key,
                    alert.rule,
                    type(exc).__name__,
                )
                added[key] = describe(alert)
        return replace(alert, details={**alert.details, **added}) if added else alert

    def queue_to(self, enqueue: Enqueue | None) -> None:
        """Where grouped routes keep their alerts until their group is due (None: send at
        once)."""
        self._enqueue = enqueue

    @property
    def grouping(self) -> bool:
        """Whether any route groups (the worker then runs the notify job)."""
        return any(grouped(route) for route in self.routes)

    def matching(self, labels: Mapping[str, str]) -> list[Route]:
        """The routes an alert with ``labels`` takes, in order."""
        taken: list[Route] = []
        for route in self.routes:
            if not match_all(route.matchers, labels):
                continue
            taken.append(route)
            if not route.continue_:
                break
        return taken

    def targets(self, labels: Mapping[str, str]) -> list[str]:
        """The names of the sinks an alert with ``labels`` goes to, in route order."""
        names: list[str] = []
        for route in self.matching(labels):
            names.extend(n for n in route.sinks if n not in names)
        return names

    def send(self, alert: Alert) -> None:
        alert = self.prepare(alert)
        labels = alert_labels(alert)
        routes = self.matching(labels)
        if not routes:
            self.fallback.send(alert)
            return
        names: list[str] = []
        for route in routes:
            if self._enqueue is not None and grouped(route):
                self._enqueue(route_key(route), group_labels(route, labels), alert)
                continue
            names.extend(n for n in route.sinks if n not in names)
        for name in names:
            # One failing sink never stops the others (as deliver() does across sinks).
            try:
                self.sinks[name].send(alert)
            except Exception:
                logger.exception("faithmon: alert sink %s failed", name)

    def send_group(self, group: AlertGroup) -> bool:
        """Send one group's message to each sink of its route; False when the route is no
        longer in the file (its waiting alerts are dropped, with a log line)."""
        route = self.by_key.get(group.route)
        if route is None:
            logger.warning(
                "faithmon: %d alert notifications dropped: their route is no longer in the "
                "rules file",
                len(group.alerts),
            )
            return False
        for name in route.sinks:
            sink = self.sinks[name]
            try:
                if hasattr(sink, "send_group"):
                    sink.send_group(group)
                else:
                    for alert in group.alerts:
                        sink.send(alert)
            except Exception:
                logger.exception("faithmon: alert sink %s failed", name)
        return True


def _secret(spec: SinkSpec, variable: str, environ: Mapping[str, str]) -> str:
    value = environ.get(variable, "") if variable else ""
    if variable and not value:
        raise ConfigError(f"sinks.{spec.name}: environment variable {variable} is not set")
    return value


def build_sink(
    spec: SinkSpec, options: SinkOptions, environ: Mapping[str, str] | None = None
) -> AlertSink:
    """The sink of one ``[sinks.NAME]``, its secret read from the environment now."""
    env = os.environ if environ is None else environ
    link_local = options.allow_link_local
    try:
        if spec.type == "webhook":
            secret = _secret(spec, spec.secret_env, env)
            return WebhookSink(spec.url, secret, allow_link_local=link_local)
        if spec.type == "slack":
            return SlackSink(spec.url, allow_link_local=link_local)
        if spec.type == "alertmanager":
            return AlertmanagerSink(spec.url, allow_link_local=link_local)
        if spec.type == "email":
            password = _secret(spec, spec.password_env, env)
            return EmailSink(
                spec.host,
                spec.port,
                spec.sender,
                spec.to,
                spec.user,
                password,
                starttls=bool(spec.user),
                allow_link_local=link_local,
            )
    except RefusedAddress as exc:
        hint = "FAITHMON_ALERT_ALLOW_LINK_LOCAL=true allows it"
        raise ConfigError(f"sinks.{spec.name}.url: {exc} ({hint})") from None
    except RefusedDestination as exc:
        raise ConfigError(f"sinks.{spec.name}.url: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"sinks.{spec.name}: {exc}") from None
    return LogSink()


def build_router(
    rules: Rules, options: SinkOptions, environ: Mapping[str, str] | None = None
) -> Router:
    """The router of a loaded rules file; ConfigError (naming the file and the sink) when a
    sink cannot be built: a refused URL, a secret variable unset since the file was checked."""
    try:
        sinks = {name: build_sink(spec, options, environ) for name, spec in rules.sinks.items()}
    except ConfigError as exc:
        raise ConfigError(f"{rules.path}: {exc}") from None
    return Router(rules.routes, sinks, rules.kinds)


def sinks_from_settings(
    rules_path: str, options: SinkOptions, environ: Mapping[str, str] | None = None
) -> list[AlertSink]:
    """The worker's sinks: the rules file's router when ``rules_path`` is set (checked
    first: ConfigError with its problems), else the ``FAITHMON_ALERT_*`` sinks."""
    if not rules_path:
        return make_sinks(options)
    rules = load(rules_path, environ, options.allow_link_local)
    return [build_router(rules, options, environ)]
