"""An entry collected without `exit()` is exited then as abandoned (its
permit comes back, an exception is counted, but no timeout and no adaptive
sample: when it ended is unknown) and a `ResourceWarning` names its point,
as an unclosed file warns."""

from __future__ import annotations

import gc
import sys
import time
import warnings
from typing import Any, List

import pytest

import sds

MESSAGE = "sds.Entry of point 'p' was never exited; exited now as failed, so its permit is returned"


def held(client: sds.Client) -> int:
    return int(client.stats("p", now_ms=1000)["concurrent"])


def failures(client: sds.Client) -> int:
    return int(client.stats("p", now_ms=1000)["exception"])


def test_a_dropped_entry_returns_its_permit_and_warns(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})
    entry = client.enter("p", now_ms=1000)
    assert held(client) == 1
    with pytest.warns(ResourceWarning) as caught:
        del entry
    assert [str(w.message) for w in caught] == [MESSAGE]
    assert caught[0].filename == __file__  # where the last reference went
    assert (held(client), failures(client)) == (0, 1)
    passed = client.enter("p", now_ms=1000)
    assert not passed.downgraded
    passed.exit(now_ms=1000)


def test_a_dropped_downgraded_entry_counts_nothing(client: sds.Client) -> None:
    client.set_strategy("p", {"visitThreshold": 0})
    entry = client.enter("p", now_ms=1000)
    assert entry.downgraded
    with pytest.warns(ResourceWarning) as caught:
        del entry
    assert [str(w.message) for w in caught] == ["sds.Entry of point 'p' was never exited; exited now"]
    assert failures(client) == 0


def test_a_dropped_entry_is_no_timeout_and_no_latency_sample(client: sds.Client) -> None:
    client.set_strategy("slow", {"timeoutThreshold": 1})
    client.set_strategy(
        "adaptive",
        {
            "concurrentThreshold": -1,
            "adaptiveConcurrency": 1,
            "adaptiveMinLimit": 1,
            "adaptiveInitialLimit": 20,
        },
    )
    slow, adaptive = client.enter("slow"), client.enter("adaptive")
    time.sleep(0.02)
    with pytest.warns(ResourceWarning):
        del slow, adaptive
    # Exited as failed, the slow one would be a timeout (20 ms > 1) and the
    # adaptive one an AIMD drop (limit 20 -> 18).
    now = sds.now_ms()
    slow_stats, adaptive_stats = client.stats("slow", now_ms=now), client.stats("adaptive", now_ms=now)
    assert (slow_stats["exception"], slow_stats["timeout"], slow_stats["concurrent"]) == (1, 0, 0)
    assert (adaptive_stats["exception"], adaptive_stats["adaptiveLimit"], adaptive_stats["concurrent"]) == (1, 20, 0)


def test_an_exited_entry_is_dropped_silently(client: sds.Client) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.enter("p", now_ms=1000).exit(now_ms=1000)
        with client.enter("p", now_ms=1000):
            pass
        client.point("p").enter(now_ms=1000).exit()


def test_an_entry_in_a_collected_cycle_is_exited(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})
    holder: List[Any] = [client.point("p").enter(now_ms=1000)]
    holder.append(holder)
    del holder
    assert held(client) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == [MESSAGE]
    assert (held(client), failures(client)) == (0, 1)


def test_an_entry_given_a_time_is_exited_at_its_start(client: sds.Client) -> None:
    # Exited at the wall clock, it would also count a timeout of 50 years.
    client.set_strategy("p", {"timeoutThreshold": 100})
    entry = client.enter("p", now_ms=10_500)
    with pytest.warns(ResourceWarning):
        del entry
    stats = client.stats("p", now_ms=10_500)
    assert (stats["exception"], stats["timeout"], stats["concurrent"]) == (1, 0, 0)


def test_the_exception_in_flight_survives_the_warning(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})

    def leaky() -> None:
        entry = client.enter("p", now_ms=1000)
        assert entry
        raise KeyError("the original")

    with pytest.warns(ResourceWarning, match="point 'p'"):
        with pytest.raises(KeyError, match="the original"):
            leaky()
    assert held(client) == 0


def test_a_warning_made_an_error_cannot_escape_the_collection(
    client: sds.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})
    unraisable: List[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    entry = client.enter("p", now_ms=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del entry
    assert [type(u.exc_value) for u in unraisable] == [ResourceWarning]
    assert str(unraisable[0].exc_value) == MESSAGE
    assert unraisable[0].object is sds.Entry
    assert held(client) == 0


def test_a_wall_clock_entry_is_exited_at_the_wall_clock(client: sds.Client) -> None:
    client.set_strategy("p", {"timeoutThreshold": 100_000})
    entry = client.enter("p")
    with pytest.warns(ResourceWarning):
        del entry
    stats = client.stats("p")
    assert (stats["visit"], stats["exception"], stats["timeout"], stats["concurrent"]) == (1, 1, 0, 0)
