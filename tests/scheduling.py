"""The order the tests are handed to pytest-xdist's workers in (a plugin of conftest)."""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(trylast=True)  # on what -m left
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist's work stealing each worker starts with one contiguous share of
    the tests and idle workers take from the end of the others' shares: a long module
    there starts last and holds the run up. Each ``heavy`` module (whole, so its module
    fixtures are built once) goes to the front of a share, in turn."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2:
        return
    heavy: dict[str, list[pytest.Item]] = {}
    rest: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("heavy"):
            heavy.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            rest.append(item)
    if not heavy:
        return
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for n, module in enumerate(heavy.values()):
        shares[n % workers].extend(module)
    # The shares as the scheduler cuts them: each node in turn gets what is left over
    # the nodes left.
    ordered: list[pytest.Item] = []
    left = len(items)
    for n, share in enumerate(shares):
        size = left // (workers - n)
        take = max(0, size - len(share))
        ordered.extend(share + rest[:take])
        rest = rest[take:]
        left -= max(size, len(share))
    items[:] = ordered + rest
