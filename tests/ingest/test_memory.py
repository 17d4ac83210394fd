"""After a burst drains, freed memory is given back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes.util

import pytest

from faithmon.ingest.memory import Releaser

MB = 1 << 20


@pytest.mark.skipif(ctypes.util.find_library("c") is None, reason="no C library to trim")
def test_trims_once_the_buffer_drains_from_a_high_mark() -> None:
    """A peak over the floor, then a fall below a quarter of it, trims once."""
    releaser = Releaser(floor=32 * MB)
    for held in (10 * MB, 64 * MB, 40 * MB, 17 * MB):
        releaser.observe(held)
    assert releaser.trims == 0
    releaser.observe(15 * MB)
    assert releaser.trims == 1
    releaser.observe(1 * MB)  # the peak restarted at 15 MB: under the floor, nothing to do
    assert releaser.trims == 1


def test_small_buffers_never_trim() -> None:
    """Below the floor, draining is not worth a trim."""
    releaser = Releaser(floor=32 * MB)
    for held in (31 * MB, 0, 31 * MB, 0):
        releaser.observe(held)
    assert releaser.trims == 0
