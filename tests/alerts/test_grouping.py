"""Grouped routes decide what each group's message carries, and when: a group waits
group_wait, spaces its messages by group_interval, and tells a firing incident at most once
per repeat_interval however it flaps."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from faithmon.alerts.grouping import (
    REPEAT_INTERVAL,
    Timing,
    Told,
    alert_key,
    forget_before,
    group_labels,
    grouped,
    is_due,
    latest,
    route_key,
    select,
    told_from_json,
    told_to_json,
)
from faithmon.alerts.matchers import parse_all
from faithmon.alerts.rules import Route
from faithmon.model import Alert
from tests.timing import days_ago

T0 = days_ago(1, hour=9)
FIRING = Alert(
    "faithfulness_drift", {"model": "m2", "tenant": "acme"}, "firing", "critical", T0, T0
)
LABELS = {"model": "m2", "tenant": "acme", "kind": "faithfulness_drift", "severity": "critical"}
WHEN = Timing(timedelta(seconds=30), timedelta(minutes=5), timedelta(hours=4))


def at(alert: Alert, minutes: float, state: str) -> Alert:
    when = T0 + timedelta(minutes=minutes)
    return replace(alert, state=state, updated_at=when)  # type: ignore[arg-type]


def test_a_flapping_incident_is_told_once_per_repeat_interval() -> None:
    """Firing, resolved, firing, resolved within the repeat interval: the first firing and
    its resolution are told, the flap is not; after the interval it is told again."""
    told: dict[str, Told] = {}
    sent = []
    for minutes, state in [(0, "firing"), (10, "resolved"), (20, "firing"), (30, "resolved")]:
        now = T0 + timedelta(minutes=minutes)
        chosen, told = select([at(FIRING, minutes, state)], told, now, REPEAT_INTERVAL)
        sent.append([a.state for a in chosen])
    assert sent == [["firing"], ["resolved"], [], []]
    later = T0 + timedelta(hours=4, minutes=1)
    chosen, told = select([at(FIRING, 241, "firing")], told, later, REPEAT_INTERVAL)
    assert [a.state for a in chosen] == ["firing"]
    assert told[alert_key(FIRING)] == Told("firing", later)


def test_a_firing_incident_is_reminded_only_after_the_repeat_interval() -> None:
    """A reminder of a still-firing incident inside the interval is dropped."""
    _, told = select([FIRING], {}, T0, timedelta(hours=1))
    soon, _ = select(
        [at(FIRING, 30, "firing")], told, T0 + timedelta(minutes=30), timedelta(hours=1)
    )
    late, _ = select(
        [at(FIRING, 61, "firing")], told, T0 + timedelta(minutes=61), timedelta(hours=1)
    )
    assert soon == [] and len(late) == 1


def test_pending_is_not_told_and_an_unheard_resolution_is_not_either() -> None:
    """A pending alert (held by `for`) says nothing; nor does its end if it never fired."""
    chosen, told = select([at(FIRING, 0, "pending")], {}, T0, REPEAT_INTERVAL)
    assert chosen == [] and told == {}
    chosen, told = select([at(FIRING, 5, "resolved")], told, T0, REPEAT_INTERVAL)
    assert chosen == [] and told == {}


def test_only_each_incidents_newest_change_is_sent() -> None:
    """Two changes of one incident in one group's wait: the newest stands."""
    other = replace(FIRING, segment={"model": "m3"})
    changes = [at(FIRING, 0, "firing"), other, at(FIRING, 1, "firing")]
    assert latest(changes) == [changes[2], other]


def test_a_group_waits_then_keeps_its_interval() -> None:
    """The first message waits group_wait; the next one waits group_interval after it."""
    assert not is_due(T0, None, T0 + timedelta(seconds=29), WHEN)
    assert is_due(T0, None, T0 + timedelta(seconds=30), WHEN)
    sent = T0 + timedelta(seconds=30)
    assert not is_due(T0 + timedelta(minutes=1), sent, T0 + timedelta(minutes=4), WHEN)
    assert is_due(T0 + timedelta(minutes=1), sent, T0 + timedelta(minutes=6), WHEN)


def test_group_labels_by_name_every_label_or_none() -> None:
    """group_by names the labels; "..." takes them all; none makes the route one group."""
    by = Route(parse_all([]), ("a",), group_by=("tenant", "route"))
    assert group_labels(by, LABELS) == {"tenant": "acme", "route": ""}
    assert group_labels(replace(by, group_by=("...",)), LABELS) == LABELS
    one = Route(parse_all([]), ("a",), repeat_interval=timedelta(hours=1))
    assert group_labels(one, LABELS) == {} and grouped(one)
    assert not grouped(Route(parse_all([]), ("a",)))


def test_route_keys_follow_what_a_route_is() -> None:
    """The same route has the same key; another matcher makes another."""
    first = Route(parse_all(["tenant=acme"]), ("a",), group_by=("kind",))
    assert route_key(first) == route_key(replace(first, group_wait=timedelta(seconds=5)))
    assert route_key(first) != route_key(replace(first, matchers=parse_all(["tenant=b"])))


def test_told_round_trips_and_old_resolutions_are_forgotten() -> None:
    """What a group told survives the store; resolved incidents past the interval go."""
    told = {"a": Told("firing", T0), "b": Told("resolved", T0 - timedelta(hours=5))}
    assert told_from_json(told_to_json(told)) == told
    assert forget_before(told, T0 - timedelta(hours=4)) == {"a": told["a"]}
