"""The base twins a process keeps: built once per (app, seed), and a twin the full cache drops is collected."""

from __future__ import annotations

import gc
import weakref

from aoi.env.twin_backend import base_twin


def test_a_twin_dropped_from_the_full_cache_is_collected_at_the_next_build():
    base_twin.cache_clear()
    try:
        size = base_twin.cache_info().maxsize
        first = weakref.ref(base_twin("hotel-reservation", 100))
        assert base_twin("hotel-reservation", 100) is first()  # built once
        for seed in range(101, 101 + size):  # the last of these drops the first twin
            base_twin("hotel-reservation", seed)
        assert gc.get_freeze_count() > 0  # frozen, so no ordinary collection would find it
        base_twin("hotel-reservation", 100 + size + 1)
        assert first() is None
    finally:
        base_twin.cache_clear()
        gc.unfreeze()  # the twins this test dropped are garbage for the next collection, not kept frozen
