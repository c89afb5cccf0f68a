"""The Python API, call by call, with injected time."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import pathlib
import pickle
import sys
import time
from typing import List, Optional, Tuple

import pytest

import sds


def test_the_installed_package_is_tested() -> None:
    assert "site-packages" in sds.__file__, sds.__file__


def test_version_is_the_crate_version() -> None:
    cargo = (pathlib.Path(__file__).parents[2] / "Cargo.toml").read_text()
    assert f'version = "{sds.__version__}"' in cargo
    assert sds.__version__ == importlib.metadata.version("sds-native")


def decided(entry: sds.Entry) -> Optional[str]:
    """The entry's reason, once it is exited at its start."""
    entry.exit(now_ms=entry.start_ms)
    return entry.reason


def test_enter_and_exit_count_a_visit(client: sds.Client) -> None:
    entry = client.enter("p", now_ms=1000)
    assert (entry.downgraded, entry.reason, entry.start_ms, entry.exited) == (False, None, 1000, False)
    entry.exit(now_ms=1001)
    assert entry.exited
    assert client.stats("p", now_ms=1001)["visit"] == 1


def test_exit_settles_once(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})
    entry = client.enter("p", now_ms=1000)
    assert client.stats("p", now_ms=1000)["concurrent"] == 1
    entry.exit(now_ms=1000)
    entry.exit(now_ms=1000)
    assert client.stats("p", now_ms=1000)["concurrent"] == 0
    assert decided(client.enter("p", now_ms=1000)) is None


def test_strategy_keywords_dict_and_json_are_the_same(client: sds.Client) -> None:
    by_keyword = sds.Strategy(visit_threshold=3, delay_time=20_000, retry_interval=1000)
    by_dict = sds.Strategy.from_dict({"visitThreshold": 3, "delayTime": 20_000, "retryInterval": 1000, "point": "p"})
    by_json = sds.Strategy.from_json('{"point": "p", "visitThreshold": 3, "delayTime": 20000, "retryInterval": 1000}')
    assert by_keyword == by_dict == by_json
    assert hash(by_keyword) == hash(by_json)
    assert by_keyword.visit_threshold == 3 and by_keyword.concurrent_threshold == -1
    assert by_keyword.to_dict()["delayTime"] == 20_000
    assert repr(by_keyword) == "Strategy(visit_threshold=3, delay_time=20000, retry_interval=1000)"
    assert sds.Strategy.fields()[0] == "visit_threshold"
    assert pickle.loads(pickle.dumps(by_keyword)) == by_keyword == copy.copy(by_keyword)
    for form in (by_keyword, by_keyword.to_dict(), json.dumps(by_keyword.to_dict())):
        client.set_strategy("p", form)
        assert client.strategy("p") == by_keyword


def test_visit_threshold_downgrades_with_reason(client: sds.Client) -> None:
    client.set_strategy("p", sds.Strategy(visit_threshold=2))
    words = []
    for _ in range(4):
        entry = client.enter("p", now_ms=5000)
        words.append(entry.reason)
        entry.exit(now_ms=5000)
    assert words == [None, None, "VISIT", "VISIT"]
    stats = client.stats("p", now_ms=5000)
    assert (stats["visit"], stats["downgrade"]) == (4, 2)


def test_remove_strategy_keeps_counters(client: sds.Client) -> None:
    client.set_strategy("p", {"visitThreshold": 0})
    assert decided(client.enter("p", now_ms=1000)) == "VISIT"
    client.remove_strategy("p")
    assert client.strategy("p") is None
    assert decided(client.enter("p", now_ms=1000)) is None
    assert client.stats("p", now_ms=1000)["visit"] == 2
    client.remove_strategy("never-seen")


def test_pressure_test_traffic(client: sds.Client) -> None:
    client.set_strategy("p", {"pressureTestDowngrade": 1})
    assert decided(client.enter("p", now_ms=1, pressure_test=True)) == "PRESSURE_TEST"
    assert decided(client.enter("p", now_ms=1)) is None


def test_context_manager_counts_the_exception_and_exits(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 5})
    with pytest.raises(KeyError):
        with client.enter("p") as entry:
            assert client.stats("p")["concurrent"] == 1
            raise KeyError("boom")
    assert entry.exited
    stats = client.stats("p")
    assert (stats["exception"], stats["concurrent"]) == (1, 0)


def test_downgraded_is_not_counted_as_an_exception(client: sds.Client) -> None:
    with pytest.raises(sds.Downgraded):
        with client.enter("p"):
            raise sds.Downgraded("p", "VISIT")
    entry = client.enter("p")
    entry.error(sds.Downgraded("p", "VISIT"))
    entry.exit()
    assert client.stats("p")["exception"] == 0


def test_error_marks_and_exit_counts_at_start_second(client: sds.Client) -> None:
    entry = client.enter("p", now_ms=10_500)
    entry.error(RuntimeError("failed"))
    assert client.stats("p", now_ms=10_500)["exception"] == 0
    entry.exit(now_ms=12_000)
    assert client.stats("p", now_ms=12_000)["exception"] == 1
    late = client.enter("p", now_ms=12_000)
    late.exit(now_ms=12_000)
    late.error(RuntimeError("late"))  # after exit: ignored
    assert client.stats("p", now_ms=12_000)["exception"] == 1


def test_timeout_is_counted_by_exit(client: sds.Client) -> None:
    client.set_strategy("p", {"timeoutThreshold": 100})
    client.enter("p", now_ms=1000).exit(now_ms=1101)
    client.enter("p", now_ms=1000).exit(now_ms=1100)
    assert client.stats("p", now_ms=1200)["timeout"] == 1


def test_stats_shape(client: sds.Client) -> None:
    client.enter("p", now_ms=1000).exit(now_ms=1000)
    stats = client.stats("p", now_ms=10_000)
    assert stats == {
        "visit": 1, "exception": 0, "timeout": 0, "downgrade": 0, "concurrent": 0,
        "adaptiveLimit": 0, "adaptiveMinRttUs": 0, "adaptiveRttUs": 0, "adaptiveLongRttUs": 0,
        "lastCycle": {"visitNum": 1, "exceptionNum": 0, "timeoutNum": 0, "downgradeNum": 0, "concurrentNum": 1},
    }
    assert client.stats("nobody", now_ms=1)["visit"] == 0


def test_stats_keys_are_the_typed_dicts(client: sds.Client) -> None:
    stats = client.stats("p", now_ms=1)
    assert list(stats) == list(sds.Stats.__annotations__)
    assert list(stats["lastCycle"]) == list(sds.CycleStats.__annotations__)
    assert sds.Stats.__required_keys__ == frozenset(stats)
    assert client.point("p").stats(now_ms=1) == stats


def test_an_entry_given_a_time_exits_on_that_timeline(client: sds.Client) -> None:
    # At the wall clock, these exits would count a timeout of 50 years.
    client.set_strategy("p", {"timeoutThreshold": 100})
    with client.enter("p", now_ms=10_500):
        pass
    with pytest.raises(KeyError):
        with client.point("p").enter(now_ms=10_500):
            raise KeyError("failed")
    client.enter("p", now_ms=10_500).exit()
    stats = client.stats("p", now_ms=10_500)
    assert (stats["visit"], stats["exception"], stats["timeout"], stats["concurrent"]) == (3, 1, 0, 0)
    # A wall-clock entry exits at the wall clock (a smoke test: real time).
    client.set_strategy("w", {"timeoutThreshold": 1})
    with client.enter("w"):
        time.sleep(0.02)
    assert client.stats("w")["timeout"] == 1


def test_on_downgrade_listeners_get_point_reason_time(client: sds.Client) -> None:
    seen: List[Tuple[str, str, int]] = []

    @client.on_downgrade
    def listener(point: str, reason: str, time_ms: int) -> None:
        seen.append((point, reason, time_ms))

    client.set_strategy("p", {"visitThreshold": 0})
    client.enter("p", now_ms=7000).exit(now_ms=7000)
    client.point("p").enter(now_ms=7001).exit(now_ms=7001)
    client.enter("q", now_ms=7002).exit(now_ms=7002)
    assert seen == [("p", "VISIT", 7000), ("p", "VISIT", 7001)]


def test_a_failing_listener_does_not_break_the_caller(client: sds.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    unraisable: List[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_value))

    def bad(point: str, reason: str, time_ms: int) -> None:
        raise RuntimeError("listener bug")

    client.on_downgrade(bad)
    client.on_downgrade(lambda *event: calls.append(event))
    client.set_strategy("p", {"visitThreshold": 0})
    assert decided(client.enter("p", now_ms=1)) == "VISIT" and calls == [("p", "VISIT", 1)]
    assert [str(e) for e in unraisable] == ["listener bug"]


def test_point_handle(client: sds.Client) -> None:
    handle = client.point("orders")
    assert isinstance(handle, sds.Point) and handle.name == "orders"
    client.set_strategy("orders", {"visitThreshold": 1})
    assert decided(handle.enter(now_ms=1)) is None
    assert decided(handle.enter(now_ms=1)) == "VISIT"
    assert handle.stats(now_ms=1) == client.stats("orders", now_ms=1)
    assert len(client) == 1


def test_the_real_clock_is_wall_clock_ms(client: sds.Client) -> None:
    before = time.time_ns() // 1_000_000
    entry = client.enter("p")
    after = time.time_ns() // 1_000_000
    assert before <= entry.start_ms <= after
    entry.exit()
    assert abs(sds.now_ms() - time.time() * 1000) < 50


def test_sliding_window() -> None:
    w = sds.SlidingWindow(bucket_ms=100, buckets=5)
    assert (w.bucket_ms, w.buckets, w.ring) == (100, 5, 15)
    assert w.increment(1000) == (1, 1)
    assert w.add(4, now_ms=1050) == (5, 5)
    assert w.increment(1100) == (1, 6)
    assert (w.sum(1100), w.bucket(1100), w.bucket(1000)) == (6, 1, 5)
    assert w.sum(1500) == 1  # the 1000 bucket has left the window
    assert w.last_whole_cycle(1500) == 6  # cycle [1000, 1500)
    assert w.sum(100_000) == 0
    assert sds.SlidingWindow().ring == 30
    assert sds.SlidingWindow(buckets=2, ring=4).ring == 4
    now = sds.SlidingWindow()
    assert now.increment() == (1, 1)


def test_sliding_window_late_events_set_and_max() -> None:
    w = sds.SlidingWindow()  # SDS's counters: 1 s x 10, ring 30
    w.add(2, now_ms=5000)
    # An event of 3 s recorded at 12 s lands in the bucket of 3 s...
    assert w.add_at(3000, 4, now_ms=12_000) == 4
    assert (w.bucket(3500), w.sum(12_000)) == (4, 6)
    # ...but at 40 s the ring no longer holds 3 s: it counts at the present.
    assert w.add_at(3000, 1, now_ms=40_000) == 1
    assert w.bucket(40_000) == 1
    assert w.add_at(41_000, 2, now_ms=40_000) == 3  # a start after the present
    assert w.add_at(39_000, 2**64 - 1, now_ms=40_000) == 2**32 - 1
    w.set(7, now_ms=50_000)
    assert w.fetch_max(9, now_ms=50_000) == 9
    assert w.fetch_max(2, now_ms=50_000) == 9
    w.set(2**64 - 1, now_ms=51_000)
    assert w.bucket(51_000) == 2**32 - 1
    w.set(5, now_ms=61_000)  # the cycle after 50 s's holds 61 s
    w.clear_next_cycle(now_ms=50_000)
    assert (w.bucket(61_000), w.bucket(50_000)) == (0, 9)
    assert w.clear_next_cycle() is None
    # On the real clock, buckets of 1 s: a set and a read either side of a
    # second's end see two buckets, so that pair is taken again.
    for _ in range(5):
        before = sds.now_ms()
        assert w.set(1) is None
        got = w.bucket()
        if sds.now_ms() // 1000 == before // 1000:
            break
    assert got == 1


def test_str_subclasses_name_the_point_by_value(client: sds.Client) -> None:
    class Sneaky(str):
        def __hash__(self) -> int:
            return hash("other")

        def __eq__(self, other: object) -> bool:
            return True

    client.enter("other", now_ms=1).exit(now_ms=1)
    client.enter(Sneaky("mine"), now_ms=1).exit(now_ms=1)
    client.enter(Sneaky("mine"), now_ms=1).exit(now_ms=1)
    assert client.stats("other", now_ms=1)["visit"] == 1
    assert client.stats("mine", now_ms=1)["visit"] == 2


def test_the_clock_is_named_and_agrees_with_the_system() -> None:
    import time

    from sds import _native

    assert _native.CLOCK in ("CLOCK_REALTIME", "CLOCK_REALTIME_COARSE", "SystemTime")
    before = int(time.time() * 1000)
    now = _native.now_ms()
    after = int(time.time() * 1000)
    # The coarse clock may lag the exact one by its 1 ms tick.
    assert before - 1 <= now <= after


def test_error_counts_exceptions_but_not_none_or_downgraded(client: sds.Client) -> None:
    for exc, counted in ((None, 0), (sds.Downgraded("p", "VISIT"), 0), (ValueError("x"), 1), (KeyboardInterrupt(), 1)):
        before = client.stats("p", now_ms=1000)["exception"]
        entry = client.enter("p", now_ms=1000)
        entry.error(exc)
        entry.exit(now_ms=1000)
        assert client.stats("p", now_ms=1000)["exception"] - before == counted, repr(exc)


def test_error_takes_an_exception_or_none(client: sds.Client) -> None:
    entry = client.enter("p", now_ms=1000)
    for bad in (5, "boom", ValueError):
        with pytest.raises(sds.InvalidArgument, match="error\\(\\) takes an exception instance or None"):
            entry.error(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        entry.error()  # type: ignore[call-arg]
    entry.exit(now_ms=1000)
    assert client.stats("p", now_ms=1000)["exception"] == 0
