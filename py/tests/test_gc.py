"""Cycles through listeners and guarded functions are collected."""

from __future__ import annotations

import gc
import weakref
from typing import Callable

import sds


class Marker:
    pass


def assert_collected(make: Callable[[sds.Client, Marker], None]) -> None:
    """What `make` builds with a client and a marker, in a cycle through the
    client, is collected: the marker too."""
    marker = Marker()
    alive = weakref.ref(marker)
    make(sds.Client(capacity=4), marker)
    del marker
    gc.collect()
    assert alive() is None


def test_a_listener_referring_to_its_client_is_collected() -> None:
    def make(client: sds.Client, held: Marker) -> None:
        @client.on_downgrade
        def listener(point: str, reason: str, time_ms: int) -> None:
            client.stats(point)  # the listener refers back to its client
            assert held

    assert_collected(make)


def test_a_handle_keeps_its_client_and_listeners_alive() -> None:
    seen = []

    def make() -> sds.Point:
        client = sds.Client(capacity=4)
        client.set_strategy("p", {"visitThreshold": 0})
        client.on_downgrade(lambda point, reason, t: seen.append((client.capacity, reason)))
        return client.point("p")

    handle = make()
    gc.collect()
    handle.enter(now_ms=1).exit(now_ms=1)
    assert seen == [(4, "VISIT")]


def test_a_guarded_function_in_a_cycle_is_collected() -> None:
    def make(client: sds.Client, held: Marker) -> None:
        @client.guard("p")
        def recurse(n: int) -> int:
            assert held
            return 0 if n == 0 else recurse(n - 1)

        assert recurse(3) == 0

    assert_collected(make)
