"""Adaptive concurrency (issue 27) through the public API: the four fields
after the shaping rows, their validation word for word, AIMD on a point
(the initial limit caps requests in flight, busy exits raise it, a failure
backs it off by 0.9), what each algorithm shows in ``stats()``, and a
change of algorithm starting afresh. Explicit times throughout; the
formulas are core/src/adaptive/README.md's, the host-wide behaviour is in
test_host_wide_shaping.py."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

import sds
from helpers import refused_everywhere

T = 1_700_000_000_000
ADAPTIVE_FIELDS = ["adaptive_concurrency", "adaptive_min_limit", "adaptive_max_limit", "adaptive_initial_limit"]
ADAPTIVE_STATS = ["adaptiveLimit", "adaptiveMinRttUs", "adaptiveRttUs", "adaptiveLongRttUs"]
AIMD, VEGAS, GRADIENT2, GRADIENT, KNEE = 1, 2, 3, 4, 5


def adaptive(stats: sds.Stats) -> List[int]:
    return [stats[k] for k in ADAPTIVE_STATS]  # type: ignore[literal-required]


# The fields -------------------------------------------------------------


def test_the_adaptive_fields_come_last_with_their_defaults() -> None:
    assert sds.Strategy.fields()[18:] == ADAPTIVE_FIELDS and len(sds.Strategy.fields()) == 22
    default = sds.Strategy()
    assert [getattr(default, f) for f in ADAPTIVE_FIELDS] == [-1, -1, -1, -1]
    s = sds.Strategy.from_json('{"adaptiveConcurrency": 3, "adaptiveMinLimit": 5, "adaptiveMaxLimit": 500,'
                               ' "adaptiveInitialLimit": 50}')
    assert s == sds.Strategy(adaptive_concurrency=3, adaptive_min_limit=5, adaptive_max_limit=500,
                             adaptive_initial_limit=50)
    assert [s.to_dict()[k] for k in ("adaptiveConcurrency", "adaptiveMinLimit", "adaptiveMaxLimit",
                                     "adaptiveInitialLimit", "concurrentThreshold")] == [3, 5, 500, 50, -1]
    assert sds.Strategy.from_dict(s.to_dict()) == s
    assert repr(sds.Strategy(adaptive_concurrency=2)) == "Strategy(adaptive_concurrency=2)"
    # Every algorithm with its own defaults, and the edges that are valid.
    for code in (AIMD, VEGAS, GRADIENT2, GRADIENT, KNEE):
        sds.Strategy(adaptive_concurrency=code)
    sds.Strategy(adaptive_concurrency=VEGAS, adaptive_min_limit=1, adaptive_max_limit=1_000_000,
                 adaptive_initial_limit=1)
    sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=7, adaptive_max_limit=7, adaptive_initial_limit=7)


INVALID = [
    # (keywords, field, the core's message), as conformance/strategies.json's last cases
    (dict(adaptive_concurrency=6), "adaptiveConcurrency",
     "invalid strategy: adaptiveConcurrency must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), 4 (GRADIENT) or 5 (KNEE),"
     " or negative: off"),
    (dict(adaptive_concurrency=0), "adaptiveConcurrency",
     "invalid strategy: adaptiveConcurrency must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), 4 (GRADIENT) or 5 (KNEE),"
     " or negative: off"),
    (dict(adaptive_concurrency=1, concurrent_threshold=10), "concurrentThreshold",
     "invalid strategy: concurrentThreshold must be negative with adaptiveConcurrency"
     " (the limit is found from latency)"),
    (dict(adaptive_max_limit=10), "adaptiveMaxLimit", "invalid strategy: adaptiveMaxLimit needs adaptiveConcurrency"),
    (dict(adaptive_min_limit=1), "adaptiveMinLimit", "invalid strategy: adaptiveMinLimit needs adaptiveConcurrency"),
    (dict(adaptive_initial_limit=1), "adaptiveInitialLimit",
     "invalid strategy: adaptiveInitialLimit needs adaptiveConcurrency"),
    (dict(adaptive_concurrency=2, adaptive_min_limit=0), "adaptiveMinLimit",
     "invalid strategy: adaptiveMinLimit must be >= 1 (or negative: the algorithm's default)"),
    (dict(adaptive_concurrency=2, adaptive_max_limit=1_000_001), "adaptiveMaxLimit",
     "invalid strategy: adaptiveMaxLimit must be <= 1000000"),
    (dict(adaptive_concurrency=1, adaptive_max_limit=10), "adaptiveMaxLimit",
     "invalid strategy: adaptiveMaxLimit must be >= the minimum limit"),
    (dict(adaptive_concurrency=3, adaptive_initial_limit=500), "adaptiveInitialLimit",
     "invalid strategy: adaptiveInitialLimit must be within the minimum and maximum limits"),
]


@pytest.mark.parametrize("kwargs,field,message", INVALID, ids=[f"{f}:{m[18:60]}" for _, f, m in INVALID])
def test_the_adaptive_row_is_validated_with_the_core_messages(kwargs: Dict[str, int], field: str,
                                                              message: str) -> None:
    refused_everywhere(kwargs, field, message, kept={"adaptiveConcurrency": AIMD})


def test_the_messages_are_the_conformance_cases() -> None:
    """The last cases of conformance/strategies.json, through the binding's
    JSON path: the list above must not drift from them."""
    path = Path(__file__).resolve().parents[2] / "conformance" / "strategies.json"
    cases = [c for c in json.loads(path.read_text())["cases"] if "adaptive" in c["json"] and "error" in c]
    assert len(cases) >= 6
    ours = {m for _, _, m in INVALID}
    for case in cases:
        with pytest.raises(sds.InvalidStrategy) as info:
            sds.Strategy.from_json(case["json"])
        assert (info.value.code, str(info.value)) == (case["error"], case["message"])
        assert case["message"] in ours


# AIMD on a point --------------------------------------------------------


@pytest.fixture(params=["private", "handle", "shared"])
def aimd(request: Any, tmp_path: Path) -> Iterator[Callable[..., sds.Point]]:
    """A factory: an AIMD point on a private table (by name, through
    ``client.enter``), through a point handle, or on a shared table."""

    def make(**limits: int) -> Any:
        shared = request.param == "shared"
        client = sds.Client.shared(tmp_path / "table", capacity=8) if shared else sds.Client(8)
        client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, **limits))
        if request.param == "private":
            return Named(client)
        return client.point("p")

    yield make


class Named:
    """``client.enter("p")`` and ``client.stats("p")`` as a point's methods."""

    def __init__(self, client: sds.Client) -> None:
        self.client = client

    def enter(self, **kw: Any) -> sds.Entry:
        return self.client.enter("p", **kw)

    def stats(self, **kw: Any) -> sds.Stats:
        return self.client.stats("p", **kw)


def test_aimd_the_initial_limit_caps_in_flight_and_busy_exits_raise_it(aimd: Any) -> None:
    point = aimd(adaptive_min_limit=1, adaptive_initial_limit=4)
    assert adaptive(point.stats(now_ms=T)) == [4, 0, 0, 0]
    entries = [point.enter(now_ms=T) for _ in range(5)]
    assert [e.reason for e in entries] == [None, None, None, None, "CONCURRENT"]
    assert point.stats(now_ms=T)["concurrent"] == 4
    # A refused request is no sample.
    entries[4].exit(now_ms=T + 500)
    assert adaptive(point.stats(now_ms=T)) == [4, 0, 0, 0]
    # Each exit's sample: in flight = those still held + itself; +1 while
    # 2 x in flight >= the limit: 4 (8 >= 4) -> 5, 3 (6 >= 5) -> 6, 2 (4 < 6), 1.
    limits, rtts = [], []
    for i, entry in enumerate(entries[:4]):
        entry.exit(now_ms=T + 30 + i)
        stats = point.stats(now_ms=T + 40)
        limits.append(stats["adaptiveLimit"])
        rtts.append(stats["adaptiveRttUs"])
    assert limits == [5, 6, 6, 6]
    assert rtts == [30_000, 31_000, 32_000, 33_000]  # the last sample's, in µs
    # AIMD has no reference or long RTT.
    assert adaptive(point.stats(now_ms=T + 40)) == [6, 0, 33_000, 0]
    # The grown limit is the new cap: 6 in flight, the seventh refused.
    held = [point.enter(now_ms=T + 100) for _ in range(7)]
    assert [e.reason for e in held].count(None) == 6 and held[6].reason == "CONCURRENT"
    for e in held:
        e.exit(now_ms=T + 100)


def test_aimd_stops_at_its_maximum(aimd: Any) -> None:
    point = aimd(adaptive_min_limit=1, adaptive_initial_limit=2, adaptive_max_limit=3)
    for k in range(5):
        entries = [point.enter(now_ms=T + k * 100) for _ in range(3)]
        for e in entries:
            e.exit(now_ms=T + k * 100 + 10)
    assert point.stats(now_ms=T + 1_000)["adaptiveLimit"] == 3


def test_aimd_a_failing_call_backs_off_by_0_9(aimd: Any) -> None:
    point = aimd(adaptive_min_limit=1, adaptive_initial_limit=50, timeout_threshold=100)

    def limit() -> int:
        return int(point.stats(now_ms=T)["adaptiveLimit"])

    # A success with 1 in flight (2 < 50) leaves the limit alone.
    point.enter(now_ms=T).exit(now_ms=T + 5)
    assert limit() == 50
    # An exception in a `with` body: floor(50 x 0.9).
    with pytest.raises(ValueError):
        with point.enter(now_ms=T):
            raise ValueError("overloaded")
    assert limit() == 45
    # error() by hand: floor(45 x 0.9).
    entry = point.enter(now_ms=T)
    entry.error(RuntimeError("busy"))
    entry.exit(now_ms=T + 5)
    assert limit() == 40
    # A timeout (101 ms > 100) is a drop too: floor(40 x 0.9).
    point.enter(now_ms=T).exit(now_ms=T + 101)
    assert limit() == 36
    # sds.Downgraded raised in the body counts nothing: no drop.
    with pytest.raises(sds.Downgraded):
        with point.enter(now_ms=T):
            raise sds.Downgraded("p", "mine")
    assert limit() == 36


def test_aimd_guarded_functions_that_raise_back_off_on_the_wall_clock() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1,
                                          adaptive_initial_limit=100))
    point = client.point("p")

    @point.guard()
    def fails() -> None:
        raise OSError("downstream refused")

    @point.guard()
    async def fails_async() -> None:
        raise OSError("downstream refused")

    @point.guard()
    def works() -> int:
        return 1

    with pytest.raises(OSError):
        fails()
    assert point.stats()["adaptiveLimit"] == 90
    with pytest.raises(OSError):
        asyncio.run(fails_async())
    assert point.stats()["adaptiveLimit"] == 81
    assert works() == 1
    assert point.stats()["adaptiveLimit"] == 81
    # The minimum holds: 81 backs off to 1 and stays there.
    for _ in range(60):
        with pytest.raises(OSError):
            fails()
    assert point.stats()["adaptiveLimit"] == 1


def test_an_entry_dropped_without_exit_is_no_sample_for_the_limit() -> None:
    # Exited as abandoned: an exception, but its latency is unknown, so the
    # limit neither backs off (as concurrency-limits' onIgnore) nor grows.
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1, adaptive_initial_limit=50))
    with pytest.warns(ResourceWarning):
        client.enter("p", now_ms=T)  # dropped at once
        gc.collect()
    stats = client.stats("p", now_ms=T)
    assert (stats["adaptiveLimit"], stats["exception"], stats["concurrent"]) == (50, 1, 0)


def test_a_paced_request_is_a_sample_from_its_slot() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1, adaptive_initial_limit=4,
                                          token_bucket_generated_tokens_in_second=10, max_queueing_time_ms=1_000))
    first, second = client.enter("p", now_ms=T), client.enter("p", now_ms=T)
    assert (first.wait_ms, second.wait_ms) == (0, 100)
    first.exit(now_ms=T + 20)
    assert client.stats("p", now_ms=T)["adaptiveRttUs"] == 20_000
    # Entered at T, told to wait 100 ms, ended at T + 150: a 50 ms sample.
    second.exit(now_ms=T + 150)
    assert client.stats("p", now_ms=T)["adaptiveRttUs"] == 50_000


# What each algorithm shows ---------------------------------------------


def test_vegas_shows_its_no_load_rtt_and_grows_when_there_is_no_queue() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=VEGAS, adaptive_initial_limit=10))
    entries = [client.enter("p", now_ms=T) for _ in range(10)]
    seen = []
    for e in entries[:4]:
        e.exit(now_ms=T + 30)
        seen.append(adaptive(client.stats("p", now_ms=T + 30)))
    # The first sample sets the no-load RTT (30 ms) and nothing else; then
    # no queue (rtt = no-load) while busy: L + 6 log10 L: 10 -> 16 -> 22;
    # then 7 in flight of 22 (2 x 7 < 22): application-limited, unchanged.
    assert seen == [[10, 30_000, 30_000, 0], [16, 30_000, 30_000, 0], [22, 30_000, 30_000, 0],
                    [22, 30_000, 30_000, 0]]
    for e in entries[4:]:
        e.exit(now_ms=T + 50)
    stats = client.stats("p", now_ms=T + 50)
    assert (stats["adaptiveMinRttUs"], stats["adaptiveRttUs"]) == (30_000, 50_000)
    # A faster sample is the new no-load RTT.
    client.enter("p", now_ms=T + 100).exit(now_ms=T + 120)
    assert client.stats("p", now_ms=T + 120)["adaptiveMinRttUs"] == 20_000


def test_gradient2_shows_its_long_rtt() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=GRADIENT2))
    for rtt in (10, 20, 30):
        client.enter("p", now_ms=T).exit(now_ms=T + rtt)
    # The plain mean of the first samples (up to 10); 1 in flight of 20:
    # the limit stays at its default initial 20.
    assert adaptive(client.stats("p", now_ms=T + 30)) == [20, 20_000, 30_000, 20_000]


def test_gradient_measures_its_min_rtt_at_the_minimum_limit() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=GRADIENT, adaptive_initial_limit=10))
    assert client.stats("p", now_ms=T)["adaptiveLimit"] == 10
    # The first sample starts a min-RTT measurement: the limit reads 3 (its
    # minimum) until 50 requests sent after it have ended.
    client.enter("p", now_ms=T).exit(now_ms=T + 40)
    assert adaptive(client.stats("p", now_ms=T + 40)) == [3, 0, 0, 0]
    held = [client.enter("p", now_ms=T + 50) for _ in range(4)]
    assert [e.reason for e in held] == [None, None, None, "CONCURRENT"]
    for e in held:
        e.exit(now_ms=T + 50)  # 3 samples of 0 ms: sent after it began, so counted
    for i in range(46):
        t = T + 100 + i * 50
        client.enter("p", now_ms=t).exit(now_ms=t + 40)
    assert client.stats("p", now_ms=T + 3_000)["adaptiveLimit"] == 3  # 49 samples
    t = T + 100 + 46 * 50
    client.enter("p", now_ms=t).exit(now_ms=t + 40)
    limit, min_rtt, rtt, long_rtt = adaptive(client.stats("p", now_ms=t + 40))
    # Back to the limit before; min RTT the p50 of the 50 (47 of them 40 ms),
    # within the histogram's 1/8-of-a-power-of-two buckets; the long RTT is
    # the min RTT plus its 25 % buffer.
    assert (limit, rtt) == (10, 40_000)
    assert 35_000 <= min_rtt <= 40_000, min_rtt
    assert long_rtt == min_rtt * 125 // 100


def test_knee_measures_its_min_rtt_then_doubles_while_there_is_no_queue() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=KNEE))
    assert adaptive(client.stats("p", now_ms=T)) == [3, 0, 0, 0]
    # As Envoy's gradient, a min-RTT measurement at the minimum limit (3)
    # first; KNEE's takes the p50 of 100 requests sent after it began.
    client.enter("p", now_ms=T).exit(now_ms=T + 40)
    t = T
    for i in range(100):
        t = T + 100 + i * 50
        client.enter("p", now_ms=t).exit(now_ms=t + 40)
    limit, min_rtt, rtt, long_rtt = adaptive(client.stats("p", now_ms=t + 40))
    # The p50 of 40 ms samples, within its histogram bucket; the long RTT
    # is the latency at the fixed point, min RTT / (1 - 4 %).
    assert (limit, rtt) == (3, 40_000)
    assert 36_000 <= min_rtt <= 40_000, min_rtt
    assert long_rtt == min_rtt * 100 // 96
    # The slow start: a busy window (2 in flight of 3) of at least 25
    # samples and 100 ms at the min RTT doubles the limit.
    start = t + 100
    for i in range(13):
        t = start + i * 10
        pair = [client.enter("p", now_ms=t), client.enter("p", now_ms=t)]
        for e in pair:
            e.exit(now_ms=t + 40)
    limit, min_rtt_after, rtt, _ = adaptive(client.stats("p", now_ms=t + 40))
    assert (limit, min_rtt_after) == (6, min_rtt)
    assert 36_000 <= rtt <= 40_000, rtt
    # The decision follows it: 6 admitted, the 7th refused.
    held = [client.enter("p", now_ms=t + 50) for _ in range(7)]
    assert [e.reason for e in held] == [None] * 6 + ["CONCURRENT"]
    assert client.stats("p", now_ms=t + 50)["concurrent"] == 6
    for e in held:
        e.exit(now_ms=t + 90)


def test_no_adaptive_row_shows_zeros_and_a_fixed_threshold_still_counts() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(concurrent_threshold=2))
    entries = [client.enter("p", now_ms=T) for _ in range(3)]
    assert [e.reason for e in entries] == [None, None, "CONCURRENT"]
    for e in entries:
        e.exit(now_ms=T + 30)
    assert adaptive(client.stats("p", now_ms=T)) == [0, 0, 0, 0]


# Changing the row -------------------------------------------------------


def grow_aimd(client: sds.Client, to: int) -> int:
    """Busy exits until the AIMD limit of "p" reaches ``to``: the limit
    reached (each round of exits adds 1 or 2)."""
    at = T
    while client.stats("p", now_ms=at)["adaptiveLimit"] < to:
        entries = [client.enter("p", now_ms=at) for _ in range(client.stats("p", now_ms=at)["adaptiveLimit"])]
        assert all(not e.downgraded for e in entries)
        for e in entries:
            e.exit(now_ms=at + 10)
        at += 100
    return int(client.stats("p", now_ms=at)["adaptiveLimit"])


def test_changing_the_algorithm_starts_afresh_and_other_changes_keep_the_limit() -> None:
    client = sds.Client(4)
    row = dict(adaptive_concurrency=AIMD, adaptive_min_limit=1, adaptive_initial_limit=4)
    client.set_strategy("p", sds.Strategy(**row))
    grown = grow_aimd(client, 9)
    assert grown in (9, 10)
    # The same row again, or another rule changed: the limit is kept.
    client.set_strategy("p", sds.Strategy(**row))
    client.set_strategy("p", sds.Strategy(visit_threshold=1_000, **row))
    assert client.stats("p", now_ms=T)["adaptiveLimit"] == grown
    # Another algorithm: its own initial limit, nothing measured.
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=VEGAS, adaptive_initial_limit=7))
    assert adaptive(client.stats("p", now_ms=T)) == [7, 0, 0, 0]
    client.enter("p", now_ms=T).exit(now_ms=T + 25)
    assert client.stats("p", now_ms=T)["adaptiveMinRttUs"] == 25_000
    # Back to AIMD: the initial limit again, not the one it had grown to.
    client.set_strategy("p", sds.Strategy(**row))
    assert adaptive(client.stats("p", now_ms=T)) == [4, 0, 0, 0]
    # Other bounds are a new row too.
    grow_aimd(client, 6)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1,
                                          adaptive_initial_limit=5, adaptive_max_limit=50))
    assert client.stats("p", now_ms=T)["adaptiveLimit"] == 5
    # Off: a fixed threshold again, and zeros in the stats.
    client.set_strategy("p", sds.Strategy(concurrent_threshold=1))
    assert adaptive(client.stats("p", now_ms=T)) == [0, 0, 0, 0]
    first, second = client.enter("p", now_ms=T), client.enter("p", now_ms=T)
    assert (first.reason, second.reason) == (None, "CONCURRENT")
    first.exit(now_ms=T)
    second.exit(now_ms=T)
    # Removed, then set again: fresh.
    client.set_strategy("p", sds.Strategy(**row))
    grow_aimd(client, 6)
    client.remove_strategy("p")
    assert adaptive(client.stats("p", now_ms=T)) == [0, 0, 0, 0]
    client.set_strategy("p", sds.Strategy(**row))
    assert client.stats("p", now_ms=T)["adaptiveLimit"] == 4


def test_a_refused_strategy_keeps_the_grown_limit() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1, adaptive_initial_limit=4))
    grown = grow_aimd(client, 7)
    assert grown > 4
    with pytest.raises(sds.InvalidStrategy):
        client.set_strategy("p", {"adaptiveConcurrency": AIMD, "concurrentThreshold": 5})
    assert client.stats("p", now_ms=T)["adaptiveLimit"] == grown
