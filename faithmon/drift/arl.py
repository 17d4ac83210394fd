"""Average run lengths of a Bernoulli CUSUM, and the threshold that buys a given one.

The CUSUM of log-likelihood ratios S ← max(0, S + y·ln(q1/q0) + (1−y)·ln((1−q1)/(1−q0)))
is a Markov chain once S is put on a grid: ``STEPS`` grid steps per downward move,
so an upward move is a whole number of steps too (rounded; the error is a small
fraction of a step). The expected number of records until S first reaches h,
starting from zero, solves a linear system whose matrix is banded (each state
reaches at most ``down`` states below and ``up`` above), so plain banded
elimination solves it in O(states·up·down) with no library (Brook and Evans).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

STEPS = 2
"""Grid steps per downward move. The upward move is rounded to the grid by at most
half a step in ``STEPS * ln(q1/q0) / -ln((1-q1)/(1-q0))`` (a few % of it); the run
lengths stay exact for the detector as rounded, and a coarse grid keeps them cheap
(a few ms each)."""

MAX_THRESHOLD = 40.0
"""No detector waits for more evidence than this (about 40 nats): past it a
threshold buys silence, not a useful detector."""

# Gauss-Hermite nodes and weights for E[f(Z)], Z ~ N(0, 1), five points.
_NODES = (-2.856970, -1.355626, 0.0, 1.355626, 2.856970)
_WEIGHTS = (0.011257, 0.222076, 0.533333, 0.222076, 0.011257)


def increments(q0: float, q1: float) -> tuple[float, float]:
    """The statistic's move on an unsupported record and on a supported one.

    The detector moves by exactly these grid-rounded amounts, so that
    :func:`run_length` is exact for it rather than an approximation.
    """
    down = math.log((1 - q1) / (1 - q0))
    delta = -down / STEPS
    return max(1, round(math.log(q1 / q0) / delta)) * delta, down


def _grid(q0: float, q1: float, h: float) -> tuple[int, int, int]:
    up, down = increments(q0, q1)
    delta = -down / STEPS
    return round(up / delta), STEPS, max(1, math.ceil(h / delta - 1e-9))


def run_length(q: float, q0: float, q1: float, h: float) -> float:
    """Expected records until the CUSUM tuned for q0 → q1 reaches ``h`` when the true rate is q."""
    a, b, n = _grid(q0, q1, h)
    width = a + b + 1
    # band[i][j - i + b] holds A[i][j] for A = I - P restricted to the live states.
    band = [[0.0] * width for _ in range(n)]
    rhs = [1.0] * n
    for i in range(n):
        band[i][b] += 1.0
        if i + a < n:
            band[i][a + b] -= q
        low = max(0, i - b)
        band[i][low - i + b] -= 1.0 - q
    for k in range(n):
        pivot_row = band[k]
        pivot = pivot_row[b]
        for i in range(k + 1, min(n, k + b + 1)):
            row = band[i]
            factor = row[k - i + b] / pivot
            if factor == 0.0:
                continue
            for j in range(k, min(n, k + a + 1)):
                row[j - i + b] -= factor * pivot_row[j - k + b]
            rhs[i] -= factor * rhs[k]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        row = band[i]
        total = rhs[i]
        for j in range(i + 1, min(n, i + a + 1)):
            total -= row[j - i + b] * x[j]
        x[i] = total / row[b]
    return x[0]


def alarm_rate(q: float, q0: float, q1: float, h: float, spread: float = 0.0) -> float:
    """False alarms per record when the in-control rate is q, give or take ``spread``.

    ``spread`` is the standard deviation of the rate the detector really sees while
    nothing is wrong (baseline estimation error, slow wobble): the alarm rate is the
    mean of 1/ARL over a normal spread of rates, which is what a team running many
    segments, each a little off its baseline, sees.
    """
    if spread <= 0:
        return 1.0 / run_length(q, q0, q1, h)
    total = 0.0
    for z, w in zip(_NODES, _WEIGHTS, strict=True):
        rate = min(max(q + z * spread, 1e-4), 0.999)
        total += w / run_length(rate, q0, q1, h)
    return total


@lru_cache(maxsize=4096)
def _threshold(q: float, q0: float, q1: float, target: float, spread: float) -> float:
    up, down = increments(q0, q1)
    drift = q * up + (1 - q) * down  # mean step per record at the rate q
    if drift >= 0:
        raise ValueError(f"a rate of {q:.3f} drifts upward: no threshold keeps it quiet")

    def miss(h: float) -> float:
        return -math.log(alarm_rate(q, q0, q1, h, spread)) - math.log(target)

    # Wald's approximation ARL ≈ e^(θh)/|drift| gives the first guess; the secant on
    # ln ARL, which is close to linear in h, finishes in a few solves. It is kept
    # inside [0.5, MAX_THRESHOLD], and a target out of reach there gets the bound.
    h0 = min(max(1.0, math.log(max(target * -drift, 1.0))), MAX_THRESHOLD - 1.0)
    h1 = h0 + 1.0
    f0, f1 = miss(h0), miss(h1)
    for _ in range(12):
        if abs(f1) < 0.01 or f1 == f0:
            break
        step = h1 - f1 * (h1 - h0) / (f1 - f0)
        h0, h1, f0 = h1, min(max(0.5, step), MAX_THRESHOLD), f1
        f1 = miss(h1)
        if h1 == MAX_THRESHOLD and f1 < 0:
            break
    return h1


_SOLVED: dict[str, float] = {}
"""Thresholds and run lengths solved in this process (or learnt from a stored run), by
their rounded inputs: solving one costs milliseconds, a run asks for a hundred."""

_KEEP = 4096


def _remember(key: str, value: float) -> float:
    if len(_SOLVED) >= _KEEP:
        del _SOLVED[next(iter(_SOLVED))]
    _SOLVED[key] = value
    return value


def solved() -> dict[str, float]:
    """What was solved so far, to store beside the detectors' state."""
    return dict(_SOLVED)


def forget() -> None:
    """Drop what this process solved (benchmarks: a fresh CLI process knows nothing)."""
    _SOLVED.clear()
    _threshold.cache_clear()


def learn(known: dict[str, float]) -> None:
    """Take solutions stored by an earlier run (another process: the CLI, a restart)."""
    for key, value in known.items():
        if isinstance(value, int | float) and key not in _SOLVED:
            _remember(key, float(value))


def delay_of(q0: float, q1: float, h: float) -> float:
    """Expected records for the CUSUM tuned for q0 → q1 to reach ``h`` after the shift."""
    key = f"d|{q0:.6g}|{q1:.6g}|{h:.6g}"
    known = _SOLVED.get(key)
    return known if known is not None else _remember(key, run_length(q1, q0, q1, h))


def threshold_for(
    q0: float,
    q1: float,
    target_records: float,
    rate: float | None = None,
    spread: float = 0.0,
) -> float:
    """The h whose average run length is ``target_records`` records when the true
    rate is ``rate`` (default: q0, the in-control run length), give or take ``spread``
    (see :func:`alarm_rate`).

    Rounded inputs share cached answers: the worker asks again every run.
    ValueError when ``rate`` is so high that the CUSUM drifts upward.
    """
    target = float(f"{max(target_records, 2.0):.2g}")
    q = q0 if rate is None else rate
    key = (round(q, 4), round(q0, 4), round(q1, 4), target, round(spread, 4))
    name = "h|" + "|".join(f"{part:.6g}" for part in key)
    known = _SOLVED.get(name)
    return known if known is not None else _remember(name, round(_threshold(*key), 3))


def cusum(
    ys: Sequence[bool], q0: float, q1: float, weights: Sequence[float] | None = None
) -> tuple[float, int | None]:
    """Final statistic and the index where it last rose from zero (None if it is zero).

    Steps are :func:`.arl.increments`, times each record's weight relative to the
    mean weight (1 when unweighted).
    """
    up, down = increments(q0, q1)
    scale = len(weights) / sum(weights) if weights else 1.0
    statistic = 0.0
    start: int | None = None
    for i, y in enumerate(ys):
        step = up if y else down
        if weights:
            step *= weights[i] * scale
        statistic = max(0.0, statistic + step)
        if statistic <= 1e-12:
            statistic, start = 0.0, None
        elif start is None:
            start = i
    return statistic, start


def first_alarm(ys: Sequence[bool], q0: float, q1: float, threshold: float) -> int | None:
    """Index of the record at which the CUSUM first reaches ``threshold`` (benchmarks, replay)."""
    up, down = increments(q0, q1)
    statistic = 0.0
    for i, y in enumerate(ys):
        statistic = max(0.0, statistic + (up if y else down))
        if statistic >= threshold - 1e-9:
            return i
    return None
